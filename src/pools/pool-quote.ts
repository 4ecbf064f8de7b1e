/**
 * Exact-input quotes on pool snapshots with the exact native math, each pool by its kind
 * (uniswap-v2.ts: getAmountOut; uniswap-v3.ts: the pool's swap loop). A quote is `undefined` when
 * the pool cannot take the whole amount: a V2 output of zero (the pair would revert), a V3 swap
 * that would run past the loaded ticks (it stops at the coverage bound and fills partly), or any
 * revert of the math.
 */
import type { Address } from '../chain/types.ts'
import type { HopQuote } from './pool-kind.ts'
import { poolKind } from './pool-kinds.ts'
import type { PoolSnapshot } from './pools.ts'

export interface PathHop {
  pool: PoolSnapshot
  tokenIn: Address
  tokenOut: Address
  zeroForOne: boolean
}

export interface PathQuote {
  amountOut: bigint
  ticksCrossed: number
}

export function quoteHop(pool: PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  return poolKind(pool.protocol).quote(pool, zeroForOne, amountIn)
}

/** amountIn through every hop in turn; undefined when a hop cannot take what it is given */
export function quotePath(hops: readonly PathHop[], amountIn: bigint): PathQuote | undefined {
  let amount = amountIn
  let ticksCrossed = 0
  for (const hop of hops) {
    const q = quoteHop(hop.pool, hop.zeroForOne, amount)
    if (q === undefined) return undefined
    amount = q.amountOut
    ticksCrossed += q.ticksCrossed
  }
  return { amountOut: amount, ticksCrossed }
}

/**
 * Why `quotePath` has no quote for `amountIn`: `zero-output` when every hop up to the failing one
 * takes its whole input and the failing hop's output rounds down to zero (a larger amount would
 * go through: the input is dust for this path), `no-liquidity` for any other failure (an empty
 * reserve, a V3 swap that runs out of liquidity or loaded ticks, a revert of the math).
 * undefined when the path does quote.
 */
export function pathFailure(hops: readonly PathHop[], amountIn: bigint): 'zero-output' | 'no-liquidity' | undefined {
  let amount = amountIn
  for (const hop of hops) {
    const q = quoteHop(hop.pool, hop.zeroForOne, amount)
    if (q !== undefined) {
      amount = q.amountOut
      continue
    }
    return poolKind(hop.pool.protocol).roundsToZero(hop.pool, hop.zeroForOne, amount) ? 'zero-output' : 'no-liquidity'
  }
  return undefined
}
