/**
 * Calldata for BackrunExecutor.backrun and BackrunExecutor.backrunExact
 * (src/contracts/BackrunExecutor.sol), and decoders for what they return, emit and revert with.
 *
 *   backrun(address startToken, uint256 amountIn, Hop[] hops, uint256 minProfit, uint16 refundBps,
 *           address refundRecipient) returns (uint256 grossProfit)
 *   backrunExact(address startToken, uint256 amountIn, Hop[] hops, uint256 expectedProfit,
 *           uint16 refundBps, address refundRecipient) returns (uint256 grossProfit)
 *   Hop { uint8 protocol; address pool; address tokenOut; uint24 fee; int24 tickSpacing }
 *        protocol: 0 = V2, 1 = V3, 2 = V4 (pool: the PoolManager; tickSpacing: V4 only, else 0),
 *        exactly as SwapPlanRouter's Hop
 *   event Backrun(address indexed startToken, uint256 grossProfit, uint256 refund)
 *
 * The contract needs no capital: it swaps amountIn of startToken on the first pool on credit
 * (output first, a flash swap), runs the other hops on that output, repays the first pool its
 * amountIn from the proceeds and pays out the rest, the gross profit: refundBps/10000 of it
 * (rounded down) to refundRecipient (to tx.origin when that is the zero address, the default here:
 * the backrun runs inside the user's own transaction), the remainder to its immutable beneficiary.
 * A backrun sent as a transaction of its own (signed by a searcher, after the user's transaction in
 * a bundle) must name the user as refundRecipient, since tx.origin is then the searcher. A hop's tokenIn and zeroForOne are not
 * encoded: the contract chains tokenIn from the previous hop and derives the direction from the
 * token addresses. The encoder checks that the cycle agrees with both and with the contract's other
 * rules, so a search bug fails here with a message instead of on chain with a revert.
 *
 * backrun reverts with InsufficientProfit(profit, minProfit) below minProfit; backrunExact runs the
 * same cycle and pays out alike but reverts with ProfitMismatch(profit, expectedProfit) unless the
 * gross profit is exactly expectedProfit: a backrun planned on one state and reported at its
 * profit then lands at that profit or not at all (other bundles placed before it in the block
 * that moved its pools make it revert, whether they raised or lowered its profit).
 */
import {
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionData,
  decodeFunctionResult,
  encodeFunctionData,
  isAddress,
  toEventSelector,
  type Abi,
  type AbiEvent,
} from 'viem'
import artifact from '../contracts/artifacts/BackrunExecutor.json' with { type: 'json' }
import type { Address, Hex } from '../chain/types.ts'
import type { PoolProtocol } from '../pools/pools.ts'
import type { PlanHop } from '../routing/swap-plan.ts'
import { BaseError } from '../primitives/base-error.ts'

/** The backrun contract's ABI, from its committed artifact. */
export const BACKRUN_EXECUTOR_ABI = artifact.abi as Abi

/** Hop.protocol on chain (as SwapPlanRouter's). */
export const BACKRUN_PROTOCOL: Readonly<Record<PoolProtocol, number>> = { 'uniswap-v2': 0, 'uniswap-v3': 1, 'uniswap-v4': 2 }
/** Hop.protocol of a V4 hop whose key holds native ETH where the hop holds WETH (the contract unwraps and wraps around it) */
export const BACKRUN_PROTOCOL_V4_NATIVE = 3

/** Hops of a backrun cycle. */
export const MIN_BACKRUN_HOPS = 2
export const MAX_BACKRUN_HOPS = 3
/** refundBps is in basis points of the gross profit. */
export const MAX_REFUND_BPS = 10_000
/** refundRecipient meaning "tx.origin" (the default). */
export const REFUND_TO_TX_ORIGIN: Address = '0x0000000000000000000000000000000000000000'

export interface BackrunCallParams {
  /** the token the cycle starts and ends in; the profit is paid in it */
  startToken: Address
  /** what the first pool is sent (on credit) */
  amountIn: bigint
  /** 2 or 3 hops, hops[0].tokenIn = startToken, each next tokenIn = the previous tokenOut, last tokenOut = startToken */
  hops: readonly PlanHop[]
  /** the call reverts with InsufficientProfit(profit, minProfit) below this gross profit */
  minProfit: bigint
  /** share of the gross profit refunded, in basis points, 0..10000 */
  refundBps: number
  /**
   * receives the refund; omitted or the zero address: tx.origin (right when the backrun runs inside
   * the user's own transaction). Set it to the user when the backrun is a transaction of its own
   * signed by someone else (a searcher's backrun after the user's transaction in a bundle).
   */
  refundRecipient?: Address
}

