/**
 * The pools a user's transaction moved, read from its logs, and their state after it.
 *
 * A Uniswap V2 pair emits Sync(reserve0, reserve1) on every reserve change; a V3 pool emits
 * Swap(..., sqrtPriceX96, liquidity, tick) with its slot0 and in-range liquidity after the swap. A
 * swap changes nothing else the swap math reads (the tick bitmap and each tick's liquidityNet only
 * change on mint and burn), so the post-swap snapshot is the block's snapshot with those fields
 * replaced: exact, and without reading state again. Mint/Burn, or a price that left the loaded
 * bitmap words, mark the pool for a fresh load from the post-swap state instead.
 *
 * Uniswap V4 pools live in the singleton PoolManager, which emits Swap(PoolId indexed id, ...,
 * sqrtPriceX96, liquidity, tick, fee) and ModifyLiquidity(PoolId indexed id, ...) for every pool:
 * the move is keyed by the PoolId (a V4 pool's identity in snapshots, routes and backrun hops) and
 * applied like a V3 swap (the same slot0 price and tick, in-range liquidity; the fees do not move).
 * A ModifyLiquidity marks the pool for a fresh load. Donate changes fee growth only: no move.
 *
 * Logs prove nothing about who emitted them: callers accept a move only for an address the
 * factories name as a pool (discovery), or for a PoolId that a configured V4 venue lists and
 * whose event came from that venue's PoolManager, so a contract emitting look-alike events is
 * ignored. Given `poolManagers`, V4 events of any other emitter are not read at all (a look-alike
 * cannot replace a real pool's move under its PoolId).
 */
import { decodeAbiParameters, toEventSelector } from 'viem'
import type { Address, Hex } from '../chain/types.ts'
import type { SimulationLog } from '../evm/simulator.ts'
import type { PoolSnapshot } from '../pools/pools.ts'

export const V2_SYNC_TOPIC = toEventSelector('Sync(uint112,uint112)')
export const V3_SWAP_TOPIC = toEventSelector('Swap(address,address,int256,int256,uint160,uint128,int24)')
export const V3_MINT_TOPIC = toEventSelector('Mint(address,address,int24,int24,uint128,uint256,uint256)')
export const V3_BURN_TOPIC = toEventSelector('Burn(address,int24,int24,uint128,uint256,uint256)')
/** PoolManager's Swap(PoolId indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee) */
export const V4_SWAP_TOPIC = toEventSelector('Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)')
/** PoolManager's ModifyLiquidity(PoolId indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt) */
export const V4_MODIFY_LIQUIDITY_TOPIC = toEventSelector('ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)')

const V4_SWAP_DATA = [{ type: 'int128' }, { type: 'int128' }, { type: 'uint160' }, { type: 'uint128' }, { type: 'int24' }, { type: 'uint24' }] as const

export type PoolMove =
  | { kind: 'v2-sync'; pool: Address; reserve0: bigint; reserve1: bigint }
  | { kind: 'v3-swap'; pool: Address; sqrtPriceX96: bigint; liquidity: bigint; tick: number }
  /** liquidity was added or removed: ticks changed, the pool must be read again */
  | { kind: 'v3-liquidity'; pool: Address }
  /** a V4 swap: `pool` is the PoolId, `poolManager` the event's emitter */
  | { kind: 'v4-swap'; pool: Address; poolManager: Address; sqrtPriceX96: bigint; liquidity: bigint; tick: number }
  /** a V4 pool's liquidity changed: read it again */
  | { kind: 'v4-liquidity'; pool: Address; poolManager: Address }

export interface ReadPoolMovesOptions {
  /** the PoolManagers whose V4 events count (lowercase); default: any emitter's */
  poolManagers?: ReadonlySet<Address>
}

/**
 * The last move of each pool, in log order (a pool swapped twice ends where its last event says),
 * keyed by the pool's address, or by its PoolId for a V4 pool.
 */
