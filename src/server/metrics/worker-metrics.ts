/**
 * Worker pool metrics (WORKERS > 0, src/workers): how many threads compute quotes and eth_backrun,
 * what waits for them, the workers the watchdog terminated or that died, the state reads they sent
 * to the main thread's state source, and the V8 heap they hold, read at scrape time. An operator
 * alerts on hung/crashed rising and on the queue, and reads the heap beside process RSS.
 */
import type { Registry } from 'prom-client'
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
  remoteReads: number
  remoteBatches: number
  l1Hits: number
  l1Carried: number
  heapUsedBytes: number
}

export function registerWorkerPoolMetrics(registry: Registry, pool: { stats(): WorkerPoolReadings }): void {
  const family = scrapedFamilies(registry)
  family({ name: 'worker_threads', help: 'Worker threads computing quotes and eth_backrun (WORKERS).', type: 'gauge' }, () => pool.stats().threads)
  family({ name: 'worker_tasks_running', help: 'Requests the workers are computing now.', type: 'gauge' }, () => pool.stats().running)
  family({ name: 'worker_tasks_queued', help: 'Requests waiting for a worker.', type: 'gauge' }, () => pool.stats().queued)
  family({ name: 'worker_tasks_completed_total', help: 'Requests the workers answered.', type: 'counter' }, () => pool.stats().completed)
  family({ name: 'worker_hung_total', help: 'Workers terminated by the watchdog (silent past EVM_MAX_MS + 1 s while holding a request) and replaced.', type: 'counter' }, () => pool.stats().hung)
  family({ name: 'worker_crashed_total', help: 'Requests lost with a worker that died (the worker was replaced).', type: 'counter' }, () => pool.stats().crashed)
  family({ name: 'worker_remote_state_reads_total', help: "State reads the workers sent to the main thread's state source.", type: 'counter' }, () => pool.stats().remoteReads)
  family({ name: 'worker_remote_state_batches_total', help: 'Messages the state reads of the workers went in (reads of one block asked in one microtask turn share one).', type: 'counter' }, () => pool.stats().remoteBatches)
  family({ name: 'worker_state_l1_hits_total', help: "State reads answered by a worker's own per-block cache.", type: 'counter' }, () => pool.stats().l1Hits)
  family({ name: 'worker_state_l1_carried_total', help: "State entries the workers carried from a head's parent over to the head (on the devnet: every key the block did not change).", type: 'counter' }, () => pool.stats().l1Carried)
  family({ name: 'worker_heap_used_bytes', help: 'V8 heap in use by the live workers, as of each one\'s last answer.', type: 'gauge' }, () => pool.stats().heapUsedBytes)
}
