/**
 * Bundle selection for one block, the way mev-geth and rbuilder do it:
 * 1. simulate every bundle targeting the block on its starting state (top of block): one that
 *    fails there (nonce, funds, fee below the base fee, a revert not allowed by
 *    revertingTxHashes, timestamps, a transaction already on chain, gas) is `invalid`; one that
 *    passes is measured by what it pays the builder: the coinbase balance delta (priority fees
 *    plus direct transfers);
 * 2. order the valid ones by that payment per gas used (ties: arrival order);
 * 3. merge greedily in that order on the accumulating block state: a bundle sharing a transaction
 *    with one already merged is `outbid` (conflict), one that fails on the accumulated state is
 *    `outbid` (its state was taken), the others are included.
 *
 * The simulations' states live only while the block is built, and only one at a time is kept:
 * the best bundle's top-of-block run so far (it is merged first, on the same state, without
 * re-executing); the others' are released as soon as their payment is measured.
 */
import type { Address, Hex } from '../../chain/types.ts'
import type { ExecutionBlock } from '../../evm/block-context.ts'
import { nonceMismatch, TransactionRejectedError, type SimulationState, type Simulator, type TransactionResult } from '../../evm/simulator.ts'
import { errorText } from '../../primitives/error-text.ts'
import type { DecodedTransaction } from '../../tx/index.ts'
import type { PendingBundle } from './types.ts'

export interface Executed {
  result: TransactionResult
  tx: DecodedTransaction
  bundleHash?: Hex
}

export type BundleRun = { state: SimulationState; gasUsed: bigint; executed: Executed[] } | { reason: string }

export interface MergeContext {
  simulator: Simulator
  context: ExecutionBlock
  coinbase: Address
  /** receipts of transactions already on chain */
  receipts: ReadonlyMap<Hex, { readonly blockNumber: bigint }>
  onError: (error: unknown) => void
  now: () => number
  /** before each transaction: gives the event loop a turn once the build's slice is spent (time-slices.ts) */
  pause: () => Promise<void>
}

/** A bundle's top-of-block simulation. */
export interface TopOfBlock {
  bundle: PendingBundle
  simulatedAt?: number
  /** why it cannot land even at the top of the block */
  invalid?: string
  /** wei paid to the coinbase, and gas used, at the top of the block */
  payment: bigint
  gasUsed: bigint
  /** the top-of-block run, kept for the best bundle only */
  run?: { state: SimulationState; gasUsed: bigint; executed: Executed[] }
}

export type MergeOutcome =
  | { bundle: PendingBundle; status: 'included'; consideredAt: number }
  | { bundle: PendingBundle; status: 'outbid' | 'invalid'; reason: string; consideredAt: number }

export interface MergeResult {
  state: SimulationState
  gasUsed: bigint
  executed: Executed[]
  /** every bundle, in the order it was considered */
  outcomes: MergeOutcome[]
  /** top-of-block figures per bundle (payment, gas, simulation time) */
  simulations: TopOfBlock[]
}

/** Executes one bundle atomically on top of `state`; its result, or why it cannot land there. */
export async function runBundle(ctx: MergeContext, bundle: PendingBundle, state: SimulationState, gasUsed: bigint): Promise<BundleRun> {
  const { context } = ctx
  let current = state
  let used = gasUsed
  const executed: Executed[] = []
  for (const [i, tx] of bundle.txs.entries()) {
    if (used + tx.gasLimit > context.gasLimit) {
      return { reason: `tx ${i} (${tx.hash}): its gas limit ${tx.gasLimit} exceeds the gas left in the block (${context.gasLimit - used})` }
    }
    await ctx.pause()
    let result: TransactionResult
    try {
      result = await ctx.simulator.transaction(current, tx.tx)
    } catch (error) {
      if (error instanceof TransactionRejectedError) return { reason: `tx ${i} (${tx.hash}) cannot be included: ${error.message}` }
      ctx.onError(error)
      return { reason: `tx ${i} (${tx.hash}): the simulation failed: ${errorText(error)}` }
    }
    if (result.status !== 'success' && !bundle.reverting.has(tx.hash)) {
      const why = result.status === 'reverted' ? `reverted${result.revertReason === undefined ? '' : `: ${result.revertReason}`}` : `halted: ${result.error ?? 'unknown'}`
      return { reason: `tx ${i} (${tx.hash}) ${why}, and it is not in revertingTxHashes` }
    }
    executed.push({ result, tx, bundleHash: bundle.bundleHash })
    used += result.gasUsed
    current = result.state
  }
  return { state: current, gasUsed: used, executed }
}

/** Why a bundle can never land in this block without executing it (timestamps, a transaction on chain), else undefined. */
function staticInvalid(ctx: MergeContext, bundle: PendingBundle): string | undefined {
  const { context } = ctx
  if (bundle.minTimestamp !== undefined && context.timestamp < bundle.minTimestamp) {
    return `the block's timestamp ${context.timestamp} is before minTimestamp ${bundle.minTimestamp}`
  }
  if (bundle.maxTimestamp !== undefined && context.timestamp > bundle.maxTimestamp) {
    return `the block's timestamp ${context.timestamp} is after maxTimestamp ${bundle.maxTimestamp}`
  }
  for (const [i, tx] of bundle.txs.entries()) {
    const landed = ctx.receipts.get(tx.hash)
    if (landed !== undefined) return `tx ${i} (${tx.hash}) is already included in block ${landed.blockNumber}`
  }
  return undefined
}

