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
import { encodeFunctionData, zeroAddress, type Abi } from 'viem'
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

/** The `swap` calldata for `params`; throws InvalidSwapPlanError when the router would reject the plan. */
export function encodeSwapPlanCall(params: SwapPlanCallParams): Hex {
  const { plan, minAmountOut, deadline, postCall } = params
  checkPlan(plan)
  checkUint256('minAmountOut', minAmountOut)
  checkUint256('deadline', deadline)
  const legs = plan.legs.map((leg) => ({
    amountIn: leg.amountIn,
    // a V4 hop names the PoolManager; the router builds the key from the tokens, fee, spacing and hooks
    hops: leg.hops.map((hop) => ({
      protocol: hop.v4?.nativeEth === true ? ROUTER_PROTOCOL_V4_NATIVE : ROUTER_PROTOCOL[hop.protocol],
      pool: hop.v4?.poolManager ?? hop.pool,
      tokenOut: hop.tokenOut,
      fee: hop.fee,
      tickSpacing: hop.v4?.tickSpacing ?? 0,
      hooks: hop.v4?.hooks ?? zeroAddress,
    })),
  }))
  return encodeFunctionData({
    abi: SWAP_PLAN_ROUTER_ABI,
    functionName: 'swap',
    args: [
      { tokenIn: plan.tokenIn, tokenOut: plan.tokenOut, amountIn: plan.amountIn, legs },
      minAmountOut,
      params.recipient ?? zeroAddress,
      deadline,
      postCall?.target ?? zeroAddress,
      postCall?.data ?? '0x',
    ],
  })
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
