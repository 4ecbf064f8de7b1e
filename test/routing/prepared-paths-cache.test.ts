import { describe, expect, it } from 'vitest'
import { PreparedPathsCache } from '../../src/routing/prepared-paths-cache.ts'
import { findBestPlan, preparePaths } from '../../src/routing/route-search.ts'
import { E18, syntheticToken, v2Pool } from './helpers.ts'

const WETH = syntheticToken(1)
const USD = syntheticToken(2)
const DAI = syntheticToken(3)

const pools = () => [
  v2Pool(WETH, USD, 100n * E18, 300_000n * E18),
  v2Pool(WETH, DAI, 50n * E18, 150_500n * E18),
  v2Pool(DAI, USD, 1_000_000n * E18, 1_000_000n * E18),
]

const ask = (cache: PreparedPathsCache, block: string, snapshots: ReturnType<typeof pools>) =>
  cache.get({ block, pools: snapshots, tokenIn: WETH, tokenOut: USD, weth: WETH, maxHops: 3, maxPaths: 2_000 })

describe('PreparedPathsCache', () => {
  it('gives the paths and gas rate preparePaths gives, prepared once per block for the same snapshots', () => {
    const cache = new PreparedPathsCache()
    const snapshots = pools()
    const first = ask(cache, '1:a', snapshots)
    expect(first).toEqual(preparePaths(snapshots, WETH, USD, WETH, 3, 2_000))
    expect(first.paths.map((p) => p.length)).toEqual([1, 2])
    // the same snapshots again (a new array of the same objects, as each quote's load gives): the same entry
    expect(ask(cache, '1:a', [...snapshots])).toBe(first)
    // another block, or other snapshots of the same pools (a state that moved): prepared afresh
    expect(ask(cache, '2:b', snapshots)).not.toBe(first)
    const moved = pools()
    const again = ask(cache, '1:a', moved)
    expect(again).not.toBe(first)
    expect(again).toEqual(preparePaths(moved, WETH, USD, WETH, 3, 2_000))
  })

  it('a search with the prepared paths answers what a search without them answers', () => {
    const snapshots = pools()
    const cache = new PreparedPathsCache()
    for (const amountIn of [E18 / 1_000n, E18, 20n * E18]) {
      const params = { tokenIn: WETH, tokenOut: USD, amountIn, pools: snapshots, gasPriceWei: 10n ** 9n, weth: WETH }
      expect(findBestPlan({ ...params, prepared: ask(cache, '1:a', snapshots) })).toEqual(findBestPlan(params))
    }
  })

  it('is bounded: the last blocks only, and a bound per block', () => {
    const cache = new PreparedPathsCache({ blocks: 2, maxPerBlock: 1 })
    const a = pools()
    for (let block = 0; block < 5; block++) ask(cache, `${block}:x`, a)
    expect(cache.size).toBe(2)
    cache.get({ block: '4:x', pools: a, tokenIn: USD, tokenOut: WETH, weth: WETH, maxHops: 3, maxPaths: 2_000 })
    expect(cache.size).toBe(2)
  })
})
