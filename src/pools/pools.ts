/**
 * What the market-data layer knows about a pool: a reference found by discovery (which contract,
 * which tokens, which fee), and a snapshot of its state at one block, loaded by the pool-state
 * loader and read by the searches (routing, backrun). Token addresses are lowercase; token0 < token1
 * as both factories sort.
 */
import type { Address } from '../chain/types.ts'
import type { V3PoolState } from '../dex/math/index.ts'

/**
 * The kinds of pool the layer can discover, load and quote: the discriminant of PoolRef,
 * PoolSnapshot and Venue, and the hop kind a swap plan executes. Each has its PoolKind in
 * pool-kinds.ts (pool-kind.ts says what a new kind takes).
 */
export type PoolProtocol = 'uniswap-v2' | 'uniswap-v3'

/** A deployment of Uniswap V2 pairs: its factory. */
export interface V2Venue {
  protocol: 'uniswap-v2'
  factory: Address
}

/** A deployment of Uniswap V3 pools: its factory and the fee tiers (hundredths of a bip) it enables. */
export interface V3Venue {
  protocol: 'uniswap-v3'
  factory: Address
  feeTiers: readonly number[]
}

/** Where pools of one kind are found: discovery asks each venue for a pair's pools. */
export type Venue = V2Venue | V3Venue

/** Uniswap V2 pairs charge 0.3%; in the plan's unit (hundredths of a bip) that is 3000. */
export const V2_FEE_PIPS = 3000
export const V2_FEE_BPS = 30

export interface PoolRef {
  protocol: PoolProtocol
  address: Address
  token0: Address
  token1: Address
  /** hundredths of a bip: the V3 fee tier, or V2_FEE_PIPS for a V2 pair */
  fee: number
}

export interface V2PoolSnapshot extends PoolRef {
  protocol: 'uniswap-v2'
  reserve0: bigint
  reserve1: bigint
}

/**
 * How far the loaded tick bitmap reaches. The swap math is exact only while it reads bitmap words
 * that were loaded, so a swap is simulated with the coverage bound as its price limit: a swap that
 * would need to go beyond it stops there, fills partly, and the route is treated as lacking
 * liquidity for that amount.
 */
export interface V3TickCoverage {
  /** lowest word position (int16) loaded */
  wordLower: number
  /** highest word position loaded */
  wordUpper: number
  /** first tick of the lowest loaded word (clamped to MIN_TICK) */
  tickLower: number
  /** last tick of the highest loaded word (clamped to MAX_TICK) */
  tickUpper: number
  /**
   * sqrt price a zeroForOne swap may not pass; undefined when the loaded words reach MIN_TICK
   * (nothing beyond is unknown, the swap runs to the protocol's own limit)
   */
  sqrtPriceLimitDown?: bigint
  /** sqrt price a oneForZero swap may not pass; undefined when the loaded words reach MAX_TICK */
  sqrtPriceLimitUp?: bigint
}

export interface V3PoolSnapshot extends PoolRef {
  protocol: 'uniswap-v3'
  /** slot0, liquidity, fee, tickSpacing, bitmap words and ticks, as the swap math reads them */
  state: V3PoolState
  coverage: V3TickCoverage
}

export type PoolSnapshot = V2PoolSnapshot | V3PoolSnapshot

export function poolPairKey(a: Address, b: Address): string {
  return a < b ? `${a}/${b}` : `${b}/${a}`
}

export function sortTokens(a: Address, b: Address): [Address, Address] {
  return a < b ? [a, b] : [b, a]
}
