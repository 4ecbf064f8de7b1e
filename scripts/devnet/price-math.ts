/**
 * Exact integer arithmetic for setting up pools: prices are rationals of bigints, never floats,
 * so the build gives the same reserves and sqrt prices on every machine.
 */

export interface Ratio {
  num: bigint
  den: bigint
}

export const Q96 = 2n ** 96n

/** floor(sqrt(n)) by Newton's method. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new Error('isqrt of a negative number')
  if (n < 2n) return n
  let x = n
  let y = (x + 1n) >> 1n
  while (y < x) {
    x = y
    y = (x + n / x) >> 1n
  }
  return x
}

/**
 * The price of one base unit of token0 in base units of token1 (what V2 reserves and V3
 * sqrtPriceX96 express), from whole-token USD prices and a deviation in basis points.
 */
export function rawPrice(
  token0: { usd: bigint; decimals: number },
  token1: { usd: bigint; decimals: number },
  deviationBps: bigint,
): Ratio {
  return {
    num: token0.usd * 10n ** BigInt(token1.decimals) * (10_000n + deviationBps),
    den: token1.usd * 10n ** BigInt(token0.decimals) * 10_000n,
  }
}

/** sqrt(price) in Q64.96, rounded down, as UniswapV3Pool.initialize takes it. */
export function sqrtPriceX96(price: Ratio): bigint {
  return isqrt((price.num << 192n) / price.den)
}

/** Base units of a token worth `usd` whole dollars at its reference price. */
export function unitsForUsd(usd: bigint, token: { usd: bigint; decimals: number }): bigint {
  return (usd * 10n ** BigInt(token.decimals)) / token.usd
}

/** Largest multiple of `spacing` <= tick. */
export function floorTick(tick: number, spacing: number): number {
  return Math.floor(tick / spacing) * spacing
}

/** Smallest multiple of `spacing` >= tick. */
export function ceilTick(tick: number, spacing: number): number {
  return Math.ceil(tick / spacing) * spacing
}

/**
 * The liquidity a position over [sqrtA, sqrtB] (Q64.96) gets for at most `amount0` and `amount1`
 * at the current sqrtP, rounded down: what the V3 periphery's LiquidityAmounts.getLiquidityForAmounts
 * computes and NonfungiblePositionManager.mint passes to the pool. V4's PoolModifyLiquidityTest takes
 * a liquidity, not amounts, so the devnet's V4 positions are sized with this.
 */
export function liquidityForAmounts(sqrtP: bigint, sqrtA: bigint, sqrtB: bigint, amount0: bigint, amount1: bigint): bigint {
  if (sqrtA >= sqrtB) throw new Error('empty range')
  const forAmount0 = (a: bigint, b: bigint) => (((amount0 * a) / Q96) * b) / (b - a)
  const forAmount1 = (a: bigint, b: bigint) => (amount1 * Q96) / (b - a)
  if (sqrtP <= sqrtA) return forAmount0(sqrtA, sqrtB)
  if (sqrtP >= sqrtB) return forAmount1(sqrtA, sqrtB)
  const l0 = forAmount0(sqrtP, sqrtB)
  const l1 = forAmount1(sqrtA, sqrtP)
  return l0 < l1 ? l0 : l1
}
