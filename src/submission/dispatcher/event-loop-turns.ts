import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/** Pacing of {@link EventLoopTurns} by the event loop's busy share (see its comment). */
export interface TurnPacing {
  /** the share of the event loop's wall time (busy / busy + idle) above which the next turn waits, (0, 1]; 1: never waits */
  maxLoopShare: number
  /** the window the share is measured over, ms (the last one to two of them). Default 20. */
  windowMs?: number
  /** the longest one wait, ms. Default 5. */
  maxPauseMs?: number
}

export const TURN_PACING_DEFAULTS = { windowMs: 20, maxPauseMs: 5 } as const

/**
 * Turns of the event loop for the dispatcher's per-head work, so acknowledgements interleave with it.
 *
 * At a new head every open submission (thousands under load) takes its step at once, and a group
 * commit resolves the writes of hundreds of them together. Each continuation is short, but they
 * are promise continuations: they run back to back as microtasks, and the event loop polls for
 * I/O (an acknowledgement's request, its fsync's completion) only once all of them are done. Under
 * bench:submit that made one synchronous run of hundreds of ms per head: the acknowledgements' p99.
 * Nor does `await setImmediate()` from many submissions help: every immediate queued before the
 * check phase runs in that one phase, again with no I/O between them.
 *
 * `next()` resolves in a later turn of the loop, in FIFO order, at most `perTurn` waiters per
 * turn: between two turns the loop polls I/O, so a pending acknowledgement waits for at most
 * `perTurn` submissions' steps, not for all of them. Bounded by what waits: one resolver per
 * submission step or send, and the dispatcher holds at most its queue's capacity of submissions.
 *
 * Paced by the event loop's busy share (`maxLoopShare` < 1): one turn after the other, a head's
 * burst still kept the loop busy back to back for a second or more (each step's simulation result,
 * relay answer and lifecycle write come back as I/O of later turns), and an acknowledgement needs
 * the loop three or four times (its request, its duplicate check, its fsynced batch, its reply):
 * each time it waited for a whole turn's worth of that work. Beyond the share, measured over the
 * last one to two `windowMs`, the next waiter is let through only after a timer long enough to
 * bring the share back to the bound (at most `maxPauseMs`, so the dispatcher always goes on: at
 * least `perTurn` waiters per `maxPauseMs`), and the loop in between is idle for what arrives.
 */
export class EventLoopTurns {
  private waiting: Array<() => void> = []
  private first = 0
  private scheduled = false
  private readonly pacing: Required<TurnPacing>
  /** the event loop's counters at the start of the window before the current one, and of the current one */
  private previousMark: EventLoopUtilization
  private mark: EventLoopUtilization
  private pauses = 0

  /**
   * @param perTurn waiters let through per turn of the event loop (a positive integer)
   * @param pacing the event loop's busy share beyond which turns wait; default none (maxLoopShare 1)
   * @throws RangeError for a perTurn or a pacing setting out of range
   */
  constructor(
    private readonly perTurn = 1,
    pacing: TurnPacing = { maxLoopShare: 1 },
  ) {
    if (!Number.isSafeInteger(perTurn) || perTurn < 1) throw new RangeError(`EventLoopTurns: perTurn must be a positive integer, got ${perTurn}`)
    this.pacing = { ...TURN_PACING_DEFAULTS, ...pacing }
    const { maxLoopShare, windowMs, maxPauseMs } = this.pacing
    if (!(maxLoopShare > 0 && maxLoopShare <= 1)) throw new RangeError(`EventLoopTurns: maxLoopShare must be in (0, 1], got ${maxLoopShare}`)
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new RangeError(`EventLoopTurns: windowMs must be a positive integer, got ${windowMs}`)
    if (!Number.isSafeInteger(maxPauseMs) || maxPauseMs < 1) throw new RangeError(`EventLoopTurns: maxPauseMs must be a positive integer, got ${maxPauseMs}`)
    this.mark = performance.eventLoopUtilization()
    this.previousMark = this.mark
  }

  /** turns that waited for a timer because the loop was busier than maxLoopShare, since start */
  get pausedTurns(): number {
    return this.pauses
  }

  /** Waiters not let through yet. */
  get pending(): number {
    return this.waiting.length - this.first
  }

  /** Resolves in a later turn of the event loop, after the I/O callbacks that were ready. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve)
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.release)
      }
    })
  }

  private readonly release = (): void => {
    this.scheduled = false
    for (let i = 0; i < this.perTurn && this.first < this.waiting.length; i++) this.waiting[this.first++]()
    if (this.first === this.waiting.length) {
      this.waiting = []
      this.first = 0
      return
    }
    // compact now and then: the array is a queue read from the front
    if (this.first >= 1024) {
      this.waiting = this.waiting.slice(this.first)
      this.first = 0
    }
    this.scheduled = true
    const pause = this.pauseMs()
    if (pause > 0) {
      this.pauses++
      setTimeout(this.release, pause)
      return
    }
    // queued during the check phase: runs in the next turn, after the poll phase's I/O
    setImmediate(this.release)
  }

  /** how long the next turn waits: 0 while the loop's busy share is within the bound */
  private pauseMs(): number {
    const { maxLoopShare, windowMs, maxPauseMs } = this.pacing
    if (maxLoopShare >= 1) return 0
    const current = performance.eventLoopUtilization(this.mark)
    if (current.idle + current.active >= windowMs) {
      this.previousMark = this.mark
      this.mark = performance.eventLoopUtilization()
    }
    // the last one to two windows: never a share read from a window just begun
    const since = performance.eventLoopUtilization(this.previousMark)
    if (since.utilization <= maxLoopShare) return 0
    // the wait that brings the share back to the bound, were the loop idle meanwhile
    const wait = since.active / maxLoopShare - (since.active + since.idle)
    return Math.min(maxPauseMs, Math.max(1, Math.ceil(wait)))
  }
}
