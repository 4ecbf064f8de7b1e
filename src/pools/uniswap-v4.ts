/**
 * Uniswap V4 pools: PoolKeys in the singleton PoolManager, read word by word from its storage at
 * StateLibrary's slots (uniswap-v4-slots.ts) through the state the caller sees, and quoted with the
 * V3 swap loop of src/dex/math at the direction's swap fee (LP fee with the protocol fee on top,
 * dex/math/v4-fees.ts), which is V4's Pool.swap for a pool without hooks.
 *
 * Hooks. The search models none: a pool whose key names a hook contract is refused when a V4 venue
 * is configured (parseV4PoolKeys) and never loaded, since a hook can change the amounts (before/after
 * swap deltas), the fee (dynamic fees) or revert; such pools would need executing in the EVM to be
 * quoted. Native ETH (currency0 = address(0)) pools load and quote like any other; whether a route
 * may use them is the caller's choice (the routes are over ERC-20 tokens, WETH for ether).
 */
import type { Address } from '../chain/types.ts'
import { isAmmMathError, simulateV3Swap, v4SwapFee, type V3PoolState, type V3TickInfo } from '../dex/math/index.ts'
import type { HopQuote, PoolKind, PoolLoadSettings } from './pool-kind.ts'
import type { PoolRef, V4PoolRef, V4PoolSnapshot, V4Venue } from './pools.ts'
import { setBits, tickCoverage } from './uniswap-v3.ts'
import { decodeV4LiquidityNet, decodeV4Slot0, v4LiquiditySlot, v4PoolId, v4Slot0Slot, v4TickBitmapSlot, v4TickSlot, type V4PoolKey } from './uniswap-v4-slots.ts'
import { ViewCallError, type ViewCaller } from './view-calls.ts'

/** What loading a V4 pool needs of the state: storage words (ViewCaller.storage). */
export interface StorageWords {
  storage(address: Address, slot: bigint): Promise<bigint>
}

const UINT128_MASK = (1n << 128n) - 1n
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

const lower = (a: Address) => a.toLowerCase() as Address

/** the PoolRef of `key` in `poolManager` (its address is the PoolId) */
export function v4PoolRef(poolManager: Address, key: V4PoolKey, venue: string): V4PoolRef {
  const k = { currency0: lower(key.currency0), currency1: lower(key.currency1), fee: key.fee, tickSpacing: key.tickSpacing, hooks: lower(key.hooks) }
  return { protocol: 'uniswap-v4', address: v4PoolId(k), token0: k.currency0, token1: k.currency1, fee: k.fee, venue, poolManager: lower(poolManager), key: k }
}

/**
 * The pool of `ref` as the swap loop reads it: slot0, liquidity, the tick-bitmap words around the
 * current tick (settings.wordsPerSide) and the liquidityNet of every tick set in them. A
 * ViewCallError ('inconsistent') when the pool is not initialized or has hooks.
 */
export async function loadV4Pool(words: StorageWords, ref: V4PoolRef, settings: PoolLoadSettings): Promise<V4PoolSnapshot> {
  const { poolManager, key } = ref
  const poolId = ref.address
  if (key.hooks !== ZERO_ADDRESS) throw new ViewCallError(`V4 pool ${poolId} has hooks ${key.hooks}: not modelled`, poolManager, 'extsload', 'inconsistent')
  const [slot0Word, liquidityWord] = await Promise.all([words.storage(poolManager, BigInt(v4Slot0Slot(poolId))), words.storage(poolManager, BigInt(v4LiquiditySlot(poolId)))])
  const slot0 = decodeV4Slot0(slot0Word)
  if (slot0.sqrtPriceX96 === 0n) throw new ViewCallError(`V4 pool ${poolId} is not initialized in ${poolManager}`, poolManager, 'extsload', 'inconsistent')
  const { tickSpacing } = key
  const coverage = tickCoverage(slot0.tick, tickSpacing, settings.wordsPerSide(tickSpacing))
  const wordPositions: number[] = []
  for (let w = coverage.wordLower; w <= coverage.wordUpper; w++) wordPositions.push(w)
  const bitmapWords = await Promise.all(wordPositions.map((w) => words.storage(poolManager, BigInt(v4TickBitmapSlot(poolId, w)))))

  const { bitmap, initializedTicks } = setBits(wordPositions, bitmapWords, tickSpacing)
  const tickWords = await Promise.all(initializedTicks.map((t) => words.storage(poolManager, BigInt(v4TickSlot(poolId, t)))))
  const ticks = new Map<number, V3TickInfo>()
  initializedTicks.forEach((t, i) => ticks.set(t, { liquidityNet: decodeV4LiquidityNet(tickWords[i]) }))

  const state: V3PoolState = { sqrtPriceX96: slot0.sqrtPriceX96, tick: slot0.tick, liquidity: liquidityWord & UINT128_MASK, fee: slot0.lpFee, tickSpacing, bitmap, ticks }
  return { ...ref, slot0, state, coverage }
}

