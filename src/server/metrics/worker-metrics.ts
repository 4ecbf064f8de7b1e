/**
 * Worker pool metrics (WORKERS > 0, src/workers): how many threads compute quotes and eth_backrun,
 * what waits for them, the workers the watchdog terminated or that died, the state reads they sent
 * to the main thread's state source, and the V8 heap they hold, read at scrape time. An operator
 * alerts on hung/crashed rising and on the queue, and reads the heap beside process RSS.
 */
import { Histogram, type Registry } from 'prom-client'
import { scrapedFamilies } from './registry.ts'

/**
 * What the pool reports (src/workers/worker-pool.ts WorkerPoolStats satisfies it); declared here so
 * the server does not import the worker layer, which sits above it (it answers with the server's
 * JSON-RPC errors).
 */
export interface WorkerPoolReadings {
  threads: number
  running: number
  queued: number
  completed: number
  hung: number
  crashed: number
  renewed: number
  remoteReads: number
  remoteBatches: number
  l1Hits: number
  l1Carried: number
  heapUsedBytes: number
}

/** One task's time, ms: waiting in the pool's queue, from dispatch to answer, and the worker's own part of that. */
export interface WorkerTaskTiming {
  kind: string
  waitMs: number
  runMs: number
  computeMs: number
}

/** What the task-time histograms read: the pool's timings as they come (worker-pool.ts onTaskTimed). */
export interface WorkerTaskTimings {
  onTaskTimed(listener: (timing: WorkerTaskTiming) => void): () => void
}

/** seconds: a quote's worker time is ~5-20 ms, a queue under a burst can hold it for a second */
const TASK_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

export function registerWorkerPoolMetrics(registry: Registry, pool: { stats(): WorkerPoolReadings } & Partial<WorkerTaskTimings>): void {
  const family = scrapedFamilies(registry)
  family({ name: 'worker_threads', help: 'Worker threads computing quotes and eth_backrun (WORKERS).', type: 'gauge' }, () => pool.stats().threads)
  family({ name: 'worker_tasks_running', help: 'Requests the workers are computing now.', type: 'gauge' }, () => pool.stats().running)
  family({ name: 'worker_tasks_queued', help: 'Requests waiting for a worker.', type: 'gauge' }, () => pool.stats().queued)
  family({ name: 'worker_tasks_completed_total', help: 'Requests the workers answered.', type: 'counter' }, () => pool.stats().completed)
  family({ name: 'worker_hung_total', help: 'Workers terminated by the watchdog (silent past EVM_MAX_MS + 1 s while holding a request) and replaced.', type: 'counter' }, () => pool.stats().hung)
  family({ name: 'worker_crashed_total', help: 'Requests lost with a worker that died (the worker was replaced).', type: 'counter' }, () => pool.stats().crashed)
  family({ name: 'worker_pool_renewals_total', help: "Times piscina left the pool short of workers (it stops replacing workers once one exits before it started) and a new set of WORKERS workers took over.", type: 'counter' }, () => pool.stats().renewed)
  family({ name: 'worker_remote_state_reads_total', help: "State reads the workers sent to the main thread's state source.", type: 'counter' }, () => pool.stats().remoteReads)
  family({ name: 'worker_remote_state_batches_total', help: 'Messages the state reads of the workers went in (reads of one block asked in one microtask turn share one).', type: 'counter' }, () => pool.stats().remoteBatches)
  family({ name: 'worker_state_l1_hits_total', help: "State reads answered by a worker's own per-block cache.", type: 'counter' }, () => pool.stats().l1Hits)
  family({ name: 'worker_state_l1_carried_total', help: "State entries the workers carried from a head's parent over to the head (on the devnet: every key the block did not change).", type: 'counter' }, () => pool.stats().l1Carried)
  if (pool.onTaskTimed !== undefined) registerTaskTimings(registry, pool.onTaskTimed.bind(pool))
  family({ name: 'worker_heap_used_bytes', help: 'V8 heap in use by the live workers, as of each one\'s last answer.', type: 'gauge' }, () => pool.stats().heapUsedBytes)
}

/**
 * Where a task's time goes, by kind (quote, backrun, simulate, plan): waiting for a worker, the
 * worker's computation, and the rest of its run (piscina's dispatch, the messages, this thread's
 * event loop getting to the answer): the split that says whether a slow answer queued, computed or
 * waited for the main thread.
 */
function registerTaskTimings(registry: Registry, onTaskTimed: WorkerTaskTimings['onTaskTimed']): void {
  const histogram = (name: string, help: string) => new Histogram({ name, help, labelNames: ['kind'], buckets: TASK_SECONDS_BUCKETS, registers: [registry] })
  const wait = histogram('worker_task_wait_seconds', "Time a task waited in the pool's queue for a worker, by kind.")
  const compute = histogram('worker_task_compute_seconds', 'Time a worker computed a task, by kind.')
  const overhead = histogram('worker_task_dispatch_seconds', "A task's run beyond the worker's computation (dispatch, messages, the main thread's event loop), by kind.")
  onTaskTimed((t) => {
    wait.observe({ kind: t.kind }, t.waitMs / 1000)
    compute.observe({ kind: t.kind }, t.computeMs / 1000)
    overhead.observe({ kind: t.kind }, Math.max(0, t.runMs - t.computeMs) / 1000)
  })
}
