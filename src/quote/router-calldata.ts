/**
 * Calldata for SwapPlanRouter.swap (src/contracts/SwapPlanRouter.sol), from a SwapPlan.
 *
 *   swap(Plan plan, uint256 minAmountOut, address recipient, uint256 deadline,
 *        address postCallTarget, bytes postCallData) payable returns (uint256 amountOut)
 *   Plan { address tokenIn; address tokenOut; uint256 amountIn; Leg[] legs }
 *   Leg  { uint256 amountIn; Hop[] hops }
 *   Hop  { uint8 protocol; address pool; address tokenOut; uint24 fee; int24 tickSpacing; address hooks }
 *        protocol: 0 = V2, 1 = V3, 2 = V4, 3 = V4 with native ETH in the key where the hop has WETH
 *        (pool: the PoolManager; tickSpacing and hooks: V4 only, else 0)
 *
 * A hop's tokenIn and zeroForOne are not encoded: the contract chains tokenIn from the previous
 * hop and derives the direction from the token addresses. The encoder checks that the plan agrees
 * with both (and with the contract's other rules), so a route-search bug fails here with a message
 * instead of on chain with a revert.
 */
import { toFunctionSelector, zeroAddress, type Abi, type AbiFunction } from 'viem'
import artifact from '../contracts/artifacts/SwapPlanRouter.json' with { type: 'json' }
import type { Address, Hex } from '../chain/types.ts'
import type { PoolProtocol } from '../pools/pools.ts'
import { MAX_HOPS, type PlanHop, type SwapPlan } from '../routing/swap-plan.ts'
import { BaseError } from '../primitives/base-error.ts'

/** The router's ABI, from its committed artifact. */
export const SWAP_PLAN_ROUTER_ABI = artifact.abi as Abi

/** Hop.protocol on chain. */
export const ROUTER_PROTOCOL: Readonly<Record<PoolProtocol, number>> = { 'uniswap-v2': 0, 'uniswap-v3': 1, 'uniswap-v4': 2 }
/** Hop.protocol of a V4 hop whose key holds native ETH where the hop holds WETH */
export const ROUTER_PROTOCOL_V4_NATIVE = 3

/** An optional call the router makes (from its post-call proxy) after paying the recipient. */
export interface PostSwapCall {
  target: Address
  data: Hex
}

export interface SwapPlanCallParams {
  plan: SwapPlan
  /** the swap reverts with InsufficientOutput(amountOut, minAmountOut) below this */
  minAmountOut: bigint
  /** receives tokenOut; omitted (or the zero address) means msg.sender */
  recipient?: Address
  /** unix seconds; the swap reverts with Expired() once block.timestamp is past it */
  deadline: bigint
  postCall?: PostSwapCall
}

/** The plan cannot be executed by the router as it stands. */
export class InvalidSwapPlanError extends BaseError<Record<string, unknown>> {
  override readonly name = 'InvalidSwapPlanError'
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { details })
  }
}

const MAX_UINT256 = (1n << 256n) - 1n
const MAX_UINT24 = (1 << 24) - 1

/** swap's selector, from the artifact's ABI */
const SWAP_SELECTOR = toFunctionSelector(SWAP_PLAN_ROUTER_ABI.find((x): x is AbiFunction => x.type === 'function' && x.name === 'swap')!)
/** the argument head: Plan (its offset), minAmountOut, recipient, deadline, postCallTarget, postCallData (its offset) */
const HEAD_WORDS = 6
/** a Hop is a static tuple of six words */
const HOP_WORDS = 6
const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/
const HEX_BYTES_PATTERN = /^0x(?:[0-9a-fA-F]{2})*$/

/**
 * The `swap` calldata for `params`; throws InvalidSwapPlanError when the router would reject the
 * plan. ABI-encoded here, word by word, rather than by viem's general encoder (it walks the ABI's
 * parameter tree and validates every value anew on every call: ~0.1-0.2 ms a quote); the result
 * is the same bytes (test/quote/router-calldata.test.ts compares them with viem's), in lowercase hex.
 */
export function encodeSwapPlanCall(params: SwapPlanCallParams): Hex {
  const { plan, minAmountOut, deadline, postCall } = params
  checkPlan(plan)
  checkUint256('minAmountOut', minAmountOut)
  checkUint256('deadline', deadline)
  const postData = postCall?.data ?? '0x'
  if (!HEX_BYTES_PATTERN.test(postData)) throw new InvalidSwapPlanError('postCall.data is not hex bytes')
  // the Plan tuple: tokenIn, tokenOut, amountIn, the offset of legs (4 words on), then legs
  const legs = encodeLegs(plan)
  const planWords = 4 + legs.length / 64
  const words = [
    uintWord(BigInt(32 * HEAD_WORDS)),
    uintWord(minAmountOut),
    addressWord('recipient', params.recipient ?? zeroAddress),
    uintWord(deadline),
    addressWord('postCall.target', postCall?.target ?? zeroAddress),
    uintWord(BigInt(32 * (HEAD_WORDS + planWords))),
    addressWord('plan.tokenIn', plan.tokenIn),
    addressWord('plan.tokenOut', plan.tokenOut),
    uintWord(plan.amountIn),
    uintWord(128n),
    legs,
    // bytes: its length, then the bytes padded to whole words
    uintWord(BigInt((postData.length - 2) / 2)),
    postData.slice(2).toLowerCase().padEnd(Math.ceil((postData.length - 2) / 64) * 64, '0'),
  ]
  return `${SWAP_SELECTOR}${words.join('')}`
}

