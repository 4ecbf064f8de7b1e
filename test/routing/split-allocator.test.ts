/**
 * Properties of the split allocator on synthetic V2 pools: the input is conserved, every leg's
 * outcome is its exact quote, legs never share a pool, and the allocation is never worse than the
 * best single leg; with no gas it is as good as the best allocation on its grid (brute force).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { getAmountOut } from '../../src/dex/math/index.ts'
import { allocateSplit, type Allocation, type SplitCandidate } from '../../src/routing/index.ts'
import { referenceAllocateSplit } from './reference-split-allocator.ts'

interface Pair {
  reserveIn: bigint
  reserveOut: bigint
}

function v2Out(p: Pair, amountIn: bigint): bigint | undefined {
  const out = getAmountOut(amountIn, p.reserveIn, p.reserveOut, 30)
  return out > 0n ? out : undefined
}

/** a one-hop leg through one synthetic pair */
function leg(id: string, p: Pair, fixedCost = 0n, capacity?: bigint): SplitCandidate {
  return {
    pools: [id],
    fixedCost,
    evaluate: (amountIn) => {
      if (capacity !== undefined && amountIn > capacity) return undefined
      const amountOut = v2Out(p, amountIn)
      return amountOut === undefined ? undefined : { amountOut, variableCost: 0n }
    },
  }
}

/** a two-hop leg through two pairs (pools named so legs can share one) */
function twoHop(ids: [string, string], p1: Pair, p2: Pair, fixedCost = 0n): SplitCandidate {
  return {
    pools: ids,
    fixedCost,
    evaluate: (amountIn) => {
      const mid = v2Out(p1, amountIn)
      const amountOut = mid === undefined ? undefined : v2Out(p2, mid)
      return amountOut === undefined ? undefined : { amountOut, variableCost: 0n }
    },
  }
}

const pairArb = fc.record({ reserveIn: fc.bigInt({ min: 10n ** 9n, max: 10n ** 27n }), reserveOut: fc.bigInt({ min: 10n ** 9n, max: 10n ** 27n }) })
const costArb = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 10n ** 20n }))

function checkAllocation(a: Allocation, candidates: readonly SplitCandidate[], amountIn: bigint, maxSplits: number): void {
  expect(a.legs.reduce((s, l) => s + l.amountIn, 0n)).toBe(amountIn)
  expect(a.legs.length).toBeGreaterThan(0)
  expect(a.legs.length).toBeLessThanOrEqual(maxSplits)
  const pools = new Set<string>()
  let out = 0n
  let net = 0n
  for (const l of a.legs) {
    expect(l.amountIn).toBeGreaterThan(0n)
    expect(l.outcome).toEqual(candidates[l.candidate].evaluate(l.amountIn))
    for (const p of candidates[l.candidate].pools) {
      expect(pools.has(p)).toBe(false)
      pools.add(p)
    }
    out += l.outcome.amountOut
    net += l.outcome.amountOut - l.outcome.variableCost - candidates[l.candidate].fixedCost
  }
  expect(a.amountOut).toBe(out)
  expect(a.net).toBe(net)
}

function bestSingleNet(candidates: readonly SplitCandidate[], amountIn: bigint): bigint | undefined {
  let best: bigint | undefined
  for (const c of candidates) {
    const o = c.evaluate(amountIn)
    if (o === undefined) continue
    const net = o.amountOut - o.variableCost - c.fixedCost
    if (best === undefined || net > best) best = net
  }
  return best
}

