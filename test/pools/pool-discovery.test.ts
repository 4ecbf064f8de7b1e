/**
 * Pool discovery on the devnet: the factories, asked through view calls, give exactly the pairs
 * and pools the registry lists among the routing tokens; lookups are cached per block, bounded.
 */
import { zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { MemoryStateReader } from '../../src/chain/memory/memory-state-reader.ts'
import type { Address, StateReader } from '../../src/chain/types.ts'
import { Simulator, type CallRequest, type ExecutionResult, type SimulationState } from '../../src/evm/simulator.ts'
import { PoolDiscovery, venuePoolAddress, ViewCaller, type PoolRef } from '../../src/pools/index.ts'
import { join } from 'node:path'
import { allV2Pairs, allV3Pools, readRegistry } from '../../scripts/devnet/registry.ts'
import { FIXTURES } from '../support/devnet.ts'
import { DEX, lower, registry, sim, source, tok } from '../routing/helpers.ts'

class CountingSimulator extends Simulator {
  calls = 0
  override call(state: SimulationState, request: CallRequest): Promise<ExecutionResult> {
    this.calls++
    return super.call(state, request)
  }
}

function counting(): CountingSimulator {
  return new CountingSimulator({ common: sim.common })
}

/** the registry's pools among `tokens`, as discovery describes them */
function registryPools(tokens: readonly Address[]): string[] {
  const inSet = (a: string, b: string) => tokens.includes(lower(a)) && tokens.includes(lower(b))
  const all = allRegistryPools()
  return [
    ...all.v2.filter((p) => inSet(p.token0, p.token1)).map((p) => key({ protocol: 'uniswap-v2', address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.feeBps * 100, venue: p.venue })),
    ...all.v3.filter((p) => inSet(p.token0, p.token1)).map((p) => key({ protocol: 'uniswap-v3', address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.fee, venue: p.venue })),
    // V4: the PoolId is the pool's address in discovery; a native ETH pool is found as WETH's
    ...all.v4
      .map((p) => ({ p, tokens: [p.currency0 === zeroAddress ? lower(all.weth) : lower(p.currency0), lower(p.currency1)].sort() as [Address, Address] }))
      .filter(({ tokens: [a, b] }) => inSet(a, b))
      .map(({ p, tokens: [token0, token1] }) => key({ protocol: 'uniswap-v4', address: lower(p.poolId), token0, token1, fee: p.fee, venue: all.v4Venue })),
  ].sort()
}

/** every venue's pools in the registry: Uniswap's, then the devnet's added venues', then V4's (native ETH and hooked pools included) */
function allRegistryPools() {
  const full = readRegistry(join(FIXTURES, 'devnet/registry.json'))
  return { v2: allV2Pairs(full), v3: allV3Pools(full), v4: full.v4.pools, v4Venue: full.v4.name, weth: full.weth }
}

/** view calls discovery makes per token pair: one getPair per V2 venue, one getPool per V3 fee tier */
const CALLS_PER_PAIR = DEX.venues.reduce((n, v) => n + (v.protocol === 'uniswap-v2' ? 1 : v.protocol === 'uniswap-v3' ? v.feeTiers.length : 0), 0)

function key(p: PoolRef): string {
  return `${p.protocol} ${p.venue} ${p.address} ${p.token0} ${p.token1} ${p.fee}`
}

/** the devnet state again, pinned to another block number (same accounts) */
function readerAtNextBlock(reader: StateReader): StateReader {
  const genesis = source.genesis
  return new MemoryStateReader({ ...reader.block, number: reader.block.number + 1n, hash: `0x${'11'.repeat(32)}` }, genesis.accounts)
}

describe('PoolDiscovery', () => {
  it('finds every registry pair and pool among tokenIn, tokenOut and the base tokens', async () => {
    const discovery = new PoolDiscovery(counting(), DEX)
    for (const [a, b] of [
      ['UNI', 'LINK'],
      ['WETH', 'USDC'],
      ['WBTC', 'DAI'],
    ]) {
      const found = await discovery.findPools(source.latest(), tok(a), tok(b))
      const tokens = discovery.routingTokens(tok(a), tok(b))
      expect(tokens).toEqual(expect.arrayContaining([tok(a), tok(b), ...DEX.baseTokens]))
      expect(found.map(key).sort()).toEqual(registryPools(tokens))
      for (const p of found) expect(p.token0 < p.token1).toBe(true)
    }
  })

  it('finds all 13 pairs, 14 V3 pools and 7 V4 pools (native ETH and hooked ones too) of the devnet\'s five venues over the token pairs, and nothing else', async () => {
    const discovery = new PoolDiscovery(counting(), DEX)
    const all = new Map<string, PoolRef>()
    const tokens = registry.tokens.map((t) => lower(t.address))
    for (const a of tokens) for (const b of tokens) if (a < b) for (const p of await discovery.findPools(source.latest(), a, b)) all.set(p.address, p)
    expect([...all.values()].map(key).sort()).toEqual(registryPools(tokens))
    expect([...all.values()].filter((p) => p.protocol === 'uniswap-v2')).toHaveLength(13)
    expect([...all.values()].filter((p) => p.protocol === 'uniswap-v3')).toHaveLength(14)
    expect([...all.values()].filter((p) => p.protocol === 'uniswap-v4')).toHaveLength(7)
    expect(new Set([...all.values()].map((p) => p.venue))).toEqual(new Set(['uniswap-v2', 'uniswap-v3', 'devnet-fork-v2', 'devnet-fork-v3', 'uniswap-v4']))
    // a V2 pair carries its venue's fee: 30 bps at Uniswap, 25 at the fork
    for (const p of all.values()) if (p.protocol === 'uniswap-v2') expect(p.fee).toBe(p.venue === 'devnet-fork-v2' ? 2500 : 3000)
  })

  it('finds nothing for a pair without pools', async () => {
    const discovery = new PoolDiscovery(counting(), DEX)
    const caller = new ViewCaller(sim, source.latest())
    expect(await discovery.pairPools(caller, tok('WBTC'), tok('UNI'))).toEqual([])
    expect(await discovery.pairPools(caller, tok('UNI'), tok('LINK'))).toEqual([])
  })

  it('looks each V3 fee tier up, and only the configured ones', async () => {
    const lowTiers = DEX.venues.map((v) => (v.protocol === 'uniswap-v3' ? { ...v, feeTiers: [100, 500], tickSpacings: [1, 10] } : v))
    const onlyLow = new PoolDiscovery(counting(), { ...DEX, venues: lowTiers })
    const found = await onlyLow.findPools(source.latest(), tok('UNI'), tok('LINK'))
    expect(found.filter((p) => p.protocol === 'uniswap-v3').every((p) => p.fee === 100 || p.fee === 500)).toBe(true)
    const v2Only = new PoolDiscovery(counting(), { ...DEX, venues: DEX.venues.filter((v) => v.protocol === 'uniswap-v2') })
    expect((await v2Only.findPools(source.latest(), tok('UNI'), tok('LINK'))).every((p) => p.protocol === 'uniswap-v2')).toBe(true)
  })

  it("keeps only pools at the venue's CREATE2 address: a wrong init-code hash finds nothing our contracts would accept", async () => {
    // (a V4 venue has no init-code hash: a wrong PoolManager finds nothing, as no key is initialized there)
    const misconfigured = DEX.venues.map((v) => (v.protocol === 'uniswap-v4' ? { ...v, poolManager: `0x${'ab'.repeat(20)}` as const } : { ...v, initCodeHash: `0x${'ab'.repeat(32)}` as const }))
    const discovery = new PoolDiscovery(counting(), { ...DEX, venues: misconfigured })
    expect(await discovery.findPools(source.latest(), tok('WETH'), tok('USDC'))).toEqual([])
    const right = await new PoolDiscovery(counting(), DEX).findPools(source.latest(), tok('WETH'), tok('USDC'))
    expect(right.length).toBeGreaterThan(0)
    for (const p of right) {
      const venue = DEX.venues.find((v) => v.name === p.venue)!
      if (venue.protocol !== 'uniswap-v4') expect(p.address).toBe(venuePoolAddress(venue, p.token0, p.token1, p.fee))
    }
  })

  it('caches per (block, pair): a second lookup at the same block makes no call, a new block does', async () => {
    const counter = counting()
    const discovery = new PoolDiscovery(counter, DEX)
    const first = await discovery.findPools(source.latest(), tok('UNI'), tok('LINK'))
    // 6 routing tokens: 15 pairs, each one getPair per V2 venue and one getPool per V3 venue's tier (2 + 3 + 3)
    expect(CALLS_PER_PAIR).toBe(8)
    expect(counter.calls).toBe(15 * CALLS_PER_PAIR)
    const again = await discovery.findPools(source.latest(), tok('UNI'), tok('LINK'))
    expect(counter.calls).toBe(15 * CALLS_PER_PAIR)
    expect(again).toEqual(first)
    // WBTC/DAI shares the base-token pairs: only the pairs with WBTC are new
    await discovery.findPools(source.latest(), tok('WBTC'), tok('DAI'))
    expect(counter.calls).toBe(15 * CALLS_PER_PAIR + 4 * CALLS_PER_PAIR)
    await discovery.findPools(readerAtNextBlock(source.latest()), tok('UNI'), tok('LINK'))
    expect(counter.calls).toBe(2 * 15 * CALLS_PER_PAIR + 4 * CALLS_PER_PAIR)
  })

  it('keeps the cache within its bound', async () => {
    const counter = counting()
    const discovery = new PoolDiscovery(counter, DEX, { maxCacheEntries: 2 })
    const caller = new ViewCaller(counter, source.latest())
    await discovery.pairPools(caller, tok('WETH'), tok('USDC'))
    await discovery.pairPools(caller, tok('WETH'), tok('DAI'))
    await discovery.pairPools(caller, tok('WETH'), tok('USDT'))
    const before = counter.calls
    // evicted: looked up again
    await discovery.pairPools(caller, tok('WETH'), tok('USDC'))
    expect(counter.calls).toBe(before + CALLS_PER_PAIR)
  })
})
