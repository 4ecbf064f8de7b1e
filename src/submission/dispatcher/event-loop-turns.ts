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
 * Two lanes. `next()` is for work not started yet (a submission's step for the newest head);
 * `resume()` is for work already under way (the simulation, the send, the plan of a step that has
 * read its head and chosen its target block), and goes before every `next()`. With one FIFO, a step
 * that yielded mid-way went behind every other open submission's step start, once for its simulation
 * and once for its send: with a pass over all of them longer than a block (a starved replica, issue
 * 10's kill test), every send arrived for a block already built and was refused, nothing landed, and
 * the next head brought as much work again. With the lanes a started step ends within a few turns,
 * whatever the number of submissions waiting to start.
 */
export class EventLoopTurns {
  private readonly fresh = new Lane()
  private readonly resumed = new Lane()
  private scheduled = false

  /** @param perTurn waiters let through per turn of the event loop (a positive integer) */
  constructor(private readonly perTurn = 1) {
    if (!Number.isSafeInteger(perTurn) || perTurn < 1) throw new RangeError(`EventLoopTurns: perTurn must be a positive integer, got ${perTurn}`)
  }

  /** Waiters not let through yet, both lanes. */
  get pending(): number {
    return this.fresh.size + this.resumed.size
  }

  /** Resolves in a later turn of the event loop, after the I/O callbacks that were ready, and after every resume() waiting. */
  next(): Promise<void> {
    return this.wait(this.fresh)
  }

  /** As next(), but ahead of every next() waiting: for work already under way (see the module comment). */
  resume(): Promise<void> {
    return this.wait(this.resumed)
  }

  private wait(lane: Lane): Promise<void> {
    return new Promise<void>((resolve) => {
      lane.push(resolve)
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.release)
      }
    })
  }

  private readonly release = (): void => {
    this.scheduled = false
    for (let i = 0; i < this.perTurn; i++) {
      const resolve = this.resumed.shift() ?? this.fresh.shift()
      if (resolve === undefined) break
      resolve()
    }
    if (this.pending === 0) return
    this.scheduled = true
    // queued during the check phase: runs in the next turn, after the poll phase's I/O
    setImmediate(this.release)
  }
}

/** A FIFO of resolvers read from the front (an array with a moving start, compacted now and then). */
class Lane {
  private waiting: Array<() => void> = []
  private first = 0

  get size(): number {
    return this.waiting.length - this.first
  }

  push(resolve: () => void): void {
    this.waiting.push(resolve)
  }

  shift(): (() => void) | undefined {
    if (this.first === this.waiting.length) return undefined
    const resolve = this.waiting[this.first++]
    if (this.first === this.waiting.length) {
      this.waiting = []
      this.first = 0
    } else if (this.first >= 1024) {
      this.waiting = this.waiting.slice(this.first)
      this.first = 0
    }
    return resolve
  }
}
