/**
 * Pool state at one block, read with view calls through the Simulator, each pool by its kind
 * (uniswap-v2.ts: getReserves, token0; uniswap-v3.ts: slot0, liquidity, fee, tickSpacing, token0,
 * then the tick bitmap words around the current tick, then the initialized ticks of those words).
 *
 * Only a window of V3 bitmap words is loaded (this loader's settings), so a V3 snapshot records how
 * far it reaches (V3TickCoverage) and the search never lets the swap math read past it.
 *
 * Snapshots are cached per (block, pool), bounded; the cache holds promises, so concurrent loads of
 * one pool share the work. A new head whose source says what its block changed (the devnet's
 * stateDiff) takes its parent's snapshot of every pool whose contract the block did not touch
 * instead of reading it again: at each head every worker re-read every pool it had seen, 250-300 ms
 * of a worker on bench:quote's mix (BENCHMARKS.md), which is what quotes right after a head waited on.
 */
import type { StateReader } from '../chain/types.ts'
import type { SimulationState, Simulator } from '../evm/simulator.ts'
import { BlockScopedCache } from './block-scoped-cache.ts'
import type { PoolLoadSettings } from './pool-kind.ts'
import { poolKind } from './pool-kinds.ts'
import type { PoolRef, PoolSnapshot, V4PoolRef } from './pools.ts'
import { blockKey, DEFAULT_VIEW_CALL_CONCURRENCY, ViewCallError, ViewCaller } from './view-calls.ts'

/** ticks for a 2x price move: 1.0001^6932 ≈ 2.0000 */
export const TICKS_PER_PRICE_DOUBLING = 6932

export interface PoolStateLoaderOptions {
  /**
   * ticks each side of the current tick the loaded bitmap should cover; default 6932, a 2x price
   * move either way. Turned into a number of 256-bit words by the pool's tick spacing.
   */
  tickWindow?: number
  /** at least this many words each side of the current word; default 1, never less than 1 */
  minWordsPerSide?: number
  /** at most this many words each side; default 16 (for spacing 1 that is ±4096 ticks, ×/÷1.5) */
  maxWordsPerSide?: number
  /** (block, pool) snapshots kept; default 5,000 */
  maxCacheEntries?: number
  /** view calls in flight per load; default 16 */
  concurrency?: number
}

export interface PoolLoadResult {
  pools: PoolSnapshot[]
  /** pools whose view calls reverted or returned garbage (not a standard pool): left out */
  failed: Array<{ pool: PoolRef; error: ViewCallError }>
}


export class PoolStateLoader implements PoolLoadSettings {
  private readonly cache: BlockScopedCache<Promise<PoolSnapshot>>
  private readonly tickWindow: number
  private readonly minWords: number
  private readonly maxWords: number
  private readonly concurrency: number

  constructor(
    private readonly simulator: Simulator,
    options: PoolStateLoaderOptions = {},
  ) {
    this.cache = new BlockScopedCache({ blocks: 4, maxPerBlock: options.maxCacheEntries ?? 5_000 })
    this.tickWindow = options.tickWindow ?? TICKS_PER_PRICE_DOUBLING
    this.minWords = Math.max(1, options.minWordsPerSide ?? 1)
    this.maxWords = Math.max(this.minWords, options.maxWordsPerSide ?? 16)
    this.concurrency = options.concurrency ?? DEFAULT_VIEW_CALL_CONCURRENCY
  }

  /** the snapshots of `refs` at the reader's block; pools that are not standard pools are reported, not thrown */
  async loadAll(reader: StateReader, refs: readonly PoolRef[]): Promise<PoolLoadResult> {
    const caller = new ViewCaller(this.simulator, reader, this.concurrency)
    const settled = await Promise.allSettled(refs.map((ref) => this.loadWith(caller, ref)))
    const result: PoolLoadResult = { pools: [], failed: [] }
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') result.pools.push(s.value)
      else if (s.reason instanceof ViewCallError) result.failed.push({ pool: refs[i], error: s.reason })
      // anything else (the upstream node failing) fails the whole load
      else throw s.reason
    })
    return result
  }

  load(reader: StateReader, ref: PoolRef): Promise<PoolSnapshot> {
    return this.loadWith(new ViewCaller(this.simulator, reader, this.concurrency), ref)
  }

  /**
   * The snapshot of `ref` in a simulation state (e.g. after a user's swap), read afresh: states
   * other than a block's are never cached.
   */
  loadAt(state: SimulationState, ref: PoolRef): Promise<PoolSnapshot> {
    const caller = new ViewCaller(this.simulator, state, this.concurrency)
    return poolKind(ref.protocol).load(caller, ref, this)
  }

  /** words each side of the current word for a pool of this spacing */
  wordsPerSide(tickSpacing: number): number {
    const words = Math.ceil(this.tickWindow / (256 * tickSpacing))
    return Math.min(this.maxWords, Math.max(this.minWords, words))
  }

  private loadWith(caller: ViewCaller, ref: PoolRef): Promise<PoolSnapshot> {
    const block = blockKey(caller.reader)
    const key = ref.address
    let entry = this.cache.get(block, key)
    if (entry === undefined) {
      // a snapshot is read from one contract's storage: the pool's, or a V4 pool's PoolManager's
      const stateAt = ref.protocol === 'uniswap-v4' ? (ref as V4PoolRef).poolManager : ref.address
      entry = this.cache.carried(caller.reader, key, [stateAt]) ?? poolKind(ref.protocol).load(caller, ref, this)
      this.cache.set(block, key, entry)
      entry.catch(() => {
        if (this.cache.get(block, key) === entry) this.cache.delete(block, key)
      })
    }
    return entry
  }
}
