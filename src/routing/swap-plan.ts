/**
 * A swap plan: what the route search produces and the router contract executes. The input amount
 * is split over legs; each leg is a path of up to three hops through V2 pairs and V3 pools.
 */
import type { Address } from '../chain/types.ts'
import type { PoolProtocol } from '../pools/pools.ts'

export interface PlanHop {
  protocol: PoolProtocol
  pool: Address
  tokenIn: Address
  tokenOut: Address
  /** V3 fee in hundredths of a bip (500, 3000, 10000); 3000 for V2 pairs */
  fee: number
  /** tokenIn is the pool's token0 */
  zeroForOne: boolean
  /** V4 hops (pool is the PoolId): the PoolManager that holds the pool and the rest of its key */
  v4?: PlanV4Key
}

/** What a V4 hop's PoolKey needs beside the hop's tokens and fee (the router builds the key from them). */
export interface PlanV4Key {
  poolManager: Address
  tickSpacing: number
  /** the key's hooks contract; absent: none */
  hooks?: Address
  /** the key holds native ETH (address(0)) where the hop holds WETH: the router unwraps or wraps around the swap */
  nativeEth?: boolean
  /** the hook may change the swap's amounts or fee: the hop's expected output is an estimate (src/pools/uniswap-v4-hooks.ts) */
  hookAltersSwap?: boolean
}

export interface PlanLeg {
  /** the share of the plan's amountIn sent down this leg */
  amountIn: bigint
  hops: PlanHop[]
  /** what the native math expects this leg to deliver */
  expectedAmountOut: bigint
}

export interface SwapPlan {
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  legs: PlanLeg[]
  expectedAmountOut: bigint
}

export const MAX_HOPS = 3

/** the plan crosses a pool whose expected output is only an estimate (a V4 hook that may change the swap) */
export function planHasEstimatedHops(plan: SwapPlan): boolean {
  return plan.legs.some((leg) => leg.hops.some((hop) => hop.v4?.hookAltersSwap === true))
}
