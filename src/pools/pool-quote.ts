/**
 * Exact-input quotes on pool snapshots with the exact native math: V2 getAmountOut, V3 the pool's
 * swap loop. A quote is `undefined` when the pool cannot take the whole amount: a V2 output of
 * zero (the pair would revert), a V3 swap that would run past the loaded ticks (it stops at the
 * coverage bound and fills partly), or any revert of the math.
 */
import { getAmountOut, isAmmMathError, simulateV3Swap } from '../dex/math/index.ts'
import type { Address } from '../chain/types.ts'
import { V2_FEE_BPS, type PoolSnapshot, type V2PoolSnapshot, type V3PoolSnapshot } from './pools.ts'

export interface HopQuote {
  amountOut: bigint
  /** initialized ticks the V3 swap loop crosses (each one costs gas); 0 for V2 */
  ticksCrossed: number
}

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

export function quoteV2(pool: V2PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
  if (amountIn <= 0n || reserveIn === 0n || reserveOut === 0n) return undefined
  try {
    const amountOut = getAmountOut(amountIn, reserveIn, reserveOut, V2_FEE_BPS)
    return amountOut > 0n ? { amountOut, ticksCrossed: 0 } : undefined
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

export function quoteV3(pool: V3PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  if (amountIn <= 0n) return undefined
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const r = simulateV3Swap(pool.state, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
    const [used, out] = zeroForOne ? [r.amount0, -r.amount1] : [r.amount1, -r.amount0]
    // a partial fill: the pool ran out of liquidity, or of loaded ticks (which we cannot tell apart)
    if (used !== amountIn || out <= 0n) return undefined
    return { amountOut: out, ticksCrossed: r.initializedTicksCrossed }
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

export function quoteHop(pool: PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  return pool.protocol === 'uniswap-v2' ? quoteV2(pool, zeroForOne, amountIn) : quoteV3(pool, zeroForOne, amountIn)
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
    return hopRoundsToZero(hop.pool, hop.zeroForOne, amount) ? 'zero-output' : 'no-liquidity'
  }
  return undefined
}

/** The hop takes all of `amountIn` and gives nothing back: its output rounds down to zero. */
function hopRoundsToZero(pool: PoolSnapshot, zeroForOne: boolean, amountIn: bigint): boolean {
  if (amountIn <= 0n) return false
  if (pool.protocol === 'uniswap-v2') {
    const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
    if (reserveIn === 0n || reserveOut === 0n) return false
    try {
      return getAmountOut(amountIn, reserveIn, reserveOut, V2_FEE_BPS) === 0n
    } catch (err) {
      if (isAmmMathError(err)) return false
      throw err
    }
  }
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const r = simulateV3Swap(pool.state, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
    const [used, out] = zeroForOne ? [r.amount0, -r.amount1] : [r.amount1, -r.amount0]
    return used === amountIn && out === 0n
  } catch (err) {
    if (isAmmMathError(err)) return false
    throw err
  }
}
