/**
 * The computation of a backrun plan, apart from the searcher keys: the same steps whether they run
 * on the main thread (EngineBackrunPlanner, WORKERS=0) or in a worker of the pool
 * (src/workers/pooled-backrun-planner.ts), where the keys are not: a worker reaches them through
 * {@link SearcherKeyLeases} answered by the main thread, so private keys never leave it.
 *
 *   current head (next-block context)
 *     -> the user's signed txs executed in order (a notify: the notified tx alone), every inclusion rule
 *     -> a searcher key leased for the target block (one backrun per key per block, so backruns of
 *        one block never share a nonce); none left: no backrun this block
 *     -> BackrunEngine.searchAfter(base, after, their logs, { origin: searcher, refundBps,
 *        refundRecipient: the user })  (the refund share goes to the signer of the last user tx,
 *        named to the contract: tx.origin is our searcher in a bundle)
 *     -> an EIP-1559 tx from the searcher: to = executor, data = the engine's cycle as
 *        backrunExact with the verified gross profit as its expected profit (it realizes exactly
 *        that or reverts),
 *        nonce = the searcher's nonce after the user txs on this head, maxPriorityFeePerGas from
 *        config or just above the user's own tip (see backrunTip),
 *        maxFeePerGas = 2 x next base fee + priority fee, gas limit = (measured gas + 21 000) + margin
 *     -> signed by the key's holder, decoded again (sender must be the searcher), and executed on
 *        the post-user state: it must succeed; its return value is the gross profit reported
 *
 * `null`: the user txs revert, or no backrun is profitable (the engine's minimum, and a positive
 * net once the transaction's own 21 000 base gas is paid). Throws {@link BackrunPlanError} when a
 * plan cannot be made for a reason worth seeing in the submission's lifecycle ("why no backrun").
 * The key leased for the plan is given back when no plan comes of it (null or an error).
 */
import { decodeAbiParameters } from 'viem'

import { toExactBackrunCall } from '../backrun/backrun-calldata.ts'
import type { BackrunEngine } from '../backrun/backrun-engine.ts'
import { readPoolMoves } from '../backrun/pool-moves.ts'
import { bytesToHexString } from '../chain/quantity.ts'
import type { Address, ChainStateSource, Hex } from '../chain/types.ts'
import { TransactionRejectedError, type BundleResult, type Simulator, type TransactionResult } from '../evm/simulator.ts'
import { BaseError } from '../primitives/base-error.ts'
import { nonNegativeInt } from '../primitives/numbers.ts'
import { decodeSignedTransaction, type DecodedTransaction } from '../tx/decode-transaction.ts'
import type { BackrunTransactionRequest } from './backrun-signer.ts'
import type { BackrunPlan, BackrunPlanInput } from './dispatcher-ports.ts'
import { executable, throwIfAborted } from './engine-simulator.ts'

/**
 * - `user-txs-not-includable`: the user's txs cannot be executed on the current head (nonce, funds)
 * - `signer-mismatch`: the signed tx does not recover to the signer's address
 * - `backrun-not-includable`: the signed backrun cannot be included (e.g. the searcher cannot pay its gas)
 * - `backrun-failed`: the signed backrun reverts or halts on the post-user state
 * - `no-searcher-key`: every searcher key already carries a backrun for the target block
 */
export type BackrunPlanErrorReason = 'user-txs-not-includable' | 'signer-mismatch' | 'backrun-not-includable' | 'backrun-failed' | 'no-searcher-key'

export class BackrunPlanError extends BaseError {
  override readonly name = 'BackrunPlanError'

  constructor(
    readonly reason: BackrunPlanErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause })
  }
}

/**
 * The searcher keys as planning uses them: leased per target block, and signing for the holder of
 * a lease. On the main thread a SearcherKeyPool stands behind it (searcher-key-leases.ts); in a
 * worker, messages to the main thread do.
 */
export interface SearcherKeyLeases {
  /** how many keys there are (for the message when every one is taken) */
  readonly size: number
  /**
   * Forgets the leases of blocks up to `head` (they are built), then leases a key for `target` to
   * `owner` (the same owner asking again for the same block gets the same key): its address, or
   * undefined when every key carries another owner's backrun for `target`.
   */
  lease(head: bigint, target: bigint, owner: string): Promise<Address | undefined>
  /** Signs `request` with the key `owner` holds for `target`: the raw signed transaction. */
  sign(target: bigint, owner: string, request: BackrunTransactionRequest): Promise<Hex>
  /** Gives `owner`'s key for `target` back. */
  release(target: bigint, owner: string): Promise<void>
}

/** How backruns are priced and sized: the planner's options, checked. Plain data (it crosses to workers). */
export interface BackrunPlanningSettings {
  /** share of the gross profit refunded to the user (the signer of the last user tx), basis points */
  refundBps: number
  /** tip of the backrun transaction, wei per gas */
  maxPriorityFeePerGas: bigint
  /** added to the measured gas (the backrun's execution + 21 000), basis points */
  gasLimitMarginBps: number
}

