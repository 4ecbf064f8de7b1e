/**
 * The pool's task timings (worker-pool.ts onTaskTimed, read by the worker_task_* histograms), with
 * a real one-worker pool on the embedded devnet: each answered task reports its kind, its wait in
 * the pool's queue, its run from dispatch to answer, and the worker's own computation inside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DomainServices } from '../../src/node/domain.ts'
import type { TaskTiming, WorkerPool } from '../../src/workers/worker-pool.ts'
import { loadRegistry, tokenAddress } from '../support/devnet.ts'
import { openDomainWithPool } from '../support/pooled-domain.ts'
import { parseQuoteJson } from '../../src/server/quote/quote-json.ts'

const registry = loadRegistry()
const token = (symbol: string) => tokenAddress(registry, symbol)

let domain: DomainServices
let pool: WorkerPool

beforeAll(async () => {
  ;({ domain, pool } = await openDomainWithPool({ threads: 1 }))
}, 120_000)

afterAll(async () => {
  await pool?.close()
  await domain?.close()
})

describe('task timings', () => {
  it('each answered task: its kind, queue wait, run and the worker computation within the run', async () => {
    const timings: TaskTiming[] = []
    const unsubscribe = pool.onTaskTimed((t) => timings.push(t))
    const request = { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: 10n ** 18n }
    // two at once on one worker: the second waits in the queue for the first
    const answers = await Promise.all([pool.run('quote', request), pool.run('quote', { ...request, amountIn: request.amountIn + 1n })])
    expect(answers.map((a) => parseQuoteJson(a).amountOut > 0n)).toEqual([true, true])
    expect(timings.map((t) => t.kind)).toEqual(['quote', 'quote'])
    for (const t of timings) {
      expect(t.computeMs).toBeGreaterThan(0)
      expect(t.runMs).toBeGreaterThanOrEqual(t.computeMs)
      expect(t.waitMs).toBeGreaterThanOrEqual(0)
    }
    // the second one waited about as long as the first one ran
    expect(timings[1].waitMs).toBeGreaterThan(timings[0].computeMs * 0.5)
    unsubscribe()
    await pool.run('quote', { ...request, amountIn: request.amountIn + 2n })
    expect(timings).toHaveLength(2)
  }, 60_000)
})
