/**
 * The backrun engine of the main thread when WORKERS > 0: eth_backrun (`backrun()`) is searched
 * by a worker of the pool, on the block that was the main thread's latest when the request arrived,
 * and answered exactly as in-process (the same engine runs in the worker; its errors, such as an
 * ExecutionBudgetError, come back as the same class).
 *
 * It is still a BackrunEngine over the main thread's state (`searchAfter` works on states built on
 * this thread), but with the pool the dispatcher's planning runs in the workers too
 * (pooled-backrun-planner.ts), whose engines count its searches. `stats()` sums this thread's
 * counters and the workers', as /metrics always did.
 *
 * A request whose worker hung or died is answered with JSON-RPC -32603 and a message and `data`
 * that say so (`{ reason: 'worker_hung' | 'worker_crashed' | 'worker_busy' | 'worker_closed' }`),
 * never a connection left waiting.
 */
import { BackrunEngine, type BackrunEngineOptions, type BackrunEngineStats } from '../backrun/backrun-engine.ts'
import type { BackrunFound, BackrunRequest } from '../backrun/types.ts'
import { JsonRpcError, RPC_INTERNAL_ERROR } from '../server/jsonrpc/errors.ts'
import type { WorkerPool } from './worker-pool.ts'
import { WorkerTaskError } from './worker-task-error.ts'

export class PooledBackrunEngine extends BackrunEngine {
  constructor(
    options: BackrunEngineOptions,
    private readonly pool: WorkerPool,
  ) {
    super(options)
  }

  override async backrun(request: BackrunRequest): Promise<BackrunFound | null> {
    try {
      return await this.pool.run('backrun', request)
    } catch (err) {
      if (err instanceof WorkerTaskError) {
        throw new JsonRpcError(RPC_INTERNAL_ERROR, `the backrun search could not finish: ${err.message}`, { data: { reason: `worker_${err.failure}` }, cause: err })
      }
      throw err
    }
  }

  /** eth_backrun's counters (the workers') and the dispatcher's (this thread's) together */
  override stats(): BackrunEngineStats {
    const own = super.stats()
    const workers = this.pool.backrunStats()
    return {
      requests: own.requests + workers.requests,
      userCallReverted: own.userCallReverted + workers.userCallReverted,
      found: own.found + workers.found,
      verificationMisses: own.verificationMisses + workers.verificationMisses,
    }
  }
}
