/**
 * What the market-data layer knows about a pool: a reference found by discovery (which contract,
 * which tokens, which fee), and a snapshot of its state at one block, loaded by the pool-state
 * loader and read by the searches (routing, backrun). Token addresses are lowercase; token0 < token1
 * as both factories sort.
 */
import type { Address, Hex } from '../chain/types.ts'
import type { V3PoolState } from '../dex/math/index.ts'
import type { V4PoolKey, V4Slot0 } from './uniswap-v4-slots.ts'

/**
 * The kinds of pool the layer can discover, load and quote: the discriminant of PoolRef,
 * PoolSnapshot and Venue, and the hop kind a swap plan executes. Each has its PoolKind in
 * pool-kinds.ts (pool-kind.ts says what a new kind takes).
 */
export type PoolProtocol = 'uniswap-v2' | 'uniswap-v3' | 'uniswap-v4'

/** The callback a V2-style pair calls on a flash swap (the router never flash-swaps; BackrunExecutor does). */
export type V2FlashCallback = 'uniswapV2Call' | 'pancakeCall'
/** The callback a V3-style pool calls to be paid in a swap. */
export type V3SwapCallback = 'uniswapV3SwapCallback' | 'pancakeV3SwapCallback'

/**
 * A deployment of Uniswap V2-style pairs (Uniswap, Sushi, Pancake, ...): its factory, the pair's
 * creation-code hash (pairs live at CREATE2(factory, keccak256(token0 ++ token1), initCodeHash),
 * which is how our contracts prove a pair genuine) and its swap fee, which forks change.
 */
export interface V2Venue {
  protocol: 'uniswap-v2'
  /** unique among the configured venues: named in logs, answers and the registry */
  name: string
  factory: Address
  initCodeHash: Hex
  /** the pair's swap fee in basis points: Uniswap and Sushi 30, Pancake 25 */
  feeBps: number
  /** what a pair calls on a flash swap */
  callback: V2FlashCallback
}

/**
 * A deployment of Uniswap V3-style pools: the factory discovery asks (getPool), the account that
 * CREATE2-deploys the pools (the factory itself, or PancakeSwap V3's PoolDeployer), the pool's
 * creation-code hash (pools live at CREATE2(poolDeployer, keccak256(abi.encode(token0, token1,
 * fee)), initCodeHash)), the fee tiers it enables (hundredths of a bip) with their tick spacings,
 * and the callback its pools call to be paid.
 */
export interface V3Venue {
  protocol: 'uniswap-v3'
  name: string
  factory: Address
  poolDeployer: Address
  initCodeHash: Hex
  feeTiers: readonly number[]
  /** tickSpacings[i] is the spacing of feeTiers[i] */
  tickSpacings: readonly number[]
  callback: V3SwapCallback
}

/**
 * Uniswap V4: the singleton PoolManager and the pool keys routes may use there. V4 pools have no
 * factory to ask and no address: a venue lists its keys (parsed and checked in venues.ts: static or
 * dynamic fee, hooks, native ETH as currency0), and discovery keeps those initialized in the
 * PoolManager. A native ETH key is found as the pool of WETH and its other currency.
 */
export interface V4Venue {
  protocol: 'uniswap-v4'
  name: string
  poolManager: Address
  pools: readonly V4PoolKey[]
}

/** Where pools of one kind are found: discovery asks each venue for a pair's pools. */
export type Venue = V2Venue | V3Venue | V4Venue

/** Uniswap V2 pairs charge 0.3%: 30 bps, in the plan's unit (hundredths of a bip) 3000. */
export const V2_FEE_PIPS = 3000
export const V2_FEE_BPS = 30

/** a V2 pair's fee in basis points, from its fee in hundredths of a bip (PoolRef.fee) */
export function v2FeeBps(pool: { fee: number }): number {
  return pool.fee / 100
}

export interface PoolRef {
  protocol: PoolProtocol
  address: Address
  token0: Address
  token1: Address
  /** hundredths of a bip: the V3 fee tier, or the V2 venue's fee (30 bps = 3000) */
  fee: number
  /** the name of the venue whose factory holds the pool */
  venue: string
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

/**
 * What discovery finds of a V4 pool: the key beside the PoolRef fields (address is the PoolId).
 * token0 < token1 are ERC-20s, as in every PoolRef: a native ETH key (currency0 = address(0)) has
 * WETH in its place, so token0 may be the key's currency1 (v4KeyZeroForOne turns a route's
 * direction into the key's).
 */
export interface V4PoolRef extends PoolRef {
  protocol: 'uniswap-v4'
  poolManager: Address
  key: V4PoolKey
  /**
   * the key's hook may change a swap's amounts or fee (beforeSwap, return deltas:
   * uniswap-v4-hooks.ts): the math is only an estimate, the EVM's execution gives the amounts
   */
  hookAltersSwap: boolean
}

/**
 * A V4 pool: `address` is its PoolId (32 bytes: the pool's identity in routes, caches and plans;
 * not an account), `fee` the key's LP fee, and the state the V3 swap loop reads with the slot0
 * fees (quoteV4 applies each direction's protocol fee).
 */
export interface V4PoolSnapshot extends V4PoolRef {
  slot0: V4Slot0
  state: V3PoolState
  coverage: V3TickCoverage
}

export type PoolSnapshot = V2PoolSnapshot | V3PoolSnapshot | V4PoolSnapshot

export function poolPairKey(a: Address, b: Address): string {
  return a < b ? `${a}/${b}` : `${b}/${a}`
}

export function sortTokens(a: Address, b: Address): [Address, Address] {
  return a < b ? [a, b] : [b, a]
}
