import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  AmmMathError,
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
} from '../../../src/dex/math/index.ts'
import { isqrt, sqrtPriceArb } from './helpers.ts'

const tickArb = fc.integer({ min: MIN_TICK, max: MAX_TICK })

function revertOf(f: () => unknown): string | undefined {
  try {
    f()
  } catch (error) {
    if (error instanceof AmmMathError) return error.revert
    throw error
  }
  return undefined
}

describe('TickMath constants and known values (Solidity)', () => {
  it('bounds', () => {
    expect(MIN_TICK).toBe(-887272)
    expect(MAX_TICK).toBe(887272)
    expect(getSqrtRatioAtTick(MIN_TICK)).toBe(4295128739n)
    expect(getSqrtRatioAtTick(MAX_TICK)).toBe(1461446703485210103287273052203988822378723970342n)
    expect(getSqrtRatioAtTick(MIN_TICK)).toBe(MIN_SQRT_RATIO)
    expect(getSqrtRatioAtTick(MAX_TICK)).toBe(MAX_SQRT_RATIO)
  })

  it('tick 0 is price 1 = 2^96', () => {
    expect(getSqrtRatioAtTick(0)).toBe(1n << 96n)
    expect(getTickAtSqrtRatio(1n << 96n)).toBe(0)
  })

  it('next to the bounds (v3-core TickMath.spec)', () => {
    expect(getSqrtRatioAtTick(MIN_TICK + 1)).toBe(4295343490n)
    expect(getSqrtRatioAtTick(MAX_TICK - 1)).toBe(1461373636630004318706518188784493106690254656249n)
    expect(getTickAtSqrtRatio(MIN_SQRT_RATIO)).toBe(MIN_TICK)
    expect(getTickAtSqrtRatio(4295343490n)).toBe(MIN_TICK + 1)
    expect(getTickAtSqrtRatio(MAX_SQRT_RATIO - 1n)).toBe(MAX_TICK - 1)
    expect(getTickAtSqrtRatio(1461373636630004318706518188784493106690254656249n)).toBe(MAX_TICK - 1)
  })

  it("reverts 'T' / 'R' outside the range", () => {
    expect(revertOf(() => getSqrtRatioAtTick(MIN_TICK - 1))).toBe('T')
    expect(revertOf(() => getSqrtRatioAtTick(MAX_TICK + 1))).toBe('T')
    expect(revertOf(() => getTickAtSqrtRatio(MIN_SQRT_RATIO - 1n))).toBe('R')
    expect(revertOf(() => getTickAtSqrtRatio(MAX_SQRT_RATIO))).toBe('R')
    expect(() => getSqrtRatioAtTick(0.5)).toThrow(AmmMathError)
  })

  it('is within 2 wei of sqrt(1.0001^tick) * 2^96 computed exactly', () => {
    for (const t of [-20000, -9164, -5000, -1001, -60, -1, 1, 10, 60, 200, 1000, 4055, 9163, 13863, 20000]) {
      const abs = BigInt(Math.abs(t))
      const [num, den] = t >= 0 ? [10001n ** abs, 10000n ** abs] : [10000n ** abs, 10001n ** abs]
      const exact = isqrt((num << 192n) / den) // floor(sqrt(1.0001^t) * 2^96), give or take one
      const diff = getSqrtRatioAtTick(t) - exact
      expect(diff >= -2n && diff <= 2n).toBe(true)
    }
  })
})

describe('TickMath properties', () => {
  it('getTickAtSqrtRatio(getSqrtRatioAtTick(t)) = t', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }), (t) => {
        expect(getTickAtSqrtRatio(getSqrtRatioAtTick(t))).toBe(t)
      }),
      { numRuns: 5000 },
    )
  })

  it('getTickAtSqrtRatio(p) is the greatest tick whose ratio is <= p (which makes it the unique Solidity answer)', () => {
    fc.assert(
      fc.property(sqrtPriceArb, (p) => {
        const t = getTickAtSqrtRatio(p)
        expect(getSqrtRatioAtTick(t) <= p).toBe(true)
        if (t < MAX_TICK) expect(p < getSqrtRatioAtTick(t + 1)).toBe(true)
      }),
      { numRuns: 5000 },
    )
  })

  it('getTickAtSqrtRatio is the greatest tick at and beside every boundary and inside ticks, over the whole range (its floating-point estimate and its exact path)', () => {
    const isGreatest = (p: bigint) => {
      const t = getTickAtSqrtRatio(p)
      return getSqrtRatioAtTick(t) <= p && (t === MAX_TICK || p < getSqrtRatioAtTick(t + 1))
    }
    // every 37th tick (and the extremes), with prices on, just below, just above and between boundaries
    for (let t = MIN_TICK; t < MAX_TICK; t += t < MIN_TICK + 1000 || t > MAX_TICK - 1000 ? 1 : 37) {
      const low = getSqrtRatioAtTick(t)
      const high = getSqrtRatioAtTick(t + 1)
      const prices = [low, low + 1n, high - 1n, (low + high) / 2n, low + (high - low) / 10_000n, high - (high - low) / 10_000n]
      if (t > MIN_TICK) prices.push(low - 1n)
      for (const p of prices) if (p >= MIN_SQRT_RATIO && p < MAX_SQRT_RATIO && !isGreatest(p)) throw new Error(`getTickAtSqrtRatio(${p}) = ${getTickAtSqrtRatio(p)} near tick ${t}`)
    }
  })

  it('getSqrtRatioAtTick is strictly increasing, by about sqrt(1.0001) per tick', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }), (t) => {
        const a = getSqrtRatioAtTick(t)
        const b = getSqrtRatioAtTick(t + 1)
        expect(b > a).toBe(true)
        // b / a = 1.00005 (sqrt of 1.0001), within the rounding of a small a
        const ratioPpm = (b * 10_000_000n) / a
        expect(ratioPpm >= 10_000_499n - 10_000_000n / a - 1n && ratioPpm <= 10_000_500n + 10_000_000n / a + 1n).toBe(true)
      }),
      { numRuns: 3000 },
    )
  })

  it('every tick in the range maps into [MIN_SQRT_RATIO, MAX_SQRT_RATIO]', () => {
    fc.assert(
      fc.property(tickArb, (t) => {
        const r = getSqrtRatioAtTick(t)
        expect(r >= MIN_SQRT_RATIO && r <= MAX_SQRT_RATIO).toBe(true)
      }),
    )
  })
})
