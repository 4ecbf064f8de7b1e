/**
 * The optimal-input step of the backrun search on its own: the integer square root, the hyperbola
 * of a chain of V2 hops (an upper bound of the exact chain), the V2 closed form against a brute
 * scan of every input, and the bracketed search on concave functions with known maxima, inputs
 * the cycle cannot take at either end, bad guesses, memoisation and the evaluation budget.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  constantProductChainCurve,
  constantProductChainMinInput,
  constantProductChainOutput,
  curveOptimalInput,
  curveOutput,
  isqrt,
  maximizeProfit,
  optimalConstantProductInput,
  type ConstantProductHop,
  type ProfitFunction,
} from '../../src/backrun/index.ts'
import { getAmountOut } from '../../src/dex/math/index.ts'

/** the exact profit of a V2 chain, written from getAmountOut directly */
function referenceProfit(hops: readonly ConstantProductHop[], x: bigint): bigint | undefined {
  let amount = x
  for (const h of hops) {
    amount = getAmountOut(amount, h.reserveIn, h.reserveOut, 30)
    if (amount === 0n) return undefined
  }
  return amount - x
}

/**
 * every input from 1 until the profit has been negative for a while past `hint` (the real
 * profit is concave: once it falls below zero after the peak it never comes back)
 */
function bruteForceMax(hops: readonly ConstantProductHop[], hint: bigint): { amountIn: bigint; profit: bigint } {
  let best = { amountIn: 0n, profit: 0n }
  for (let x = 1n; ; x++) {
    const p = referenceProfit(hops, x)
    if (p !== undefined && p > best.profit) best = { amountIn: x, profit: p }
    if (x > 2n * hint + 100n && (p === undefined || p < 0n)) break
  }
  return best
}

/** two V2 pairs of one pair: A -> B through the first, B -> A through the second at `skewPpm` more */
function twoPairs(ra: bigint, rb: bigint, skewPpm: bigint): ConstantProductHop[] {
  return [
    { reserveIn: ra, reserveOut: rb },
    { reserveIn: rb, reserveOut: (ra * (1_000_000n + skewPpm)) / 1_000_000n },
  ]
}

describe('isqrt', () => {
  it('is the floor of the square root', () => {
    expect([0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n].map(isqrt)).toEqual([0n, 1n, 1n, 1n, 2n, 3n, 4n, 4n])
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1n << 600n }), (n) => {
        const r = isqrt(n)
        expect(r * r <= n).toBe(true)
        expect((r + 1n) * (r + 1n) > n).toBe(true)
      }),
      { numRuns: 500 },
    )
    expect(() => isqrt(-1n)).toThrow(RangeError)
  })
})

