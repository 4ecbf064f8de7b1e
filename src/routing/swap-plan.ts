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
  /** V4 hops (pool is the PoolId): the PoolManager that holds the pool and the key's tick spacing */
  v4?: { poolManager: Address; tickSpacing: number }
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