/**
 * Leg[]: its length, each leg's offset (from the first offset word), then the legs. A leg is
 * (amountIn, the offset of hops: 2 words on, hops: their count, then HOP_WORDS words each). A V4
 * hop names the PoolManager; the router builds the key from the tokens, fee, spacing and hooks.
 */
function encodeLegs(plan: SwapPlan): string {
  const offsets: string[] = []
  const bodies: string[] = []
  let offset = 32 * plan.legs.length
  for (const leg of plan.legs) {
    offsets.push(uintWord(BigInt(offset)))
    const words = [uintWord(leg.amountIn), uintWord(64n), uintWord(BigInt(leg.hops.length))]
    for (const hop of leg.hops) {
      words.push(
        uintWord(BigInt(hop.v4?.nativeEth === true ? ROUTER_PROTOCOL_V4_NATIVE : ROUTER_PROTOCOL[hop.protocol])),
        addressWord('hop.pool', hop.v4?.poolManager ?? hop.pool),
        addressWord('hop.tokenOut', hop.tokenOut),
        uintWord(BigInt(hop.fee)),
        intWord(BigInt(hop.v4?.tickSpacing ?? 0)),
        addressWord('hop.hooks', hop.v4?.hooks ?? zeroAddress),
      )
    }
    bodies.push(words.join(''))
    offset += 32 * (3 + HOP_WORDS * leg.hops.length)
  }
  return `${uintWord(BigInt(plan.legs.length))}${offsets.join('')}${bodies.join('')}`
}

/** a uint (checked < 2^256 by the caller) as a word of hex */
function uintWord(value: bigint): string {
  return value.toString(16).padStart(64, '0')
}

/** an int (int24 here) as a word of hex, two's complement */
function intWord(value: bigint): string {
  return uintWord(value < 0n ? (1n << 256n) + value : value)
}

function addressWord(name: string, address: string): string {
  if (!ADDRESS_PATTERN.test(address)) throw new InvalidSwapPlanError(`${name} ${address} is not an address`)
  return address.slice(2).toLowerCase().padStart(64, '0')
}

function checkPlan(plan: SwapPlan): void {
  checkUint256('plan.amountIn', plan.amountIn)
  if (plan.legs.length === 0) throw new InvalidSwapPlanError('the plan has no legs')
  let sum = 0n
  for (const [i, leg] of plan.legs.entries()) {
    checkUint256(`legs[${i}].amountIn`, leg.amountIn)
    // the pools revert on a zero input; an empty leg is a route-search bug
    if (leg.amountIn === 0n) throw new InvalidSwapPlanError(`leg ${i} has amountIn 0`, { leg: i })
    sum += leg.amountIn
    if (leg.hops.length === 0 || leg.hops.length > MAX_HOPS) {
      throw new InvalidSwapPlanError(`leg ${i} has ${leg.hops.length} hops; the router takes 1 to ${MAX_HOPS}`, { leg: i })
    }
    let tokenIn = plan.tokenIn
    for (const [j, hop] of leg.hops.entries()) {
      checkHop(hop, tokenIn, i, j)
      tokenIn = hop.tokenOut
    }
    if (!sameAddress(tokenIn, plan.tokenOut)) {
      throw new InvalidSwapPlanError(`leg ${i} ends in ${tokenIn}, not the plan's tokenOut ${plan.tokenOut}`, { leg: i })
    }
  }
  if (sum !== plan.amountIn) {
    throw new InvalidSwapPlanError(`the legs' amountIn add up to ${sum}, not the plan's ${plan.amountIn}`, { legsAmountIn: sum, amountIn: plan.amountIn })
  }
}

function checkHop(hop: PlanHop, tokenIn: Address, leg: number, index: number): void {
  const where = { leg, hop: index }
  if (!(hop.protocol in ROUTER_PROTOCOL)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: unknown protocol ${String(hop.protocol)}`, where)
  if (!sameAddress(hop.tokenIn, tokenIn)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index} starts in ${hop.tokenIn}, but the path is at ${tokenIn}`, where)
  }
  if (sameAddress(hop.tokenIn, hop.tokenOut)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index} swaps ${hop.tokenIn} for itself`, where)
  // the contract swaps token0 -> token1 exactly when tokenIn is the lower address
  if (hop.zeroForOne !== BigInt(hop.tokenIn) < BigInt(hop.tokenOut)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: zeroForOne ${hop.zeroForOne} disagrees with the token order`, where)
  }
  if (!Number.isInteger(hop.fee) || hop.fee < 0 || hop.fee > MAX_UINT24) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: fee ${hop.fee} is not a uint24`, where)
  if ((hop.protocol === 'uniswap-v4') !== (hop.v4 !== undefined)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: a V4 hop, and only one, names its PoolManager and tick spacing`, where)
  if (hop.v4 !== undefined && (!Number.isInteger(hop.v4.tickSpacing) || hop.v4.tickSpacing < 1 || hop.v4.tickSpacing > 32_767)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: tick spacing ${hop.v4.tickSpacing} is not a V4 spacing`, where)
  }
}

function checkUint256(name: string, value: bigint): void {
  if (value < 0n || value > MAX_UINT256) throw new InvalidSwapPlanError(`${name} ${value} is not a uint256`)
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase()
}
