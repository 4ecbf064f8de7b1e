/**
 * Upper bounds on what a swap gives per unit of input, without running it: the pool's current
 * marginal price less the fee. Every constant-product and concentrated-liquidity swap gives less
 * per unit the more it swaps (the price moves against the swapper, and the integer math rounds
 * outputs down and inputs up), so a hop's output is at most its input times this rate, and a path's
 * at most its input times the product of its hops' rates. The route search uses it to skip paths
 * that cannot win (routing/route-search.ts). In floating point, for speed: each rate is rounded up
 * by a relative RATE_PADDING, far above a double's rounding of these few operations.
 */

export const RATE_PADDING = 1 + 1e-12
const Q96 = 2 ** 96

/** at least a V2 pair's getAmountOut / amountIn for any amountIn: (1 − fee) × reserveOut / reserveIn; 0 for an empty pair */
export function v2MaxRate(reserveIn: bigint, reserveOut: bigint, feeBps: number): number {
  if (reserveIn <= 0n || reserveOut <= 0n) return 0
  return (((10_000 - feeBps) / 10_000) * (Number(reserveOut) / Number(reserveIn))) * RATE_PADDING
}

/**
 * at least the V3 swap loop's (and V4's, at its swap fee) output / input from `sqrtPriceX96` at
 * `feePips`: each step's output is at most its input less the fee times the price it starts at,
 * which only worsens along the swap; 0 for a price of zero or a fee of 100%
 */
export function v3MaxRate(sqrtPriceX96: bigint, feePips: number, zeroForOne: boolean): number {
  if (sqrtPriceX96 <= 0n || feePips >= 1_000_000) return 0
  // token1 per token0 is (sqrtPrice / 2^96)²: within a double's range for every valid sqrtPrice
  const sqrtPrice = Number(sqrtPriceX96) / Q96
  const price = sqrtPrice * sqrtPrice
  return ((1 - feePips / 1_000_000) * (zeroForOne ? price : 1 / price)) * RATE_PADDING
}
