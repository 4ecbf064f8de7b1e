/**
 * Post-swap pool states derived from a user transaction's logs equal the states read from the EVM
 * after it, for every fixture transaction that succeeds on the devnet: V2 and V3 pools from their
 * own events, V4 pools from the PoolManager's, keyed by PoolId.
 */
import { describe, expect, it } from 'vitest'
import { applyPoolMove, readPoolMoves, V2_SYNC_TOPIC, V4_MODIFY_LIQUIDITY_TOPIC, V4_SWAP_TOPIC } from '../../src/backrun/pool-moves.ts'
import type { Address } from '../../src/chain/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import type { PoolSnapshot } from '../../src/pools/index.ts'
import { RoutingEngine } from '../../src/routing/index.ts'
import { DEX, sim, source } from '../routing/helpers.ts'
import { loadFixtureTxs, loadRegistry } from '../support/devnet.ts'

const registry = loadRegistry()
const engine = new RoutingEngine(sim, { dex: DEX })
const fixtures = loadFixtureTxs().filter((f) => f.expected.status === 1)
const POOL_MANAGER = registry.v4.poolManager.toLowerCase() as Address
/** the configured V4 pools, keyed by PoolId (the devnet's native-ETH pool is not among the venue's keys) */
const V4_POOLS = new Map(registry.v4.pools.map((p) => [p.poolId.toLowerCase() as Address, p]))

function comparable(p: PoolSnapshot) {
  return p.protocol === 'uniswap-v2'
    ? { reserve0: p.reserve0, reserve1: p.reserve1 }
    : { sqrtPriceX96: p.state.sqrtPriceX96, tick: p.state.tick, liquidity: p.state.liquidity, ticks: [...p.state.ticks.entries()] }
}

