/**
 * TimeSlices: within a slice a pause costs no turn of the event loop; past it, the pause resolves
 * only after the event loop has turned (a timer or I/O ready meanwhile runs first).
 */
import { describe, expect, it } from 'vitest'
import { TimeSlices } from '../../../src/devnet/builder/time-slices.ts'

/** busy-waits `ms`: a synchronous stretch like a block's transactions */
function spin(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // burn CPU
  }
}

describe('TimeSlices', () => {
  it('refuses a slice that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new TimeSlices(bad)).toThrow(/sliceMs must be a positive integer/)
  })

  it('resolves within the slice without giving the event loop a turn', async () => {
    const slices = new TimeSlices(1_000)
    let turned = false
    setImmediate(() => {
      turned = true
    })
    for (let i = 0; i < 100; i++) await slices.pause()
    expect(turned).toBe(false)
    expect(slices.yields).toBe(0)
  })

  it('past the slice, gives the event loop a turn before it resolves, and starts a new slice', async () => {
    const slices = new TimeSlices(5)
    let turned = false
    setImmediate(() => {
      turned = true
    })
    spin(6)
    await slices.pause()
    expect(turned).toBe(true)
    expect(slices.yields).toBe(1)
    // the new slice began when the pause resolved
    await slices.pause()
    expect(slices.yields).toBe(1)
  })
})
