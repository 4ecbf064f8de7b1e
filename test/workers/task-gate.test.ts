/**
 * The worker pool's own queue: one task per place, a new submission's first simulation (urgent)
 * first, quotes (interactive) and the dispatcher's per-head work (background) interleaved by a
 * weighted share with a bound on background places, bounded, left on abort.
 */
import { describe, expect, it } from 'vitest'
import { TaskGate, type TaskPriority } from '../../src/workers/task-gate.ts'

const full = (): Error => new Error('full')
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** A gate whose admissions are recorded in order, each task holding its place until released. */
function recorder(gate: TaskGate) {
  const order: string[] = []
  const holding: Array<{ name: string; priority: TaskPriority }> = []
  const enter = (name: string, priority: TaskPriority, signal?: AbortSignal): Promise<void> =>
    gate.enter(priority, signal, full).then(() => {
      order.push(name)
      holding.push({ name, priority })
    })
  /** the task holding a place longest gives it back */
  const finishOldest = async (): Promise<void> => {
    const done = holding.shift()
    if (done === undefined) throw new Error('no task holds a place')
    gate.leave(done.priority)
    await turn()
  }
  return { order, holding, enter, finishOldest }
}

describe('TaskGate', () => {
  it('hands out a free place at once, then lets the urgent waiters in before the interactive ones, each line in order', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 10 })
    const r = recorder(gate)
    await r.enter('quote 0', 'interactive')
    const waits = [r.enter('quote 1', 'interactive'), r.enter('quote 2', 'interactive'), r.enter('simulation 1', 'urgent'), r.enter('simulation 2', 'urgent')]
    expect(gate.waiting).toBe(4)
    for (let i = 0; i < 4; i++) await r.finishOldest()
    await Promise.all(waits)
    expect(r.order).toEqual(['quote 0', 'simulation 1', 'simulation 2', 'quote 1', 'quote 2'])
    expect(gate.running).toBe(1)
  })

  it("a head's burst of background work does not hold a quote back: one place stays free for it, and waiting quotes go first", async () => {
    const gate = new TaskGate({ places: 2, maxWaiting: 1_000, backgroundEvery: 4, maxBackgroundRunning: 1 })
    const r = recorder(gate)
    const burst = Array.from({ length: 100 }, (_, i) => r.enter(`re-simulation ${i}`, 'background'))
    await turn()
    // one background task runs; the second place is idle, kept for interactive work
    expect(gate.running).toBe(1)
    expect(gate.runningBackground).toBe(1)
    expect(gate.waitingByPriority.background).toBe(99)
    // a quote arriving in the middle of the burst enters at once
    await r.enter('quote 1', 'interactive')
    expect(r.order).toEqual(['re-simulation 0', 'quote 1'])
    // quotes queued behind both places: they take the places before the burst does, but for one
    // background task per four of them (quote 1 counts: it went in while the burst waited)
    const quotes = Array.from({ length: 8 }, (_, i) => r.enter(`quote ${i + 2}`, 'interactive'))
    for (let i = 0; i < 10; i++) await r.finishOldest()
    await Promise.all(quotes)
    expect(r.order.slice(2)).toEqual(['quote 2', 'quote 3', 'quote 4', 're-simulation 1', 'quote 5', 'quote 6', 'quote 7', 'quote 8', 're-simulation 2', 'quote 9'])
    // no quote left: the burst goes on, one at a time
    while (r.holding.length > 0) await r.finishOldest()
    await Promise.all(burst)
    expect(r.order.filter((n) => n.startsWith('re-simulation'))).toHaveLength(100)
    expect(gate.waiting).toBe(0)
    expect(gate.running).toBe(0)
  })

  it('background work is not starved by a steady stream of quotes: it gets one place per backgroundEvery quotes', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 100, backgroundEvery: 3 })
    const r = recorder(gate)
    await r.enter('quote 0', 'interactive')
    const plan = r.enter('plan', 'background')
    // the stream: a new quote always waits whenever a place frees
    let next = 1
    const quotes: Array<Promise<void>> = []
    for (let i = 0; i < 3; i++) quotes.push(r.enter(`quote ${next++}`, 'interactive'))
    for (let round = 0; round < 4; round++) {
      quotes.push(r.enter(`quote ${next++}`, 'interactive'))
      await r.finishOldest()
    }
    await plan
    expect(r.order).toEqual(['quote 0', 'quote 1', 'quote 2', 'quote 3', 'plan'])
  })

  it('by default background work takes every place when no quote waits; a quote arriving then waits for the first of them to finish, not for the burst', async () => {
    const wide = new TaskGate({ places: 2, maxWaiting: 100 })
    expect(wide.maxBackgroundRunning).toBe(2)
    const w = recorder(wide)
    const burst = Array.from({ length: 20 }, (_, i) => w.enter(`re-simulation ${i}`, 'background'))
    await turn()
    expect(wide.runningBackground).toBe(2)
    const quote = w.enter('quote', 'interactive')
    await w.finishOldest()
    await quote
    expect(w.order).toEqual(['re-simulation 0', 're-simulation 1', 'quote'])
    while (w.holding.length > 0) await w.finishOldest()
    await Promise.all(burst)

    const gate = new TaskGate({ places: 1, maxWaiting: 10 })
    expect(gate.maxBackgroundRunning).toBe(1)
    const r = recorder(gate)
    await r.enter('plan 1', 'background')
    const plan2 = r.enter('plan 2', 'background')
    await r.finishOldest()
    await plan2
    expect(r.order).toEqual(['plan 1', 'plan 2'])
  })

  it('urgent work is not held by the background bound, and goes before a waiting background task', async () => {
    const gate = new TaskGate({ places: 2, maxWaiting: 10, maxBackgroundRunning: 1 })
    const r = recorder(gate)
    await r.enter('re-simulation 1', 'background')
    const waiting = r.enter('re-simulation 2', 'background')
    await r.enter('first simulation', 'urgent')
    expect(gate.running).toBe(2)
    await r.finishOldest()
    await waiting
    expect(r.order).toEqual(['re-simulation 1', 'first simulation', 're-simulation 2'])
  })

  it('refuses a task beyond maxWaiting (over every line) at once, and a waiter whose signal aborts leaves its line with its reason', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 2 })
    const r = recorder(gate)
    await r.enter('quote 0', 'interactive')
    const controller = new AbortController()
    const waiting = r.enter('re-simulation', 'background', controller.signal)
    const quote = r.enter('quote 1', 'interactive')
    await expect(gate.enter('urgent', undefined, full)).rejects.toThrow('full')
    controller.abort(new Error('waited too long'))
    await expect(waiting).rejects.toThrow('waited too long')
    expect(gate.waitingByPriority).toEqual({ urgent: 0, interactive: 1, background: 0 })
    // its place was never taken: the quote gets it when the holder leaves
    await r.finishOldest()
    await quote
    expect(r.order).toEqual(['quote 0', 'quote 1'])
    expect(gate.running).toBe(1)
    // an already aborted signal is refused without waiting
    await expect(gate.enter('interactive', AbortSignal.abort(new Error('gone')), full)).rejects.toThrow('gone')
  })

  it('an aborted background waiter does not count against the share of the others', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 10, backgroundEvery: 1 })
    const r = recorder(gate)
    await r.enter('quote 0', 'interactive')
    const controller = new AbortController()
    const gone = r.enter('plan 1', 'background', controller.signal)
    const quote = r.enter('quote 1', 'interactive')
    const plan2 = r.enter('plan 2', 'background')
    controller.abort(new Error('its head moved'))
    await expect(gone).rejects.toThrow('its head moved')
    await r.finishOldest()
    await r.finishOldest()
    await Promise.all([quote, plan2])
    expect(r.order).toEqual(['quote 0', 'quote 1', 'plan 2'])
  })

  it('close() refuses every waiter of every line', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 5 })
    await gate.enter('interactive', undefined, full)
    const a = gate.enter('interactive', undefined, full)
    const b = gate.enter('urgent', undefined, full)
    const c = gate.enter('background', undefined, full)
    gate.close(new Error('closing'))
    await expect(a).rejects.toThrow('closing')
    await expect(b).rejects.toThrow('closing')
    await expect(c).rejects.toThrow('closing')
    expect(gate.waiting).toBe(0)
  })

  it('refuses bounds that are not positive integers', () => {
    expect(() => new TaskGate({ places: 0, maxWaiting: 1 })).toThrow(RangeError)
    expect(() => new TaskGate({ places: 1, maxWaiting: 1, backgroundEvery: 0 })).toThrow('backgroundEvery must be a positive integer')
    expect(() => new TaskGate({ places: 2, maxWaiting: 1, maxBackgroundRunning: 1.5 })).toThrow('maxBackgroundRunning must be a positive integer')
    expect(() => new TaskGate({ places: 1, maxWaiting: 1, interactiveMaxWaitMs: 0 })).toThrow('interactiveMaxWaitMs must be a positive integer')
    expect(() => new TaskGate({ places: 1, maxWaiting: 1, interactiveMaxWaitMs: 2.5 })).toThrow('interactiveMaxWaitMs must be a positive integer')
  })

  it('an interactive task that finds no place within interactiveMaxWaitMs leaves its line with the late error; urgent and background tasks wait on', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 10, interactiveMaxWaitMs: 40 })
    const r = recorder(gate)
    // admitted at once: no bound applies to a task that never waited
    await r.enter('quote 0', 'interactive')
    const late = (ms: number): Error => new Error(`late after ${ms} ms`)
    const quote1 = gate.enter('interactive', undefined, full, late)
    const simulation = r.enter('simulation', 'urgent')
    const replan = r.enter('re-simulation', 'background')
    expect(gate.waiting).toBe(3)
    await expect(quote1).rejects.toThrow('late after 40 ms')
    expect(gate.waitingByPriority).toEqual({ urgent: 1, interactive: 0, background: 1 })
    // the others were not given up: they go in as places free, long after the bound
    await new Promise((resolve) => setTimeout(resolve, 60))
    await r.finishOldest()
    await r.finishOldest()
    await Promise.all([simulation, replan])
    expect(r.order).toEqual(['quote 0', 'simulation', 're-simulation'])
    expect(gate.running).toBe(1)
  })

  it('an interactive task let in before its bound is not refused afterwards', async () => {
    const gate = new TaskGate({ places: 1, maxWaiting: 10, interactiveMaxWaitMs: 30 })
    const r = recorder(gate)
    await r.enter('quote 0', 'interactive')
    const quote1 = r.enter('quote 1', 'interactive')
    await r.finishOldest()
    await quote1
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(r.order).toEqual(['quote 0', 'quote 1'])
    expect(gate.running).toBe(1)
  })
})
