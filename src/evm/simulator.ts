/**
 * Executes calls, signed transactions and bundles in-process with @ethereumjs/vm on a state
 * overlay, in a next-block context. Results carry receipt-exact gasUsed, return data, decoded
 * revert reason, logs, and a handle on the resulting state for chaining (bundle, then backrun).
 *
 * The simulator never learns where state comes from: it reads a StateReader through an overlay.
 */
import type { Block } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { createTx, type TypedTransaction } from '@ethereumjs/tx'
import { Address as EjsAddress, createAddressFromString } from '@ethereumjs/util'
import { runTx, type RunTxResult } from '@ethereumjs/vm'
import { bytesToHexString, hexToBytesStrict } from '../chain/quantity.ts'
import { UpstreamError, type Address, type BlockInfo, type Hex, type StateReader } from '../chain/types.ts'
import { nextBlockContext, toEjsBlock, type ExecutionBlock } from './block-context.ts'
import { JournaledState } from './journaled-state.ts'
import { runDirectCall, type CallRunResult } from './direct-call.ts'
import { DEFAULT_EXECUTION_BUDGET, ExecutionBudgetError, checkExecutionBudget, type ExecutionBudget } from './execution-budget.ts'
import { decodeRevertReason } from './revert-reason.ts'
import { VmPool } from './vm-pool.ts'
import { BaseError } from '../primitives/base-error.ts'

export interface SimulationLog {
  address: Address
  topics: Hex[]
  data: Hex
}

export type ExecutionStatus = 'success' | 'reverted' | 'halted'

export interface ExecutionOutcome {
  status: ExecutionStatus
  /** gasUsed as the receipt would show it (intrinsic + execution - refund, EIP-7623 floor applied) */
  gasUsed: bigint
  returnData: Uint8Array
  /** decoded Error(string) / Panic(uint256) / custom error selector, when reverted */
  revertReason?: string
  /** the EVM's error for a halt (out of gas, invalid opcode, ...) */
  error?: string
  logs: SimulationLog[]
  createdAddress?: Address
}

export interface ExecutionResult extends ExecutionOutcome {
  /** the state after this execution; fork it to chain more executions on top */
  state: SimulationState
}

export interface TransactionResult extends ExecutionResult {
  hash: Hex
  from: Address
}

export interface BundleResult {
  /** true when every transaction executed and none reverted */
  success: boolean
  results: TransactionResult[]
  /** index of the first transaction that reverted or halted, if any */
  failedIndex?: number
  gasUsed: bigint
  /** state after the whole bundle (meaningful when success) */
  state: SimulationState
}

export interface CallRequest {
  from: Address
  to?: Address
  data?: Hex | Uint8Array
  value?: bigint
  /** default: the block gas limit */
  gasLimit?: bigint
}

/** ethereumjs' EVMError message of an out-of-gas halt */
const OUT_OF_GAS = 'out of gas'

/** The transaction can never be included as is (nonce, funds, fee below base fee, gas limit). */
const NONCE_MISMATCH = /account has nonce of: (\d+) tx has nonce of: (\d+)/

/**
 * The nonces in a rejection for a wrong nonce (ethereumjs: "account has nonce of: A tx has nonce
 * of: T"), or undefined for any other rejection. `tx < account`: that nonce is used for good;
 * `tx > account`: a predecessor is missing and may still come.
 */
export function nonceMismatch(message: string): { account: bigint; tx: bigint } | undefined {
  const m = NONCE_MISMATCH.exec(message)
  return m === null ? undefined : { account: BigInt(m[1]), tx: BigInt(m[2]) }
}

/** The transaction cannot be included as it is (ethereumjs' validation message); `index` is its place in a bundle. */
export class TransactionRejectedError extends BaseError {
  override readonly name = 'TransactionRejectedError'
  constructor(
    message: string,
    readonly index?: number,
  ) {
    super(message)
  }
}

/**
 * A simulation's state: an overlay over a pinned reader plus the block it executes in. Executions
 * never mutate a state they are given; they return a new one.
 */
/** The ethereumjs block objects of one execution context, built on first use and shared by every state that executes in it. */
interface EjsBlocks {
  block?: Block
  callBlock?: Block
}

export class SimulationState {
  constructor(
    readonly overlay: JournaledState,
    readonly block: ExecutionBlock,
    readonly common: Common,
    private readonly ejs: EjsBlocks = {},
  ) {}

  get reader(): StateReader {
    return this.overlay.reader
  }

  /** A writable child of this state; this state becomes read-only. */
  fork(): SimulationState {
    // the block objects are shared down the state chain: every execution on top uses the same ones
    return new SimulationState(this.overlay.fork(), this.block, this.common, this.ejs)
  }

  toEjsBlock(): Block {
    this.ejs.block ??= toEjsBlock(this.block, this.common)
    return this.ejs.block
  }

  /** The same block with a zero base fee, for eth_call-style calls. */
  toEjsCallBlock(): Block {
    this.ejs.callBlock ??= toEjsBlock({ ...this.block, baseFeePerGas: this.block.baseFeePerGas === undefined ? undefined : 0n }, this.common)
    return this.ejs.callBlock
  }
}

