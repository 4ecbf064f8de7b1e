/**
 * A task the pool could not finish, through no fault the engine reported: its worker hung (its
 * event loop stopped turning for longer than the execution budget allows: a contract that holds the
 * thread where the budget cannot stop it) or crashed (it exited, ran out of heap), the pool is
 * overloaded or closing. The worker is replaced by the pool; what the client is told is the facades'
 * concern (pooled-quote-service.ts, pooled-backrun-engine.ts).
 */
import { BaseError } from '../primitives/base-error.ts'

/** hung: watchdog; crashed: the worker died; busy: the queue is full; closed: the pool is shutting down */
export type WorkerFailure = 'hung' | 'crashed' | 'busy' | 'closed'

export class WorkerTaskError extends BaseError<{ failure: WorkerFailure }> {
  override readonly name = 'WorkerTaskError'
  constructor(
    readonly failure: WorkerFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { details: { failure }, cause: options.cause })
  }
}
