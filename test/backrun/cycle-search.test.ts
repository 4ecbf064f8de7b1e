/**
 * The backrun cycle search on synthetic pools (against brute force written independently: its own
 * cycle enumeration, quotes with src/dex/math directly through test/routing/helpers.ts, a fine grid
 * over the input) and on the devnet's real pools, before and after the fixture transactions
 * (executed in the simulator; their Swap events name the moved pools).
 */
import fc from 'fast-check'
import { keccak256, toHex } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  BackrunSearchError,
  enumerateBackrunCycles,
  ProfitValuer,
  findBackrunCandidates,
  optimalConstantProductInput,
  searchBackrun,
  type BackrunCandidate,
  type BackrunSearchParams,
} from '../../src/backrun/index.ts'
import { executorCanSwap } from '../../src/backrun/backrun-engine.ts'
import type { Address, StateReader } from '../../src/chain/types.ts'
import type { TransactionResult } from '../../src/evm/simulator.ts'
import { buildPoolGraph, enumeratePaths, quotePath, tickCoverage, type PathHop, type PoolSnapshot, type V2PoolSnapshot } from '../../src/pools/index.ts'
import { V4_HOOK_FLAGS } from '../../src/pools/uniswap-v4-hooks.ts'
import { RoutingEngine } from '../../src/routing/index.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { DEX, lower, referencePathQuote, registry, sim, source, syntheticToken, tok, v2Pool, v3Pool, type ReferencePath } from '../routing/helpers.ts'
import { loadFixtureTxs, loadRegistry, type FixtureTx } from '../support/devnet.ts'

// ---------------------------------------------------------------- independent references

/** every directed cycle of 2..maxHops distinct pools from `start` back to it, distinct tokens, by its own recursion */
function referenceCycles(pools: readonly PoolSnapshot[], start: Address, maxHops = 3): ReferencePath[] {
  const out: ReferencePath[] = []
  const extend = (tokens: Address[], used: PoolSnapshot[]) => {
    const at = tokens[tokens.length - 1]
    for (const p of pools) {
      if (used.includes(p) || (p.token0 !== at && p.token1 !== at)) continue
      const next = p.token0 === at ? p.token1 : p.token0
      if (next === start && used.length >= 1) out.push({ pools: [...used, p], tokens: [...tokens, next] })
      else if (!tokens.includes(next) && used.length + 1 < maxHops) extend([...tokens, next], [...used, p])
    }
  }
  extend([start], [])
  return out
}

function referenceProfit(path: ReferencePath, x: bigint): bigint | undefined {
  const q = referencePathQuote(path, x)
  return q === undefined ? undefined : q.amountOut - x
}

/** the best profit over a geometric grid of inputs (5% apart), refined by 2000 even steps around its best point */
function gridBest(profit: (x: bigint) => bigint | undefined, from = 1000n, to = 10n ** 27n): { amountIn: bigint; profit: bigint } {
  let best = { amountIn: 0n, profit: 0n }
  const consider = (x: bigint) => {
    const p = profit(x)
    if (p !== undefined && p > best.profit) best = { amountIn: x, profit: p }
  }
  for (let x = from; x <= to; x = (x * 21n) / 20n + 1n) consider(x)
  if (best.profit > 0n) {
    const lo = (best.amountIn * 20n) / 21n
    const hi = (best.amountIn * 21n) / 20n + 1n
    const step = (hi - lo) / 2000n > 0n ? (hi - lo) / 2000n : 1n
    for (let x = lo; x <= hi; x += step) consider(x)
  }
  return best
}

const poolsOf = (c: BackrunCandidate) => c.hops.map((h) => h.pool)
const sameCycle = (c: BackrunCandidate, path: ReferencePath) => poolsOf(c).join() === path.pools.map((p) => p.address).join()

/** the candidate is well formed and its amounts are what independent math computes */
function checkCandidate(c: BackrunCandidate, pools: readonly PoolSnapshot[], moved: readonly Address[]): void {
  expect(c.hops.length).toBeGreaterThanOrEqual(2)
  expect(c.hops.length).toBeLessThanOrEqual(3)
  expect(c.expectedProfit).toBeGreaterThan(0n)
  expect(c.expectedOut).toBe(c.amountIn + c.expectedProfit)
  expect(c.quoteEvaluations).toBeGreaterThan(0)
  const path: ReferencePath = { pools: [], tokens: [c.startToken] }
  const hops: PathHop[] = []
  let at = c.startToken
  for (const hop of c.hops) {
    const pool = pools.find((p) => p.address === hop.pool)
    if (pool === undefined) throw new Error(`unknown pool ${hop.pool}`)
    expect(hop.tokenIn).toBe(at)
    expect(hop.zeroForOne).toBe(hop.tokenIn === pool.token0)
    expect([pool.token0, pool.token1]).toContain(hop.tokenOut)
    expect(hop.tokenOut).not.toBe(hop.tokenIn)
    expect(hop.protocol).toBe(pool.protocol)
    expect(hop.fee).toBe(pool.fee)
    path.pools.push(pool)
    path.tokens.push(hop.tokenOut)
    hops.push({ pool, tokenIn: hop.tokenIn, tokenOut: hop.tokenOut, zeroForOne: hop.zeroForOne })
    at = hop.tokenOut
  }
  expect(at).toBe(c.startToken)
  expect(new Set(c.hops.map((h) => h.pool)).size).toBe(c.hops.length)
  expect(new Set(c.hops.map((h) => h.tokenIn)).size).toBe(c.hops.length)
  expect(c.hops.some((h) => moved.includes(h.pool))).toBe(true)
  // the profit is the exact math's, by the routing quote and by the independent one
  expect(quotePath(hops, c.amountIn)?.amountOut).toBe(c.expectedOut)
  expect(referencePathQuote(path, c.amountIn)?.amountOut).toBe(c.expectedOut)
}

