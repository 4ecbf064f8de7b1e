/**
 * `npm run replay` (scripts/replay.ts): many fixture files or directories in, one JSON line per file
 * out, with status, gasUsed, output, the logs hash and the post-state root. The logs hash and the
 * root are checked against the Ethereum state tests' own filled values, by replaying state-test
 * cases converted to go-ethereum tracer fixtures (the form outsiders use to check us).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { fixtureFiles, main, replayFile, type ReplayLine } from '../../scripts/replay.ts'
import type { Hex } from '../../src/chain/types.ts'

const REPO = join(import.meta.dirname, '../..')
const TRACETEST = join(REPO, 'fixtures/corpora/geth-tracetest')
const STATE_TESTS = join(REPO, 'fixtures/state-tests')
const EXISTING_KEYS = ['file', 'hardfork', 'hash', 'from', 'status', 'gasUsed', 'output', 'logs']

async function replayAll(paths: string[]): Promise<{ code: number; lines: ReplayLine[] }> {
  const out: string[] = []
  const code = await main(paths, (line) => out.push(line))
  for (const line of out) expect(line).not.toContain('\n')
  return { code, lines: out.map((l) => JSON.parse(l) as ReplayLine) }
}

describe('replay over go-ethereum tracer fixtures', () => {
  it('prints one line per file of a directory and per file given, in order', async () => {
    const dir = join(TRACETEST, 'call_tracer')
    const single = join(TRACETEST, 'call_tracer_withLog/calldata.json')
    const { code, lines } = await replayAll([single, dir])
    const inDir = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    expect(code).toBe(0)
    expect(lines.map((l) => l.file)).toEqual([single, ...inDir.map((f) => join(dir, f))])
    for (const line of lines) {
      for (const key of EXISTING_KEYS) expect(line, `${line.file} has ${key}`).toHaveProperty(key)
      expect(line.logsHash).toMatch(/^0x[0-9a-f]{64}$/)
      expect(line.stateRoot).toMatch(/^0x[0-9a-f]{64}$/)
      // every call-tracer fixture records geth's gasUsed: ours is the same
      expect(line.recorded?.gasUsed, line.file).toBe(line.gasUsed)
    }
  })

  it('expands nested directories', () => {
    const files = fixtureFiles([TRACETEST])
    expect(files.length).toBeGreaterThanOrEqual(30)
    expect(files.every((f) => f.endsWith('.json'))).toBe(true)
    expect(files).toContain(join(TRACETEST, 'prestate_tracer_with_diff_mode/suicide_cancun.json'))
  })

  it('reports an unreadable file as an error line and keeps going', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-'))
    try {
      writeFileSync(join(dir, 'a-broken.json'), '{ not json')
      writeFileSync(join(dir, 'b-good.json'), readFileSync(join(TRACETEST, 'call_tracer/simple.json')))
      const { code, lines } = await replayAll([dir])
      expect(code).toBe(1)
      expect(lines.map((l) => l.status)).toEqual(['error', 'success'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

interface StateTestPost {
  hash: Hex
  logs: Hex
  txbytes: Hex
  expectException?: string
}
interface StateTest {
  env: Record<string, string>
  pre: Record<string, unknown>
  post: { Cancun: StateTestPost[] }
}

const CANCUN_CONFIG = {
  chainId: 1,
  homesteadBlock: 0,
  eip150Block: 0,
  eip155Block: 0,
  eip158Block: 0,
  byzantiumBlock: 0,
  constantinopleBlock: 0,
  petersburgBlock: 0,
  istanbulBlock: 0,
  berlinBlock: 0,
  londonBlock: 0,
  mergeNetsplitBlock: 0,
  shanghaiTime: 0,
  cancunTime: 0,
  terminalTotalDifficulty: 0,
  terminalTotalDifficultyPassed: true,
  blobSchedule: { cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 } },
}

/** A state-test case as a go-ethereum tracer fixture: its pre-state as genesis, its env as the block. */
function toGethFixture(test: StateTest, post: StateTestPost) {
  const env = test.env
  return {
    genesis: {
      config: CANCUN_CONFIG,
      alloc: test.pre,
      nonce: '0x0',
      timestamp: '0x0',
      extraData: '0x',
      gasLimit: env.currentGasLimit,
      difficulty: '0x0',
      mixHash: `0x${'00'.repeat(32)}`,
      coinbase: `0x${'00'.repeat(20)}`,
    },
    context: {
      number: env.currentNumber,
      timestamp: env.currentTimestamp,
      gasLimit: env.currentGasLimit,
      miner: env.currentCoinbase,
      difficulty: '0x0',
      baseFeePerGas: env.currentBaseFee,
      mixHash: env.currentRandom,
      excessBlobGas: env.currentExcessBlobGas ?? '0x0',
    },
    input: post.txbytes,
  }
}

describe('replay of state tests converted to tracer fixtures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-state-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // storage and refunds, logs, reverts, a valid point-evaluation proof, rejected transactions
  const SOURCES = [
    'stSStoreTest/sstore_Xto0toX.json',
    'stLogTests/log4_nonEmptyMem.json',
    'stRevertTest/RevertOpcodeReturn.json',
    'Pyspecs/cancun/eip4844_blobs/valid_precompile_calls.json',
    'Pyspecs/cancun/eip4844_blobs/point_evaluation_precompile_gas_usage.json',
    'stEIP1559/outOfFunds.json',
  ]
  const expected = new Map<string, StateTestPost>()
  let n = 0
  for (const source of SOURCES) {
    const doc = JSON.parse(readFileSync(join(STATE_TESTS, source), 'utf8')) as Record<string, StateTest>
    for (const test of Object.values(doc)) {
      for (const post of test.post.Cancun) {
        const file = join(dir, `${String(n++).padStart(3, '0')}.json`)
        writeFileSync(file, JSON.stringify(toGethFixture(test, post)))
        expected.set(file, post)
      }
    }
  }

  it('gives each case the logs hash and post-state root the state test expects', async () => {
    expect(expected.size).toBeGreaterThanOrEqual(50)
    const { code, lines } = await replayAll([dir])
    expect(code).toBe(0)
    expect(lines.length).toBe(expected.size)
    let rejected = 0
    for (const line of lines) {
      const post = expected.get(line.file) as StateTestPost
      // a rejected transaction has no execution, so no hardfork reported
      if (line.status !== 'rejected') expect(line.hardfork, line.file).toBe('cancun')
      expect(line.status === 'rejected', `${line.file} rejected: ${line.error}`).toBe(post.expectException !== undefined)
      if (line.status === 'rejected') rejected++
      expect(line.logsHash, `${line.file} logs`).toBe(post.logs)
      expect(line.stateRoot, `${line.file} state root`).toBe(post.hash)
    }
    expect(rejected).toBeGreaterThan(0)
  })

  it('is the same through the command line', async () => {
    const first = [...expected.keys()][0]
    const { stdout } = await promisify(execFile)('npx', ['tsx', 'scripts/replay.ts', first, join(TRACETEST, 'call_tracer/simple.json')], { cwd: REPO })
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as ReplayLine)
    expect(lines.length).toBe(2)
    expect(lines[0]).toEqual(await replayFile(first))
    expect(lines[0].stateRoot).toBe(expected.get(first)?.hash)
  })
})
