/**
 * Builds the swap simulator's pool snapshot from what indexers and fixtures publish: the list
 * of initialized ticks with their liquidityNet. The bitmap is derived by setting one bit per
 * tick, as the contract's flipTick did when each tick was first used.
 */
import { MAX_INT128, MIN_INT128 } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { flipTick } from './tick-bitmap.ts'
import { getSqrtRatioAtTick, getTickAtSqrtRatio, MAX_TICK, MIN_TICK } from './tick-math.ts'
import type { V3PoolState, V3TickInfo } from './v3-pool.ts'

export interface InitializedTick {
  tick: number
  /** int128; zero is allowed: a tick can be initialized (liquidityGross > 0) with no net change */
  liquidityNet: bigint
}

export interface V3TickState {
  bitmap: Map<number, bigint>
  ticks: Map<number, V3TickInfo>
}

/** tick spacing the Uniswap V3 factory enables for each fee tier */
export const TICK_SPACING_BY_FEE: ReadonlyMap<number, number> = new Map([
  [100, 1],
  [500, 10],
  [3000, 60],
  [10000, 200],
])

export function tickSpacingForFee(fee: number): number {
  const spacing = TICK_SPACING_BY_FEE.get(fee)
  if (spacing === undefined) throw new AmmMathError('INVALID_INPUT', `no standard tick spacing for fee ${fee}`)
  return spacing
}

export function buildTickState(initializedTicks: readonly InitializedTick[], tickSpacing: number): V3TickState {
  if (!Number.isInteger(tickSpacing) || tickSpacing <= 0) throw new AmmMathError('INVALID_INPUT', `tickSpacing ${tickSpacing} is not a positive integer`)
  const bitmap = new Map<number, bigint>()
  const ticks = new Map<number, V3TickInfo>()
  for (const { tick, liquidityNet } of initializedTicks) {
    if (!Number.isInteger(tick) || tick < MIN_TICK || tick > MAX_TICK) throw new AmmMathError('INVALID_POOL_STATE', `tick ${tick} is not a valid tick`)
    if (tick % tickSpacing !== 0) throw new AmmMathError('INVALID_POOL_STATE', `tick ${tick} is not a multiple of tickSpacing ${tickSpacing}`)
    if (liquidityNet < MIN_INT128 || liquidityNet > MAX_INT128) throw new AmmMathError('INVALID_POOL_STATE', `liquidityNet of tick ${tick} is not an int128`)
    if (ticks.has(tick)) throw new AmmMathError('INVALID_POOL_STATE', `tick ${tick} listed twice`)
    ticks.set(tick, { liquidityNet })
    flipTick(bitmap, tick, tickSpacing)
  }
  return { bitmap, ticks }
}

export interface V3PoolSpec {
  sqrtPriceX96: bigint
  tick: number
  liquidity: bigint
  fee: number
  /** default: the factory's spacing for `fee` */
  tickSpacing?: number
  initializedTicks: readonly InitializedTick[]
}

/**
 * A pool snapshot, checked for what an on-chain pool always satisfies: slot0's tick is the tick
 * of its price, or one below it when a zeroForOne swap stopped exactly on a crossed tick.
 */
export function buildV3Pool(spec: V3PoolSpec): V3PoolState {
  const tickSpacing = spec.tickSpacing ?? tickSpacingForFee(spec.fee)
  const priceTick = getTickAtSqrtRatio(spec.sqrtPriceX96)
  const onBoundary = spec.tick === priceTick - 1 && getSqrtRatioAtTick(priceTick) === spec.sqrtPriceX96
  if (spec.tick !== priceTick && !onBoundary) {
    throw new AmmMathError('INVALID_POOL_STATE', `tick ${spec.tick} does not match sqrtPriceX96 ${spec.sqrtPriceX96} (tick ${priceTick})`)
  }
  const { bitmap, ticks } = buildTickState(spec.initializedTicks, tickSpacing)
  return { sqrtPriceX96: spec.sqrtPriceX96, tick: spec.tick, liquidity: spec.liquidity, fee: spec.fee, tickSpacing, bitmap, ticks }
}