// ---------------------------------------------------------------- synthetic pools

const [W, U, X, Y, Z] = [1, 2, 3, 4, 5].map(syntheticToken)
const E21 = 10n ** 21n
const params = (pools: PoolSnapshot[], moved: PoolSnapshot[], extra: Partial<BackrunSearchParams> = {}): BackrunSearchParams => ({
  pools,
  movedPools: moved.map((p) => p.address),
  weth: W,
  baseTokens: [W, U],
  // these tests check what the search finds, not its time budget (tested on its own with a clock)
  budgetMs: 600_000,
  ...extra,
})

describe('backrun cycle search on synthetic pools', () => {
  it('two V2 pairs of one pair: the closed form, equal to a brute-force scan of every input', () => {
    // small reserves so that every input can be tried
    const cheap = v2Pool(W, U, 20_000n, 20_000n)
    const dear = v2Pool(W, U, 20_000n, 21_000n)
    const pools = [cheap, dear]
    const [c, ...rest] = findBackrunCandidates(params(pools, [cheap]))
    expect(rest).toHaveLength(0)
    if (!c) throw new Error('no candidate')
    checkCandidate(c, pools, [cheap.address])
    expect(c.method).toBe('closed-form')
    expect(c.certified).toBe(true)
    // W is dear in `dear`: sell W there, buy it back in `cheap`
    expect(poolsOf(c)).toEqual([dear.address, cheap.address])
    expect(c.startToken).toBe(W)
    const path: ReferencePath = { pools: [dear, cheap], tokens: [W, U, W] }
    let best = { amountIn: 0n, profit: 0n }
    for (let x = 1n; x < 20_000n; x++) {
      const p = referenceProfit(path, x) ?? -1n
      if (p > best.profit) best = { amountIn: x, profit: p }
    }
    expect(best.profit).toBeGreaterThan(0n)
    expect(c.expectedProfit).toBe(best.profit)
    expect(referenceProfit(path, c.amountIn)).toBe(best.profit)
  })

  it('two V2 pairs (property): the candidate is the brute-force maximum, in the profitable direction only', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 2_000n, max: 30_000n }), fc.bigInt({ min: 2_000n, max: 30_000n }), fc.integer({ min: -400, max: 400 }), (rw, ru, skewPermille) => {
        const a = v2Pool(W, U, rw, ru)
        const b = v2Pool(W, U, rw, (ru * BigInt(1000 + skewPermille)) / 1000n)
        const pools = [a, b]
        const candidates = findBackrunCandidates(params(pools, [b], { maxCandidates: 10 }))
        for (const path of referenceCycles(pools, W)) {
          let best = 0n
          for (let x = 1n; x < rw; x++) {
            const p = referenceProfit(path, x)
            if (p !== undefined && p > best) best = p
          }
          const found = candidates.find((c) => sameCycle(c, path))
          if (best === 0n) expect(found).toBeUndefined()
          else {
            if (!found) throw new Error(`missed a cycle worth ${best}`)
            checkCandidate(found, pools, [b.address])
            // certified when the plateau is short, else at most one wei short
            expect(found.expectedProfit >= best - (found.certified === true ? 0n : 1n)).toBe(true)
            expect(found.expectedProfit <= best).toBe(true)
          }
        }
        expect(candidates.length).toBeLessThanOrEqual(1)
      }),
      { numRuns: 60 },
    )
  })

  const feeTier = fc.constantFrom<[number, number]>([500, 10], [3000, 60], [10000, 200])

  it('V2 against V3 and V3 against V3 (property): >= 99.9% of a fine brute-force grid, every profitable direction found', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 10n ** 18n, max: 10n ** 24n }),
        fc.bigInt({ min: 10n ** 18n, max: 10n ** 24n }),
        fc.integer({ min: -3000, max: 3000 }),
        feeTier,
        feeTier,
        fc.boolean(),
        (reserve, liquidity, tick, [fee, spacing], [fee2, spacing2], v3v3) => {
          const first = v3v3 ? v3Pool(W, U, fee2, spacing2, 0, [[-60_000, 60_000, reserve]]) : v2Pool(W, U, reserve, reserve)
          const second = v3Pool(W, U, fee, spacing, tick, [[-60_000, 60_000, liquidity]])
          const pools = [first, second]
          const candidates = findBackrunCandidates(params(pools, [second], { maxCandidates: 10 }))
          for (const c of candidates) checkCandidate(c, pools, [second.address])
          for (const path of referenceCycles(pools, W)) {
            const best = gridBest((x) => referenceProfit(path, x))
            const found = candidates.find((c) => sameCycle(c, path))
            if (best.profit === 0n) continue
            if (!found) throw new Error(`missed a cycle worth ${best.profit}`)
            expect(found.expectedProfit * 1000n >= best.profit * 999n).toBe(true)
          }
        },
      ),
      { numRuns: 40 },
    )
  })

  it('triangles through V2 and V3 pools (property): >= 99.9% of a fine brute-force grid', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 10n ** 19n, max: 10n ** 23n }),
        fc.integer({ min: -4000, max: 4000 }),
        feeTier,
        fc.integer({ min: 0, max: 2 }),
        (depth, tick, [fee, spacing], movedIndex) => {
          // W/U at 1, U/X at 1.0001^tick (a V3 pool), X/W at 1: the triangle gains when the tick is far enough from 0
          const pools = [v2Pool(W, U, depth, depth), v3Pool(U, X, fee, spacing, tick, [[-60_000, 60_000, depth]]), v2Pool(X, W, depth, depth)]
          const moved = [pools[movedIndex]]
          const candidates = findBackrunCandidates(params(pools, moved, { maxCandidates: 10 }))
          const paths = referenceCycles(pools, W).filter((p) => p.pools.length === 3)
          expect(paths).toHaveLength(2)
          let profitable = 0
          for (const c of candidates) checkCandidate(c, pools, [moved[0].address])
          for (const path of paths) {
            const best = gridBest((x) => referenceProfit(path, x))
            const found = candidates.find((c) => sameCycle(c, path))
            if (best.profit === 0n) continue
            profitable++
            if (!found) throw new Error(`missed a triangle worth ${best.profit}`)
            expect(found.method).toBe('bracketed')
            expect(found.expectedProfit * 1000n >= best.profit * 999n).toBe(true)
          }
          // never both directions of one cycle
          expect(profitable).toBeLessThanOrEqual(1)
          if (Math.abs(tick) > 1500) expect(profitable).toBe(1)
        },
      ),
      { numRuns: 40 },
    )
  })

  it('V2 triangles are closed form and match brute force over every input', () => {
    const pools = [v2Pool(W, U, 30_000n, 30_000n), v2Pool(U, X, 30_000n, 33_000n), v2Pool(X, W, 30_000n, 30_000n)]
    const [c] = findBackrunCandidates(params(pools, [pools[1]]))
    if (!c) throw new Error('no candidate')
    checkCandidate(c, pools, [pools[1].address])
    expect(c.method).toBe('closed-form')
    const path = referenceCycles(pools, W).find((p) => sameCycle(c, p))
    if (!path) throw new Error('not a cycle of the pools')
    let best = 0n
    for (let x = 1n; x < 30_000n; x++) best = [best, referenceProfit(path, x) ?? 0n].reduce((a, b) => (a > b ? a : b))
    expect(c.expectedProfit).toBe(best)
  })

  it('keeps to the V3 pools loaded ticks: the best input the snapshot can quote', () => {
    // the V3 pool is 49% dearer; the arbitrage would move it most of the way back, but only the
    // current bitmap word (ticks 2560..5119 at spacing 10) is loaded
    const full = v3Pool(W, U, 500, 10, 4000, [[-20_000, 20_000, 10n ** 21n]])
    const partial = { ...full, coverage: tickCoverage(4000, 10, 0) }
    const deep = v2Pool(W, U, 10n ** 26n, 10n ** 26n)
    const [unbounded] = findBackrunCandidates(params([full, deep], [full]))
    const [bounded] = findBackrunCandidates(params([partial, deep], [partial]))
    if (!unbounded || !bounded) throw new Error('no candidate')
    checkCandidate(bounded, [partial, deep], [partial.address])
    expect(bounded.amountIn).toBeLessThan(unbounded.amountIn)
    expect(bounded.expectedProfit).toBeLessThan(unbounded.expectedProfit)
    // the best the snapshot can quote, by a grid with the same (coverage-bounded) math
    const hops: PathHop[] = [
      { pool: partial, tokenIn: W, tokenOut: U, zeroForOne: true },
      { pool: deep, tokenIn: U, tokenOut: W, zeroForOne: false },
    ]
    expect(poolsOf(bounded)).toEqual(hops.map((h) => h.pool.address))
    const best = gridBest((x) => {
      const q = quotePath(hops, x)
      return q === undefined ? undefined : q.amountOut - x
    })
    expect(bounded.expectedProfit * 1000n >= best.profit * 999n).toBe(true)
    // the estimate (past the loaded ticks) is walked back rather than abandoned for a doubling from scratch
    expect(bounded.quoteEvaluations).toBeLessThan(35)
    // a little more and the quote runs past the loaded ticks
    expect(quotePath(hops, (bounded.amountIn * 1001n) / 1000n)).toBeUndefined()
  })

  it('gives no candidate for balanced pools, without a single quote', () => {
    const pools = [
      v2Pool(W, U, E21, E21),
      v3Pool(W, U, 500, 10, 0, [[-1000, 1000, E21]]),
      v3Pool(W, U, 3000, 60, 0, [[-6000, 6000, E21]]),
      v2Pool(U, X, E21, 2n * E21),
      v3Pool(W, X, 3000, 60, 6931, [[-60_000, 60_000, E21]]),
    ]
    const r = searchBackrun(params(pools, pools))
    expect(r.cycles).toBeGreaterThan(8)
    expect(r.profitableAtMargin).toBe(0)
    expect(r.quoteEvaluations).toBe(0)
    expect(r.candidates).toEqual([])
  })

  it('returns only cycles through the moved pools', () => {
    // two separate opportunities: W/U and W/X are both mispriced
    const wu = [v2Pool(W, U, E21, E21), v3Pool(W, U, 3000, 60, 1000, [[-60_000, 60_000, E21]])]
    const wx = [v2Pool(W, X, E21, E21), v3Pool(W, X, 3000, 60, -1000, [[-60_000, 60_000, E21]])]
    const pools = [...wu, ...wx]
    const onlyWu = findBackrunCandidates(params(pools, [wu[0]], { maxCandidates: 20 }))
    expect(onlyWu.length).toBeGreaterThan(0)
    for (const c of onlyWu) {
      checkCandidate(c, pools, [wu[0].address])
      expect(poolsOf(c)).toContain(wu[0].address)
    }
    const cycles = enumerateBackrunCycles(pools, [wu[0].address], W, [W, U])
    expect(cycles.length).toBeGreaterThan(0)
    for (const c of cycles) expect(c.hops.some((h) => h.pool === wu[0])).toBe(true)
    // W/X alone is its own opportunity, invisible from W/U
    expect(onlyWu.some((c) => poolsOf(c).join() === wx.map((p) => p.address).join())).toBe(false)
    const both = findBackrunCandidates(params(pools, [wu[0], wx[0]], { maxCandidates: 20 }))
    expect(both.some((c) => poolsOf(c).includes(wx[0].address) && !poolsOf(c).includes(wu[0].address))).toBe(true)
    // no moved pool, no cycle
    expect(findBackrunCandidates(params(pools, []))).toEqual([])
    // addresses in any case
    expect(findBackrunCandidates(params(pools, [], { movedPools: [wu[0].address.toUpperCase().replace('0X', '0x') as Address] }))).toEqual(onlyWu.slice(0, 5))
  })

  it('considers both directions of every cycle', () => {
    const a = v2Pool(W, U, E21, E21)
    const b = v3Pool(W, U, 3000, 60, 0, [[-60_000, 60_000, E21]])
    const c = v2Pool(U, X, E21, E21)
    const d = v2Pool(X, W, E21, E21)
    const pools = [a, b, c, d]
    const cycles = enumerateBackrunCycles(pools, [a.address], W, [W, U])
    const ids = cycles.map((cy) => cy.hops.map((h) => `${h.pool.address}:${h.tokenIn}`).join('>'))
    const id = (...hops: Array<[PoolSnapshot, Address]>) => hops.map(([p, t]) => `${p.address}:${t}`).join('>')
    expect(ids.sort()).toEqual(
      [
        id([a, W], [b, U]),
        id([b, W], [a, U]),
        id([a, W], [c, U], [d, X]),
        id([d, W], [c, X], [a, U]),
      ].sort(),
    )
    expect(enumerateBackrunCycles(pools, [a.address], W, [W, U], 2)).toHaveLength(2)
    // each direction wins when the price is skewed its way
    const up = v3Pool(W, U, 3000, 60, 1000, [[-60_000, 60_000, E21]])
    const down = v3Pool(W, U, 3000, 60, -1000, [[-60_000, 60_000, E21]])
    const [viaUp] = findBackrunCandidates(params([a, up], [a]))
    const [viaDown] = findBackrunCandidates(params([a, down], [a]))
    // W is dear in `up`: sell it there first; cheap in `down`: buy it there last
    expect(poolsOf(viaUp)).toEqual([up.address, a.address])
    expect(poolsOf(viaDown)).toEqual([a.address, down.address])
  })

  it('starts a cycle at WETH, else a base token, else the moved pool\'s token, and switches only to a start token worth more', () => {
    // a triangle moved on U/X: it holds W, so it starts at W; U and X can only be sold through the
    // cycle's own pools, so no other rotation can be compared fairly and W stays
    const tri = [v2Pool(W, U, E21, E21), v3Pool(U, X, 3000, 60, 2000, [[-60_000, 60_000, E21]]), v2Pool(X, W, E21, E21)]
    const [t] = findBackrunCandidates(params(tri, [tri[1]]))
    expect(t?.startToken).toBe(W)
    checkCandidate(t, tri, [tri[1].address])
    // WETH first whether or not it is listed among the base tokens, and wherever
    expect(findBackrunCandidates(params(tri, [tri[1]], { baseTokens: [U] }))[0]?.startToken).toBe(W)
    expect(findBackrunCandidates(params(tri, [tri[1]], { baseTokens: [U, X, W] }))[0]?.startToken).toBe(W)
    // U/X pools only: no W, so U (a base token)
    const ux = [v2Pool(U, X, E21, E21), v3Pool(U, X, 3000, 60, 2000, [[-60_000, 60_000, E21]])]
    const [u] = findBackrunCandidates(params(ux, [ux[0]]))
    expect(u?.startToken).toBe(U)
    expect(enumerateBackrunCycles(ux, [ux[0].address], W, [W, U]).every((c) => c.startToken === U)).toBe(true)
    // X/Y pools: neither is a base token: once per direction, from the moved pool's token
    const xy = [v2Pool(X, Y, E21, E21), v3Pool(X, Y, 3000, 60, 2000, [[-60_000, 60_000, E21]])]
    const cycles = enumerateBackrunCycles(xy, [xy[0].address], W, [W, U])
    expect(cycles).toHaveLength(2)
    // nothing values X or Y in ETH: one candidate, unvalued
    const unvalued = findBackrunCandidates(params(xy, [xy[0]]))
    expect(unvalued).toHaveLength(1)
    expect(unvalued[0].profitWei).toBeUndefined()
    // X can be sold for W outside the cycle (X -> Z -> W), Y cannot: the X rotation is kept, worth what that sale gives
    const valued = [...xy, v2Pool(W, Z, E21, E21), v2Pool(Z, X, E21, E21)]
    const kept = findBackrunCandidates(params(valued, [xy[0]]))
    expect(kept).toHaveLength(1)
    expect(kept[0].startToken).toBe(X)
    const sale = quotePath(enumeratePaths(buildPoolGraph(valued), X, W, 2)[0], kept[0].expectedProfit)
    expect(kept[0].profitWei).toBe(sale?.amountOut)
  })

  it('chooses the start token whose profit is worth the most wei, valued by a sale outside the cycle', () => {
    // W/U mispriced between two V2 pairs (W dearer in `dear`); U can also be sold for W through
    // U -> X -> W, pools outside the cycle, at a price the test sets
    const cheap = v2Pool(W, U, 10n ** 21n, 2n * 10n ** 24n)
    const dear = v2Pool(W, U, 10n ** 21n, 21n * 10n ** 23n)
    const v2 = (pool: V2PoolSnapshot, tokenIn: Address) =>
      tokenIn === pool.token0 ? { reserveIn: pool.reserve0, reserveOut: pool.reserve1 } : { reserveIn: pool.reserve1, reserveOut: pool.reserve0 }
    // each rotation's own optimum, by the closed form: W -> U in `dear`, back in `cheap`; or U -> W in `cheap`, back in `dear`
    const inW = optimalConstantProductInput([v2(dear, W), v2(cheap, U)])
    const inU = optimalConstantProductInput([v2(cheap, U), v2(dear, W)])
    if (!inW || !inU) throw new Error('no optimum')
    const chosen: Address[] = []
    for (const uPerW of [1500n, 3000n]) {
      // U dear outside (1500 per W) or cheap (3000 per W)
      const outside = [v2Pool(U, X, 10n ** 28n, 10n ** 28n), v2Pool(X, W, uPerW * 10n ** 24n, 10n ** 24n)]
      const pools = [cheap, dear, ...outside]
      // two-pool cycles only: the outside pools would make triangles of their own
      const r = searchBackrun(params(pools, [cheap], { maxHops: 2 }))
      const [c] = r.candidates
      if (!c) throw new Error('no candidate')
      checkCandidate(c, pools, [cheap.address])
      expect(r.rotationsTried).toBe(1)
      const valuer = new ProfitValuer(buildPoolGraph(pools), W)
      const uWei = valuer.toWeiAvoiding(U, inU.profit, new Set([cheap.address, dear.address]))
      if (uWei === undefined) throw new Error('U cannot be valued')
      const expected = uWei > inW.profit ? U : W
      expect(c.startToken, `${uPerW} U per W outside`).toBe(expected)
      expect(c.expectedProfit).toBe(expected === U ? inU.profit : inW.profit)
      expect(c.profitWei).toBe(expected === U ? uWei : inW.profit)
      chosen.push(c.startToken)
    }
    // the outside price decides: U where it sells dear, WETH where it sells cheap
    expect(chosen).toEqual([U, W])
  })

  it('cycles through any token: triangles through a third token that is not a base token, from a moved pool of non-base tokens too', () => {
    // X/Y pools (neither a base token) moved, a third token Z (not a base token either)
    const xy = v2Pool(X, Y, E21, 11n * 10n ** 20n)
    const yz = v2Pool(Y, Z, E21, E21)
    const zx = v2Pool(Z, X, E21, E21)
    const pools = [xy, yz, zx, v2Pool(W, Z, E21, E21)]
    const cycles = enumerateBackrunCycles(pools, [xy.address], W, [W, U])
    expect(cycles.map((c) => c.hops.length)).toEqual([3, 3])
    const [c] = findBackrunCandidates(params(pools, [xy]))
    if (!c) throw new Error('no candidate')
    checkCandidate(c, pools, [xy.address])
    expect(c.hops.map((h) => h.tokenIn).sort()).toEqual([X, Y, Z].sort())
    // Z can be sold for W outside the cycle (the W/Z pair), X and Y cannot: the profit is taken in Z
    expect(c.startToken).toBe(Z)
    expect(c.profitWei).toBeGreaterThan(0n)
  })

  it('bounds the cycles of a token with many pools: K pools per pair (the moved ones always), N third tokens (base tokens first, then the deepest)', () => {
    // a moved W/U pair; 40 tokens T_i each with pools to W and U; 9 extra W/U pools of growing depth
    const moved = v2Pool(W, U, E21, E21)
    const others = Array.from({ length: 9 }, (_, i) => v2Pool(W, U, BigInt(i + 1) * E21, BigInt(i + 1) * E21))
    const thirds = Array.from({ length: 40 }, (_, i) => syntheticToken(100 + i))
    const legs = thirds.flatMap((t, i) => [v2Pool(W, t, BigInt(i + 1) * E21, E21), v2Pool(U, t, BigInt(i + 1) * E21, E21)])
    const pools = [moved, ...others, ...legs]
    const all = enumerateBackrunCycles(pools, [moved.address], W, [W, U], { maxPoolsPerPair: 1000, maxThirdTokens: 1000 })
    // unbounded: 2·9 two-pool cycles and 2·40 triangles
    expect(all).toHaveLength(2 * 9 + 2 * 40)
    const bounded = enumerateBackrunCycles(pools, [moved.address], W, [W, U], { maxPoolsPerPair: 3, maxThirdTokens: 4 })
    // K = 3: the moved pool and the two deepest others; N = 4: the four third tokens with the deepest legs
    expect(bounded).toHaveLength(2 * 2 + 2 * 4)
    const twoPool = bounded.filter((c) => c.hops.length === 2).map((c) => c.hops.find((h) => h.pool !== moved)!.pool.address)
    expect(new Set(twoPool)).toEqual(new Set([others[8].address, others[7].address]))
    const used = new Set(bounded.filter((c) => c.hops.length === 3).flatMap((c) => c.hops.map((h) => h.tokenIn)))
    expect([...used].filter((t) => t !== W && t !== U).sort()).toEqual(thirds.slice(36).sort())
    // a base token comes first among the third tokens whatever its depth
    const base = syntheticToken(99)
    const withBase = [...pools, v2Pool(W, base, 10n ** 6n, 10n ** 6n), v2Pool(U, base, 10n ** 6n, 10n ** 6n)]
    const thirdsOf = (cycles: ReturnType<typeof enumerateBackrunCycles>) => new Set(cycles.filter((c) => c.hops.length === 3).flatMap((c) => c.hops.map((h) => h.tokenIn)))
    expect(thirdsOf(enumerateBackrunCycles(withBase, [moved.address], W, [W, U, base], { maxPoolsPerPair: 3, maxThirdTokens: 1 }))).toEqual(new Set([W, U, base]))
    // N = 0: no triangle; bad bounds are refused
    expect(enumerateBackrunCycles(pools, [moved.address], W, [W, U], { maxThirdTokens: 0 }).every((c) => c.hops.length === 2)).toBe(true)
    expect(() => enumerateBackrunCycles(pools, [moved.address], W, [W, U], { maxPoolsPerPair: 0 })).toThrow(BackrunSearchError)
    expect(() => enumerateBackrunCycles(pools, [moved.address], W, [W, U], { maxThirdTokens: -1 })).toThrow(BackrunSearchError)
    // the search over the bounded cycles stays small
    const r = searchBackrun(params(pools, [moved], { maxPoolsPerPair: 3, maxThirdTokens: 4 }))
    expect(r.cycles).toBe(12)
  })

  it('stops optimizing when the time budget is spent, most promising cycles first, and says so', () => {
    // many profitable mixed cycles: the moved V2 pair against V3 pools through 30 third tokens
    const moved = v2Pool(W, U, E21, 2n * E21)
    const thirds = Array.from({ length: 30 }, (_, i) => syntheticToken(200 + i))
    const legs = thirds.flatMap((t) => [v3Pool(W, t, 3000, 60, 0, [[-60_000, 60_000, E21]]), v2Pool(U, t, E21, E21)])
    const pools = [moved, ...legs]
    const full = searchBackrun(params(pools, [moved], { maxThirdTokens: 30, maxOptimizedCycles: 100 }))
    expect(full.budgetExhausted).toBe(false)
    expect(full.optimized).toBeGreaterThan(10)
    // a clock that advances 1 ms per reading: a 5 ms budget allows a handful of optimizations
    let t = 0
    const cut = searchBackrun(params(pools, [moved], { maxThirdTokens: 30, maxOptimizedCycles: 100, budgetMs: 5, now: () => t++ }))
    expect(cut.budgetExhausted).toBe(true)
    expect(cut.optimized).toBeGreaterThan(0)
    expect(cut.optimized).toBeLessThan(full.optimized)
    // what it found before the budget ran out is real, and never better than the full search's best
    expect(cut.candidates.length).toBeGreaterThan(0)
    for (const c of cut.candidates) checkCandidate(c, pools, [moved.address])
    expect((full.candidates[0]?.profitWei ?? 0n) >= (cut.candidates[0]?.profitWei ?? 0n)).toBe(true)
    expect(() => searchBackrun(params(pools, [moved], { budgetMs: 0 }))).toThrow(BackrunSearchError)
  })

  it('values a profit in another token through the pools, and sorts by that value', () => {
    // U at 2000 per W; the U/X pair is mispriced (no W in that cycle) and so is W/U
    const pools = [
      v2Pool(W, U, 10n ** 21n, 2n * 10n ** 24n),
      v3Pool(W, U, 3000, 60, 76_500, [[0, 120_000, 10n ** 22n]]),
      v2Pool(U, X, 10n ** 24n, 10n ** 24n),
      v3Pool(U, X, 3000, 60, 3000, [[-60_000, 60_000, 10n ** 23n]]),
    ]
    const r = searchBackrun(params(pools, [pools[0], pools[2]], { maxCandidates: 20 }))
    const inU = r.candidates.filter((c) => c.startToken === U)
    const inW = r.candidates.filter((c) => c.startToken === W)
    expect(inU.length).toBeGreaterThan(0)
    expect(inW.length).toBeGreaterThan(0)
    // a profit in U is worth what selling it for W gives, outside the cycle's pools when it can be
    const valuer = new ProfitValuer(buildPoolGraph(pools), W)
    for (const c of inU) expect(c.profitWei).toBe(valuer.toWei(U, c.expectedProfit, new Set(c.hops.map((h) => h.pool))))
    for (const c of inW) expect(c.profitWei).toBe(c.expectedProfit)
    for (let i = 1; i < r.candidates.length; i++) expect((r.candidates[i - 1].profitWei ?? 0n) >= (r.candidates[i].profitWei ?? 0n)).toBe(true)
    // maxCandidates keeps the best
    expect(findBackrunCandidates(params(pools, [pools[0], pools[2]], { maxCandidates: 2 }))).toEqual(r.candidates.slice(0, 2))
  })

  it('refuses a maximum of hops it does not support', () => {
    const pools = [v2Pool(W, U, E21, E21), v2Pool(W, U, E21, 2n * E21)]
    expect(() => findBackrunCandidates(params(pools, [pools[0]], { maxHops: 4 }))).toThrow(BackrunSearchError)
    expect(() => findBackrunCandidates(params(pools, [pools[0]], { maxHops: 1 }))).toThrow(BackrunSearchError)
    expect(findBackrunCandidates(params(pools, [pools[0]], { maxCandidates: 0 }))).toEqual([])
  })

  it('agrees with the closed form of optimal-input for V2 pairs of real size', () => {
    const a = v2Pool(W, U, 10n ** 21n, 3n * 10n ** 12n)
    const b = v2Pool(W, U, 10n ** 21n, 306n * 10n ** 10n)
    const [c] = findBackrunCandidates(params([a, b], [a]))
    const direct = optimalConstantProductInput([
      { reserveIn: b.reserve0, reserveOut: b.reserve1 },
      { reserveIn: a.reserve1, reserveOut: a.reserve0 },
    ])
    expect(c?.amountIn).toBe(direct?.amountIn)
    expect(c?.expectedProfit).toBe(direct?.profit)
    expect(c?.profitWei).toBe(c?.expectedProfit)
  })
})

