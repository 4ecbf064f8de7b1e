/**
 * The routing engine's per-block answers of loadPools: one discovery and load per pair and block,
 * the same frozen answer for every quote of the pair there, and nothing kept of an answer with a
 * failed pool or of a load that threw.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { ViewCallError } from '../../src/pools/view-calls.ts'
import { RoutingEngine } from '../../src/routing/index.ts'
import { DEX, E18, source, sim, tok } from './helpers.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('RoutingEngine.loadPools', () => {
  it('discovers and loads a pair once per block: every later call and route() get the same frozen answer', async () => {
    const engine = new RoutingEngine(sim, { dex: DEX })
    const findPools = vi.spyOn(engine.discovery, 'findPools')
    const reader = source.latest()
    const first = await engine.loadPools(reader, tok('WETH'), tok('USDC'))
    expect(first.pools.length).toBeGreaterThan(0)
    expect(await engine.loadPools(reader, tok('WETH').toUpperCase() as Address, tok('USDC'))).toBe(first)
    const outcome = await engine.route(reader, { tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: E18 })
    expect(outcome.kind).toBe('plan')
    expect(findPools).toHaveBeenCalledTimes(1)
    expect(Object.isFrozen(first.pools)).toBe(true)
    // another pair is its own
    await engine.loadPools(reader, tok('USDC'), tok('WETH'))
    expect(findPools).toHaveBeenCalledTimes(2)
  })

  it('keeps no answer with a failed pool, and no load that threw', async () => {
    const engine = new RoutingEngine(sim, { dex: DEX })
    const reader = source.latest()
    const findPools = vi.spyOn(engine.discovery, 'findPools')
    const loadAll = vi.spyOn(engine.poolStates, 'loadAll')
    loadAll.mockImplementationOnce(async (r, refs) => {
      const real = await engine.poolStates.load(r, refs[0])
      return { pools: [real], failed: [{ pool: refs[1], error: new ViewCallError('halted', refs[1].address, 'slot0', 'halted') }] }
    })
    expect((await engine.loadPools(reader, tok('WETH'), tok('DAI'))).failed).toHaveLength(1)
    expect((await engine.loadPools(reader, tok('WETH'), tok('DAI'))).failed).toHaveLength(0)
    expect(findPools).toHaveBeenCalledTimes(2)
    findPools.mockRejectedValueOnce(new Error('upstream down'))
    await expect(engine.loadPools(reader, tok('WETH'), tok('UNI'))).rejects.toThrow('upstream down')
    expect((await engine.loadPools(reader, tok('WETH'), tok('UNI'))).pools.length).toBeGreaterThan(0)
    expect(findPools).toHaveBeenCalledTimes(4)
  })
})