async function coinbaseBalance(state: SimulationState, coinbase: Address): Promise<bigint> {
  return (await state.overlay.readAccount(coinbase))?.balance ?? 0n
}

/** Simulates every bundle at the top of the block (sequentially: the VMs and the CPU are shared). */
export async function simulateTopOfBlock(ctx: MergeContext, bundles: readonly PendingBundle[], top: SimulationState): Promise<TopOfBlock[]> {
  const before = await coinbaseBalance(top, ctx.coinbase)
  const out: TopOfBlock[] = []
  /** the only run kept: the best so far (it merges first, as is) */
  let best: TopOfBlock | undefined
  for (const bundle of bundles) {
    const invalid = staticInvalid(ctx, bundle)
    if (invalid !== undefined) {
      out.push({ bundle, invalid, payment: 0n, gasUsed: 0n })
      continue
    }
    const run = await runBundle(ctx, bundle, top, 0n)
    const simulatedAt = ctx.now()
    if ('reason' in run) {
      out.push({ bundle, simulatedAt, invalid: run.reason, payment: 0n, gasUsed: 0n })
      continue
    }
    const payment = (await coinbaseBalance(run.state, ctx.coinbase)) - before
    const sim: TopOfBlock = { bundle, simulatedAt, payment, gasUsed: run.gasUsed, run }
    if (best === undefined || byPaymentPerGas(sim, best) < 0) {
      if (best !== undefined) delete best.run
      best = sim
    } else {
      delete sim.run
    }
    out.push(sim)
  }
  return out
}

/**
 * Orders valid simulations by payment per gas, highest first (exact: a/b > c/d as a*d > c*b),
 * ties in arrival order.
 */
export function byPaymentPerGas(a: TopOfBlock, b: TopOfBlock): number {
  const left = a.payment * b.gasUsed
  const right = b.payment * a.gasUsed
  if (left !== right) return left > right ? -1 : 1
  return a.bundle.seq - b.bundle.seq
}

/**
 * Builds the bundle part of a block on `top` (the block's starting state): simulate, order, merge.
 * `top` is left intact (read-only); the merged state is a descendant of it.
 */
export async function mergeBundles(ctx: MergeContext, bundles: readonly PendingBundle[], top: SimulationState): Promise<MergeResult> {
  const simulations = await simulateTopOfBlock(ctx, bundles, top)
  const outcomes: MergeOutcome[] = []
  for (const sim of simulations) {
    if (sim.invalid !== undefined) outcomes.push({ bundle: sim.bundle, status: 'invalid', reason: sim.invalid, consideredAt: ctx.now() })
  }
  const valid = simulations.filter((s) => s.invalid === undefined).sort(byPaymentPerGas)

  let state = top
  let gasUsed = 0n
  const executed: Executed[] = []
  /** transactions in the block so far, with the bundle that brought each */
  const inBlock = new Map<Hex, Hex>()
  /** the block goes on from the state a merged bundle left */
  const take = (bundle: PendingBundle, run: { state: SimulationState; gasUsed: bigint; executed: Executed[] }): void => {
    state = run.state
    gasUsed = run.gasUsed
    executed.push(...run.executed)
    for (const e of run.executed) inBlock.set(e.tx.hash, bundle.bundleHash)
  }
  for (const [index, sim] of valid.entries()) {
    const { bundle } = sim
    const conflict = bundle.txs.findIndex((tx) => inBlock.has(tx.hash))
    if (conflict >= 0) {
      const tx = bundle.txs[conflict]
      outcomes.push({
        bundle,
        status: 'outbid',
        reason: `conflicts with bundle ${inBlock.get(tx.hash)} on tx ${conflict} (${tx.hash}): already in this block, merged first as it pays more per gas`,
        consideredAt: ctx.now(),
      })
      delete sim.run
      continue
    }
    const run = index === 0 && sim.run !== undefined ? sim.run : await runBundle(ctx, bundle, state, gasUsed)
    delete sim.run
    if ('reason' in run) {
      outcomes.push({ bundle, status: 'outbid', reason: `fails after the bundles merged before it: ${run.reason}`, consideredAt: ctx.now() })
      continue
    }
    take(bundle, run)
    outcomes.push({ bundle, status: 'included', consideredAt: ctx.now() })
  }

  // Dependent bundles: one that failed at the top of the block only because its sender's earlier
  // nonce was not yet used may be valid once the bundles merged above used it (a user's second
  // transaction behind its first), as rbuilder's dependency tracking allows. They are tried again,
  // in arrival order, on the block so far, while a pass includes one (at most NONCE_PASSES passes).
  for (let pass = 0; pass < NONCE_PASSES; pass++) {
    let progressed = false
    for (const outcome of outcomes) {
      if (outcome.status !== 'invalid' || !isNonceGap(outcome.reason)) continue
      const { bundle } = outcome
      if (bundle.txs.some((tx) => inBlock.has(tx.hash))) continue
      const run = await runBundle(ctx, bundle, state, gasUsed)
      if ('reason' in run) continue
      take(bundle, run)
      Object.assign(outcome, { status: 'included', consideredAt: ctx.now() })
      delete (outcome as { reason?: string }).reason
      progressed = true
    }
    if (!progressed) break
  }
  return { state, gasUsed, executed, outcomes, simulations }
}

const NONCE_PASSES = 8

/** a failure because the sender's nonce is below the tx's: a predecessor may still come */
function isNonceGap(reason: string): boolean {
  const nonce = nonceMismatch(reason)
  return nonce !== undefined && nonce.tx > nonce.account
}