// ---------------------------------------------------------------- devnet

const V2_SWAP = keccak256(toHex('Swap(address,uint256,uint256,uint256,uint256,address)'))
const V3_SWAP = keccak256(toHex('Swap(address,address,int256,int256,uint160,uint128,int24)'))
const V4_SWAP = keccak256(toHex('Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)'))

/** the pools a transaction moved: the emitters of its Swap events */
function movedPools(result: TransactionResult): Address[] {
  const v2v3 = result.logs.filter((l) => l.topics[0] === V2_SWAP || l.topics[0] === V3_SWAP).map((l) => lower(l.address))
  // a V4 pool is its PoolId, topic 1 of the PoolManager's Swap
  const v4 = result.logs.filter((l) => lower(l.address) === POOL_MANAGER && l.topics[0] === V4_SWAP).map((l) => lower(l.topics[1]!))
  return [...new Set([...v2v3, ...v4])]
}

/** the state a transaction left, as a reader of the next block (pool loads are cached per block, so a new hash) */
function readerAfter(result: TransactionResult): StateReader {
  const base = source.latest()
  const overlay = result.state.overlay
  return {
    block: { ...base.block, number: base.block.number + 1n, hash: result.hash },
    getAccount: (a) => overlay.readAccount(a),
    getCode: (a) => overlay.readCode(a),
    getStorage: (a, s) => overlay.readStorage(a, s),
  }
}

