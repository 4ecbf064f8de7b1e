/**
 * What one EVM execution may cost: a gas cap and a wall-clock budget (issue 17). Every execution
 * the service runs goes through the Simulator (quote, eth_backrun, the dispatcher's simulations and
 * backrun planning, replay), and everything runs on one event loop, so a contract that loops would
 * hold every other request for as long as it loops: the interpreter itself checks the budget.
 *
 * An execution is one `Simulator.call` or one transaction (each transaction of a bundle has its
 * own). Its budget:
 * - gas (EVM_MAX_GAS): a call is given at most this much gas (its own limit or the block's,
 *   whichever it asked for, capped); a call that had to be capped and then ran out of gas at the
 *   top level is reported as the budget, not as its own out-of-gas. A signed transaction whose gas
 *   limit exceeds the cap is stopped as its first call frame starts, once ethereumjs has checked
 *   that it could be included at all (a transaction that cannot is still rejected as such): its
 *   gas limit is part of what was signed, so running it with less would change its outcome (what
 *   GAS returns, what calls are given). A transaction that runs no code (a plain transfer) costs
 *   its intrinsic gas and is not stopped.
 * - time (EVM_MAX_MS): wall-clock milliseconds from the moment the execution has its VM. The patched
 *   interpreter loop (interpreter-patches.ts) compares `performance.now()` with the execution's
 *   deadline when a call frame starts and every {@link DEADLINE_CHECK_STEPS} steps of a frame; past
 *   it, the execution is abandoned with an {@link ExecutionBudgetError}. The deadline lives on the
 *   EVM instance the execution runs on (a pooled VM runs one execution at a time): nothing is shared
 *   between concurrent executions.
 *
 * The budget error is not an EVM halt: it unwinds the whole execution (every frame), no result is
 * produced, and the VM is discarded (vm-pool.ts). What the caller answers: the quote 422
 * SIMULATION_FAILED, eth_backrun JSON-RPC -32000, the dispatcher records it as the submission's
 * simulation error.
 */

export interface ExecutionBudget {
  /** EVM_MAX_GAS: most gas one execution is given */
  maxGas: bigint
  /** EVM_MAX_MS: wall-clock milliseconds one execution may run */
  maxMs: number
}

/** Defaults of EVM_MAX_GAS and EVM_MAX_MS (also the Simulator's when it is given no budget). */
export const DEFAULT_EXECUTION_BUDGET: Readonly<ExecutionBudget> = Object.freeze({ maxGas: 50_000_000n, maxMs: 1_000 })

/**
 * What EVM_MAX_GAS and EVM_MAX_MS may be set to (the service's configuration and `npm run replay`
 * both read them): below the gas floor not even a swap runs; the ceilings keep one execution from
 * holding the event loop for more than minutes.
 */
export const EXECUTION_BUDGET_RANGES = Object.freeze({
  maxGas: Object.freeze({ min: 1_000_000n, max: 10_000_000_000n }),
  maxMs: Object.freeze({ min: 10, max: 600_000 }),
})

/** Steps of one frame between two clock reads: a read costs ~40 ns, a step ~20-50 ns. */
export const DEADLINE_CHECK_STEPS = 1024

export function checkExecutionBudget(budget: ExecutionBudget): ExecutionBudget {
  if (typeof budget.maxGas !== 'bigint' || budget.maxGas < 21_000n) throw new RangeError(`execution budget: maxGas must be at least 21000, got ${String(budget.maxGas)}`)
  if (!Number.isFinite(budget.maxMs) || budget.maxMs <= 0) throw new RangeError(`execution budget: maxMs must be a positive number, got ${String(budget.maxMs)}`)
  return budget
}

export type BudgetKind = 'gas' | 'time'

/** An execution stopped (or refused) by its budget. Not a fact about the chain: about our limits. */
export class ExecutionBudgetError extends Error {
  override readonly name = 'ExecutionBudgetError'
  constructor(
    readonly kind: BudgetKind,
    /** the budget: gas, or milliseconds */
    readonly limit: bigint | number,
    message: string,
  ) {
    super(message)
  }

  /** The same error, its message prefixed (e.g. with the transaction's index in a bundle). */
  within(prefix: string): ExecutionBudgetError {
    return new ExecutionBudgetError(this.kind, this.limit, `${prefix}${this.message}`)
  }

  /** What a client is told besides the message. */
  toDetails(): { budget: BudgetKind; limit: string } {
    return { budget: this.kind, limit: this.limit.toString() }
  }

  static time(maxMs: number, elapsedMs: number): ExecutionBudgetError {
    return new ExecutionBudgetError(
      'time',
      maxMs,
      `execution stopped after ${Math.round(elapsedMs)} ms: it exceeded the wall-clock budget of ${maxMs} ms per EVM execution (EVM_MAX_MS)`,
    )
  }

  static gasCapped(maxGas: bigint): ExecutionBudgetError {
    return new ExecutionBudgetError('gas', maxGas, `execution ran out of gas at the gas budget of ${maxGas} per EVM execution (EVM_MAX_GAS)`)
  }

  static gasLimitTooHigh(gasLimit: bigint, maxGas: bigint): ExecutionBudgetError {
    return new ExecutionBudgetError('gas', maxGas, `gas limit ${gasLimit} exceeds the gas budget of ${maxGas} per EVM execution (EVM_MAX_GAS); stopped before its first call frame`)
  }
}

/** The running execution's deadline, as the interpreter loop reads it. */
export interface ExecutionDeadline {
  /** `performance.now()` past which the execution stops */
  readonly at: number
  readonly startedAt: number
  readonly maxMs: number
  /** thrown as any call frame starts: the execution may not run code at all (a signed gas limit over the cap) */
  readonly refusal?: ExecutionBudgetError
}

const DEADLINE = Symbol('execution deadline')

interface WithDeadline {
  [DEADLINE]?: ExecutionDeadline
}

/** What VmPool.with is given for one execution. */
export interface ExecutionLimits {
  maxMs: number
  refusal?: ExecutionBudgetError
}

/** Sets (or, with undefined, clears) the deadline of the execution that `evm` runs now; it starts now. */
export function setExecutionDeadline(evm: object, limits: ExecutionLimits | undefined): void {
  if (limits === undefined) {
    ;(evm as WithDeadline)[DEADLINE] = undefined
    return
  }
  const startedAt = performance.now()
  ;(evm as WithDeadline)[DEADLINE] = { at: startedAt + limits.maxMs, startedAt, maxMs: limits.maxMs, refusal: limits.refusal }
}

export function executionDeadline(evm: object): ExecutionDeadline | undefined {
  return (evm as WithDeadline)[DEADLINE]
}

/** As a call frame starts: the refusal, if any, then the deadline. */
export function checkFrameStart(deadline: ExecutionDeadline): void {
  if (deadline.refusal !== undefined) throw deadline.refusal
  checkDeadline(deadline)
}

/** Throws the time budget's error when `deadline` has passed. */
export function checkDeadline(deadline: ExecutionDeadline): void {
  const now = performance.now()
  if (now > deadline.at) throw ExecutionBudgetError.time(deadline.maxMs, now - deadline.startedAt)
}