const TX_BASE_GAS = 21_000n
const DEFAULT_GAS_MARGIN_BPS = 3_000

/**
 * The settings with their defaults (refund 0, margin 3 000 bps = +30%), checked.
 * @throws RangeError for a bad value
 */
export function planningSettings(options: { refundBps?: number; maxPriorityFeePerGas: bigint; gasLimitMarginBps?: number }, owner: string): BackrunPlanningSettings {
  const refundBps = options.refundBps ?? 0
  if (!Number.isSafeInteger(refundBps) || refundBps < 0 || refundBps > 10_000) throw new RangeError(`${owner}: refundBps must be an integer in 0..10000, got ${refundBps}`)
  if (typeof options.maxPriorityFeePerGas !== 'bigint' || options.maxPriorityFeePerGas < 0n) {
    throw new RangeError(`${owner}: maxPriorityFeePerGas must be a non-negative bigint (wei)`)
  }
  const gasLimitMarginBps = nonNegativeInt('gasLimitMarginBps', options.gasLimitMarginBps ?? DEFAULT_GAS_MARGIN_BPS, owner)
  return { refundBps, maxPriorityFeePerGas: options.maxPriorityFeePerGas, gasLimitMarginBps }
}

/** What a plan is computed with. */
export interface BackrunPlanning {
  /** the newest head (in a worker: the task's block), and the chain id the backrun is signed for */
  chain: Pick<ChainStateSource, 'chainId' | 'latest'>
  simulator: Pick<Simulator, 'openState' | 'bundle' | 'transaction' | 'common'>
  engine: Pick<BackrunEngine, 'searchAfter'>
  keys: SearcherKeyLeases
  settings: BackrunPlanningSettings
}

/** What planning reads of the dispatcher's input (the target block is the head's next). */
export type BackrunPlanningInput = Pick<BackrunPlanInput, 'id' | 'kind' | 'userTxs' | 'simulation' | 'signal' | 'tipFloor'>

/** A plan for the block after the current head, or null (see the file's comment). */
export async function planBackrun(planning: BackrunPlanning, input: BackrunPlanningInput): Promise<BackrunPlan | null> {
  throwIfAborted(input.signal)
  // the user's txs revert: their effects are undone, nothing to backrun
  if (input.simulation !== undefined && !input.simulation.success) return null
  if (input.userTxs.length === 0) return null
  const { simulator, keys } = planning
  const userTxs = input.kind === 'notify' ? input.userTxs.slice(-1) : input.userTxs

  const reader = planning.chain.latest()
  const base = simulator.openState(reader)
  let users: BundleResult
  try {
    users = await simulator.bundle(
      base,
      userTxs.map((t) => executable(t, simulator)),
    )
  } catch (err) {
    if (err instanceof TransactionRejectedError) {
      throw new BackrunPlanError('user-txs-not-includable', `the user transactions cannot be executed on block ${reader.block.number + 1n}: ${err.message}`, { cause: err })
    }
    throw err
  }
  if (!users.success) return null
  throwIfAborted(input.signal)

  const target = reader.block.number + 1n
  const owner = input.id
  // blocks up to this head are built: their leases are void
  const searcher = await keys.lease(reader.block.number, target, owner)
  if (searcher === undefined) {
    throw new BackrunPlanError('no-searcher-key', `all ${keys.size} searcher keys already carry a backrun for block ${target}; planned again at the next head`)
  }
  try {
    const plan = await planWith(planning, searcher.toLowerCase() as Address, target, input, base, users)
    if (plan === null) await keys.release(target, owner)
    return plan
  } catch (err) {
    await keys.release(target, owner)
    throw err
  }
}

