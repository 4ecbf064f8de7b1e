/**
 * `npm run replay` (scripts/replay.ts): many fixture files or directories in, one JSON line per file
 * out, with status, gasUsed, output, the logs hash and the post-state root. The logs hash and the
 * root are checked against the Ethereum state tests' own filled values, by replaying state-test
 * cases converted to go-ethereum tracer fixtures (the form outsiders use to check us). The command
 * line itself (a child process) is replay-cli.e2e.test.ts.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createTxFromRLP } from '@ethereumjs/tx'
import { hexToBytes } from '@ethereumjs/util'
import { fixtureFiles, main, replayBudgetFromEnv, ReplayConfigError, type ReplayLine } from '../../scripts/replay.ts'
import { DEFAULT_EXECUTION_BUDGET } from '../../src/evm/execution-budget.ts'
import { toGethFixture, type StateTest, type StateTestPost } from './state-test-fixture.ts'

const REPO = join(import.meta.dirname, '../..')
const TRACETEST = join(REPO, 'fixtures/corpora/geth-tracetest')
const STATE_TESTS = join(REPO, 'fixtures/state-tests')
const EXISTING_KEYS = ['file', 'hardfork', 'hash', 'from', 'status', 'gasUsed', 'output', 'logs']

async function replayAll(paths: string[], env: Record<string, string> = {}): Promise<{ code: number; lines: ReplayLine[] }> {
  const out: string[] = []
  const code = await main(paths, (line) => out.push(line), env)
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
})

describe('the execution budget of a replay, from EVM_MAX_GAS and EVM_MAX_MS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-budget-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  // 250M gas: 17,000 calls that each copy 50,000 bytes, out of gas (~0.5 s here)
  const doc = JSON.parse(readFileSync(join(STATE_TESTS, 'stQuadraticComplexityTest/QuadraticComplexitySolidity_CallDataCopy.json'), 'utf8')) as Record<string, StateTest>
  const test = Object.values(doc)[0]
  const post = test.post.Cancun.find((p) => createTxFromRLP(hexToBytes(p.txbytes)).gasLimit === 250_000_000n)!
  const file = join(dir, 'quadratic.json')
  writeFileSync(file, JSON.stringify(toGethFixture(test, post)))

  it('defaults to the service budget, and reads the same variables with its ranges', () => {
    expect(replayBudgetFromEnv({})).toEqual(DEFAULT_EXECUTION_BUDGET)
    expect(replayBudgetFromEnv({ EVM_MAX_GAS: '', EVM_MAX_MS: ' ' })).toEqual(DEFAULT_EXECUTION_BUDGET)
    expect(replayBudgetFromEnv({ EVM_MAX_GAS: '300000000', EVM_MAX_MS: '60000' })).toEqual({ maxGas: 300_000_000n, maxMs: 60_000 })
    expect(replayBudgetFromEnv({ EVM_MAX_GAS: '10000000000', EVM_MAX_MS: '10' })).toEqual({ maxGas: 10_000_000_000n, maxMs: 10 })
  })

  it('refuses a bad value naming each variable and what it expects', () => {
    for (const [env, wrong] of [
      [{ EVM_MAX_GAS: '5e7' }, ['EVM_MAX_GAS="5e7"']],
      [{ EVM_MAX_GAS: '999999' }, ['EVM_MAX_GAS="999999"']],
      [{ EVM_MAX_MS: '-5' }, ['EVM_MAX_MS="-5"']],
      [{ EVM_MAX_GAS: 'lots', EVM_MAX_MS: '600001' }, ['EVM_MAX_GAS="lots"', 'EVM_MAX_MS="600001"']],
    ] as const) {
      let error: unknown
      try {
        replayBudgetFromEnv(env)
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(ReplayConfigError)
      expect((error as ReplayConfigError).problems.map((p) => p.split(':')[0])).toEqual(wrong)
    }
    expect(() => replayBudgetFromEnv({ EVM_MAX_MS: '0' })).toThrow('EVM_MAX_MS="0": expected a whole number from 10 to 600000')
  })

  it('stops a transaction over the default gas budget, and replays it to the test root when the budget allows', async () => {
    const over = await replayAll([file], {})
    expect(over.code).toBe(1)
    expect(over.lines[0].status).toBe('error')
    expect(over.lines[0].error).toMatch(/gas limit 250000000 exceeds the gas budget of 50000000 .*\(EVM_MAX_GAS\)/)

    const within = await replayAll([file], { EVM_MAX_GAS: '300000000', EVM_MAX_MS: '60000' })
    expect(within.code).toBe(0)
    expect(within.lines[0].status).toBe('halted')
    expect(within.lines[0].gasUsed).toBe('250000000')
    expect(within.lines[0].logsHash).toBe(post.logs)
    expect(within.lines[0].stateRoot).toBe(post.hash)

    const late = await replayAll([file], { EVM_MAX_GAS: '300000000', EVM_MAX_MS: '10' })
    expect(late.code).toBe(1)
    expect(late.lines[0].error).toMatch(/wall-clock budget of 10 ms per EVM execution \(EVM_MAX_MS\)/)
  })
})
