/** The worker pool's own queue: one task per place, simulations (urgent) before the rest, bounded, left on abort. */
import { describe, expect, it } from 'vitest'
import { TaskGate } from '../../src/workers/task-gate.ts'

const full = (): Error => new Error('full')

describe('TaskGate', () => {
  it('hands out its places at once, then lets the urgent waiters in before the normal ones, each line in order', async () => {
    const gate = new TaskGate(1, 10)
    const order: string[] = []
    await gate.enter('normal', undefined, full)
    const waits = [
      gate.enter('normal', undefined, full).then(() => order.push('quote 1')),
      gate.enter('normal', undefined, full).then(() => order.push('quote 2')),
      gate.enter('urgent', undefined, full).then(() => order.push('simulation 1')),
      gate.enter('urgent', undefined, full).then(() => order.push('simulation 2')),
    ]
    expect(gate.waiting).toBe(4)
    for (let i = 0; i < 4; i++) {
      gate.leave()
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all(waits)
    expect(order).toEqual(['simulation 1', 'simulation 2', 'quote 1', 'quote 2'])
    expect(gate.running).toBe(1)
  })

  it('refuses a task beyond maxWaiting at once, and a waiter whose signal aborts leaves the line with its reason', async () => {
    const gate = new TaskGate(1, 1)
    await gate.enter('normal', undefined, full)
    const controller = new AbortController()
    const waiting = gate.enter('urgent', controller.signal, full)
    await expect(gate.enter('urgent', undefined, full)).rejects.toThrow('full')
    controller.abort(new Error('waited too long'))
    await expect(waiting).rejects.toThrow('waited too long')
    expect(gate.waiting).toBe(0)
    // its place was never taken: the next one gets it when the holder leaves
    const next = gate.enter('normal', undefined, full)
    gate.leave()
    await next
    expect(gate.running).toBe(1)
  })

  it('close() refuses every waiter', async () => {
    const gate = new TaskGate(1, 5)
    await gate.enter('normal', undefined, full)
    const a = gate.enter('normal', undefined, full)
    const b = gate.enter('urgent', undefined, full)
    gate.close(new Error('closing'))
    await expect(a).rejects.toThrow('closing')
    await expect(b).rejects.toThrow('closing')
    expect(gate.waiting).toBe(0)
  })
})
