/**
 * Uniswap V4 pools: PoolKeys in the singleton PoolManager, read word by word from its storage at
 * StateLibrary's slots (uniswap-v4-slots.ts) through the state the caller sees, and quoted with the
 * V3 swap loop of src/dex/math at the direction's swap fee (LP fee with the protocol fee on top,
 * dex/math/v4-fees.ts), which is V4's Pool.swap for a pool without hooks.
 *
 * Dynamic fees: slot0's LP fee is the one the pool charges (what its hook last set through
 * updateDynamicLPFee), so a dynamic-fee pool is quoted exactly unless its hook may override the fee
 * per swap. Hooks (uniswap-v4-hooks.ts): a pool whose hook cannot change a swap's amounts (afterSwap
 * without its return delta, initialize, liquidity and donate hooks) is quoted exactly; one whose hook
 * can (beforeSwap, return deltas) is loaded all the same and quoted with the same math as an
 * estimate (`hookAltersSwap`): the route search ranks with it, the EVM's execution of the route gives
 * the amounts. Native ETH (currency0 = address(0)) pools are routed as WETH pools: discovery finds a
 * native key as the pool of WETH and its other currency, and SwapPlanRouter unwraps and wraps around
 * the hop.
 */
import type { Address } from '../chain/types.ts'
import { isAmmMathError, v3ExactInput, v3MaxRate, v4SwapFee, type V3PoolState, type V3TickInfo } from '../dex/math/index.ts'
import type { HopQuote, PoolKind, PoolLoadSettings } from './pool-kind.ts'
import { sortTokens, type PoolRef, type V4PoolRef, type V4PoolSnapshot, type V4Venue } from './pools.ts'
import { setBits, tickCoverage } from './uniswap-v3.ts'
import { v4HookAltersSwap, v4HookSwapCalls } from './uniswap-v4-hooks.ts'
import { decodeV4LiquidityNet, decodeV4Slot0, v4LiquiditySlot, v4PoolId, v4Slot0Slot, v4TickBitmapSlot, v4TickSlot, type V4PoolKey } from './uniswap-v4-slots.ts'
import { ViewCallError, type ViewCaller } from './view-calls.ts'

/** What loading a V4 pool needs of the state: storage words (ViewCaller.storage). */
export interface StorageWords {
  storage(address: Address, slot: bigint): Promise<bigint>
}

const UINT128_MASK = (1n << 128n) - 1n
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

const lower = (a: Address) => a.toLowerCase() as Address

/**
 * the PoolRef of `key` in `poolManager` (its address is the PoolId); a native ETH key (currency0 =
 * address(0)) needs `weth`, which stands for ETH in the ref's tokens
 */
export function v4PoolRef(poolManager: Address, key: V4PoolKey, venue: string, weth?: Address): V4PoolRef {
  const k = { currency0: lower(key.currency0), currency1: lower(key.currency1), fee: key.fee, tickSpacing: key.tickSpacing, hooks: lower(key.hooks) }
  let [token0, token1] = [k.currency0, k.currency1]
  if (k.currency0 === ZERO_ADDRESS) {
    if (weth === undefined) throw new TypeError(`V4 pool key with native ETH needs the WETH address (${k.currency1})`)
    ;[token0, token1] = sortTokens(lower(weth), k.currency1)
  }
  return { protocol: 'uniswap-v4', address: v4PoolId(k), token0, token1, fee: k.fee, venue, poolManager: lower(poolManager), key: k, hookAltersSwap: v4HookAltersSwap(k.hooks) }
}

/** what a plan's V4 hop names of the key beside its tokens and fee (routing/swap-plan.ts PlanV4Key) */
export function v4PlanKey(ref: V4PoolRef): { poolManager: Address; tickSpacing: number; hooks?: Address; nativeEth?: boolean; hookAltersSwap?: boolean } {
  return {
    poolManager: ref.poolManager,
    tickSpacing: ref.key.tickSpacing,
    ...(ref.key.hooks === ZERO_ADDRESS ? {} : { hooks: ref.key.hooks }),
    ...(ref.key.currency0 === ZERO_ADDRESS ? { nativeEth: true } : {}),
    ...(ref.hookAltersSwap ? { hookAltersSwap: true } : {}),
  }
}

/** what a swap through the pool does beyond a plain V4 hop, for the gas model: its hook's swap calls, native ETH */
export function v4HopGasExtras(ref: V4PoolRef): { hookCalls: number; nativeEth: boolean } {
  return { hookCalls: v4HookSwapCalls(ref.key.hooks), nativeEth: ref.key.currency0 === ZERO_ADDRESS }
}

/**
 * the key's direction of a swap from the ref's token0 to token1 (zeroForOne) or back: the same, but
 * for a native ETH key whose WETH sorts above its other currency (the key's currency0 is then the
 * ref's token1)
 */
