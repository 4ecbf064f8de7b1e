/**
 * npm run replay -- FILE|DIR [FILE|DIR ...]
 *
 * Replays go-ethereum tracer fixtures (genesis prestate, block context, raw signed transaction)
 * through the project's simulator and prints one JSON line per fixture file, in the order given
 * (a directory: every *.json below it, sorted by path):
 *
 *   file, hardfork, hash, from, status ("success" | "reverted" | "halted" | "rejected" | "error"),
 *   gasUsed (decimal string), output (0x hex), revertReason, error, logs ([{address, topics, data}]),
 *   logsHash (keccak256 of the RLP of [[address, [topics], data], ...], as the state tests' `logs`),
 *   stateRoot (the post-state root over the fixture's whole prestate),
 *   recorded (geth's gasUsed/output/error when the fixture has a call-tracer result).
 *
 * "rejected": the transaction cannot be included (nonce, funds, intrinsic gas, ...); `error` says
 * why, nothing executed, and stateRoot is the prestate's root. "error": the file could not be
 * replayed at all (unreadable, not a fixture, or stopped by the execution budget: `error` then
 * names EVM_MAX_GAS or EVM_MAX_MS); the exit code is then 1.
 *
 * Each replayed transaction has the service's execution budget, read from the same variables
 * (README, Configuration): EVM_MAX_GAS (gas, default 50,000,000, 1,000,000 to 10,000,000,000; a
 * transaction whose gas limit exceeds it is not run) and EVM_MAX_MS (wall-clock ms, default 1,000,
 * 10 to 600,000). A bad value is reported on stderr and nothing is replayed (exit code 2). E.g. the
 * 250M-gas state tests: `EVM_MAX_GAS=300000000 EVM_MAX_MS=60000 npm run replay -- DIR`.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseGenesis } from '../src/chain/memory/genesis.ts'
import { bytesToHexString } from '../src/chain/quantity.ts'
import { DEFAULT_EXECUTION_BUDGET, EXECUTION_BUDGET_RANGES, type ExecutionBudget } from '../src/evm/execution-budget.ts'
import { replayGethFixture, type GethFixture } from '../src/evm/geth-fixture.ts'
import { logsHash, postStateRoot } from '../src/evm/post-state.ts'
import { TransactionRejectedError, type SimulationLog } from '../src/evm/simulator.ts'

export interface ReplayLine {
  file: string
  hardfork?: string
  hash?: string
  from?: string
  status: 'success' | 'reverted' | 'halted' | 'rejected' | 'error'
  gasUsed?: string
  output?: string
  revertReason?: string
  error?: string
  logs?: SimulationLog[]
  logsHash?: string
  stateRoot?: string
  recorded?: { gasUsed: string; output?: string; error?: string }
}

const NO_CHANGES = { accounts: new Map(), code: new Map(), storage: new Map(), cleared: new Set<never>() }

/** Every fixture file named by `paths`: files as given, directories expanded to their *.json files (recursively, sorted). */
export function fixtureFiles(paths: readonly string[]): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.json')) out.push(path)
    }
  }
  for (const path of paths) {
    if (statSync(path).isDirectory()) walk(path)
    else out.push(path)
  }
  return out
}

/** A bad EVM_MAX_GAS or EVM_MAX_MS: every problem, each naming its variable. */
export class ReplayConfigError extends Error {
  override readonly name = 'ReplayConfigError'
  constructor(readonly problems: string[]) {
    super(`invalid replay configuration:\n  - ${problems.join('\n  - ')}`)
  }
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * The execution budget of each replayed transaction, from EVM_MAX_GAS and EVM_MAX_MS (unset or
 * empty: the service's defaults), with the service's ranges.
 * @throws ReplayConfigError a value that is not a whole number in its range
 */
export function replayBudgetFromEnv(env: Env): ExecutionBudget {
  const problems: string[] = []
  const whole = <T extends bigint | number>(name: string, fallback: T, range: { min: T; max: T }, of: (digits: string) => T): T => {
    const raw = env[name]?.trim()
    if (raw === undefined || raw === '') return fallback
    const value = /^\d+$/.test(raw) ? of(raw) : undefined
    if (value === undefined || value < range.min || value > range.max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${range.min} to ${range.max}`)
      return fallback
    }
    return value
  }
  const budget = {
    maxGas: whole('EVM_MAX_GAS', DEFAULT_EXECUTION_BUDGET.maxGas, EXECUTION_BUDGET_RANGES.maxGas, BigInt),
    maxMs: whole('EVM_MAX_MS', DEFAULT_EXECUTION_BUDGET.maxMs, EXECUTION_BUDGET_RANGES.maxMs, Number),
  }
  if (problems.length > 0) throw new ReplayConfigError(problems)
  return budget
}

/** Replays one fixture file; never throws (a failure is a line with status "rejected" or "error"). */
export async function replayFile(file: string, budget: ExecutionBudget = DEFAULT_EXECUTION_BUDGET): Promise<ReplayLine> {
  let fixture: GethFixture
  let pre: ReturnType<typeof parseGenesis>['accounts']
  try {
    fixture = JSON.parse(readFileSync(file, 'utf8')) as GethFixture
    pre = parseGenesis(fixture.genesis).accounts
  } catch (err) {
    return { file, status: 'error', error: err instanceof Error ? err.message : String(err) }
  }
  const recordedResult = fixture.result as { gasUsed?: string; output?: string; error?: string } | undefined
  const recorded =
    recordedResult !== undefined && typeof recordedResult === 'object' && typeof recordedResult.gasUsed === 'string'
      ? { gasUsed: BigInt(recordedResult.gasUsed).toString(), output: recordedResult.output, error: recordedResult.error }
      : undefined
  try {
    const { hardfork, result } = await replayGethFixture(fixture, { budget })
    return {
      file,
      hardfork,
      hash: result.hash,
      from: result.from,
      status: result.status,
      gasUsed: result.gasUsed.toString(),
      output: bytesToHexString(result.returnData),
      revertReason: result.revertReason,
      error: result.error,
      logs: result.logs,
      logsHash: logsHash(result.logs),
      stateRoot: postStateRoot(pre, result.state.overlay.changesSinceReader()),
      recorded,
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    if (!(err instanceof TransactionRejectedError)) return { file, status: 'error', error: message, recorded }
    return { file, status: 'rejected', error: message, logs: [], logsHash: logsHash([]), stateRoot: postStateRoot(pre, NO_CHANGES), recorded }
  }
}

export async function main(args: readonly string[], write: (line: string) => void = (l) => console.log(l), env: Env = process.env): Promise<number> {
  if (args.length === 0) {
    console.error('usage: [EVM_MAX_GAS=gas] [EVM_MAX_MS=ms] npm run replay -- FILE|DIR [FILE|DIR ...]')
    return 2
  }
  let files: string[]
  let budget: ExecutionBudget
  try {
    budget = replayBudgetFromEnv(env)
    files = fixtureFiles(args)
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err))
    return 2
  }
  let failed = 0
  for (const file of files) {
    const line = await replayFile(file, budget)
    if (line.status === 'error') failed++
    write(JSON.stringify(line))
  }
  return failed === 0 ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2))
}
