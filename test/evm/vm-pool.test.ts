import { describe, expect, it } from 'vitest'

import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const listenerCount = (pool: VmPool) => pool.common.events.listenerCount('hardforkChanged')
const state = () => JournaledState.over(EMPTY_STATE_READER)

describe('VmPool', () => {
  it('a VM discarded after an exception leaves no listener on the shared Common (nothing keeps it alive)', async () => {
    const common = commonForChain(31337n)
    const pool = new VmPool(common, 2, 8)
    const start = listenerCount(pool)
    await pool.with(state(), async () => 1)
    expect(listenerCount(pool)).toBe(start + 1)
    for (let i = 0; i < 50; i++) {
      await expect(pool.with(state(), async () => Promise.reject(new Error('rejected')))).rejects.toThrow('rejected')
    }
    // only the idle VMs are registered: the 50 discarded ones are gone
    expect(listenerCount(pool)).toBe(start + pool.stats().idle)
    expect(pool.stats().live).toBe(pool.stats().idle)
    expect(pool.stats().discarded).toBeGreaterThanOrEqual(49)
  })

  it('VMs beyond maxIdle are dropped with their listeners when they come back', async () => {
    const pool = new VmPool(commonForChain(31337n), 1, 8)
    const start = listenerCount(pool)
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const running = Array.from({ length: 5 }, () => pool.with(state(), () => gate))
    await new Promise((r) => setTimeout(r, 20))
    expect(pool.stats().live).toBe(5)
    expect(listenerCount(pool)).toBe(start + 5)
    release()
    await Promise.all(running)
    expect(pool.stats()).toMatchObject({ idle: 1, live: 1 })
    expect(listenerCount(pool)).toBe(start + 1)
  })

  it('never has more than maxLive VMs: the rest wait their turn and all complete', async () => {
    const pool = new VmPool(commonForChain(31337n), 2, 3)
    let concurrent = 0
    let peak = 0
    const work = async () => {
      concurrent++
      peak = Math.max(peak, concurrent)
      await new Promise((r) => setTimeout(r, 5))
      concurrent--
      return true
    }
    const results = await Promise.all(Array.from({ length: 20 }, () => pool.with(state(), work)))
    expect(results.every(Boolean)).toBe(true)
    expect(peak).toBe(3)
    expect(pool.stats()).toMatchObject({ live: 2, idle: 2, waiting: 0 })
  })

  it('rejects bad bounds', () => {
    expect(() => new VmPool(commonForChain(31337n), -1)).toThrow(RangeError)
    expect(() => new VmPool(commonForChain(31337n), 1, 0)).toThrow(RangeError)
  })
})