/**
 * backrunExact's parameters: backrun's, with expectedProfit (the only gross profit the call accepts)
 * in place of minProfit. A minProfit carried along (e.g. from a BackrunCallParams spread) is ignored.
 */
export type BackrunExactCallParams = Omit<BackrunCallParams, 'minProfit'> & {
  /** the call reverts with ProfitMismatch(profit, expectedProfit) unless the gross profit is exactly this */
  expectedProfit: bigint
}

/** The cycle cannot be executed by the backrun contract as it stands. */
export class InvalidBackrunError extends BaseError<Record<string, unknown>> {
  override readonly name = 'InvalidBackrunError'
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { details })
  }
}

const MAX_UINT256 = (1n << 256n) - 1n
/** the contract passes amountIn to V3 pools as an int256 */
const MAX_AMOUNT_IN = (1n << 255n) - 1n
const MAX_UINT24 = (1 << 24) - 1
/** V4's TickMath.MAX_TICK_SPACING; a key's spacing is at least 1 */
const MAX_V4_TICK_SPACING = 32_767
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** The `backrun` calldata for `params`; throws InvalidBackrunError when the contract would reject the cycle. */
export function encodeBackrunCall(params: BackrunCallParams): Hex {
  checkBackrun(params)
  return encodeCall('backrun', params, params.minProfit)
}

/**
 * The `backrunExact` calldata for `params`: lands only at a gross profit of exactly
 * params.expectedProfit. Throws InvalidBackrunError when the contract would reject the cycle.
 */
export function encodeBackrunExactCall(params: BackrunExactCallParams): Hex {
  checkCycle(params, 'expectedProfit', params.expectedProfit)
  return encodeCall('backrunExact', params, params.expectedProfit)
}

/**
 * `calldata` (a `backrun` call, as encodeBackrunCall or eth_backrun made it) as the equivalent
 * `backrunExact` call with `expectedProfit`: the same cycle, amount, refund share and recipient,
 * minProfit dropped. A `backrunExact` call is accepted too (its expectedProfit is replaced).
 * Throws InvalidBackrunError when calldata is not one of the two or expectedProfit is not a uint256.
 */
export function toExactBackrunCall(calldata: Hex, expectedProfit: bigint): Hex {
  checkProfit('expectedProfit', expectedProfit)
  let decoded
  try {
    // (viem matches the selector case-sensitively)
    decoded = decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data: calldata.toLowerCase() as Hex })
  } catch (err) {
    throw new InvalidBackrunError(`calldata is not a BackrunExecutor call: ${(err as Error).message.split('\n')[0]}`, { selector: calldata.slice(0, 10) })
  }
  if (decoded.functionName !== 'backrun' && decoded.functionName !== 'backrunExact') {
    throw new InvalidBackrunError(`calldata calls ${decoded.functionName}, not backrun`, { functionName: decoded.functionName })
  }
  const [startToken, amountIn, hops, , refundBps, refundRecipient] = decoded.args as readonly [Address, bigint, readonly OnchainHop[], bigint, number, Address]
  return encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrunExact', args: [startToken, amountIn, hops, expectedProfit, refundBps, refundRecipient] })
}

/** Hop as the contract takes it */
interface OnchainHop {
  protocol: number
  pool: Address
  tokenOut: Address
  fee: number
  tickSpacing: number
  hooks: Address
}

function encodeCall(functionName: 'backrun' | 'backrunExact', params: Omit<BackrunCallParams, 'minProfit'>, profit: bigint): Hex {
  // a V4 hop names the PoolManager; the contract builds the key from the tokens, fee, spacing and
  // hooks (native ETH in place of the hop's WETH for protocol 3)
  const hops: OnchainHop[] = params.hops.map((hop) => ({
    protocol: hop.v4?.nativeEth === true ? BACKRUN_PROTOCOL_V4_NATIVE : BACKRUN_PROTOCOL[hop.protocol],
    pool: hop.v4?.poolManager ?? hop.pool,
    tokenOut: hop.tokenOut,
    fee: hop.fee,
    tickSpacing: hop.v4?.tickSpacing ?? 0,
    hooks: hop.v4?.hooks ?? ZERO_ADDRESS,
  }))
  return encodeFunctionData({
    abi: BACKRUN_EXECUTOR_ABI,
    functionName,
    args: [params.startToken, params.amountIn, hops, profit, params.refundBps, params.refundRecipient ?? REFUND_TO_TX_ORIGIN],
  })
}