export interface SimulatorOptions {
  common: Common
  /** seconds between blocks: the next-block timestamp is the head's plus this */
  blockTimeSeconds?: bigint
  maxIdleVms?: number
  /**
   * what one execution may cost (EVM_MAX_GAS, EVM_MAX_MS; execution-budget.ts); default
   * DEFAULT_EXECUTION_BUDGET
   */
  budget?: ExecutionBudget
}

export class Simulator {
  readonly common: Common
  readonly blockTimeSeconds: bigint
  readonly budget: Readonly<ExecutionBudget>
  private readonly vms: VmPool
  /**
   * The next-block context of each head and its ethereumjs block objects, so states opened on the
   * same head share them instead of rebuilding headers per request. Weak: dropped with the head.
   */
  private readonly nextBlocks = new WeakMap<BlockInfo, { context: ExecutionBlock; ejs: EjsBlocks }>()

  constructor(options: SimulatorOptions) {
    this.common = options.common
    this.blockTimeSeconds = options.blockTimeSeconds ?? 12n
    this.budget = Object.freeze({ ...checkExecutionBudget(options.budget ?? DEFAULT_EXECUTION_BUDGET) })
    this.vms = new VmPool(options.common, options.maxIdleVms)
  }

  /** A state over `reader` that executes in the next block (or in `block`, when given). */
  openState(reader: StateReader, block?: ExecutionBlock): SimulationState {
    if (block !== undefined) return new SimulationState(JournaledState.over(reader), block, this.common)
    let next = this.nextBlocks.get(reader.block)
    if (next === undefined) {
      next = { context: nextBlockContext(reader.block, this.blockTimeSeconds), ejs: {} }
      this.nextBlocks.set(reader.block, next)
    }
    return new SimulationState(JournaledState.over(reader), next.context, this.common, next.ejs)
  }

  /**
   * An unsigned call from any sender, with eth_call semantics: nonce not checked, gas price 0 and
   * a base fee of 0 in the call's block (as geth does for a zero-price call), so no fee is charged
   * and balances seen by the call are the state's. gasUsed is still what a receipt would show.
   * Runs on the EVM directly (direct-call.ts, runTx's rules for a call without its transaction
   * object, bloom and receipt); creations and what that path does not implement go through runTx.
   *
   * The gas limit is capped at the gas budget; a capped call that runs out of gas at the top
   * level, or any call past the time budget, throws an ExecutionBudgetError.
   */
  async call(parent: SimulationState, request: CallRequest): Promise<ExecutionResult> {
    const state = parent.fork()
    const block = state.toEjsCallBlock()
    const data = typeof request.data === 'string' ? hexToBytesStrict(request.data, 'data') : (request.data ?? new Uint8Array(0))
    const sender = createAddressFromString(request.from)
    const value = request.value ?? 0n
    const requested = request.gasLimit ?? block.header.gasLimit
    const capped = requested > this.budget.maxGas
    const gasLimit = capped ? this.budget.maxGas : requested
    const to = request.to === undefined ? undefined : createAddressFromString(request.to)
    const result = await this.vms.with(
      state.overlay,
      async (vm) => {
        // a call goes straight to the EVM (direct-call.ts); what that path leaves to runTx runs here
        const direct = to === undefined ? undefined : await runDirectCall(vm, block, { caller: sender, to, data, value, gasLimit })
        return direct ?? runTx(vm, { tx: this.callTx(block, sender, to, data, value, gasLimit), block, skipNonce: true, skipBalance: true, skipHardForkValidation: true })
      },
      { maxMs: this.budget.maxMs },
    )
    // with the gas it asked for it might have finished: the budget stopped it, not its own limit
    if (capped && result.execResult.exceptionError?.error === OUT_OF_GAS) throw ExecutionBudgetError.gasCapped(this.budget.maxGas)
    return toOutcome(result, this.common, { state })
  }

  /** The unsigned zero-price transaction runTx executes for a call. */
  private callTx(block: Block, sender: EjsAddress, to: EjsAddress | undefined, data: Uint8Array, value: bigint, gasLimit: bigint): TypedTransaction {
    const london = block.header.baseFeePerGas !== undefined
    const tx = createTx(
      {
        type: london ? 2 : 0,
        to,
        data,
        value,
        gasLimit,
        ...(london ? { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n } : { gasPrice: 0n }),
      },
      { common: this.common, freeze: false },
    )
    ;(tx as { getSenderAddress: () => EjsAddress }).getSenderAddress = () => sender
    return tx
  }

  /**
   * A signed transaction, with every inclusion rule of a real block (nonce, funds, base fee).
   * @throws TransactionRejectedError it cannot be included; ExecutionBudgetError its gas limit
   * exceeds the gas budget (stopped as its first frame starts) or it ran past the time budget;
   * UpstreamError
   */
  async transaction(parent: SimulationState, tx: TypedTransaction): Promise<TransactionResult> {
    const state = parent.fork()
    const result = await this.runSigned(state, tx)
    return result
  }

