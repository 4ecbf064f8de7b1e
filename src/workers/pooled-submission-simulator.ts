/**
 * The dispatcher's SubmissionSimulator when WORKERS > 0: the user's transactions are executed by a
 * worker of the pool, on the block that was the main thread's latest when the simulation was asked
 * for (as the in-process engineSubmissionSimulator takes `chain.latest()`), with the same code
 * (engine-simulator.ts runs in the worker), so the report is the same.
 *
 * The transactions cross as their raw signed bytes (hex) and are decoded again in the worker with
 * the same chain rules: a DecodedTransaction holds an ethereumjs object that structured clone
 * cannot carry. The worker's decode memo makes a re-simulation at every head a lookup; a first
 * decode costs one native sender recovery (~50 us, as src/tx/decode-transaction.ts measured it; not
 * re-measured across the thread boundary).
 *
 * The dispatcher's first simulations take at most `share` places in the pool at once, its
 * re-simulations at most `againShare` (the rest wait here, in order, each kind in its own line: a
 * head's burst of re-simulations never holds a new submission's first one). In the pool's queue a
 * first simulation goes before quotes, eth_backrun and plans (the user's own bundle waits for it
 * before it goes out); a re-simulation at a later head (`input.again`) is background work,
 * interleaved with quotes and eth_backrun (see task-gate.ts). The share keeps a block's arrivals
 * of first simulations from filling the pool's queue ahead of the plans at once, as before the
 * lines: with one per worker at most, a plan waiting in the background line can take a worker
 * between two of them (a plan waits DISPATCHER_QUEUE_WAIT_MS at most).
 *
 * The dispatcher's clock (TaskClock) is told that the simulation queues (here and in the pool) and
 * when a worker takes it: its wait is bounded by the dispatcher's queueWaitMs, its run by
 * prepareTimeoutMs from that moment. Its abort reaches the task: a task still waiting for a worker
 * is dropped from the queue, a running one is told to stop at its next check (see WorkerPool.run).
 * A worker that hung or died makes the simulation throw, with a message that says so: the
 * dispatcher records it as the submission's simulation error and forwards the submission anyway.
 */
import type { Limiter } from '../submission/limiter.ts'
import type { SimulationInput, SimulationReport, SubmissionSimulator } from '../submission/dispatcher-ports.ts'
import { throwIfAborted } from '../submission/engine-simulator.ts'
import type { WorkerPool } from './worker-pool.ts'
import { WorkerTaskError } from './worker-task-error.ts'

/** `share` and `againShare`: the dispatcher's places in the pool for first simulations and for re-simulations (see src/node/submission.ts) */
export function pooledSubmissionSimulator(pool: WorkerPool, share: Limiter, againShare: Limiter = share): SubmissionSimulator {
  return async (input: SimulationInput): Promise<SimulationReport> => {
    throwIfAborted(input.signal)
    // before the first await: the dispatcher's wait bound counts from here
    input.clock?.queued()
    const request = { id: input.id, kind: input.kind, rawTxs: input.rawTxs !== undefined ? [...input.rawTxs] : input.userTxs.map((tx) => tx.rawHex) }
    const run = (): Promise<SimulationReport> => {
      throwIfAborted(input.signal)
      return pool.run('simulate', request, pool.pinLatest(), { signal: input.signal, onStart: () => input.clock?.started(), priority: input.again === true ? 'background' : 'urgent' })
    }
    try {
      return await (input.again === true ? againShare : share).run(run, input.signal)
    } catch (err) {
      // no cause: the message already holds the pool's whole text, which the dispatcher's errorText would repeat
      if (err instanceof WorkerTaskError) throw new WorkerTaskError(err.failure, `the simulation could not finish: ${err.message}`)
      throw err
    }
  }
}
