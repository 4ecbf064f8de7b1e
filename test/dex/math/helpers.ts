/**
 * Test-only helpers: the v3-core test suite's encodePriceSqrt, and pools built from positions
 * (so the ticks' liquidityNet and the in-range liquidity are consistent, as on chain).
 */
import { readFileSync } from 'node:fs'

import fc from 'fast-check'

import {
  buildV3Pool,
  getAmount0Delta,
  getAmount1Delta,
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
  type V3PoolState,
} from '../../../src/dex/math/index.ts'

export const MAX_UINT256 = (1n << 256n) - 1n

export function readFixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../../fixtures/corpora/amm-quotes/${name}`, import.meta.url), 'utf8')) as T
}

/** floor(sqrt(n)) */
export function isqrt(n: bigint): bigint {
  if (n < 2n) return n
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2))
  for (;;) {
    const y = (x + n / x) >> 1n
    if (y >= x) return x
    x = y
  }
}

const DECIMALS_40 = 10n ** 40n

/**
 * v3-core test/shared/utilities.ts encodePriceSqrt(reserve1, reserve0): bignumber.js with
 * DECIMAL_PLACES 40 and ROUND_HALF_UP divides, takes the square root, multiplies by 2^96 and
 * floors. Emulated exactly with integers scaled by 10^40.
 */
export function encodePriceSqrt(reserve1: bigint, reserve0: bigint): bigint {
  const quotient = (2n * reserve1 * DECIMALS_40 + reserve0) / (2n * reserve0)
  const root = (isqrt(4n * quotient * DECIMALS_40) + 1n) / 2n
  return (root << 96n) / DECIMALS_40
}

export interface Position {
  tickLower: number
  tickUpper: number
  liquidity: bigint
}

export interface PositionsPool {
  pool: V3PoolState
  /** what minting the positions cost (UniswapV3Pool._modifyPosition, rounded up) */
  amount0: bigint
  amount1: bigint
}

/** a pool as initialize(sqrtPriceX96) followed by mint() of every position leaves it */
export function poolFromPositions(fee: number, tickSpacing: number, sqrtPriceX96: bigint, positions: readonly Position[]): PositionsPool {
  const tick = getTickAtSqrtRatio(sqrtPriceX96)
  const nets = new Map<number, bigint>()
  let liquidity = 0n
  let amount0 = 0n
  let amount1 = 0n
  for (const { tickLower, tickUpper, liquidity: l } of positions) {
    nets.set(tickLower, (nets.get(tickLower) ?? 0n) + l)
    nets.set(tickUpper, (nets.get(tickUpper) ?? 0n) - l)
    const sqrtLower = getSqrtRatioAtTick(tickLower)
    const sqrtUpper = getSqrtRatioAtTick(tickUpper)
    if (tick < tickLower) {
      amount0 += getAmount0Delta(sqrtLower, sqrtUpper, l, true)
    } else if (tick < tickUpper) {
      amount0 += getAmount0Delta(sqrtPriceX96, sqrtUpper, l, true)
      amount1 += getAmount1Delta(sqrtLower, sqrtPriceX96, l, true)
      liquidity += l
    } else {
      amount1 += getAmount1Delta(sqrtLower, sqrtUpper, l, true)
    }
  }
  // a tick whose positions cancel out is still initialized (liquidityGross > 0)
  const initializedTicks = [...nets].map(([t, liquidityNet]) => ({ tick: t, liquidityNet }))
  const pool = buildV3Pool({ sqrtPriceX96, tick, liquidity, fee, tickSpacing, initializedTicks })
  return { pool, amount0, amount1 }
}

/** in-range liquidity at `tick`, straight from the positions */
export function activeLiquidity(positions: readonly Position[], tick: number): bigint {
  let l = 0n
  for (const p of positions) if (p.tickLower <= tick && tick < p.tickUpper) l += p.liquidity
  return l
}

export const FEE_TIERS: ReadonlyArray<readonly [number, number]> = [
  [100, 1],
  [500, 10],
  [3000, 60],
  [10000, 200],
]

/** a sqrt price: either anywhere in [MIN, MAX) or (more usefully) inside a random tick of the middle range */
export const sqrtPriceArb: fc.Arbitrary<bigint> = fc.oneof(
  fc.bigInt({ min: MIN_SQRT_RATIO, max: MAX_SQRT_RATIO - 1n }),
  fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }).chain((t) => fc.bigInt({ min: getSqrtRatioAtTick(t), max: getSqrtRatioAtTick(t + 1) - 1n })),
  fc.integer({ min: -50_000, max: 50_000 }).chain((t) => fc.bigInt({ min: getSqrtRatioAtTick(t), max: getSqrtRatioAtTick(t + 1) - 1n })),
)

export interface RandomPool {
  fee: number
  tickSpacing: number
  positions: Position[]
  sqrtPriceX96: bigint
}

/** pools of 1-6 positions within +-4000 spacings of tick 0, price within that range */
export const randomPoolArb: fc.Arbitrary<RandomPool> = fc
  .constantFrom(...FEE_TIERS)
  .chain(([fee, tickSpacing]) => {
    const span = 4000
    const position = fc
      .tuple(fc.integer({ min: -span, max: span }), fc.integer({ min: -span, max: span }), fc.bigInt({ min: 10n ** 6n, max: 10n ** 24n }))
      .filter(([a, b]) => a !== b)
      .map(([a, b, liquidity]) => ({ tickLower: Math.min(a, b) * tickSpacing, tickUpper: Math.max(a, b) * tickSpacing, liquidity }))
    const price = fc
      .integer({ min: -span * tickSpacing, max: span * tickSpacing - 1 })
      .chain((t) => fc.bigInt({ min: getSqrtRatioAtTick(t), max: getSqrtRatioAtTick(t + 1) - 1n }))
    return fc.record({
      fee: fc.constant(fee),
      tickSpacing: fc.constant(tickSpacing),
      positions: fc.array(position, { minLength: 1, maxLength: 6 }),
      sqrtPriceX96: price,
    })
  })