describe('the hyperbola of a V2 chain', () => {
  it('is getAmountOut for one hop and an upper bound of the exact chain for several', () => {
    const reserve = fc.bigInt({ min: 1000n, max: 10n ** 27n })
    fc.assert(
      fc.property(fc.array(fc.record({ reserveIn: reserve, reserveOut: reserve }), { minLength: 1, maxLength: 3 }), fc.bigInt({ min: 1n, max: 10n ** 26n }), (hops, x) => {
        const curve = constantProductChainCurve(hops)
        if (curve === undefined) throw new Error('no curve')
        const exact = constantProductChainOutput(hops, x)
        const bound = curveOutput(curve, x)
        if (hops.length === 1) expect(bound).toBe(getAmountOut(x, hops[0].reserveIn, hops[0].reserveOut, 30))
        if (exact !== undefined) expect(exact <= bound).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('inverts the chain exactly: the smallest input giving at least an output', () => {
    const reserve = fc.bigInt({ min: 1000n, max: 10n ** 27n })
    fc.assert(
      fc.property(fc.array(fc.record({ reserveIn: reserve, reserveOut: reserve }), { minLength: 1, maxLength: 3 }), fc.bigInt({ min: 1n, max: 10n ** 26n }), (hops, x) => {
        const out = constantProductChainOutput(hops, x)
        if (out === undefined) return
        const min = constantProductChainMinInput(hops, out)
        if (min === undefined) throw new Error('no inverse of an output that was given')
        expect(min <= x).toBe(true)
        expect(constantProductChainOutput(hops, min)).toBe(out)
        expect((constantProductChainOutput(hops, min - 1n) ?? 0n) < out).toBe(true)
      }),
      { numRuns: 500 },
    )
    // more than the last reserve can never come out
    expect(constantProductChainMinInput([{ reserveIn: 100n, reserveOut: 100n }], 100n)).toBeUndefined()
  })

  it('has no optimal input when the prices do not beat the fees', () => {
    // same price both ways: the rate after two fees is 0.997^2 < 1
    expect(curveOptimalInput(constantProductChainCurve(twoPairs(10n ** 21n, 10n ** 21n, 0n)) ?? { num: 0n, den: 1n, slope: 1n })).toBeUndefined()
    // 0.5% apart: 0.997^2 * 1.005 = 0.99898 < 1
    expect(optimalConstantProductInput(twoPairs(10n ** 21n, 3n * 10n ** 24n, 5_000n))).toBeUndefined()
    // 0.7% apart: 1.0010 > 1
    expect(optimalConstantProductInput(twoPairs(10n ** 21n, 3n * 10n ** 24n, 7_000n))).toBeDefined()
  })
})

describe('optimalConstantProductInput', () => {
  const smallReserve = fc.bigInt({ min: 500n, max: 20_000n })

  it('equals the brute-force maximum over every input for two V2 pairs (property)', () => {
    let certified = 0
    let runs = 0
    fc.assert(
      fc.property(smallReserve, smallReserve, fc.bigInt({ min: 1_000n, max: 300_000n }), (ra, rb, skew) => {
        const hops = twoPairs(ra, rb, skew)
        const r = optimalConstantProductInput(hops)
        const brute = bruteForceMax(hops, r?.amountIn ?? ra / 4n)
        if (r === undefined) {
          expect(brute.profit).toBe(0n)
          return
        }
        runs++
        // what it returns is what the exact math gives at that input
        expect(referenceProfit(hops, r.amountIn)).toBe(r.profit)
        expect(r.profit).toBeGreaterThan(0n)
        // a local maximum
        for (const x of [r.amountIn - 1n, r.amountIn + 1n]) expect((referenceProfit(hops, x) ?? -1n) <= r.profit).toBe(true)
        if (r.certified) {
          certified++
          expect(r.profit).toBe(brute.profit)
        } else expect(r.profit).toBeGreaterThanOrEqual(brute.profit - 1n)
        // without a bound on the scan it is always certified, hence exact
        const full = optimalConstantProductInput(hops, { plateauScanLimit: 1_000_000 })
        expect(full?.certified).toBe(true)
        expect(full?.profit).toBe(brute.profit)
        expect(referenceProfit(hops, full?.amountIn ?? 0n)).toBe(brute.profit)
      }),
      { numRuns: 120 },
    )
    expect(runs).toBeGreaterThan(60)
    // the default scan limit certifies nearly all small cases (so the exact branch above is exercised)
    expect(certified).toBeGreaterThan(runs * 0.85)
  })

  it('equals the brute-force maximum for V2 triangles (property)', () => {
    fc.assert(
      fc.property(smallReserve, smallReserve, smallReserve, fc.bigInt({ min: 1_000n, max: 200_000n }), (ra, rb, rc, skew) => {
        const hops: ConstantProductHop[] = [
          { reserveIn: ra, reserveOut: rb },
          { reserveIn: rb, reserveOut: rc },
          { reserveIn: rc, reserveOut: (ra * (1_000_000n + skew)) / 1_000_000n },
        ]
        const r = optimalConstantProductInput(hops, { plateauScanLimit: 1_000_000 })
        const brute = bruteForceMax(hops, r?.amountIn ?? ra / 4n)
        if (r === undefined) expect(brute.profit).toBe(0n)
        else {
          expect(r.certified).toBe(true)
          expect(r.profit).toBe(brute.profit)
          expect(referenceProfit(hops, r.amountIn)).toBe(r.profit)
        }
      }),
      { numRuns: 40 },
    )
  })

  it('lands within a few integers of the real optimum on real-size reserves, locally maximal, in a handful of quotes', () => {
    // 1000 WETH / 3M USDC against a pair 2% dearer
    const hops = twoPairs(10n ** 21n, 3n * 10n ** 12n, 20_000n)
    const r = optimalConstantProductInput(hops)
    if (!r) throw new Error('no optimum')
    const curve = constantProductChainCurve(hops)
    const x0 = curve === undefined ? undefined : curveOptimalInput(curve)
    if (curve === undefined || x0 === undefined) throw new Error('no real optimum')
    // one USDC base unit is ~3e8 wei: the input is the start of the tooth around the real optimum
    expect(x0 - r.amountIn >= 0n && x0 - r.amountIn < 10n ** 10n).toBe(true)
    // the real maximum of the bound, floored: nothing can do better, and the search proves it
    const realMax = curveOutput(curve, x0) - x0
    expect(r.profit).toBe(realMax)
    expect(r.certified).toBe(true)
    // that comes from the tooth starts alone, without the certificate's scan
    const unscanned = optimalConstantProductInput(hops, { plateauScanLimit: 0 })
    expect(unscanned?.profit).toBe(realMax)
    expect(unscanned?.certified).toBe(true)
    for (const d of [1n, 2n, 1000n, 10n ** 12n, 10n ** 15n]) {
      expect((referenceProfit(hops, r.amountIn - d) ?? -1n) <= r.profit).toBe(true)
      expect((referenceProfit(hops, r.amountIn + d) ?? -1n) <= r.profit).toBe(true)
    }
    expect(r.evaluations).toBeLessThan(80)
  })
})

describe('maximizeProfit', () => {
  /** a strictly concave parabola peaking at `peak` with `top` there (integer, no rounding), counting calls */
  function parabola(peak: bigint, top: bigint, curvature: bigint) {
    const calls: bigint[] = []
    const fn: ProfitFunction = (x) => {
      calls.push(x)
      const d = x - peak
      return top - d * d * curvature
    }
    return { fn, calls }
  }

  it('finds the exact peak of a concave function to the integer (tolerance 0), with or without a guess', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        fc.constantFrom('none', 'close', 'far above', 'far below'),
        (peak, curvature, guessKind) => {
          const { fn, calls } = parabola(peak, 10n ** 40n, curvature)
          const guess = { none: undefined, close: peak + peak / 100n + 1n, 'far above': peak * 1000n, 'far below': peak / 1000n + 1n }[guessKind]
          const r = maximizeProfit(fn, { guess, relativeTolerancePpm: 0, maxEvaluations: 1000 })
          if (!r) throw new Error('no maximum')
          expect(r.amountIn).toBe(peak)
          expect(r.profit).toBe(10n ** 40n)
          // every input is evaluated once, and counted
          expect(new Set(calls).size).toBe(calls.length)
          expect(r.evaluations).toBe(calls.length)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('gets within a unit of the top of a rounded (hence ragged, not quite concave) parabola', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.constantFrom(undefined, 1n), (peak, scale, guess) => {
        const fn: ProfitFunction = (x) => 10n ** 40n - ((x - peak) * (x - peak)) / scale
        const r = maximizeProfit(fn, { guess, relativeTolerancePpm: 0, maxEvaluations: 1000 })
        expect(r && r.profit >= 10n ** 40n - 1n).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it('stops within the relative tolerance, in few evaluations from a good guess', () => {
    const peak = 123_456_789_000_000_000_000n
    const fn: ProfitFunction = (x) => 10n ** 40n - ((x - peak) * (x - peak)) / 10n ** 10n
    const r = maximizeProfit(fn, { guess: (peak * 1003n) / 1000n, relativeTolerancePpm: 100 })
    if (!r) throw new Error('no maximum')
    const off = r.amountIn > peak ? r.amountIn - peak : peak - r.amountIn
    expect(off * 10_000n <= peak).toBe(true)
    expect(r.evaluations).toBeLessThanOrEqual(20)
  })

  it('confirms a guess at the optimum in three evaluations (the bracket starts within half the tolerance), and one off by 0.1% in a dozen', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 10n ** 6n, max: 10n ** 30n }), fc.bigInt({ min: -200n, max: 200n }), (peak, offPpm) => {
        const fn: ProfitFunction = (x) => 10n ** 40n - ((x - peak) * (x - peak)) / (peak / 1000n + 1n)
        const exact = maximizeProfit(fn, { guess: peak, relativeTolerancePpm: 100 })
        expect(exact).toMatchObject({ amountIn: peak, evaluations: 3 })
        // a guess off by up to 200 ppm still ends within the tolerance of the peak
        const near = maximizeProfit(fn, { guess: peak + (peak * offPpm) / 1_000_000n, relativeTolerancePpm: 100 })
        if (!near) throw new Error('no maximum')
        const off = near.amountIn > peak ? near.amountIn - peak : peak - near.amountIn
        expect(off * 10_000n <= peak).toBe(true)
      }),
      { numRuns: 200 },
    )
    const peak = 84_223_695_589_696_759_353n
    const fn: ProfitFunction = (x) => 10n ** 40n - ((x - peak) * (x - peak)) / 10n ** 10n
    const far = maximizeProfit(fn, { guess: (peak * 1001n) / 1000n, relativeTolerancePpm: 100 })
    expect(far?.evaluations).toBeLessThanOrEqual(14)
  })

  it('treats inputs the cycle cannot take as the end of the bracket: the best feasible input wins', () => {
    // rising until 4e20, but nothing past 2e20 can be quoted (a V3 pool's loaded ticks end there)
    const limit = 2n * 10n ** 20n
    const fn: ProfitFunction = (x) => (x > limit ? undefined : x * (4n * limit - x))
    for (const guess of [undefined, 10n ** 17n, limit, 10n ** 22n]) {
      const r = maximizeProfit(fn, { guess, relativeTolerancePpm: 0, maxEvaluations: 500 })
      expect(r?.amountIn).toBe(limit)
    }
  })

  it('grows past inputs too small to come out of the cycle (a V2 output of zero)', () => {
    const fn: ProfitFunction = (x) => (x < 10_000n ? undefined : x / 100n - (x * x) / 10n ** 12n)
    const r = maximizeProfit(fn, { start: 1n, relativeTolerancePpm: 0, maxEvaluations: 500 })
    // d/dx: 1/100 - 2x/1e12 = 0 at 5e9
    expect(r?.amountIn).toBeGreaterThan(4_999_000_000n)
    expect(r?.amountIn).toBeLessThan(5_001_000_000n)
    expect(r?.profit).toBe(fn(5_000_000_000n))
  })

  it('keeps to its evaluation budget and its maximum amount', () => {
    const { fn, calls } = parabola(10n ** 25n, 10n ** 40n, 1n)
    const r = maximizeProfit(fn, { maxEvaluations: 12, relativeTolerancePpm: 0 })
    expect(calls.length).toBeLessThanOrEqual(12)
    expect(r?.evaluations).toBe(calls.length)
    const capped = maximizeProfit(parabola(10n ** 25n, 10n ** 40n, 1n).fn, { maxAmount: 10n ** 20n, relativeTolerancePpm: 0, maxEvaluations: 500 })
    expect(capped?.amountIn).toBe(10n ** 20n)
  })

  it('returns the best (possibly non-positive) input, and nothing when no input can be taken', () => {
    expect(maximizeProfit(() => undefined)).toBeUndefined()
    const r = maximizeProfit((x) => -x, { relativeTolerancePpm: 0 })
    expect(r?.amountIn).toBe(1n)
    expect(r?.profit).toBe(-1n)
  })

  it('matches the V2 closed form on a V2 cycle (>= 99.9% of its profit, never above a certified one)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 10n ** 18n, max: 10n ** 24n }), fc.bigInt({ min: 10n ** 15n, max: 10n ** 24n }), fc.bigInt({ min: 8_000n, max: 500_000n }), (ra, rb, skew) => {
        const hops = twoPairs(ra, rb, skew)
        const closed = optimalConstantProductInput(hops)
        const searched = maximizeProfit((x) => referenceProfit(hops, x), { start: ra >> 20n })
        if (!closed) return
        if (!searched) throw new Error('the search found nothing')
        // the search does not look for tooth starts (see optimalConstantProductInput): allow one tooth, a unit of B in A
        expect(searched.profit * 1000n >= closed.profit * 999n - 1000n * (ra / rb + 1n)).toBe(true)
        if (closed.certified) expect(searched.profit <= closed.profit).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})
