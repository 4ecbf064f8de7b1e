/**
 * src/node/heap-compaction.ts: V8's full compaction of old space turned on for a window now and then
 * (issue 10): the schedule. V8 honouring the flag it sets is heap-compaction.e2e.test.ts (a process of
 * its own); HEAP_COMPACT_EVERY_S's parsing is in test/config.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { COMPACTION_WINDOW_MS, PeriodicHeapCompaction } from '../../src/node/heap-compaction.ts'

describe('PeriodicHeapCompaction', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('turns full compaction on for the window out of every period, and off again', () => {
    const flags: string[] = []
    const compaction = new PeriodicHeapCompaction({ everyMs: 120_000, setFlags: (f) => flags.push(f) })
    compaction.start()
    vi.advanceTimersByTime(119_999)
    expect(flags).toEqual([])
    vi.advanceTimersByTime(1)
    expect(flags).toEqual(['--compact-on-every-full-gc'])
    vi.advanceTimersByTime(COMPACTION_WINDOW_MS - 1)
    expect(flags).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(flags).toEqual(['--compact-on-every-full-gc', '--no-compact-on-every-full-gc'])
    vi.advanceTimersByTime(120_000 - COMPACTION_WINDOW_MS)
    expect(flags).toHaveLength(3)
    expect(compaction.windows).toBe(2)
    compaction.stop()
  })

  it('stop() closes an open window (V8 default back) and opens no more', () => {
    const flags: string[] = []
    const compaction = new PeriodicHeapCompaction({ everyMs: 60_000, setFlags: (f) => flags.push(f) })
    compaction.start()
    vi.advanceTimersByTime(60_000 + 1_000)
    compaction.stop()
    expect(flags).toEqual(['--compact-on-every-full-gc', '--no-compact-on-every-full-gc'])
    vi.advanceTimersByTime(10 * 60_000)
    expect(flags).toHaveLength(2)
  })

  it('refuses a period not longer than the window', () => {
    expect(() => new PeriodicHeapCompaction({ everyMs: COMPACTION_WINDOW_MS })).toThrow(RangeError)
  })
})