/** Throws InvalidBackrunError unless the contract accepts the cycle and parameters as given. */
export function checkBackrun(params: BackrunCallParams): void {
  checkCycle(params, 'minProfit', params.minProfit)
}

/** checkBackrun for either entry point: `profit` is minProfit or expectedProfit (named `profitName`). */
function checkCycle(params: Omit<BackrunCallParams, 'minProfit'>, profitName: 'minProfit' | 'expectedProfit', profit: bigint): void {
  const { startToken, amountIn, hops, refundBps } = params
  checkAddress('startToken', startToken)
  if (typeof amountIn !== 'bigint' || amountIn <= 0n || amountIn > MAX_AMOUNT_IN) {
    throw new InvalidBackrunError(`amountIn ${String(amountIn)} is not in 1..2^255-1`, { amountIn })
  }
  checkProfit(profitName, profit)
  if (!Number.isInteger(refundBps) || refundBps < 0 || refundBps > MAX_REFUND_BPS) {
    throw new InvalidBackrunError(`refundBps ${String(refundBps)} is not an integer in 0..${MAX_REFUND_BPS}`, { refundBps })
  }
  if (params.refundRecipient !== undefined) checkAddress('refundRecipient', params.refundRecipient, { refundRecipient: params.refundRecipient })
  if (hops.length < MIN_BACKRUN_HOPS || hops.length > MAX_BACKRUN_HOPS) {
    throw new InvalidBackrunError(`a backrun cycle has ${MIN_BACKRUN_HOPS} or ${MAX_BACKRUN_HOPS} hops, not ${hops.length}`, { hops: hops.length })
  }
  let tokenIn: Address = startToken
  const pools = new Set<string>()
  for (const [i, hop] of hops.entries()) {
    const where = { hop: i }
    if (!Object.hasOwn(BACKRUN_PROTOCOL, hop.protocol)) throw new InvalidBackrunError(`hop ${i}: unknown protocol ${String(hop.protocol)}`, where)
    if (hop.protocol === 'uniswap-v4') checkV4Hop(i, hop)
    else if (hop.v4 !== undefined) throw new InvalidBackrunError(`hop ${i}: a ${hop.protocol} hop names a PoolManager`, where)
    else checkAddress(`hop ${i} pool`, hop.pool, where)
    checkAddress(`hop ${i} tokenIn`, hop.tokenIn, where)
    checkAddress(`hop ${i} tokenOut`, hop.tokenOut, where)
    if (!sameAddress(hop.tokenIn, tokenIn)) {
      throw new InvalidBackrunError(`hop ${i} starts in ${hop.tokenIn}, but the cycle is at ${tokenIn}`, where)
    }
    if (sameAddress(hop.tokenIn, hop.tokenOut)) throw new InvalidBackrunError(`hop ${i} swaps ${hop.tokenIn} for itself`, where)
    // the contract swaps token0 -> token1 exactly when tokenIn is the lower address
    if (hop.zeroForOne !== BigInt(hop.tokenIn) < BigInt(hop.tokenOut)) {
      throw new InvalidBackrunError(`hop ${i}: zeroForOne ${hop.zeroForOne} disagrees with the token order`, where)
    }
    if (!Number.isInteger(hop.fee) || hop.fee < 0 || hop.fee > MAX_UINT24) throw new InvalidBackrunError(`hop ${i}: fee ${hop.fee} is not a uint24`, where)
    // a pool is locked while it is the flash lender (and V2/V3 pools are not reentrant): a second
    // swap on it in the same cycle reverts (a V4 hop's pool is its PoolId: two V4 pools may share a cycle)
    const pool = hop.pool.toLowerCase()
    if (pools.has(pool)) throw new InvalidBackrunError(`hop ${i} uses pool ${hop.pool} a second time`, where)
    pools.add(pool)
    tokenIn = hop.tokenOut
  }
  if (!sameAddress(tokenIn, startToken)) {
    throw new InvalidBackrunError(`the cycle ends in ${tokenIn}, not in startToken ${startToken}`, { tokenOut: tokenIn })
  }
}

/**
 * A V4 hop: its pool is the 32-byte PoolId, it names its PoolManager, tick spacing and hooks (if
 * any), and swaps ERC-20 tokens: a native-ETH key's hop holds WETH (the contract checks that one
 * side is its WETH).
 */
