/**
 * The worker pool's own queue, in front of piscina: at most `places` tasks are handed to piscina at
 * once (one per worker), the rest wait here in three lines. Why not piscina's `taskQueue` option
 * (a custom queue): piscina 5 puts every task that carries an abort signal, and every task of this
 * pool does, into an internal "skip queue" of its own that it drains before the custom queue, in
 * arrival order. A priority queue given to piscina would never see those tasks.
 *
 * Lines (see WorkerPool.run for who goes where):
 * - `urgent`: the first simulation of a newly accepted submission. Its user's own bundle waits for
 *   it before it goes out for the next block, and under a burst of quotes it waited longer than a
 *   block ("blockNumber 0x2 is not in the future", BENCHMARKS.md issue 13). Always first. Its rate
 *   is the rate of new submissions (one each), so it cannot hold the others for long.
 * - `interactive`: quotes and eth_backrun, a partner waiting on the answer. First come first served.
 * - `background`: the dispatcher's work at a head, re-simulations and backrun plans of every open
 *   submission (a block's arrivals: ~150 tasks at 12.5 submissions/s). Until the eleventh session
 *   its re-simulations were `urgent`: each head's burst went ahead of every waiting quote and
 *   eth_backrun, and the requests due just after a head waited for the whole burst (bench:soak's
 *   quote p99 0.6-1.9 s at 50 requests/s against ~20 ms without submissions). Now it is interleaved:
 *   - while interactive and background tasks both wait, one background task goes after every
 *     `backgroundEvery` interactive ones (a weighted share: background work is never starved by a
 *     steady stream of quotes, nor does it hold the quotes back);
 *   - at most `maxBackgroundRunning` background tasks hold places at once (by default all the
 *     places: with no quote waiting, the dispatcher's work keeps every worker, as before). Set to
 *     one fewer than the places, a worker is always left for a quote that arrives in the middle of
 *     a burst, which then waits for no background task at all; by default it waits for at most
 *     the first of the running ones to finish (a simulation or a plan: milliseconds), never for
 *     the burst. The bound halves the dispatcher's throughput on two workers when nothing else
 *     runs, so it is not the default.
 *   A background task waiting too long is the dispatcher's to bound (its queue-wait bound,
 *   DISPATCHER_QUEUE_WAIT_MS): a re-simulation past it fails as busy and the user's bundle goes
 *   out again on its last verdict; a plan past it is planned again at the next head.
 *
 * Bounds: `maxWaiting` tasks wait at most over the three lines (one more is refused at once); a
 * waiting task whose signal aborts leaves its line with the signal's reason. Knowing when a task
 * leaves the line is what lets a caller count its run time from its start (the dispatcher's TaskClock).
 */
export type TaskPriority = 'urgent' | 'interactive' | 'background'

export interface TaskGateOptions {
  /** tasks holding a place at once (the workers) */
  places: number
  /** tasks waiting at most, over every line */
  maxWaiting: number
  /** while both wait, interactive tasks let in per background task (default DEFAULT_BACKGROUND_EVERY) */
  backgroundEvery?: number
  /** background tasks holding places at once at most (default: places) */
  maxBackgroundRunning?: number
  /**
   * ms an interactive task may wait for a place; past it, it leaves its line with enter()'s
   * `late` error (default: no bound). Why: under overload (bench:soak at 100 requests/s on a
   * loaded machine) quotes waited 46 s on average here, longer than their clients' 30 s timeout,
   * so the pool computed answers nobody read while newer requests queued behind them.
   */
  interactiveMaxWaitMs?: number
}

/** TaskGateOptions.backgroundEvery by default: a quote waits for at most one background task per four quotes ahead of it */
export const DEFAULT_BACKGROUND_EVERY = 4

interface Waiter {
  go: () => void
  leave: () => void
  refuse: (error: Error) => void
}

export class TaskGate {
  private active = 0
  private activeBackground = 0
  /** interactive tasks let in since the last background one while a background one waited */
  private interactiveInARow = 0
  private readonly lines: Record<TaskPriority, Waiter[]> = { urgent: [], interactive: [], background: [] }
  private readonly places: number
  private readonly maxWaiting: number
  readonly backgroundEvery: number
  readonly maxBackgroundRunning: number
  readonly interactiveMaxWaitMs: number | undefined

