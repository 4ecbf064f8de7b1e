/**
 * WORKER_NICE: each worker thread lowers its own scheduling priority as it starts (Linux schedules
 * threads one by one), so the main thread, which acknowledges submissions and answers HTTP, gets a
 * core before the EVM work when both want one. Read back from /proc: the pool's threads run at the
 * main thread's niceness plus the configured amount, and the main thread keeps its own.
 */
import { getPriority } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DomainServices } from '../../src/node/domain.ts'
import type { WorkerPool } from '../../src/workers/worker-pool.ts'
import { openDomainWithPool } from '../support/pooled-domain.ts'
import { sampleThreads } from '../support/thread-cpu.ts'

const ADDED = 7

/** every thread of this process with its niceness (read by the benchmarks' /proc parser) */
function threadNiceness(): Map<number, number> {
  return new Map(sampleThreads(process.pid).threads.map((t) => [t.id, t.nice]))
}

describe.runIf(process.platform === 'linux')('WORKER_NICE', () => {
  let domain: DomainServices
  let pool: WorkerPool
  const base = getPriority()
  let before: Map<number, number>

  beforeAll(async () => {
    // threads the domain starts keep the process's niceness, so the filter below leaves them out
    before = threadNiceness()
    ;({ domain, pool } = await openDomainWithPool({ threads: 2, nice: ADDED }))
  }, 120_000)

  afterAll(async () => {
    await pool?.close()
    await domain?.close()
  })

  it('runs each worker thread below the main thread by the configured niceness', () => {
    const after = threadNiceness()
    const lowered = [...after].filter(([tid, nice]) => !before.has(tid) && nice === Math.min(19, base + ADDED))
    // the two workers (their module-loader threads, started by the workers, inherit the same)
    expect(lowered.length).toBeGreaterThanOrEqual(2)
    expect(after.get(process.pid)).toBe(base)
    expect(getPriority()).toBe(base)
  })
})