/** the venues the devnet adds beside Uniswap's, with their pools (registry `venues`) */
const ADDED_VENUES = (registry as unknown as { venues: Array<{ name: string; pairs?: Array<{ name: string; address: string }>; pools?: Array<{ name: string; address: string }> }> }).venues

/**
 * every devnet pool the backrun search sees: discovery among WBTC, UNI and the base tokens, then
 * LINK and the base tokens, every V4 pool of the venue's keys included (the native-ETH one as a
 * WETH pool, the hooked ones)
 */
async function allPools(reader: StateReader): Promise<PoolSnapshot[]> {
  const engine = new RoutingEngine(sim, { dex: DEX })
  const loads = await Promise.all([engine.loadPools(reader, tok('WBTC'), tok('UNI')), engine.loadPools(reader, tok('LINK'), tok('LINK'))])
  // the pools the engine takes into cycles (all of them: their tokens are ERC-20s)
  return [...new Map(loads.flatMap((l) => l.pools).map((p) => [p.address, p])).values()].filter(executorCanSwap)
}

/** the devnet's Uniswap V4 part of the registry */
const V4 = loadRegistry().v4
const POOL_MANAGER = lower(V4.poolManager)
/**
 * the V4 pools whose hook may change a swap (the directional-fee hook's beforeSwap): the search's
 * math there is an estimate (slot0's fee), so the fixtures' best cycle at the margin, recorded on
 * anvil at the fee the hook really charges, may differ from the search's through them
 */