describe('allocateSplit', () => {
  it('property: conserves the input, is exact, and is never worse than the best single leg', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pairArb, costArb), { minLength: 1, maxLength: 6 }),
        fc.bigInt({ min: 1n, max: 10n ** 26n }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 5 }),
        (specs, amountIn, parts, maxSplits) => {
          const candidates = specs.map(([p, cost], i) => leg(`pool${i}`, p, cost))
          const a = allocateSplit(candidates, amountIn, { parts, maxSplits })
          const single = bestSingleNet(candidates, amountIn)
          if (a === undefined) {
            expect(single).toBeUndefined()
            return
          }
          checkAllocation(a, candidates, amountIn, maxSplits)
          if (single !== undefined) expect(a.net).toBeGreaterThanOrEqual(single)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('property: the same allocation as the reference allocator (shared pools, gas per leg and per amount, capacities, parts below the amount)', () => {
    // legs of one or two hops over six pools, so that many share one; a variable cost that grows
    // with the amount (a V3 leg's ticks) and capacities, so that gains can be negative or missing;
    // reserves from two pairs only, so that legs often tie (the first in order wins a tie)
    const specArb = fc.record({
      pools: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { minLength: 1, maxLength: 2 }),
      pair: fc.integer({ min: 0, max: 1 }),
      fixedCost: costArb,
      costPerUnit: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 6n })),
      capacity: fc.option(fc.bigInt({ min: 1n, max: 10n ** 26n }), { nil: undefined }),
    })
    fc.assert(
      fc.property(
        fc.array(specArb, { minLength: 1, maxLength: 10 }),
        fc.tuple(pairArb, pairArb),
        fc.oneof(fc.bigInt({ min: 1n, max: 100n }), fc.bigInt({ min: 1n, max: 10n ** 26n })),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        (specs, pairs, amountIn, parts, maxSplits) => {
          const candidates: SplitCandidate[] = specs.map((s) => ({
            pools: s.pools,
            fixedCost: s.fixedCost,
            evaluate: (amount) => {
              if (s.capacity !== undefined && amount > s.capacity) return undefined
              const amountOut = v2Out(pairs[s.pair], amount)
              return amountOut === undefined ? undefined : { amountOut, variableCost: (amount / 10n ** 15n) * s.costPerUnit }
            },
          }))
          expect(allocateSplit(candidates, amountIn, { parts, maxSplits })).toEqual(referenceAllocateSplit(candidates, amountIn, { parts, maxSplits }))
        },
      ),
      { numRuns: 2_000 },
    )
  })

  it('property: without gas, as good as every allocation on its grid (brute force, 2 and 3 legs)', () => {
    fc.assert(
      fc.property(fc.array(pairArb, { minLength: 2, maxLength: 3 }), fc.bigInt({ min: 1n, max: 10n ** 22n }), (pairs, unit) => {
        const parts = 12
        const amountIn = unit * BigInt(parts)
        const candidates = pairs.map((p, i) => leg(`pool${i}`, p))
        const a = allocateSplit(candidates, amountIn, { parts, maxSplits: pairs.length })
        let best = -1n
        const enumerate = (i: number, left: number, acc: bigint) => {
          if (i === pairs.length - 1) {
            const o = left === 0 ? 0n : v2Out(pairs[i], BigInt(left) * unit)
            if (o !== undefined && acc + o > best) best = acc + o
            return
          }
          for (let k = 0; k <= left; k++) {
            const o = k === 0 ? 0n : v2Out(pairs[i], BigInt(k) * unit)
            if (o !== undefined) enumerate(i + 1, left - k, acc + o)
          }
        }
        enumerate(0, parts, 0n)
        if (best < 0n) return
        if (a === undefined) throw new Error('no allocation where brute force has one')
        checkAllocation(a, candidates, amountIn, pairs.length)
        // integer rounding could make the discrete outputs a hair non-concave, so one unit per part
        // is allowed (5,000 runs never needed it)
        expect(a.amountOut + BigInt(parts)).toBeGreaterThanOrEqual(best)
      }),
      { numRuns: 300 },
    )
  })

  it('property: never puts two legs that share a pool in one allocation', () => {
    fc.assert(
      fc.property(fc.array(pairArb, { minLength: 4, maxLength: 4 }), fc.bigInt({ min: 10n ** 6n, max: 10n ** 27n }), (p, amountIn) => {
        // two routes share their first pool, two share their second
        const candidates = [twoHop(['a', 'x'], p[0], p[1]), twoHop(['a', 'y'], p[0], p[2]), twoHop(['b', 'x'], p[3], p[1]), leg('c', p[2])]
        const a = allocateSplit(candidates, amountIn, { parts: 20, maxSplits: 4 })
        if (a !== undefined) checkAllocation(a, candidates, amountIn, 4)
      }),
      { numRuns: 300 },
    )
  })

  it('spreads the amount over legs that cannot take it alone, and gives up when all together cannot', () => {
    const p: Pair = { reserveIn: 10n ** 24n, reserveOut: 10n ** 24n }
    const capped = [leg('a', p, 0n, 4n * 10n ** 18n), leg('b', p, 0n, 4n * 10n ** 18n), leg('c', p, 0n, 4n * 10n ** 18n)]
    const a = allocateSplit(capped, 10n ** 19n, { parts: 20, maxSplits: 3 })
    if (!a) throw new Error('no allocation')
    checkAllocation(a, capped, 10n ** 19n, 3)
    expect(a.legs).toHaveLength(3)
    expect(allocateSplit(capped, 13n * 10n ** 18n, { parts: 20, maxSplits: 3 })).toBeUndefined()
    expect(allocateSplit(capped, 10n ** 19n, { parts: 20, maxSplits: 2 })).toBeUndefined()
  })

  it('splits two equal pools evenly and drops a leg whose gas outweighs its gain', () => {
    const p: Pair = { reserveIn: 10n ** 24n, reserveOut: 10n ** 24n }
    const even = allocateSplit([leg('a', p), leg('b', p)], 10n ** 23n, { parts: 20, maxSplits: 2 })
    expect(even?.legs.map((l) => l.amountIn)).toEqual([5n * 10n ** 22n, 5n * 10n ** 22n])
    // a small amount: splitting gains ~amount²/reserve, far less than a fixed cost of 10^15
    const small = allocateSplit([leg('a', p, 10n ** 15n), leg('b', p, 10n ** 15n)], 10n ** 18n, { parts: 20, maxSplits: 2 })
    expect(small?.legs).toHaveLength(1)
  })

  it('handles amounts smaller than the part count', () => {
    const p: Pair = { reserveIn: 1000n, reserveOut: 10n ** 6n }
    const a = allocateSplit([leg('a', p), leg('b', p)], 3n, { parts: 30, maxSplits: 2 })
    if (!a) throw new Error('no allocation')
    checkAllocation(a, [leg('a', p), leg('b', p)], 3n, 2)
  })
})
