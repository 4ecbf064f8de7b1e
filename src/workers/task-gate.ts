/**
 * The worker pool's own queue, in front of piscina: at most `places` tasks are handed to piscina at
 * once (one per worker), the rest wait here, the urgent ones first. Why not piscina's `taskQueue`
 * option (a custom queue): piscina 5 puts every task that carries an abort signal, and every task of
 * this pool does, into an internal "skip queue" of its own that it drains before the custom queue,
 * in arrival order. A priority queue given to piscina would never see those tasks.
 *
 * Priorities (see WorkerPool.run): the dispatcher's simulations are `urgent`: a user's own bundle
 * waits for its simulation before it goes out, and under a burst of quotes it waited longer than a
 * block ("blockNumber 0x2 is not in the future", BENCHMARKS.md issue 13). Everything else (quotes,
 * eth_backrun, backrun plans) is `normal`, first come first served. A simulation is a few ms, and
 * the dispatcher bounds how many it runs per block (MAX_RESENDS_PER_BLOCK), so urgent tasks cannot
 * starve the others for long.
 *
 * Bounds: `maxWaiting` tasks wait at most (one more is refused at once); a waiting task whose
 * signal aborts leaves the line with the signal's reason. Knowing when a task leaves the line is
 * what lets a caller count its run time from its start (the dispatcher's TaskClock).
 */
export type TaskPriority = 'urgent' | 'normal'

interface Waiter {
  go: () => void
  leave: () => void
  refuse: (error: Error) => void
}

export class TaskGate {
  private active = 0
  private readonly urgent: Waiter[] = []
  private readonly normal: Waiter[] = []

  constructor(
    private readonly places: number,
    private readonly maxWaiting: number,
  ) {}

  /** tasks waiting for a place */
  get waiting(): number {
    return this.urgent.length + this.normal.length
  }

  /** tasks holding a place */
  get running(): number {
    return this.active
  }

  /**
   * Waits for a place (at once when one is free and nobody waits); resolves holding it, to be given
   * back with leave(). Rejects with `full()` when maxWaiting tasks already wait, or with the
   * signal's reason when it aborts first.
   */
  enter(priority: TaskPriority, signal: AbortSignal | undefined, full: () => Error): Promise<void> {
    if (this.active < this.places && this.waiting === 0) {
      this.active++
      return Promise.resolve()
    }
    if (this.waiting >= this.maxWaiting) return Promise.reject(full())
    const line = priority === 'urgent' ? this.urgent : this.normal
    return new Promise<void>((resolve, reject) => {
      const reason = (): Error => (signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for a worker'))
      if (signal?.aborted === true) {
        reject(reason())
        return
      }
      const waiter: Waiter = {
        go: () => {
          signal?.removeEventListener('abort', waiter.leave)
          this.active++
          resolve()
        },
        leave: () => {
          const index = line.indexOf(waiter)
          if (index >= 0) line.splice(index, 1)
          reject(reason())
        },
        refuse: (error) => {
          signal?.removeEventListener('abort', waiter.leave)
          reject(error)
        },
      }
      line.push(waiter)
      signal?.addEventListener('abort', waiter.leave, { once: true })
    })
  }

  /** Refuses every waiting task with `error` (the pool is closing). */
  close(error: Error): void {
    for (const waiter of this.urgent.splice(0).concat(this.normal.splice(0))) waiter.refuse(error)
  }

  /** Gives a place back: the next waiter, urgent ones first, takes it. */
  leave(): void {
    this.active--
    while (this.active < this.places) {
      const next = this.urgent.shift() ?? this.normal.shift()
      if (next === undefined) return
      next.go()
    }
  }
}