export function readPoolMoves(logs: readonly SimulationLog[], options: ReadPoolMovesOptions = {}): Map<Address, PoolMove> {
  const moves = new Map<Address, PoolMove>()
  for (const log of logs) {
    const topic = log.topics[0]
    const pool = log.address
    if (topic === V4_SWAP_TOPIC || topic === V4_MODIFY_LIQUIDITY_TOPIC) {
      readV4Move(moves, log, options.poolManagers)
      continue
    }
    try {
      if (topic === V2_SYNC_TOPIC && log.topics.length === 1) {
        const [reserve0, reserve1] = decodeAbiParameters([{ type: 'uint112' }, { type: 'uint112' }], log.data as Hex)
        moves.set(pool, { kind: 'v2-sync', pool, reserve0, reserve1 })
      } else if (topic === V3_SWAP_TOPIC && log.topics.length === 3) {
        const [, , sqrtPriceX96, liquidity, tick] = decodeAbiParameters(
          [{ type: 'int256' }, { type: 'int256' }, { type: 'uint160' }, { type: 'uint128' }, { type: 'int24' }],
          log.data as Hex,
        )
        // a later liquidity change keeps the pool marked for a reload
        if (moves.get(pool)?.kind !== 'v3-liquidity') moves.set(pool, { kind: 'v3-swap', pool, sqrtPriceX96, liquidity, tick })
      } else if ((topic === V3_MINT_TOPIC || topic === V3_BURN_TOPIC) && log.topics.length >= 2) {
        moves.set(pool, { kind: 'v3-liquidity', pool })
      }
    } catch {
      // data that does not decode is not a Uniswap event
    }
  }
  return moves
}

/** A PoolManager's Swap or ModifyLiquidity into `moves`, keyed by its PoolId (topic 1). */
function readV4Move(moves: Map<Address, PoolMove>, log: SimulationLog, poolManagers: ReadonlySet<Address> | undefined): void {
  const poolManager = log.address.toLowerCase() as Address
  if (log.topics.length !== 3 || (poolManagers !== undefined && !poolManagers.has(poolManager))) return
  const pool = log.topics[1].toLowerCase() as Address
  if (log.topics[0] === V4_MODIFY_LIQUIDITY_TOPIC) {
    moves.set(pool, { kind: 'v4-liquidity', pool, poolManager })
    return
  }
  try {
    const [, , sqrtPriceX96, liquidity, tick] = decodeAbiParameters(V4_SWAP_DATA, log.data as Hex)
    // a later liquidity change keeps the pool marked for a reload
    if (moves.get(pool)?.kind !== 'v4-liquidity') moves.set(pool, { kind: 'v4-swap', pool, poolManager, sqrtPriceX96, liquidity, tick })
  } catch {
    // data that does not decode is not the PoolManager's event
  }
}

/**
 * The snapshot after `move`, or undefined when it cannot be derived (liquidity changed, a protocol
 * mismatch, or a V3 price outside the loaded bitmap words): then read the pool afresh.
 */
export function applyPoolMove(snapshot: PoolSnapshot, move: PoolMove): PoolSnapshot | undefined {
  if (move.kind === 'v2-sync') {
    return snapshot.protocol === 'uniswap-v2' ? { ...snapshot, reserve0: move.reserve0, reserve1: move.reserve1 } : undefined
  }
  if (move.kind === 'v4-swap' || move.kind === 'v4-liquidity') {
    if (move.kind === 'v4-liquidity' || snapshot.protocol !== 'uniswap-v4' || snapshot.poolManager !== move.poolManager) return undefined
    if (move.tick < snapshot.coverage.tickLower || move.tick > snapshot.coverage.tickUpper) return undefined
    const { sqrtPriceX96, liquidity, tick } = move
    return { ...snapshot, slot0: { ...snapshot.slot0, sqrtPriceX96, tick }, state: { ...snapshot.state, sqrtPriceX96, liquidity, tick } }
  }
  if (move.kind === 'v3-liquidity' || snapshot.protocol !== 'uniswap-v3') return undefined
  if (move.tick < snapshot.coverage.tickLower || move.tick > snapshot.coverage.tickUpper) return undefined
  return { ...snapshot, state: { ...snapshot.state, sqrtPriceX96: move.sqrtPriceX96, liquidity: move.liquidity, tick: move.tick } }
}
