import { describe, expect, it } from 'vitest'
import { createMetricsRegistry } from '../../../src/server/metrics/registry.ts'
import { registerWorkerPoolMetrics, type WorkerPoolReadings, type WorkerTaskTiming } from '../../../src/server/metrics/worker-metrics.ts'
import { expectSamples, parseExposition } from './exposition.ts'

describe('worker pool families', () => {
  it('threads, tasks, hung and crashed workers, remote reads and heap, read at scrape time', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    // the shape of WorkerPool.stats() (a real pool is scraped by bench:soak's sampler and the workers' tests)
    let readings: WorkerPoolReadings = { threads: 2, running: 0, queued: 0, completed: 0, hung: 0, crashed: 0, renewed: 0, remoteReads: 0, remoteBatches: 0, l1Hits: 0, l1Carried: 0, heapUsedBytes: 0 }
    registerWorkerPoolMetrics(registry, { stats: () => readings })
    let exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('worker_threads')).toBe('gauge')
    expect(exposition.types.get('worker_tasks_queued')).toBe('gauge')
    expect(exposition.types.get('worker_hung_total')).toBe('counter')
    expect(exposition.types.get('worker_heap_used_bytes')).toBe('gauge')
    expectSamples(exposition, { worker_threads: 2, worker_hung_total: 0 })

    readings = { threads: 2, running: 2, queued: 7, completed: 1_000, hung: 1, crashed: 2, renewed: 1, remoteReads: 3_000, remoteBatches: 400, l1Hits: 90_000, l1Carried: 5_000, heapUsedBytes: 108_000_000 }
    exposition = parseExposition(await registry.metrics())
    expectSamples(exposition, {
      worker_threads: 2,
      worker_tasks_running: 2,
      worker_tasks_queued: 7,
      worker_tasks_completed_total: 1_000,
      worker_hung_total: 1,
      worker_crashed_total: 2,
      worker_pool_renewals_total: 1,
      worker_remote_state_reads_total: 3_000,
      worker_remote_state_batches_total: 400,
      worker_state_l1_hits_total: 90_000,
      worker_state_l1_carried_total: 5_000,
      worker_heap_used_bytes: 108_000_000,
    })
  })

  it("where each task's time went, by kind: queue wait, the worker's computation, the rest of its run", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    const readings: WorkerPoolReadings = { threads: 2, running: 0, queued: 0, completed: 0, hung: 0, crashed: 0, renewed: 0, remoteReads: 0, remoteBatches: 0, l1Hits: 0, l1Carried: 0, heapUsedBytes: 0 }
    const listeners: Array<(t: WorkerTaskTiming) => void> = []
    registerWorkerPoolMetrics(registry, { stats: () => readings, onTaskTimed: (l) => (listeners.push(l), () => {}) })
    expect(listeners).toHaveLength(1)
    listeners[0]({ kind: 'quote', waitMs: 3, runMs: 12, computeMs: 10 })
    listeners[0]({ kind: 'quote', waitMs: 0, runMs: 7, computeMs: 6.5 })
    // a worker clock that ran past the main thread's never makes a negative dispatch time
    listeners[0]({ kind: 'simulate', waitMs: 1, runMs: 4, computeMs: 4.2 })
    const exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('worker_task_wait_seconds')).toBe('histogram')
    expect(exposition.types.get('worker_task_compute_seconds')).toBe('histogram')
    expect(exposition.types.get('worker_task_dispatch_seconds')).toBe('histogram')
    const sample = (series: string) => Number(exposition.samples.get(series))
    expect(sample('worker_task_wait_seconds_count{kind="quote"}')).toBe(2)
    expect(sample('worker_task_wait_seconds_sum{kind="quote"}')).toBeCloseTo(0.003, 9)
    expect(sample('worker_task_compute_seconds_sum{kind="quote"}')).toBeCloseTo(0.0165, 9)
    expect(sample('worker_task_dispatch_seconds_sum{kind="quote"}')).toBeCloseTo(0.0025, 9)
    expect(sample('worker_task_dispatch_seconds_sum{kind="simulate"}')).toBe(0)
    // buckets: the 6.5 ms computation falls in le=0.01, the 10 ms one too (le is inclusive)
    expect(sample('worker_task_compute_seconds_bucket{le="0.005",kind="quote"}')).toBe(0)
    expect(sample('worker_task_compute_seconds_bucket{le="0.01",kind="quote"}')).toBe(2)
  })
})
