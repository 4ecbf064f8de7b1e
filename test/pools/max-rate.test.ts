/**
 * The pool kinds' maxRate and pathMaxRate (what lets the route search skip paths that cannot win):
 * on every pool of the devnet's five venues (V2, V3, the forks' V2 and V3, V4 with native ETH,
 * dynamic fees and hooks), both directions, amounts from 1 unit to 1e30, the exact quote never
 * gives more than the amount times the rate; and the rate is the pool's price less its fee, not a
 * loose figure: a small swap gets within 1% of it. Paths alike, and the pure rate functions on
 * synthetic pools at the ends of the price range.
 */
import { describe, expect, it } from 'vitest'
import { v2MaxRate, v3MaxRate, MAX_SQRT_RATIO, MIN_SQRT_RATIO } from '../../src/dex/math/index.ts'
import { buildPoolGraph, enumeratePaths } from '../../src/pools/paths.ts'
import { pathMaxRate, quoteHop, quotePath } from '../../src/pools/pool-quote.ts'
import { poolKind } from '../../src/pools/pool-kinds.ts'
import type { PoolSnapshot } from '../../src/pools/pools.ts'
import { RoutingEngine } from '../../src/routing/index.ts'
import { DEX, sim, source, tok } from '../routing/helpers.ts'

const AMOUNTS = Array.from({ length: 31 }, (_, k) => 10n ** BigInt(k))

async function devnetPools(): Promise<PoolSnapshot[]> {
  const engine = new RoutingEngine(sim, { dex: DEX })
  const byAddress = new Map<string, PoolSnapshot>()
  for (const [a, b] of [['WETH', 'USDC'], ['UNI', 'LINK'], ['WBTC', 'DAI'], ['USDT', 'WBTC'], ['LINK', 'DAI']]) {
    for (const pool of (await engine.loadPools(source.latest(), tok(a), tok(b))).pools) byAddress.set(pool.address, pool)
  }
  return [...byAddress.values()]
}

describe('maxRate', () => {
  it('bounds every quote of every devnet pool, both ways, and is within 1% of a small swap', async () => {
    const pools = await devnetPools()
    expect(new Set(pools.map((p) => p.venue)).size).toBe(5)
    expect(pools.some((p) => p.protocol === 'uniswap-v4' && p.hookAltersSwap)).toBe(true)
    let quoted = 0
    for (const pool of pools) {
      for (const zeroForOne of [true, false]) {
        const rate = poolKind(pool.protocol).maxRate(pool, zeroForOne)
        let tightest: number | undefined
        for (const amount of AMOUNTS) {
          const q = quoteHop(pool, zeroForOne, amount)
          if (q === undefined) continue
          quoted++
          expect(Number(q.amountOut), `${pool.venue} ${pool.address} ${zeroForOne} ${amount}`).toBeLessThanOrEqual(Number(amount) * rate)
          // the first amount with six digits in and out: rounding is negligible there
          if (tightest === undefined && amount >= 1_000_000n && q.amountOut >= 1_000_000n) tightest = Number(q.amountOut) / Number(amount)
        }
        if (tightest !== undefined) expect(rate, `${pool.venue} ${pool.address} ${zeroForOne}`).toBeLessThan(tightest * 1.01)
      }
    }
    expect(quoted).toBeGreaterThan(500)
  })

  it('pathMaxRate bounds every quote of the two- and three-hop paths between devnet tokens', async () => {
    const graph = buildPoolGraph(await devnetPools())
    let quoted = 0
    for (const [a, b] of [['USDT', 'WBTC'], ['LINK', 'DAI'], ['UNI', 'LINK']]) {
      for (const path of enumeratePaths(graph, tok(a), tok(b), 3)) {
        const rate = pathMaxRate(path)
        for (const amount of AMOUNTS) {
          const q = quotePath(path, amount)
          if (q === undefined) continue
          quoted++
          expect(Number(q.amountOut)).toBeLessThanOrEqual(Number(amount) * rate)
        }
      }
    }
    expect(quoted).toBeGreaterThan(1000)
  })

  it('is the price less the fee, 0 for an empty pool or a 100% fee, finite at the ends of the price range', () => {
    expect(v2MaxRate(1000n, 3000n, 30)).toBeCloseTo(3 * 0.997, 9)
    expect(v2MaxRate(3000n, 1000n, 25)).toBeCloseTo(0.9975 / 3, 9)
    expect(v2MaxRate(0n, 1000n, 30)).toBe(0)
    const sqrtPriceOf2 = BigInt(Math.round(Math.sqrt(2) * 2 ** 48)) << 48n
    expect(v3MaxRate(sqrtPriceOf2, 3000, true)).toBeCloseTo(2 * 0.997, 9)
    expect(v3MaxRate(sqrtPriceOf2, 500, false)).toBeCloseTo(0.9995 / 2, 9)
    expect(v3MaxRate(sqrtPriceOf2, 1_000_000, true)).toBe(0)
    expect(v3MaxRate(0n, 3000, true)).toBe(0)
    for (const sqrtPrice of [MIN_SQRT_RATIO, MAX_SQRT_RATIO - 1n]) {
      for (const zeroForOne of [true, false]) {
        const rate = v3MaxRate(sqrtPrice, 100, zeroForOne)
        expect(Number.isFinite(rate) && rate > 0).toBe(true)
      }
    }
  })
})
