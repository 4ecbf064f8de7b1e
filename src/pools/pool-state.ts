/**
 * Pool state at one block, read with view calls through the Simulator:
 *   V2: getReserves, token0.
 *   V3: slot0 (sqrtPriceX96, tick), liquidity, fee, tickSpacing, token0; then the tick bitmap words
 *       around the current tick; then ticks(t).liquidityNet for every set bit of those words.
 * Each phase's calls run concurrently (the fork reader batches the upstream reads they cause).
 *
 * Only a window of bitmap words is loaded, so a V3 snapshot records how far it reaches
 * (V3TickCoverage) and the search never lets the swap math read past it.
 *
 * Snapshots are cached per (block, pool), bounded; the cache holds promises, so concurrent loads of
 * one pool share the work.
 */
import type { StateReader } from '../chain/types.ts'
import { getSqrtRatioAtTick, leastSignificantBit, MAX_TICK, MIN_TICK, type V3PoolState, type V3TickInfo } from '../dex/math/index.ts'
import type { SimulationState, Simulator } from '../evm/simulator.ts'
import { V2_PAIR_ABI, V3_POOL_ABI } from './abis.ts'
import type { PoolRef, PoolSnapshot, V2PoolSnapshot, V3PoolSnapshot, V3TickCoverage } from './pools.ts'
import { BlockScopedCache } from './block-scoped-cache.ts'
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


export class PoolStateLoader {
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
    return ref.protocol === 'uniswap-v2' ? loadV2(caller, ref) : this.loadV3(caller, ref)
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
      entry = ref.protocol === 'uniswap-v2' ? loadV2(caller, ref) : this.loadV3(caller, ref)
      this.cache.set(block, key, entry)
      entry.catch(() => {
        if (this.cache.get(block, key) === entry) this.cache.delete(block, key)
      })
    }
    return entry
  }

  private async loadV3(caller: ViewCaller, ref: PoolRef): Promise<V3PoolSnapshot> {
    const pool = ref.address
    const [slot0, liquidity, fee, tickSpacing, token0] = await Promise.all([
      caller.read(pool, V3_POOL_ABI, 'slot0', []),
      caller.read(pool, V3_POOL_ABI, 'liquidity', []),
      caller.read(pool, V3_POOL_ABI, 'fee', []),
      caller.read(pool, V3_POOL_ABI, 'tickSpacing', []),
      caller.read(pool, V3_POOL_ABI, 'token0', []),
    ])
    checkToken0(ref, token0, 'token0')
    if (fee !== ref.fee) throw new ViewCallError(`pool ${pool} has fee ${fee}, discovery said ${ref.fee}`, pool, 'fee', 'inconsistent')
    if (tickSpacing <= 0) throw new ViewCallError(`pool ${pool} has tickSpacing ${tickSpacing}`, pool, 'tickSpacing', 'inconsistent')
    const [sqrtPriceX96, tick] = slot0

    const coverage = tickCoverage(tick, tickSpacing, this.wordsPerSide(tickSpacing))
    const wordPositions: number[] = []
    for (let w = coverage.wordLower; w <= coverage.wordUpper; w++) wordPositions.push(w)
    const words = await Promise.all(wordPositions.map((w) => caller.read(pool, V3_POOL_ABI, 'tickBitmap', [w])))

    const bitmap = new Map<number, bigint>()
    const initializedTicks: number[] = []
    words.forEach((word, i) => {
      if (word === 0n) return
      const wordPos = wordPositions[i]
      bitmap.set(wordPos, word)
      for (let rest = word; rest !== 0n; rest &= rest - 1n) {
        initializedTicks.push((wordPos * 256 + leastSignificantBit(rest)) * tickSpacing)
      }
    })
    const tickInfos = await Promise.all(initializedTicks.map((t) => caller.read(pool, V3_POOL_ABI, 'ticks', [t])))
    const ticks = new Map<number, V3TickInfo>()
    initializedTicks.forEach((t, i) => ticks.set(t, { liquidityNet: tickInfos[i][1] }))

    const state: V3PoolState = { sqrtPriceX96, tick, liquidity, fee, tickSpacing, bitmap, ticks }
    return { protocol: 'uniswap-v3', address: pool, token0: ref.token0, token1: ref.token1, fee, state, coverage }
  }
}

async function loadV2(caller: ViewCaller, ref: PoolRef): Promise<V2PoolSnapshot> {
  const [reserves, token0] = await Promise.all([caller.read(ref.address, V2_PAIR_ABI, 'getReserves', []), caller.read(ref.address, V2_PAIR_ABI, 'token0', [])])
  checkToken0(ref, token0, 'token0')
  return { protocol: 'uniswap-v2', address: ref.address, token0: ref.token0, token1: ref.token1, fee: ref.fee, reserve0: reserves[0], reserve1: reserves[1] }
}

function checkToken0(ref: PoolRef, token0: string, fn: string): void {
  if (token0.toLowerCase() !== ref.token0) {
    throw new ViewCallError(`pool ${ref.address} has token0 ${token0.toLowerCase()}, discovery said ${ref.token0}`, ref.address, fn, 'inconsistent')
  }
}

/** the word range around `tick` and what it lets a swap trust; exported for tests */
export function tickCoverage(tick: number, tickSpacing: number, wordsPerSide: number): V3TickCoverage {
  // the bitmap's own word range for this spacing: words beyond hold no valid tick
  const minWord = Math.floor(MIN_TICK / tickSpacing) >> 8
  const maxWord = Math.floor(MAX_TICK / tickSpacing) >> 8
  const currentWord = Math.floor(tick / tickSpacing) >> 8
  const wordLower = Math.max(minWord, currentWord - wordsPerSide)
  const wordUpper = Math.min(maxWord, currentWord + wordsPerSide)
  const tickLower = Math.max(MIN_TICK, wordLower * 256 * tickSpacing)
  const tickUpper = Math.min(MAX_TICK, (wordUpper * 256 + 255) * tickSpacing)
  return {
    wordLower,
    wordUpper,
    tickLower,
    tickUpper,
    sqrtPriceLimitDown: wordLower === minWord ? undefined : getSqrtRatioAtTick(tickLower),
    sqrtPriceLimitUp: wordUpper === maxWord ? undefined : getSqrtRatioAtTick(tickUpper),
  }
}

