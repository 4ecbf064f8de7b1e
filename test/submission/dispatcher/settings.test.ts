import { describe, expect, it } from 'vitest'

import { dispatcherLimits, type DispatcherOptions } from '../../../src/submission/dispatcher/settings.ts'
import type { BundleRelay } from '../../../src/submission/relay-client.ts'

const relay = (name: string): BundleRelay => ({
  name,
  acceptsHashReference: false,
  sendBundle: () => Promise.reject(new Error('not sent in this test')),
})

/** Ports are not touched by dispatcherLimits; only relays and the limits are read. */
function options(overrides: Partial<DispatcherOptions> = {}): DispatcherOptions {
  return { relays: [relay('a')], ...overrides } as DispatcherOptions
}

describe('dispatcherLimits', () => {
  it('fills in the documented defaults', () => {
    expect(dispatcherLimits(options())).toEqual({
      expiryBlocks: 25n,
      queueCapacity: 10_000,
      prepareConcurrency: 4,
      prepareTimeoutMs: 2_000,
      queueWaitMs: 500,
      inclusionConcurrency: 16,
      maxIndexedHashes: 16_384,
      backrunMayRevert: false,
      maxPlansPerBlock: 32,
      maxSimulationsPerBlock: 512,
      pruneIntervalMs: 60_000,
    })
  })

  it('keeps given limits', () => {
    const limits = dispatcherLimits(options({ expiryBlocks: 3, maxPlansPerBlock: 1, backrunMayRevert: true, maxIndexedHashes: 300 }))
    expect(limits.maxIndexedHashes).toBe(300)
    expect(limits.expiryBlocks).toBe(3n)
    expect(limits.maxPlansPerBlock).toBe(1)
    expect(limits.backrunMayRevert).toBe(true)
  })

  it('refuses no relay and duplicate relay names (TypeError)', () => {
    expect(() => dispatcherLimits(options({ relays: [] }))).toThrow(new TypeError('Dispatcher: at least one relay is required'))
    expect(() => dispatcherLimits(options({ relays: [relay('a'), relay('a')] }))).toThrow(new TypeError('Dispatcher: relay names must be unique'))
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses %s as a limit (RangeError naming it)', (bad) => {
    expect(() => dispatcherLimits(options({ queueCapacity: bad }))).toThrow(RangeError)
    expect(() => dispatcherLimits(options({ prepareTimeoutMs: bad }))).toThrow(`Dispatcher: prepareTimeoutMs must be a positive integer, got ${bad}`)
    expect(() => dispatcherLimits(options({ queueWaitMs: bad }))).toThrow(`Dispatcher: queueWaitMs must be a positive integer, got ${bad}`)
    expect(() => dispatcherLimits(options({ maxIndexedHashes: bad }))).toThrow(`Dispatcher: maxIndexedHashes must be a positive integer, got ${bad}`)
  })
})
