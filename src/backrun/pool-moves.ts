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
 * Logs prove nothing about who emitted them: callers accept a move only for an address the
 * factories name as a pool (discovery), so a contract emitting look-alike events is ignored.
 */
import { decodeAbiParameters, toEventSelector } from 'viem'
import type { Address, Hex } from '../chain/types.ts'
import type { SimulationLog } from '../evm/simulator.ts'
import type { PoolSnapshot } from '../pools/pools.ts'

export const V2_SYNC_TOPIC = toEventSelector('Sync(uint112,uint112)')
export const V3_SWAP_TOPIC = toEventSelector('Swap(address,address,int256,int256,uint160,uint128,int24)')
export const V3_MINT_TOPIC = toEventSelector('Mint(address,address,int24,int24,uint128,uint256,uint256)')
export const V3_BURN_TOPIC = toEventSelector('Burn(address,int24,int24,uint128,uint256,uint256)')

export type PoolMove =
  | { kind: 'v2-sync'; pool: Address; reserve0: bigint; reserve1: bigint }
  | { kind: 'v3-swap'; pool: Address; sqrtPriceX96: bigint; liquidity: bigint; tick: number }
  /** liquidity was added or removed: ticks changed, the pool must be read again */
  | { kind: 'v3-liquidity'; pool: Address }

/** The last move of each pool, in log order (a pool swapped twice ends where its last event says). */
export function readPoolMoves(logs: readonly SimulationLog[]): Map<Address, PoolMove> {
  const moves = new Map<Address, PoolMove>()
  for (const log of logs) {
    const topic = log.topics[0]
    const pool = log.address
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

/**
 * The snapshot after `move`, or undefined when it cannot be derived (liquidity changed, a protocol
 * mismatch, or a V3 price outside the loaded bitmap words): then read the pool afresh.
 */
export function applyPoolMove(snapshot: PoolSnapshot, move: PoolMove): PoolSnapshot | undefined {
  if (move.kind === 'v2-sync') {
    return snapshot.protocol === 'uniswap-v2' ? { ...snapshot, reserve0: move.reserve0, reserve1: move.reserve1 } : undefined
  }
  if (move.kind === 'v3-liquidity' || snapshot.protocol !== 'uniswap-v3') return undefined
  if (move.tick < snapshot.coverage.tickLower || move.tick > snapshot.coverage.tickUpper) return undefined
  return { ...snapshot, state: { ...snapshot.state, sqrtPriceX96: move.sqrtPriceX96, liquidity: move.liquidity, tick: move.tick } }
}
