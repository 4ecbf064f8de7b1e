/**
 * Post-swap pool states derived from a user transaction's logs equal the states read from the EVM
 * after it, for every fixture transaction that succeeds on the devnet.
 */
import { describe, expect, it } from 'vitest'
import { applyPoolMove, readPoolMoves, V2_SYNC_TOPIC } from '../../src/backrun/pool-moves.ts'
import type { Address } from '../../src/chain/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import type { PoolSnapshot } from '../../src/pools/index.ts'
import { RoutingEngine } from '../../src/routing/index.ts'
import { DEX, sim, source } from '../routing/helpers.ts'
import { loadFixtureTxs, loadRegistry, swapsInV4 } from '../support/devnet.ts'

const registry = loadRegistry()
const engine = new RoutingEngine(sim, { dex: DEX })
// V4 swaps move pools inside the PoolManager, which pool moves do not read yet
const fixtures = loadFixtureTxs().filter((f) => f.expected.status === 1 && !swapsInV4(f))

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
    // every moved pool of the fixture is found
    expect([...moves.keys()].sort()).toEqual([...new Set(fx.pools.map((p) => p.toLowerCase()))].sort())
    for (const move of moves.values()) {
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
})
