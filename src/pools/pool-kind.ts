/**
 * The seam a venue plugs into. A pool kind (one PoolProtocol: a Uniswap V2 pair, a V3 pool) says
 * how pools of that kind are found at a venue, read at a block, and quoted; a venue (pools.ts,
 * `Venue`) is one deployment of a kind, a factory with its settings. Discovery, the pool-state
 * loader and the quoting functions know no protocol: they ask `POOL_KINDS` (pool-kinds.ts).
 *
 * Another venue of an existing kind (a V2 or V3 fork) is a `Venue` more. Another kind (Uniswap
 * V4) is a PoolProtocol member, its snapshot type in PoolSnapshot, its Venue type, a module that
 * implements PoolKind (as uniswap-v2.ts and uniswap-v3.ts do), and its entry in POOL_KINDS, which
 * the compiler asks for; outside this folder, the executors' encoders (quote/router-calldata.ts,
 * backrun/backrun-calldata.ts), the gas model's per-hop cost, and backrun's pool moves and cycle
 * curves switch on the protocol too.
 */
import type { Address } from '../chain/types.ts'
import type { PoolRef, PoolSnapshot, Venue } from './pools.ts'
import { ViewCallError, type ViewCaller } from './view-calls.ts'

export interface HopQuote {
  amountOut: bigint
  /** initialized ticks the V3 swap loop crosses (each one costs gas); 0 for V2 */
  ticksCrossed: number
}

/** What a kind's loader may need of the pool-state loader's settings. */
export interface PoolLoadSettings {
  /** tick-bitmap words each side of the current word for a pool of this tick spacing */
  wordsPerSide(tickSpacing: number): number
}

export interface PoolKind<S extends PoolSnapshot = PoolSnapshot, V extends Venue = Venue> {
  readonly protocol: S['protocol']
  /**
   * the lookups of one token pair's pools at `venue` (token0 < token1), one promise per pool the
   * venue may hold for the pair, each undefined where it holds none; `weth` stands for native ETH
   * (a V4 key's address(0))
   */
  lookUp(caller: ViewCaller, venue: V, token0: Address, token1: Address, weth: Address): Array<Promise<PoolRef | undefined>>
  /** the pool's snapshot in the caller's state; a ViewCallError when the contract is not such a pool */
  load(caller: ViewCaller, ref: PoolRef, settings: PoolLoadSettings): Promise<S>
  /** exact-input quote; undefined when the pool cannot take the whole amount (see pool-quote.ts) */
  quote(pool: S, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined
  /**
   * at least the output per unit of input of any quote in this direction: the pool's current price
   * less the fee, rounded up (dex/math/output-bound.ts)
   */
  maxRate(pool: S, zeroForOne: boolean): number
  /** the pool takes all of `amountIn` and gives nothing back: its output rounds down to zero */
  roundsToZero(pool: S, zeroForOne: boolean, amountIn: bigint): boolean
  /** the pool holds anything a swap could take */
  hasLiquidity(pool: S): boolean
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/**
 * a factory's answer as a PoolRef; undefined for the zero address (no such pool), and for a pool
 * that is not at the venue's CREATE2 address `expected` (a misconfigured init-code hash or pool
 * deployer): our contracts would refuse to swap on it, so routes must not use it
 */
export function foundPool(address: string, rest: Omit<PoolRef, 'address'>, expected: Address): PoolRef | undefined {
  const lower = address.toLowerCase() as Address
  return lower === ZERO_ADDRESS || lower !== expected ? undefined : { ...rest, address: lower }
}

/** the pool's own token0 must be the one discovery sorted */
export function checkToken0(ref: PoolRef, token0: string, fn: string): void {
  if (token0.toLowerCase() !== ref.token0) {
    throw new ViewCallError(`pool ${ref.address} has token0 ${token0.toLowerCase()}, discovery said ${ref.token0}`, ref.address, fn, 'inconsistent')
  }
}