const V4_ESTIMATED = new Set(V4.pools.filter((p) => (BigInt(p.hooks) & BigInt(V4_HOOK_FLAGS.beforeSwap)) !== 0n).map((p) => `V4 ${p.name}`))

/** registry pool names as the fixtures' arbitrage cycles write them ('V2 USDC/WETH', 'V3 USDC/WETH 0.05%') */
const poolByName = new Map<string, Address>([
  ...registry.v2.pairs.map((p): [string, Address] => [`V2 ${p.name}`, lower(p.address)]),
  ...registry.v3.pools.map((p): [string, Address] => [`V3 ${p.name}`, lower(p.address)]),
  // the devnet's added venues ('devnet-fork-v2 USDC/WETH')
  ...ADDED_VENUES.flatMap((v) => [...(v.pairs ?? []), ...(v.pools ?? [])].map((p): [string, Address] => [`${v.name} ${p.name}`, lower(p.address)])),
  // V4 pools by PoolId ('V4 WBTC/WETH 0.12% ts24')
  ...V4.pools.map((p): [string, Address] => [`V4 ${p.name}`, lower(p.poolId)]),
])

const devnetParams = (pools: PoolSnapshot[], moved: Address[], extra: Partial<BackrunSearchParams> = {}): BackrunSearchParams => ({
  pools,
  movedPools: moved,
  weth: DEX.weth,
  baseTokens: DEX.baseTokens,
  budgetMs: 600_000,
  ...extra,
})

