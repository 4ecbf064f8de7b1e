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
 */
export class EventLoopTurns {
  private waiting: Array<() => void> = []
  private first = 0
  private scheduled = false

  /** @param perTurn waiters let through per turn of the event loop (a positive integer) */
  constructor(private readonly perTurn = 1) {
    if (!Number.isSafeInteger(perTurn) || perTurn < 1) throw new RangeError(`EventLoopTurns: perTurn must be a positive integer, got ${perTurn}`)
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
    // queued during the check phase: runs in the next turn, after the poll phase's I/O
    setImmediate(this.release)
  }
}