/** the swap loop's result for an exact input; undefined when the pool cannot take all of it (no liquidity, or past the loaded ticks) */
export function quoteV4(pool: V4PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  const r = swapV4(pool, zeroForOne, amountIn)
  if (r === undefined || r.used !== amountIn || r.out <= 0n) return undefined
  return { amountOut: r.out, ticksCrossed: r.ticksCrossed }
}

/** the pool takes all of `amountIn` and gives nothing back */
export function roundsToZeroV4(pool: V4PoolSnapshot, zeroForOne: boolean, amountIn: bigint): boolean {
  const r = swapV4(pool, zeroForOne, amountIn)
  return r !== undefined && r.used === amountIn && r.out === 0n
}

function swapV4(pool: V4PoolSnapshot, zeroForOne: boolean, amountIn: bigint): { used: bigint; out: bigint; ticksCrossed: number } | undefined {
  if (amountIn <= 0n) return undefined
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const fee = v4SwapFee(pool.slot0.protocolFee, pool.slot0.lpFee, zeroForOne)
    // a 100% fee takes the whole input: nothing comes out (the V3 loop refuses fee = 1e6)
    if (fee === 1_000_000) return { used: amountIn, out: 0n, ticksCrossed: 0 }
    const state = fee === pool.state.fee ? pool.state : { ...pool.state, fee }
    const r = simulateV3Swap(state, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
    const [used, out] = zeroForOne ? [r.amount0, -r.amount1] : [r.amount1, -r.amount0]
    return { used, out, ticksCrossed: r.initializedTicksCrossed }
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

/**
 * Uniswap V4 as a pool kind: a venue's configured keys for the pair, kept when initialized in the
 * PoolManager (one storage read each), loaded from storage, quoted with quoteV4.
 */
export const UNISWAP_V4_POOLS: PoolKind<V4PoolSnapshot, V4Venue> = Object.freeze({
  protocol: 'uniswap-v4',
  lookUp: (caller: ViewCaller, venue: V4Venue, token0: Address, token1: Address) =>
    venue.pools
      .filter((k) => lower(k.currency0) === token0 && lower(k.currency1) === token1)
      .map((k) => {
        const ref = v4PoolRef(venue.poolManager, k, venue.name)
        return caller.storage(ref.poolManager, BigInt(v4Slot0Slot(ref.address))).then((w): V4PoolRef | undefined => (decodeV4Slot0(w).sqrtPriceX96 === 0n ? undefined : ref))
      }),
  load: (caller: ViewCaller, ref: PoolRef, settings: PoolLoadSettings) => {
    if (ref.protocol !== 'uniswap-v4' || !('key' in ref)) throw new TypeError(`not a V4 pool reference: ${ref.address}`)
    return loadV4Pool(caller, ref as V4PoolRef, settings)
  },
  quote: quoteV4,
  roundsToZero: roundsToZeroV4,
  hasLiquidity: (pool: V4PoolSnapshot) => pool.state.liquidity > 0n || pool.state.ticks.size > 0,
})