async function planWith(
  planning: BackrunPlanning,
  searcher: Address,
  target: bigint,
  input: BackrunPlanningInput,
  base: ReturnType<BackrunPlanning['simulator']['openState']>,
  users: BundleResult,
): Promise<BackrunPlan | null> {
  const { simulator, settings } = planning
  const user = input.userTxs[input.userTxs.length - 1].sender
  const logs = users.results.flatMap((r) => r.logs)
  const found = await planning.engine.searchAfter(base, users.state, logs, { origin: searcher, refundBps: settings.refundBps, refundRecipient: user })
  if (found === null) return null
  throwIfAborted(input.signal)

  const nonce = (await users.state.overlay.readAccount(searcher))?.nonce ?? 0n
  const baseFee = base.block.baseFeePerGas ?? 0n
  const userGas = users.results.map((r) => r.gasUsed)
  const floor = input.tipFloor ?? 0n
  const measured = found.gas + TX_BASE_GAS
  const gasLimit = (measured * (10_000n + BigInt(settings.gasLimitMarginBps)) + 9_999n) / 10_000n
  /** signs the backrun with `tip` and executes it right after the user's txs */
  const signAndRun = async (tip: bigint): Promise<{ signed: DecodedTransaction; executed: TransactionResult }> => {
    const raw = await planning.keys.sign(target, input.id, {
      chainId: planning.chain.chainId,
      nonce,
      to: found.contract,
      // backrunExact: it lands only where it realizes exactly the profit reported for this block;
      // on a state that earlier bundles moved it reverts, its bundle fails, and the backrun-free
      // bundle lands the user instead
      data: toExactBackrunCall(found.calldata, found.grossProfit),
      gasLimit,
      maxFeePerGas: 2n * baseFee + tip,
      maxPriorityFeePerGas: tip,
    })
    const signed = decodeSignedTransaction(raw, { chainId: planning.chain.chainId, common: simulator.common })
    if (signed.sender !== searcher) {
      throw new BackrunPlanError('signer-mismatch', `the signed backrun recovers to ${signed.sender}, not the searcher ${searcher}`)
    }
    let executed: TransactionResult
    try {
      executed = await simulator.transaction(users.state, signed.tx)
    } catch (err) {
      if (err instanceof TransactionRejectedError) {
        throw new BackrunPlanError('backrun-not-includable', `the signed backrun cannot be included: ${err.message}`, { cause: err })
      }
      throw err
    }
    if (executed.status !== 'success') {
      const why = executed.status === 'halted' ? `halted (${executed.error ?? 'EVM error'})` : `reverted (${executed.revertReason ?? 'no reason'})`
      throw new BackrunPlanError('backrun-failed', `the signed backrun ${why} right after the user transactions`)
    }
    return { signed, executed }
  }

  let tip = backrunTip(settings.maxPriorityFeePerGas, input.userTxs, baseFee, { userGas, backrunGas: measured, floor })
  let { signed, executed } = await signAndRun(tip)
  // The tip was set on the search's gas figure; the receipt's may be lower (refunds), and then the
  // bundle pays a hair under the floor per gas and a swap that tips exactly the floor merges
  // first. Its gas does not depend on its tip: set again on the measured gas, signed once more.
  const exact = backrunTip(settings.maxPriorityFeePerGas, input.userTxs, baseFee, { userGas, backrunGas: executed.gasUsed, floor })
  if (exact > tip) {
    tip = exact
    ;({ signed, executed } = await signAndRun(tip))
  }
  const grossProfit = returnedProfit(executed) ?? found.grossProfit
  // the engine's net counts the backrun's execution gas only (as inside a user transaction);
  // a transaction of its own also pays the base 21 000 and whatever else its receipt shows
  // and its tip may be above the configured one (see backrunTip)
  const netProfitWei =
    found.netProfitWei - (executed.gasUsed > found.gas ? executed.gasUsed - found.gas : 0n) * (baseFee + tip) - found.gas * (tip - settings.maxPriorityFeePerGas)
  if (grossProfit <= 0n || netProfitWei <= 0n) return null

  // what the bundle [user txs, backrun] moves: the pools the user's swaps moved and the cycle's
  const pools = [...new Set([...readPoolMoves(logs).keys(), ...found.hops.map((h) => h.pool.toLowerCase() as Address)])]
  return { rawBackrunTx: signed.rawHex, grossProfit, profitToken: found.profitToken, netProfitWei, gasUsed: executed.gasUsed, block: target, searcher, pools }
}

/**
 * The backrun's tip. Builders order bundles by what they pay per gas, and the backrun bundle
 * [user txs, backrun] competes with the user's own bundle [user txs] beside it and with the other
 * users' bundles of the block. It must pay more per gas than the user's own (or the builder merges
 * that first and the backrun, which conflicts with it, never lands), and more than `floor` (the
 * highest tip among the other users' submissions for the block) so that it is merged before them
 * and finds the state it was planned on. So: the configured tip, or the smallest tip above both,
 * whichever is higher. Its cost is taken from the net profit.
 */
export function backrunTip(
  configured: bigint,
  userTxs: readonly DecodedTransaction[],
  baseFee: bigint,
  weights?: { userGas: readonly bigint[]; backrunGas: bigint; floor: bigint },
): bigint {
  let highest = 0n
  let userPay = 0n
  let userGas = 0n
  for (const [i, tx] of userTxs.entries()) {
    const headroom = tx.gasFeeCap - baseFee
    const effective = tx.gasTipCap < headroom ? tx.gasTipCap : headroom
    if (effective > highest) highest = effective
    const gas = weights?.userGas[i] ?? 0n
    userPay += (effective > 0n ? effective : 0n) * gas
    userGas += gas
  }
  let tip = highest + 1n > configured ? highest + 1n : configured
  if (weights !== undefined && weights.backrunGas > 0n && weights.floor >= highest) {
    // (userPay + tip * backrunGas) / (userGas + backrunGas) > floor
    const needed = ((weights.floor + 1n) * (userGas + weights.backrunGas) - userPay + weights.backrunGas - 1n) / weights.backrunGas
    if (needed > tip) tip = needed
  }
  return tip
}

/** BackrunExecutor.backrun returns its gross profit (uint256). */
function returnedProfit(result: TransactionResult): bigint | undefined {
  if (result.returnData.length < 32) return undefined
  const [profit] = decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(result.returnData.subarray(0, 32)))
  return profit
}
