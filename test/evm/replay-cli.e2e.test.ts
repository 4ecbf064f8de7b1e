/**
 * `npm run replay` through its command line (scripts/replay.ts run by tsx, a child process): the
 * lines it prints are what replayFile answers in process (replay.test.ts checks those), and a bad
 * budget variable exits 2 before anything is replayed.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { replayFile, type ReplayLine } from '../../scripts/replay.ts'
import { toGethFixture, type StateTest } from './state-test-fixture.ts'

const REPO = join(import.meta.dirname, '../..')
const TRACETEST = join(REPO, 'fixtures/corpora/geth-tracetest')
const STATE_TESTS = join(REPO, 'fixtures/state-tests')

describe('npm run replay on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const doc = JSON.parse(readFileSync(join(STATE_TESTS, 'stSStoreTest/sstore_Xto0toX.json'), 'utf8')) as Record<string, StateTest>
  const test = Object.values(doc)[0]!
  const post = test.post.Cancun[0]!
  const file = join(dir, 'state-test.json')
  writeFileSync(file, JSON.stringify(toGethFixture(test, post)))

  it('prints what replayFile answers, one line per file', async () => {
    const { stdout } = await promisify(execFile)('npx', ['tsx', 'scripts/replay.ts', file, join(TRACETEST, 'call_tracer/simple.json')], { cwd: REPO })
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as ReplayLine)
    expect(lines.length).toBe(2)
    expect(lines[0]).toEqual(await replayFile(file))
    expect(lines[0]!.stateRoot).toBe(post.hash)
  })

  it('exits 2 on a bad value from the command line, naming it, and replays nothing', async () => {
    const run = promisify(execFile)('npx', ['tsx', 'scripts/replay.ts', file], { cwd: REPO, env: { ...process.env, EVM_MAX_MS: 'soon' } })
    const failure = (await run.then(
      () => undefined,
      (err: unknown) => err,
    )) as { code: number; stdout: string; stderr: string } | undefined
    expect(failure?.code).toBe(2)
    expect(failure?.stdout).toBe('')
    expect(failure?.stderr).toContain('EVM_MAX_MS="soon": expected a whole number from 10 to 600000')
  })
})
