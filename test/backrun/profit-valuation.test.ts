/**
 * ProfitValuer: a sale's value is the best output over every path of at most two hops to WETH, on
 * random V2 and V3 pools (against quoting every path, written here with the reference math of
 * test/routing/helpers.ts), whichever paths its maxRate bound lets it skip.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProfitValuer } from '../../src/backrun/profit-valuation.ts'
import type { Address } from '../../src/chain/types.ts'
import { buildPoolGraph, type PoolSnapshot } from '../../src/pools/index.ts'
import { referencePathQuote, referencePaths, syntheticToken, v2Pool, v3Pool } from '../routing/helpers.ts'

const W = syntheticToken(1)
const TOKENS = [syntheticToken(2), syntheticToken(3), syntheticToken(4)]
const E18 = 10n ** 18n
const SPACING: Record<number, number> = { 500: 10, 3000: 60, 10_000: 200 }

/** the best output of selling `amount` of `token` for W over every path, avoiding `avoid` when one path does */
function referenceValue(pools: readonly PoolSnapshot[], token: Address, amount: bigint, avoid: ReadonlySet<Address>): bigint | undefined {
  const all = referencePaths(pools, token, W, 2)
  const clear = all.filter((p) => p.pools.every((pool) => !avoid.has(pool.address)))
  let best: bigint | undefined
  for (const path of clear.length > 0 ? clear : all) {
    const q = referencePathQuote(path, amount)
    if (q !== undefined && (best === undefined || q.amountOut > best)) best = q.amountOut
  }
  return best
}

const pool = fc.oneof(
  fc.record({
    kind: fc.constant('v2' as const),
    a: fc.nat({ max: 3 }),
    b: fc.nat({ max: 3 }),
    ra: fc.bigInt({ min: 10n ** 15n, max: 10n ** 24n }),
    rb: fc.bigInt({ min: 10n ** 15n, max: 10n ** 24n }),
  }),
  fc.record({
    kind: fc.constant('v3' as const),
    a: fc.nat({ max: 3 }),
    b: fc.nat({ max: 3 }),
    tick: fc.integer({ min: -2000, max: 2000 }),
    liquidity: fc.bigInt({ min: 10n ** 17n, max: 10n ** 23n }),
    fee: fc.constantFrom(500, 3000, 10_000),
  }),
)

describe('ProfitValuer', () => {
  it('values a sale at the best output over every path, skipping only paths whose bound cannot beat it (property)', () => {
    const tokens = [W, ...TOKENS]
    fc.assert(
      fc.property(fc.array(pool, { minLength: 2, maxLength: 12 }), fc.bigInt({ min: 1n, max: 10n ** 22n }), fc.nat({ max: 2 }), fc.boolean(), (specs, amount, t, avoidFirst) => {
        const pools: PoolSnapshot[] = []
        for (const s of specs) {
          if (s.a === s.b) continue
          const [a, b] = [tokens[s.a], tokens[s.b]]
          if (s.kind === 'v2') pools.push(v2Pool(a, b, s.ra, s.rb))
          else {
            // one position over (nearly) the whole price range
            const spacing = SPACING[s.fee]
            const edge = 887_000 - (887_000 % spacing)
            pools.push(v3Pool(a, b, s.fee, spacing, s.tick, [[-edge, edge, s.liquidity]]))
          }
        }
        const token = TOKENS[t]
        const avoid = new Set<Address>(avoidFirst && pools.length > 0 ? [pools[0].address] : [])
        const valuer = new ProfitValuer(buildPoolGraph(pools), W)
        const expected = referenceValue(pools, token, amount, avoid)
        const got = valuer.toWei(token, amount, avoid)
        if (referencePaths(pools, token, W, 2).length === 0) expect(got).toBeUndefined()
        else expect(got).toBe(expected)
        // asked again (the paths and their bounds are remembered): the same answer
        expect(valuer.toWei(token, amount, avoid)).toBe(got)
      }),
      // endOnFailure: a counterexample at once, rather than minutes of shrinking over the bigints
      { numRuns: 400, endOnFailure: true },
    )
  })

  it('of two direct pools, the one with the higher bound is quoted first; the other only if its bound can beat it', () => {
    const [u] = TOKENS
    // the deep pool sells 1 U for ~2 W; the shallow one's spot price is higher, but 100 U moves it far
    const deep = v2Pool(u, W, 1_000_000n * E18, 2_000_000n * E18)
    const shallow = v2Pool(u, W, 100n * E18, 300n * E18)
    const valuer = new ProfitValuer(buildPoolGraph([deep, shallow]), W)
    expect(valuer.toWei(u, E18, new Set())).toBe(referenceValue([deep, shallow], u, E18, new Set()))
    expect(valuer.toWei(u, 100n * E18, new Set())).toBe(referenceValue([deep, shallow], u, 100n * E18, new Set()))
    // a token with no path to W cannot be valued; W is its own value
    expect(valuer.toWei(TOKENS[1], E18)).toBeUndefined()
    expect(valuer.toWei(W, 7n)).toBe(7n)
  })
})