  /** @throws RangeError for a bound that is not a positive integer */
  constructor(options: TaskGateOptions) {
    const positive = (name: string, value: number): number => {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`TaskGate: ${name} must be a positive integer, got ${value}`)
      return value
    }
    this.places = positive('places', options.places)
    this.maxWaiting = positive('maxWaiting', options.maxWaiting)
    this.backgroundEvery = positive('backgroundEvery', options.backgroundEvery ?? DEFAULT_BACKGROUND_EVERY)
    this.maxBackgroundRunning = positive('maxBackgroundRunning', options.maxBackgroundRunning ?? this.places)
    this.interactiveMaxWaitMs = options.interactiveMaxWaitMs === undefined ? undefined : positive('interactiveMaxWaitMs', options.interactiveMaxWaitMs)
  }

  /** tasks waiting for a place */
  get waiting(): number {
    return this.lines.urgent.length + this.lines.interactive.length + this.lines.background.length
  }

  /** tasks waiting per line */
  get waitingByPriority(): Record<TaskPriority, number> {
    return { urgent: this.lines.urgent.length, interactive: this.lines.interactive.length, background: this.lines.background.length }
  }

  /** tasks holding a place */
  get running(): number {
    return this.active
  }

  /** background tasks holding a place */
  get runningBackground(): number {
    return this.activeBackground
  }

  /**
   * Waits for a place (at once when one is free and the rules let it in); resolves holding it, to
   * be given back with leave(priority). Rejects with `full()` when maxWaiting tasks already wait,
   * with the signal's reason when it aborts first, or, for an interactive task still waiting
   * after interactiveMaxWaitMs, with `late(ms)`.
   */
  enter(priority: TaskPriority, signal: AbortSignal | undefined, full: () => Error, late: (waitedMs: number) => Error = lateError): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal))
    if (this.waiting >= this.maxWaiting) return Promise.reject(full())
    const line = this.lines[priority]
    return new Promise<void>((resolve, reject) => {
      let settled = false
      let timer: NodeJS.Timeout | undefined
      const settle = (): void => {
        settled = true
        signal?.removeEventListener('abort', waiter.leave)
        if (timer !== undefined) clearTimeout(timer)
      }
      const leaveLine = (): void => {
        const index = line.indexOf(waiter)
        if (index >= 0) line.splice(index, 1)
      }
      const waiter: Waiter = {
        go: () => {
          settle()
          resolve()
        },
        leave: () => {
          settle()
          leaveLine()
          reject(abortReason(signal))
        },
        refuse: (error) => {
          settle()
          reject(error)
        },
      }
      line.push(waiter)
      signal?.addEventListener('abort', waiter.leave, { once: true })
      // in the line first, then let in by the same rule as every other: a task arriving to a free
      // place but behind the background bound, or behind others waiting, takes its turn
      this.admit()
      const maxWait = this.interactiveMaxWaitMs
      if (!settled && priority === 'interactive' && maxWait !== undefined) {
        timer = setTimeout(() => {
          if (settled) return
          leaveLine()
          waiter.refuse(late(maxWait))
        }, maxWait)
        // a waiting request alone must not keep the process alive
        timer.unref()
      }
    })
  }

  /** Refuses every waiting task with `error` (the pool is closing). */
  close(error: Error): void {
    const all = [...this.lines.urgent.splice(0), ...this.lines.interactive.splice(0), ...this.lines.background.splice(0)]
    for (const waiter of all) waiter.refuse(error)
  }

  /** Gives back the place a task of `priority` held: the next waiters by the rules take it. */
  leave(priority: TaskPriority): void {
    this.active--
    if (priority === 'background') this.activeBackground--
    this.admit()
  }

  /** Lets waiters in while places are free: urgent first, then interactive and background by the share and bound. */
  private admit(): void {
    while (this.active < this.places) {
      const priority = this.next()
      if (priority === undefined) return
      const waiter = this.lines[priority].shift() as Waiter
      this.active++
      if (priority === 'background') {
        this.activeBackground++
        this.interactiveInARow = 0
      } else if (priority === 'interactive' && this.lines.background.length > 0) {
        this.interactiveInARow++
      }
      waiter.go()
    }
  }

  /** the line whose first waiter goes next, undefined when none may */
  private next(): TaskPriority | undefined {
    if (this.lines.urgent.length > 0) return 'urgent'
    const interactive = this.lines.interactive.length > 0
    const background = this.lines.background.length > 0 && this.activeBackground < this.maxBackgroundRunning
    if (interactive && background) return this.interactiveInARow >= this.backgroundEvery ? 'background' : 'interactive'
    if (interactive) return 'interactive'
    if (background) return 'background'
    return undefined
  }
}

function lateError(waitedMs: number): Error {
  return new Error(`no place was free within ${waitedMs} ms`)
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for a worker')
}