describe('pool moves from a user transaction', () => {
  it.each(fixtures.map((f) => [f.name, f] as const))('%s: the derived post-swap states equal the EVM state', async (_name, fx) => {
    const reader = source.latest()
    const base = sim.openState(reader)
    const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: sim.common })
    const result = await sim.transaction(base, tx.tx)
    const moves = readPoolMoves(result.logs)
    const pools = new Map<Address, PoolSnapshot>()
    for (const pair of registry.v2.pairs) pools.set(pair.address.toLowerCase() as Address, (await engine.loadPools(reader, pair.token0.toLowerCase() as Address, pair.token1.toLowerCase() as Address)).pools.find((p) => p.address === pair.address.toLowerCase())!)
    // the devnet's added venues' pools too (their fixtures swap there)
    for (const pool of registry.venues.flatMap((v) => (v.pairs ?? []).concat(v.pools ?? []) as Array<{ address: string; token0: string; token1: string }>)) {
      pools.set(pool.address.toLowerCase() as Address, (await engine.loadPools(reader, pool.token0.toLowerCase() as Address, pool.token1.toLowerCase() as Address)).pools.find((p) => p.address === pool.address.toLowerCase())!)
    }
    for (const pool of registry.v3.pools) pools.set(pool.address.toLowerCase() as Address, (await engine.loadPools(reader, pool.token0.toLowerCase() as Address, pool.token1.toLowerCase() as Address)).pools.find((p) => p.address === pool.address.toLowerCase())!)
    // the V4 venue's pools (ERC-20 keys; the native-ETH pool is not routed) by PoolId
    for (const [id, pool] of V4_POOLS) {
      if (/^0x0{40}$/.test(pool.currency0)) continue
      pools.set(id, (await engine.loadPools(reader, pool.currency0.toLowerCase() as Address, pool.currency1.toLowerCase() as Address)).pools.find((p) => p.address === id)!)
    }
    // every moved pool of the fixture is found: its V2/V3 pools by address, and for a swap in the
    // PoolManager the PoolId of every pool it swapped in (one move per pool)
    const v4Ids = [...new Set(fx.expected.logs.filter((l) => l.address.toLowerCase() === POOL_MANAGER && l.topics[0] === V4_SWAP_TOPIC).map((l) => l.topics[1]!.toLowerCase()))]
    expect(v4Ids.length > 0).toBe(fx.pools.some((p) => p.toLowerCase() === POOL_MANAGER))
    const expected = [...new Set(fx.pools.map((p) => p.toLowerCase()).filter((p) => p !== POOL_MANAGER)), ...v4Ids]
    expect([...moves.keys()].sort()).toEqual(expected.sort())
    for (const move of moves.values()) {
      // the native-ETH V4 pool is no venue pool: its move is read, but never applied by the engine
      if (!pools.has(move.pool)) {
        expect(move.kind === 'v4-swap' && /^0x0{40}$/.test(V4_POOLS.get(move.pool)!.currency0), move.pool).toBe(true)
        continue
      }
      const before = pools.get(move.pool)!
      const derived = applyPoolMove(before, move)
      expect(derived, move.pool).toBeDefined()
      const read = await engine.poolStates.loadAt(result.state, before)
      expect(comparable(derived!)).toEqual(comparable(read))
    }
  })

  it('ignores data that does not decode and keeps the last event of a pool', () => {
    const pool = '0x00000000000000000000000000000000000000aa' as Address
    const word = (n: bigint) => n.toString(16).padStart(64, '0')
    const moves = readPoolMoves([
      { address: pool, topics: [V2_SYNC_TOPIC], data: `0x${word(1n)}${word(2n)}` },
      { address: pool, topics: [V2_SYNC_TOPIC], data: '0x1234' },
      { address: pool, topics: [V2_SYNC_TOPIC], data: `0x${word(3n)}${word(4n)}` },
    ])
    expect(moves.get(pool)).toEqual({ kind: 'v2-sync', pool, reserve0: 3n, reserve1: 4n })
  })

  it('reads V4 moves from the PoolManagers given only, keyed by PoolId; a later ModifyLiquidity marks the pool for a reload', () => {
    const word = (n: bigint) => BigInt.asUintN(256, n).toString(16).padStart(64, '0')
    const id = `0x${'ab'.repeat(32)}` as Address
    const sender = `0x${'0'.repeat(24)}${'11'.repeat(20)}` as const
    const fake = '0x00000000000000000000000000000000000000fa' as Address
    const swapData = (price: bigint) => `0x${word(-5n)}${word(7n)}${word(price)}${word(1000n)}${word(-3n)}${word(3000n)}` as const
    const swap = (address: Address, price: bigint) => ({ address, topics: [V4_SWAP_TOPIC, id, sender] as `0x${string}`[], data: swapData(price) })
    // a look-alike emitter after the real swap does not replace it when the PoolManagers are given
    const logs = [swap(POOL_MANAGER, 79n), swap(fake, 1n)]
    expect(readPoolMoves(logs, { poolManagers: new Set([POOL_MANAGER]) }).get(id)).toEqual({ kind: 'v4-swap', pool: id, poolManager: POOL_MANAGER, sqrtPriceX96: 79n, liquidity: 1000n, tick: -3 })
    // without them, any emitter's event is read (the move names its emitter, for the caller to check)
    expect(readPoolMoves(logs).get(id)).toMatchObject({ kind: 'v4-swap', poolManager: fake, sqrtPriceX96: 1n })
    const modify = { address: POOL_MANAGER, topics: [V4_MODIFY_LIQUIDITY_TOPIC, id, sender] as `0x${string}`[], data: `0x${word(-60n)}${word(60n)}${word(5n)}${word(0n)}` as const }
    expect(readPoolMoves([swap(POOL_MANAGER, 79n), modify, swap(POOL_MANAGER, 80n)]).get(id)).toEqual({ kind: 'v4-liquidity', pool: id, poolManager: POOL_MANAGER })
    // undecodable data is skipped
    expect(readPoolMoves([{ ...swap(POOL_MANAGER, 79n), data: '0x1234' }]).size).toBe(0)
  })
})
