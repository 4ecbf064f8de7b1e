/**
 * The paths and gas rate of a search (route-search.ts preparePaths), kept per block: they depend
 * only on the pool snapshots, the tokens and the search's bounds, so every quote of a pair at a
 * block has the same ones, and only the amounts differ. Enumerating the paths and deriving the rate
 * cost each quote of the bench:quote mix ~8% of its search (more with more venues: USDT -> WBTC has
 * 192 paths over every venue, 32 over Uniswap's alone).
 *
 * An entry is used only for the very same snapshots, in the same order (compared by identity: the
 * pool-state loader keeps one snapshot per pool and block, so a quote of the pair at the block
 * loads the same objects); anything else (a pool whose load failed this time, another venue set)
 * is prepared afresh and replaces it. Bounded: the last `blocks` blocks, `maxPerBlock` entries each.
 */
import type { Address } from '../chain/types.ts'
import { BlockScopedCache } from '../pools/block-scoped-cache.ts'
import type { PoolSnapshot } from '../pools/pools.ts'
import { preparePaths, type PreparedPaths } from './route-search.ts'

export interface PreparedPathsCacheOptions {
  /** blocks kept; default 2 (quotes ask for the head's) */
  blocks?: number
  /** (pair, pool set) entries per block; default 1,024 */
  maxPerBlock?: number
}

interface Entry {
  pools: readonly PoolSnapshot[]
  prepared: PreparedPaths
}

export interface PathsRequest {
  /** the block's key (view-calls.ts blockKey) */
  block: string
  pools: readonly PoolSnapshot[]
  tokenIn: Address
  tokenOut: Address
  weth: Address | undefined
  maxHops: number
  maxPaths: number
}

export class PreparedPathsCache {
  private readonly entries: BlockScopedCache<Entry>

  constructor(options: PreparedPathsCacheOptions = {}) {
    this.entries = new BlockScopedCache({ blocks: options.blocks ?? 2, maxPerBlock: options.maxPerBlock ?? 1_024 })
  }

  /** entries held, all blocks together */
  get size(): number {
    return this.entries.size
  }

  get(request: PathsRequest): PreparedPaths {
    const { block, pools, tokenIn, tokenOut, weth, maxHops, maxPaths } = request
    const key = `${tokenIn}:${tokenOut}:${weth ?? ''}:${maxHops}:${maxPaths}:${pools.length}`
    const entry = this.entries.get(block, key)
    if (entry !== undefined && sameSnapshots(entry.pools, pools)) return entry.prepared
    const prepared = preparePaths(pools, tokenIn, tokenOut, weth, maxHops, maxPaths)
    this.entries.set(block, key, { pools, prepared })
    return prepared
  }
}

function sameSnapshots(a: readonly PoolSnapshot[], b: readonly PoolSnapshot[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
