/** Limiter: at most `max` runs at once, FIFO; a waiter whose signal aborts leaves the line with the signal's reason. */
import { describe, expect, it } from 'vitest'

import { Limiter } from '../../src/submission/limiter.ts'

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

describe('Limiter', () => {
  it('runs at most max at once, the rest in order', async () => {
    const limiter = new Limiter(1)
    const order: string[] = []
    const first = gate()
    const a = limiter.run(async () => {
      order.push('a')
      await first.promise
    })
    const b = limiter.run(async () => {
      order.push('b')
    })
    const c = limiter.run(async () => {
      order.push('c')
    })
    await Promise.resolve()
    expect(order).toEqual(['a'])
    first.open()
    await Promise.all([a, b, c])
    expect(order).toEqual(['a', 'b', 'c'])
  })

  it('a waiter whose signal aborts leaves the line at once with its reason; the others keep their turn', async () => {
    const limiter = new Limiter(1)
    const first = gate()
    const ran: string[] = []
    const a = limiter.run(() => first.promise)
    const controller = new AbortController()
    const b = limiter.run(async () => {
      ran.push('b')
    }, controller.signal)
    const c = limiter.run(async () => {
      ran.push('c')
    })
    controller.abort(new Error('simulation took longer than 2000 ms'))
    await expect(b).rejects.toThrow('simulation took longer than 2000 ms')
    first.open()
    await Promise.all([a, c])
    expect(ran).toEqual(['c'])
  })

  it('an already aborted signal is refused when it would wait, run when there is room', async () => {
    const limiter = new Limiter(1)
    const aborted = AbortSignal.abort('gone')
    await expect(limiter.run(async () => 'ran', aborted)).resolves.toBe('ran')
    const first = gate()
    const a = limiter.run(() => first.promise)
    await expect(limiter.run(async () => 'ran', aborted)).rejects.toThrow('aborted while waiting for its turn')
    first.open()
    await a
  })
})