export function v4KeyZeroForOne(ref: V4PoolRef, zeroForOne: boolean): boolean {
  return ref.key.currency1 === ref.token1 ? zeroForOne : !zeroForOne
}

/**
 * The pool of `ref` as the swap loop reads it: slot0, liquidity, the tick-bitmap words around the
 * current tick (settings.wordsPerSide) and the liquidityNet of every tick set in them. A
 * ViewCallError ('inconsistent') when the pool is not initialized.
 */
export async function loadV4Pool(words: StorageWords, ref: V4PoolRef, settings: PoolLoadSettings): Promise<V4PoolSnapshot> {
  const { poolManager, key } = ref
  const poolId = ref.address
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

/** at least quoteV4's output per unit of input: the V3 loop's rate at the direction's swap fee (0 where quoteV4 gives nothing) */
export function v4MaxRate(pool: V4PoolSnapshot, routeZeroForOne: boolean): number {
  const zeroForOne = v4KeyZeroForOne(pool, routeZeroForOne)
  try {
    return v3MaxRate(pool.state.sqrtPriceX96, v4SwapFee(pool.slot0.protocolFee, pool.slot0.lpFee, zeroForOne), zeroForOne)
  } catch (err) {
    if (isAmmMathError(err)) return 0
    throw err
  }
}

/** the pool takes all of `amountIn` and gives nothing back */
export function roundsToZeroV4(pool: V4PoolSnapshot, zeroForOne: boolean, amountIn: bigint): boolean {
  const r = swapV4(pool, zeroForOne, amountIn)
  return r !== undefined && r.used === amountIn && r.out === 0n
}

/**
 * the pool's state at a direction's swap fee (slot0's LP fee with the protocol fee on top), one per
 * snapshot and fee: the swap math keeps what every quote of a state repeats beside the state object
 * (dex/math/v3-exact-input.ts), so a state made per quote would keep nothing
 */
const statesAtFee = new WeakMap<V4PoolSnapshot, Map<number, V3PoolState>>()

function stateAtFee(pool: V4PoolSnapshot, fee: number): V3PoolState {
  if (fee === pool.state.fee) return pool.state
  let byFee = statesAtFee.get(pool)
  if (byFee === undefined) statesAtFee.set(pool, (byFee = new Map()))
  let state = byFee.get(fee)
  if (state === undefined) byFee.set(fee, (state = { ...pool.state, fee }))
  return state
}

function swapV4(pool: V4PoolSnapshot, routeZeroForOne: boolean, amountIn: bigint): { used: bigint; out: bigint; ticksCrossed: number } | undefined {
  if (amountIn <= 0n) return undefined
  const zeroForOne = v4KeyZeroForOne(pool, routeZeroForOne)
  const limit = zeroForOne ? pool.coverage.sqrtPriceLimitDown : pool.coverage.sqrtPriceLimitUp
  try {
    const fee = v4SwapFee(pool.slot0.protocolFee, pool.slot0.lpFee, zeroForOne)
    // a 100% fee takes the whole input: nothing comes out (the V3 loop refuses fee = 1e6)
    if (fee === 1_000_000) return { used: amountIn, out: 0n, ticksCrossed: 0 }
    const r = v3ExactInput(stateAtFee(pool, fee), zeroForOne, amountIn, limit)
    return { used: r.amountUsed, out: r.amountOut, ticksCrossed: r.initializedTicksCrossed }
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
  lookUp: (caller: ViewCaller, venue: V4Venue, token0: Address, token1: Address, weth: Address) =>
    venue.pools
      .filter((k) => {
        const [c0, c1] = [lower(k.currency0), lower(k.currency1)]
        if (c0 !== ZERO_ADDRESS) return c0 === token0 && c1 === token1
        return (token0 === weth && c1 === token1) || (token1 === weth && c1 === token0)
      })
      .map((k) => {
        const ref = v4PoolRef(venue.poolManager, k, venue.name, weth)
        return caller.storage(ref.poolManager, BigInt(v4Slot0Slot(ref.address))).then((w): V4PoolRef | undefined => (decodeV4Slot0(w).sqrtPriceX96 === 0n ? undefined : ref))
      }),
  load: (caller: ViewCaller, ref: PoolRef, settings: PoolLoadSettings) => {
    if (ref.protocol !== 'uniswap-v4' || !('key' in ref)) throw new TypeError(`not a V4 pool reference: ${ref.address}`)
    return loadV4Pool(caller, ref as V4PoolRef, settings)
  },
  quote: quoteV4,
  maxRate: v4MaxRate,
  roundsToZero: roundsToZeroV4,
  hasLiquidity: (pool: V4PoolSnapshot) => pool.state.liquidity > 0n || pool.state.ticks.size > 0,
})