function checkV4Hop(i: number, hop: PlanHop): void {
  const where = { hop: i }
  if (typeof hop.pool !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(hop.pool)) throw new InvalidBackrunError(`hop ${i}: V4 pool ${String(hop.pool)} is not a PoolId`, where)
  if (hop.v4 === undefined) throw new InvalidBackrunError(`hop ${i}: a V4 hop names its PoolManager and tick spacing`, where)
  checkAddress(`hop ${i} PoolManager`, hop.v4.poolManager, where)
  const { tickSpacing } = hop.v4
  if (!Number.isInteger(tickSpacing) || tickSpacing < 1 || tickSpacing > MAX_V4_TICK_SPACING) {
    throw new InvalidBackrunError(`hop ${i}: tick spacing ${tickSpacing} is not a V4 spacing (1..${MAX_V4_TICK_SPACING})`, where)
  }
  if (hop.v4.hooks !== undefined) checkAddress(`hop ${i} hooks`, hop.v4.hooks, where)
  // the cycle holds ERC-20s only: a native-ETH key's hop names WETH (nativeEth), never address(0)
  if (hop.tokenIn === ZERO_ADDRESS || hop.tokenOut === ZERO_ADDRESS) throw new InvalidBackrunError(`hop ${i}: native ETH (currency address(0)) is not a backrun token: name WETH with v4.nativeEth`, where)
}

/** How the contract splits `grossProfit`: the refund (rounded down, to refundRecipient or tx.origin) and the beneficiary's rest. */
export function splitBackrunProfit(grossProfit: bigint, refundBps: number): { refund: bigint; beneficiary: bigint } {
  const refund = (grossProfit * BigInt(refundBps)) / BigInt(MAX_REFUND_BPS)
  return { refund, beneficiary: grossProfit - refund }
}

/** grossProfit from the return data of a successful backrun or backrunExact call (both return it alike). */
export function decodeBackrunResult(returnData: Hex): bigint {
  return decodeFunctionResult({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrun', data: returnData }) as bigint
}

export interface BackrunEvent {
  /** the contract that emitted it */
  executor: Address
  startToken: Address
  grossProfit: bigint
  refund: bigint
}

const BACKRUN_EVENT = BACKRUN_EXECUTOR_ABI.find((x): x is AbiEvent => x.type === 'event' && x.name === 'Backrun')!
/** topic0 of the Backrun event */
export const BACKRUN_EVENT_TOPIC = toEventSelector(BACKRUN_EVENT)

/**
 * The Backrun events among `logs` (of a simulation or a receipt), from `executor` when given.
 * Other logs, including look-alikes from other addresses, are skipped.
 */
export function decodeBackrunEvents(logs: readonly { address: string; topics: readonly Hex[]; data: Hex }[], executor?: Address): BackrunEvent[] {
  const out: BackrunEvent[] = []
  for (const log of logs) {
    if (log.topics[0]?.toLowerCase() !== BACKRUN_EVENT_TOPIC) continue
    if (executor !== undefined && !sameAddress(log.address, executor)) continue
    const { args } = decodeEventLog({ abi: [BACKRUN_EVENT], data: log.data, topics: log.topics as [Hex, ...Hex[]] }) as unknown as {
      args: { startToken: Address; grossProfit: bigint; refund: bigint }
    }
    out.push({ executor: log.address.toLowerCase() as Address, startToken: args.startToken.toLowerCase() as Address, grossProfit: args.grossProfit, refund: args.refund })
  }
  return out
}

export interface BackrunRevert {
  errorName: string
  args: readonly unknown[]
}

/**
 * The revert in `revertData`: one of the contract's custom errors (InsufficientProfit(int256 profit,
 * uint256 minProfit) from backrun, ProfitMismatch(int256 profit, uint256 expectedProfit) from
 * backrunExact, InvalidPool(pool), ...) or a standard Error(string) / Panic(uint256) bubbled
 * up unchanged from a pool or token; undefined for anything else (no data, another custom error).
 */
export function decodeBackrunRevert(revertData: Hex): BackrunRevert | undefined {
  try {
    const decoded = decodeErrorResult({ abi: BACKRUN_EXECUTOR_ABI, data: revertData })
    return { errorName: decoded.errorName, args: decoded.args ?? [] }
  } catch {
    return undefined
  }
}

function checkProfit(name: 'minProfit' | 'expectedProfit', value: bigint): void {
  if (typeof value !== 'bigint' || value < 0n || value > MAX_UINT256) {
    throw new InvalidBackrunError(`${name} ${String(value)} is not a uint256`, { [name]: value })
  }
}

function checkAddress(name: string, value: string, details: Record<string, unknown> = {}): void {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw new InvalidBackrunError(`${name} ${String(value)} is not an address`, details)
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase()
}
