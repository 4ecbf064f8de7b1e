/**
 * The two bounds of one simulation or backrun plan: how long it may wait for a place to run
 * (queueWaitMs: the dispatcher's own plan slots, the worker pool's queue) and how long it may run
 * once started (prepareTimeoutMs). They are counted apart because in the worker pool a wall-clock
 * bound counted from the request ran out while the work only waited (bench:flow, issue 13): a
 * saturated pool then turned every plan into a 2 s timeout, and a simulation waiting behind quotes
 * went out after its block. A wait past its bound fails as busy, a run past its bound as too long;
 * either aborts `signal`, which the port hands to the work (a queued task leaves the queue, a
 * running one stops at its next check).
 */
import { BaseError } from '../../primitives/base-error.ts'
import type { TaskClock } from '../dispatcher-ports.ts'

/**
 * - `busy`: it waited longer than queueWaitMs for a place to run
 * - `timeout`: it ran longer than prepareTimeoutMs
 */
export class PrepareBoundError extends BaseError {
  override readonly name = 'PrepareBoundError'

  constructor(
    readonly bound: 'busy' | 'timeout',
    message: string,
  ) {
    super(message)
  }
}

export interface PrepareBounds {
  /** the longest wait for a place to run, ms */
  queueWaitMs: number
  /** the longest run once started, ms */
  runMs: number
}

export class PrepareClock {
  private readonly controller = new AbortController()
  private timer: NodeJS.Timeout | undefined
  private phase: 'created' | 'queued' | 'running' | 'ended' = 'created'
  private readonly cancelled: (() => void) | undefined

  /** `cancel`: the submission's own end (finished, stopping): aborts the work with its reason */
  constructor(
    private readonly what: string,
    private readonly bounds: PrepareBounds,
    private readonly cancel?: AbortSignal,
  ) {
    if (cancel !== undefined) {
      this.cancelled = () => this.end(cancel.reason instanceof Error ? cancel.reason : new Error(`${what} was cancelled`))
      if (cancel.aborted) this.cancelled()
      else cancel.addEventListener('abort', this.cancelled, { once: true })
    }
  }

  /** aborted, with a PrepareBoundError or the cancel reason, when the work must stop */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** the work waits for a place to run: bounded by queueWaitMs from now (while it already waits, the first wait's start stands) */
  queued(): void {
    if (this.phase !== 'created') return
    this.phase = 'queued'
    this.arm(this.bounds.queueWaitMs, () => new PrepareBoundError('busy', `${this.what} waited ${this.bounds.queueWaitMs} ms for a place to run (the dispatcher's queue wait bound, DISPATCHER_QUEUE_WAIT_MS): busy`))
  }

  /** the work runs now: bounded by prepareTimeoutMs from now */
  started(): void {
    if (this.phase === 'running' || this.phase === 'ended') return
    this.phase = 'running'
    this.arm(this.bounds.runMs, () => new PrepareBoundError('timeout', `${this.what} took longer than ${this.bounds.runMs} ms`))
  }

  /**
   * Runs `work` with this clock's signal; rejects as soon as a bound passes (or the cancel signal
   * aborts), whether or not the work has stopped yet. The clock stops when it settles.
   */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const signal = this.controller.signal
    const aborted = new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason)
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
    // never an unhandled rejection when the work settles first
    aborted.catch(() => undefined)
    try {
      return await Promise.race([work(), aborted])
    } finally {
      this.dispose()
    }
  }

  /**
   * Calls a port with a TaskClock of its own: unless the port says it queues (queued() before its
   * first await), it runs the work at once and the run bound starts now. A wait already counting
   * (the dispatcher's own slots) goes on counting while the port queues.
   */
  call<T>(port: (clock: TaskClock) => Promise<T>): Promise<T> {
    let queuedByPort = false
    const promise = port({
      queued: () => {
        queuedByPort = true
        this.queued()
      },
      started: () => this.started(),
    })
    if (!queuedByPort) this.started()
    return promise
  }

  private arm(ms: number, error: () => Error): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.end(error()), ms)
  }

  private end(reason: Error): void {
    if (this.phase === 'ended') return
    this.dispose()
    this.controller.abort(reason)
  }

  private dispose(): void {
    this.phase = 'ended'
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.cancelled !== undefined) this.cancel?.removeEventListener('abort', this.cancelled)
  }
}