  /**
   * An ordered list of signed transactions executed atomically in one block: each sees the state the
   * previous one left. A transaction that cannot be included rejects the whole bundle; a revert is
   * reported with its index and the bundle marked unsuccessful. A transaction stopped by the
   * execution budget throws its ExecutionBudgetError, prefixed with the transaction's index.
   */
  async bundle(parent: SimulationState, txs: readonly TypedTransaction[]): Promise<BundleResult> {
    let state = parent
    const results: TransactionResult[] = []
    let failedIndex: number | undefined
    let gasUsed = 0n
    for (let i = 0; i < txs.length; i++) {
      const next = state.fork()
      let result: TransactionResult
      try {
        result = await this.runSigned(next, txs[i], gasUsed)
      } catch (err) {
        if (err instanceof TransactionRejectedError) throw new TransactionRejectedError(`transaction ${i}: ${err.message}`, i)
        if (err instanceof ExecutionBudgetError) throw err.within(`transaction ${i}: `)
        throw err
      }
      results.push(result)
      gasUsed += result.gasUsed
      if (result.status !== 'success' && failedIndex === undefined) failedIndex = i
      state = result.state
    }
    return { success: failedIndex === undefined, results, failedIndex, gasUsed, state }
  }

  private async runSigned(state: SimulationState, tx: TypedTransaction, blockGasUsed = 0n): Promise<TransactionResult> {
    const block = state.toEjsBlock()
    if (blockGasUsed + tx.gasLimit > block.header.gasLimit) {
      throw new TransactionRejectedError(`gas limit ${tx.gasLimit} exceeds the gas left in the block`)
    }
    // a signed gas limit cannot be capped without changing the execution (GAS, 63/64 forwarding):
    // such a transaction is stopped as its first frame starts, after runTx has checked it can be included
    const refusal = tx.gasLimit > this.budget.maxGas ? ExecutionBudgetError.gasLimitTooHigh(tx.gasLimit, this.budget.maxGas) : undefined
    let result: RunTxResult
    try {
      result = await this.vms.with(state.overlay, (vm) => runTx(vm, { tx, block, blockGasUsed, skipHardForkValidation: true }), { maxMs: this.budget.maxMs, refusal })
    } catch (err) {
      // A failed state read is not the transaction's fault, nor is our budget: let the typed errors through.
      if (err instanceof UpstreamError || err instanceof ExecutionBudgetError) throw err
      throw new TransactionRejectedError(rejectionMessage(err))
    }
    return toOutcome(result, this.common, { state, hash: bytesToHexString(tx.hash()), from: tx.getSenderAddress().toString() as Address })
  }
}

function toOutcome<T extends object>(result: CallRunResult, common: Common, rest: T): ExecutionOutcome & T {
  const exec = result.execResult
  let error = exec.exceptionError?.error
  // Frontier: a creation that cannot pay for storing its code succeeds with empty code.
  if (error === 'code store out of gas' && !common.gteHardfork('homestead')) error = undefined
  const status: ExecutionStatus = error === undefined ? 'success' : error === 'revert' ? 'reverted' : 'halted'
  const outcome = Object.assign(
    {
      status,
      gasUsed: result.totalGasSpent,
      returnData: exec.returnValue,
      revertReason: status === 'reverted' ? decodeRevertReason(exec.returnValue) : undefined,
      error: status === 'halted' ? error : undefined,
      logs: [] as SimulationLog[],
      createdAddress: result.createdAddress?.toString() as Address | undefined,
    },
    rest,
  )
  const raw = exec.logs
  if (status === 'success' && raw !== undefined && raw.length > 0) defineLazyLogs(outcome, raw)
  return outcome
}

type RawLog = [Uint8Array, Uint8Array[], Uint8Array]

/**
 * `logs` as hex made when first read, then kept as a plain property: a quote reads only the return
 * data and gas of its router execution (tens of logs: a Transfer and a Swap per hop), so their
 * hex (~1.5% of a quote's CPU when made for every call) is made only for the callers that read them.
 * An own enumerable accessor: spreads, structured clones and equality checks read it as a value.
 */
function defineLazyLogs(outcome: { logs: SimulationLog[] }, raw: readonly RawLog[]): void {
  Object.defineProperty(outcome, 'logs', {
    configurable: true,
    enumerable: true,
    get(this: { logs: SimulationLog[] }): SimulationLog[] {
      const logs = raw.map(([address, topics, data]) => ({ address: bytesToHexString(address), topics: topics.map(bytesToHexString), data: bytesToHexString(data) }))
      Object.defineProperty(this, 'logs', { value: logs, writable: true, enumerable: true, configurable: true })
      return logs
    },
    set(this: { logs: SimulationLog[] }, logs: SimulationLog[]) {
      Object.defineProperty(this, 'logs', { value: logs, writable: true, enumerable: true, configurable: true })
    },
  })
}

/** ethereumjs appends block and tx dumps to its messages; keep the sentence a partner can act on. */
function rejectionMessage(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err)
  return raw.split(' -> ')[0].replace(/\s*\(block number=.*$/s, '').replace(/\s*\(tx type=.*$/s, '').trim()
}