/** the fixtures also record the best cycle at the margin after each transaction (scripts/devnet/arbitrage.ts, on anvil) */
type ArbitrageFixtureTx = FixtureTx & { arbitrageAfter: { pools: string[]; edgePpm: number } }

describe('backrun cycle search on the devnet', () => {
  const fixtures = loadFixtureTxs() as ArbitrageFixtureTx[]

  it('finds nothing at genesis, whichever pools moved: every cycle loses (the fixture says -999 ppm at best)', async () => {
    const pools = await allPools(source.latest())
    const added = ADDED_VENUES.reduce((n, v) => n + (v.pairs?.length ?? 0) + (v.pools?.length ?? 0), 0)
    expect(added).toBe(7)
    expect(pools).toHaveLength(registry.v2.pairs.length + registry.v3.pools.length + added + V4.pools.length)
    expect(pools.filter((p) => p.protocol === 'uniswap-v4')).toHaveLength(7)
    const r = searchBackrun(devnetParams(pools, pools.map((p) => p.address)))
    expect(r.cycles).toBeGreaterThan(40)
    expect(r.profitableAtMargin).toBe(0)
    expect(r.candidates).toEqual([])
  })

  it('after each fixture swap: candidates exactly when it created an arbitrage, each exact, through the moved pools, the best cycle among them', async () => {
    let withArbitrage = 0
    for (const fx of fixtures) {
      if (fx.expected.status !== 1 || fx.pools.length === 0) continue
      const tx = decodeSignedTransaction(fx.raw, { chainId: source.chainId, common: sim.common }).tx
      const result = await sim.transaction(sim.openState(source.latest()), tx)
      expect(result.status, fx.name).toBe('success')
      const moved = movedPools(result)
      // the fixture names the PoolManager for a V4 swap; the moves name the pools in it
      const v2v3 = fx.pools.map(lower).filter((p) => p !== POOL_MANAGER)
      expect(moved.filter((p) => p.length === 42).sort(), fx.name).toEqual(v2v3.sort())
      expect(moved.some((p) => p.length === 66), fx.name).toBe(fx.pools.map(lower).includes(POOL_MANAGER))
      const pools = await allPools(readerAfter(result))

      const everything = searchBackrun(devnetParams(pools, moved, { maxCandidates: 1000, maxOptimizedCycles: 1000, maxPoolsPerPair: 1000 }))
      const r = searchBackrun(devnetParams(pools, moved))
      if (!fx.createsArbitrage) {
        expect(everything.candidates, fx.name).toEqual([])
        continue
      }
      withArbitrage++
      expect(r.candidates.length, fx.name).toBeGreaterThan(0)
      expect(r.candidates.length).toBeLessThanOrEqual(5)
      for (const c of everything.candidates) {
        checkCandidate(c, pools, moved)
        expect(c.profitWei, fx.name).toBeGreaterThan(0n)
      }
      // the bounded search keeps the best of the exhaustive one
      expect(r.candidates[0], fx.name).toEqual(everything.candidates[0])
      // the fixture's best cycle at the margin (recorded on anvil) is one of the candidates, V4
      // pools included, native-ETH and hooked ones too (unless it crosses a pool whose hook the math only estimates)
      const names = fx.arbitrageAfter.pools.map((n) => poolByName.get(n))
      if (fx.arbitrageAfter.pools.every((n) => !V4_ESTIMATED.has(n))) expect(
        everything.candidates.some((c) => [...poolsOf(c)].sort().join() === [...names].sort().join()),
        `${fx.name}: ${fx.arbitrageAfter.pools.join(', ')}`,
      ).toBe(true)
      // the best candidate is the best input: a fine grid does no better than 99.9% of it, and its neighbours no better at all
      const top = r.candidates[0]
      const hops: PathHop[] = top.hops.map((h) => {
        const pool = pools.find((p) => p.address === h.pool)
        if (!pool) throw new Error('unknown pool')
        return { pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, zeroForOne: h.zeroForOne }
      })
      const profit = (x: bigint) => {
        const q = quotePath(hops, x)
        return q === undefined ? undefined : q.amountOut - x
      }
      const grid = gridBest(profit, 10n ** 6n, 10n ** 26n)
      expect(top.expectedProfit * 1000n >= grid.profit * 999n, fx.name).toBe(true)
      for (const x of [(top.amountIn * 999n) / 1000n, (top.amountIn * 1001n) / 1000n]) expect((profit(x) ?? 0n) <= top.expectedProfit, fx.name).toBe(true)
    }
    expect(withArbitrage).toBe(fixtures.filter((f) => f.createsArbitrage).length)
    expect(withArbitrage).toBeGreaterThanOrEqual(5)
  })
})
