import type { VM } from '@ethereumjs/vm'
import { describe, expect, it } from 'vitest'

import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { collectGarbage as collect } from '../support/collect-garbage.ts'

const listenerCount = (pool: VmPool) => pool.common.events.listenerCount('hardforkChanged')
const state = () => JournaledState.over(EMPTY_STATE_READER)

/**
 * One round: the idle VM takes a simulation that fails (discarded) while a second simulation makes
 * the pool create a new VM, which stays idle for the next round. A function of its own, so that
 * the test's frame keeps no reference to this round's overlay.
 */
async function failBesideANewVm(pool: VmPool, discarded: Array<WeakRef<VM>>, overlays: Array<WeakRef<JournaledState>>): Promise<void> {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const overlay = state()
  overlays.push(new WeakRef(overlay))
  const failing = pool.with(overlay, async (vm) => {
    discarded.push(new WeakRef(vm))
    await gate
    throw new Error('rejected')
  })
  const kept = pool.with(state(), () => gate)
  await new Promise((r) => setTimeout(r, 5))
  release()
  await expect(failing).rejects.toThrow('rejected')
  await kept
}

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

  it('a discarded VM is freed even when it was live while a newer VM was created (no chain of dropped VMs)', async () => {
    // each round (failBesideANewVm) discards a VM while a new one is created. The new VM must not keep
    // the one discarded beside it (it did through the listeners it saw at its creation: BENCHMARKS.md,
    // Soak, eleventh session), nor the overlay that one was bound to.
    const pool = new VmPool(commonForChain(31337n), 1, 8)
    const discarded: Array<WeakRef<VM>> = []
    const overlays: Array<WeakRef<JournaledState>> = []
    const ROUNDS = 20
    for (let round = 0; round < ROUNDS; round++) await failBesideANewVm(pool, discarded, overlays)
    expect(pool.stats()).toMatchObject({ idle: 1, live: 1, discarded: ROUNDS })
    await collect()
    expect(discarded.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
    expect(overlays.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
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
