/**
 * Uniswap V3-style pools as a pool kind: found with the venue factory's getPool for each of the
 * venue's fee tiers (and kept only at the CREATE2 address of the venue's pool deployer and
 * init-code hash, the one our contracts accept); read as slot0 (sqrtPriceX96, tick), liquidity, fee, tickSpacing, token0, then the tick
 * bitmap words around the current tick, then ticks(t).liquidityNet for every set bit of those
 * words (each phase's calls concurrently: the fork reader batches the upstream reads they cause);
 * quoted with the pool's own swap loop, never past the loaded ticks (V3TickCoverage).
 */
import type { Address } from '../chain/types.ts'
import {
  getSqrtRatioAtTick,
  isAmmMathError,
  leastSignificantBit,
  MAX_TICK,
  MIN_TICK,
  v3ExactInput,
  v3MaxRate,
  type V3PoolState,
  type V3TickInfo,
} from '../dex/math/index.ts'
import { V3_FACTORY_ABI, V3_POOL_ABI } from './abis.ts'
import { checkToken0, foundPool, type HopQuote, type PoolKind, type PoolLoadSettings } from './pool-kind.ts'
import type { PoolRef, V3PoolSnapshot, V3TickCoverage, V3Venue } from './pools.ts'
import { venuePoolAddress } from './venues.ts'
import { ViewCallError, type ViewCaller } from './view-calls.ts'

export function quoteV3(pool: V3PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  if (amountIn <= 0n) return undefined
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const r = v3ExactInput(pool.state, zeroForOne, amountIn, limit)
    // a partial fill: the pool ran out of liquidity, or of loaded ticks (which we cannot tell apart)
    if (r.amountUsed !== amountIn || r.amountOut <= 0n) return undefined
    return { amountOut: r.amountOut, ticksCrossed: r.initializedTicksCrossed }
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

function roundsToZeroV3(pool: V3PoolSnapshot, zeroForOne: boolean, amountIn: bigint): boolean {
  if (amountIn <= 0n) return false
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const r = v3ExactInput(pool.state, zeroForOne, amountIn, limit)
    return r.amountUsed === amountIn && r.amountOut === 0n
  } catch (err) {
    if (isAmmMathError(err)) return false
    throw err
  }
}

async function loadV3(caller: ViewCaller, ref: PoolRef, settings: PoolLoadSettings): Promise<V3PoolSnapshot> {
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

  const coverage = tickCoverage(tick, tickSpacing, settings.wordsPerSide(tickSpacing))
  const wordPositions: number[] = []
  for (let w = coverage.wordLower; w <= coverage.wordUpper; w++) wordPositions.push(w)
  const words = await Promise.all(wordPositions.map((w) => caller.read(pool, V3_POOL_ABI, 'tickBitmap', [w])))

  const { bitmap, initializedTicks } = setBits(wordPositions, words, tickSpacing)
  const tickInfos = await Promise.all(initializedTicks.map((t) => caller.read(pool, V3_POOL_ABI, 'ticks', [t])))
  const ticks = new Map<number, V3TickInfo>()
  initializedTicks.forEach((t, i) => ticks.set(t, { liquidityNet: tickInfos[i][1] }))

  const state: V3PoolState = { sqrtPriceX96, tick, liquidity, fee, tickSpacing, bitmap, ticks }
  return { protocol: 'uniswap-v3', address: pool, token0: ref.token0, token1: ref.token1, fee, venue: ref.venue, state, coverage }
}

/** the non-zero bitmap words (words[i] is at wordPositions[i]) and the ticks their set bits mark */
export function setBits(wordPositions: readonly number[], words: readonly bigint[], tickSpacing: number): { bitmap: Map<number, bigint>; initializedTicks: number[] } {
  const bitmap = new Map<number, bigint>()
  const initializedTicks: number[] = []
  words.forEach((word, i) => {
    if (word === 0n) return
    const wordPos = wordPositions[i]
    bitmap.set(wordPos, word)
    for (let rest = word; rest !== 0n; rest &= rest - 1n) initializedTicks.push((wordPos * 256 + leastSignificantBit(rest)) * tickSpacing)
  })
  return { bitmap, initializedTicks }
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

export const UNISWAP_V3_POOLS: PoolKind<V3PoolSnapshot, V3Venue> = Object.freeze({
  protocol: 'uniswap-v3',
  lookUp: (caller: ViewCaller, venue: V3Venue, token0: Address, token1: Address) =>
    venue.feeTiers.map((fee) =>
      caller
        .read(venue.factory, V3_FACTORY_ABI, 'getPool', [token0, token1, fee])
        .then((pool) => foundPool(pool, { protocol: 'uniswap-v3', token0, token1, fee, venue: venue.name }, venuePoolAddress(venue, token0, token1, fee))),
    ),
  load: loadV3,
  quote: quoteV3,
  maxRate: (pool: V3PoolSnapshot, zeroForOne: boolean) => v3MaxRate(pool.state.sqrtPriceX96, pool.state.fee, zeroForOne),
  roundsToZero: roundsToZeroV3,
  hasLiquidity: (pool: V3PoolSnapshot) => pool.state.liquidity > 0n || pool.state.ticks.size > 0,
})
