import { describe, expect, it } from 'vitest'

import { EventLoopTurns } from '../../../src/submission/dispatcher/event-loop-turns.ts'

/** keeps this thread busy for `ms`, as a submission's step does */
function busy(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // spin
  }
}

/**
 * 200 steps of 1 ms each, each let through by `gate`, beside a timer due in 5 ms: how many steps
 * had run when the timer did (without turns, their continuations run back to back for 200 ms).
 */
async function floodBesideTimer(gate: () => Promise<void>): Promise<{ released: number; releasedWhenTimerRan: number | undefined }> {
  let released = 0
  let releasedWhenTimerRan: number | undefined
  const timer = new Promise<void>((resolve) =>
    setTimeout(() => {
      releasedWhenTimerRan = released
      resolve()
    }, 5),
  )
  const steps = Array.from({ length: 200 }, () =>
    gate().then(() => {
      released++
      busy(1)
    }),
  )
  await Promise.all([timer, ...steps])
  return { released, releasedWhenTimerRan }
}

describe('EventLoopTurns', () => {
  it('lets waiters through in order, one per turn of the event loop', async () => {
    const turns = new EventLoopTurns()
    const order: number[] = []
    const all = Array.from({ length: 5 }, (_, i) => turns.next().then(() => void order.push(i)))
    expect(turns.pending).toBe(5)
    await Promise.all(all)
    expect(order).toEqual([0, 1, 2, 3, 4])
    expect(turns.pending).toBe(0)
  })

  it('a timer (or I/O) that comes due while many wait runs between them, not after all of them', async () => {
    const turns = new EventLoopTurns()
    const { released, releasedWhenTimerRan } = await floodBesideTimer(() => turns.next())
    expect(released).toBe(200)
    expect(releasedWhenTimerRan).toBeLessThan(100)
  })

  it('the same microtask flood without turns holds the timer until all of it is done (what the turns fix)', async () => {
    const { releasedWhenTimerRan } = await floodBesideTimer(() => Promise.resolve())
    expect(releasedWhenTimerRan).toBe(200)
  })

  it('resume() goes before every next() waiting: a step under way ends before steps not started begin', async () => {
    const turns = new EventLoopTurns()
    const order: string[] = []
    // three steps start; each, once through, waits again mid-way (its simulation, its send)
    const steps = ['a', 'b', 'c'].map((name) =>
      turns.next().then(async () => {
        order.push(`${name} start`)
        await turns.resume()
        order.push(`${name} send`)
      }),
    )
    await Promise.all(steps)
    // with one FIFO: a start, b start, c start, a send, b send, c send (every send behind every start)
    expect(order).toEqual(['a start', 'a send', 'b start', 'b send', 'c start', 'c send'])
    expect(turns.pending).toBe(0)
  })

  it('perTurn lets that many through per turn; it must be a positive integer', async () => {
    expect(() => new EventLoopTurns(0)).toThrow(RangeError)
    expect(() => new EventLoopTurns(1.5)).toThrow(RangeError)
    const turns = new EventLoopTurns(3)
    const seen: number[] = []
    const all = Array.from({ length: 7 }, () => turns.next())
    // after one turn (an immediate queued after the turns' own runs behind it): three through
    const counted = all.map((p, i) => p.then(() => void seen.push(i)))
    await new Promise((r) => setImmediate(r))
    expect(seen).toEqual([0, 1, 2])
    await Promise.all(counted)
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6])
  })
})
