/**
 * rank-by-bound.ts: the first k of its ranking are exactly the first k of valuing every item, for
 * any bounds at least the values; it values fewer items when the bounds rule some out; a bound
 * that is no number rules nothing out.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { boundWithSlack, rankByBound, type Ranked } from '../../src/pools/rank-by-bound.ts'

/** every item valued, best first (higher value, lower index) */
function fullRanking(values: ReadonlyArray<bigint | undefined>): Ranked[] {
  return values
    .map((value, i) => ({ i, value }))
    .filter((x): x is Ranked => x.value !== undefined)
    .sort((a, b) => (a.value === b.value ? a.i - b.i : a.value > b.value ? -1 : 1))
}

describe('rankByBound', () => {
  it('property: its first k entries are the full ranking\'s first k, whatever bounds at least the values', () => {
    const item = fc.record({
      // small values so that ties are frequent; some items have none
      value: fc.option(fc.bigInt({ min: -50n, max: 50n }), { nil: undefined }),
      slack: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 100, noNaN: true })),
      scale: fc.constantFrom(1n, 10n ** 18n, -(10n ** 20n)),
    })
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), fc.integer({ min: 1, max: 45 }), (items, k) => {
        const values = items.map((x) => (x.value === undefined ? undefined : x.value * x.scale))
        const bounds = items.map((x, i) => (values[i] === undefined ? x.slack : boundWithSlack(Number(values[i]) + x.slack)))
        const valued: number[] = []
        const ranked = rankByBound(items.length, k, { bound: (i) => bounds[i], value: (i) => (valued.push(i), values[i]) })
        expect(ranked.slice(0, k)).toEqual(fullRanking(values).slice(0, k))
        // items are valued by descending bound, ties by index (a NaN bound first), up to where it stops
        if (k < items.length) {
          const key = (i: number) => (Number.isNaN(bounds[i]) ? Number.POSITIVE_INFINITY : bounds[i])
          const byBound = items.map((_, i) => i).sort((a, b) => (key(a) === key(b) ? a - b : key(b) - key(a)))
          expect(valued).toEqual(byBound.slice(0, valued.length))
        }
        // every entry it gives is an item with its value, in the full ranking's order
        const order = new Map(fullRanking(values).map((r, at) => [r.i, at]))
        for (const r of ranked) expect(r.value).toBe(values[r.i])
        expect(ranked.map((r) => order.get(r.i))).toEqual(ranked.map((r) => order.get(r.i)).sort((a, b) => a! - b!))
        expect(valued.length).toBeLessThanOrEqual(items.length)
      }),
      { numRuns: 500 },
    )
  })

  it('values only the items whose bound leaves them a chance', () => {
    // ten items worth 100..91 with exact bounds, then ninety worth less than 50, bounded by 50
    const values = Array.from({ length: 100 }, (_, i) => (i < 10 ? BigInt(100 - i) : BigInt(i % 50)))
    const bounds = values.map((v, i) => (i < 10 ? Number(v) : 50))
    const valued: number[] = []
    const ranked = rankByBound(values.length, 3, { bound: (i) => bounds[i], value: (i) => (valued.push(i), values[i]) })
    expect(ranked.slice(0, 3)).toEqual(fullRanking(values).slice(0, 3))
    // once three are known (100, 99, 98), 97's bound still reaches the third (within the slack for
    // its conversion to a double: 1 and 1e-9 of it), 96's does not, nor does any after it
    expect(valued).toEqual([0, 1, 2, 3])
  })

  it('values every item when k covers them, and an item whose bound is no number is never skipped', () => {
    const values = [5n, 7n, undefined, 1n]
    let valued = 0
    expect(rankByBound(4, 4, { bound: () => 0, value: (i) => (valued++, values[i]) })).toEqual(fullRanking(values))
    expect(valued).toBe(4)
    // item 3's value (9) is the best; its bound NaN must not let the 0-bounds cut it off
    const tricky = [5n, 4n, 3n, 9n]
    const bounds = [5, 4, 3, Number.NaN]
    expect(rankByBound(4, 1, { bound: (i) => bounds[i], value: (i) => tricky[i] })[0]).toEqual({ i: 3, value: 9n })
  })

  it('boundWithSlack pads by 1e-9 of the magnitudes summed into the bound, and 1', () => {
    expect(boundWithSlack(0)).toBe(1)
    expect(boundWithSlack(1e18, 1e18)).toBe(1e18 + 2e9 + 1)
    expect(boundWithSlack(-1e18, 2e18, 3e18)).toBe(-1e18 + 6e9 + 1)
  })
})
