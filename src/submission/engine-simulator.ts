/**
 * The Dispatcher's {@link SubmissionSimulator} on the in-process EVM: the user's signed
 * transactions executed in order, with every inclusion rule (nonce, funds, base fee), in the
 * next-block context of the current head.
 *
 * - all succeed: `{ success: true, gasUsed, blockNumber }`
 * - one reverts: `{ success: false, failedTxIndex, revertReason }` (the decoded Error(string),
 *   Panic or custom error selector; "reverted without a reason" when there is none)
 * - one halts (out of gas, invalid opcode): the same, with `halted: <EVM error>` as the reason
 * - one cannot be included at all on this head (nonce too low or too high, insufficient funds for
 *   gas, fee cap below the base fee): the same, with `not includable: <why>` as the reason. It is
 *   still forwarded (delivery is committed; a pending predecessor may make it valid later).
 *
 * It throws only when the simulation itself cannot run (an upstream read failed, aborted, or an
 * execution was stopped by the execution budget: an ExecutionBudgetError naming EVM_MAX_GAS or
 * EVM_MAX_MS, never reported as a revert, since the transaction did not revert): the Dispatcher
 * then records that error as the submission's simulation error and forwards anyway.
 */
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx'

import type { ChainStateSource } from '../chain/types.ts'
import { nonceMismatch, TransactionRejectedError, type BundleResult, type Simulator } from '../evm/simulator.ts'
import type { DecodedTransaction } from '../tx/decode-transaction.ts'
import type { SimulationInput, SimulationReport, SubmissionSimulator } from './dispatcher.ts'

export interface EngineSimulatorOptions {
  /** the state the transactions run on: its newest head */
  chain: Pick<ChainStateSource, 'latest'>
  simulator: Pick<Simulator, 'openState' | 'bundle' | 'common'>
}

/** A {@link SubmissionSimulator} over the Simulator. */
export function engineSubmissionSimulator(options: EngineSimulatorOptions): SubmissionSimulator {
  const { chain, simulator } = options
  return async (input: SimulationInput): Promise<SimulationReport> => {
    throwIfAborted(input.signal)
    const reader = chain.latest()
    const base = simulator.openState(reader)
    const txs = input.userTxs.map((t) => executable(t, simulator))
    let result: BundleResult
    try {
      result = await simulator.bundle(base, txs)
    } catch (err) {
      if (err instanceof TransactionRejectedError) {
        const message = stripIndex(err.message)
        return {
          success: false,
          failedTxIndex: err.index ?? 0,
          revertReason: `not includable: ${message}`,
          rejection: classifyRejection(message),
          blockNumber: reader.block.number,
        }
      }
      throw err
    }
    throwIfAborted(input.signal)
    if (result.success) return { success: true, gasUsed: result.gasUsed, blockNumber: reader.block.number }
    const index = result.failedIndex ?? result.results.findIndex((r) => r.status !== 'success')
    const failed = result.results[index]
    const revertReason =
      failed.status === 'halted' ? `halted: ${failed.error ?? 'unknown EVM error'}` : (failed.revertReason ?? 'reverted without a reason')
    return { success: false, failedTxIndex: index, revertReason, gasUsed: result.gasUsed, blockNumber: reader.block.number }
  }
}

/**
 * The decoded transaction as the simulator's VM runs it: the same object when it was decoded for
 * the simulator's chain and hardfork, else rebuilt from the exact raw bytes with its Common.
 */
export function executable(tx: DecodedTransaction, simulator: Pick<Simulator, 'common'>): TypedTransaction {
  const own = tx.tx.common
  const same = own === simulator.common || (own.chainId() === simulator.common.chainId() && own.hardfork() === simulator.common.hardfork())
  return same ? tx.tx : createTxFromRLP(tx.raw, { common: simulator.common })
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw signal.reason instanceof Error ? signal.reason : new Error('aborted')
}

/**
 * Why a transaction cannot be included, from ethereumjs' message: a nonce below the account's can
 * never be included again (that nonce is used); a nonce above it may become valid once its
 * predecessors land, and funds or a fee cap below the base fee may change with the next blocks.
 */
export function classifyRejection(message: string): NonNullable<SimulationReport['rejection']> {
  const nonce = nonceMismatch(message)
  if (nonce !== undefined) return nonce.tx < nonce.account ? 'nonce-used' : 'nonce-gap'
  if (/baseFeePerGas/.test(message)) return 'fee'
  if (/balance|funds|upfront cost/i.test(message)) return 'funds'
  return 'other'
}

/** Simulator.bundle prefixes "transaction i: "; the index is reported separately. */
function stripIndex(message: string): string {
  return message.replace(/^transaction \d+: /, '')
}
