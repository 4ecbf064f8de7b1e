/**
 * The pool holds its size whatever happens to a worker while it starts, with a real two-worker pool
 * on the embedded devnet. piscina (5.3.2) stops replacing workers for good once one exits before
 * its READY (`workerFailsDuringBootstrap`, a private flag it never clears): a replacement worker
 * terminated while it loads (an OOM at start, a hang during warm-up) used to leave the pool one
 * worker short, and every worker lost afterwards was not replaced either. The pool now notices
 * that piscina left it short and renews piscina's instance (worker-pool.ts):
 * - a worker lost while it loads is followed by a full pool again, with no request needed;
 * - a worker that crashes after that is still replaced, and requests are answered;
 * - renewals are spaced by the pool's renewal interval (a pool whose workers keep dying at start
 *   does not start threads over and over).
 * And each worker, once warm, has collected its module-loader isolate (the step that widened the
 * window in which a worker can be lost before its READY).
 */
import { once } from 'node:events'
import type { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DomainServices } from '../../src/node/domain.ts'
import type { WorkerPool } from '../../src/workers/worker-pool.ts'
import { loadRegistry, tokenAddress } from '../support/devnet.ts'
import { openDomainWithPool } from '../support/pooled-domain.ts'
import { until } from '../support/waiting.ts'
import { parseQuoteJson } from '../../src/server/quote/quote-json.ts'

const registry = loadRegistry()
const token = (symbol: string) => tokenAddress(registry, symbol)
/** the renewal interval the test's pool is given: long enough to measure, short enough to wait for */
const RENEW_INTERVAL_MS = 3_000

let domain: DomainServices
let pool: WorkerPool
/** when the pool said it renewed piscina's instance (performance.now()) */
const renewals: number[] = []

beforeAll(async () => {
  const log = {
    warn: (_obj: object, msg: string) => {
      if (msg.startsWith('piscina stopped replacing')) renewals.push(performance.now())
    },
  }
  ;({ domain, pool } = await openDomainWithPool({ threads: 2, renewMinIntervalMs: RENEW_INTERVAL_MS, log }))
}, 120_000)

afterAll(async () => {
  await pool?.close()
  await domain?.close()
})

/** Terminates `thread` and returns the thread piscina started in its place at its exit (still loading), if any. */
async function terminateAndTakeReplacement(thread: Worker): Promise<Worker | undefined> {
  const others = pool.workerThreads().filter((t) => t !== thread)
  const exited = once(thread, 'exit')
  void thread.terminate()
  await exited
  // piscina starts the replacement in the same turn as it learns of the exit
  return pool.workerThreads().find((t) => !others.includes(t))
}

/** A worker is lost while it loads: one piscina counts as started dies, and the one started in its place dies loading. */
async function loseOneWhileLoading(started: Worker): Promise<number[]> {
  const loading = await terminateAndTakeReplacement(started)
  expect(loading).toBeDefined()
  const lost = loading!.threadId
  // piscina itself gives up here: no thread in the lost one's place
  expect(await terminateAndTakeReplacement(loading!)).toBeUndefined()
  return [started.threadId, lost]
}

/** A full pool: two workers whose state channels are open, none of them in `gone`. */
const fullPoolWithout = (gone: readonly number[]) => async () => {
  const ids = pool.workerThreadIds()
  return ids.length === 2 && pool.workerThreads().length === 2 && ids.every((id) => !gone.includes(id)) ? ids : undefined
}

const quote = (amountIn: bigint) => pool.run('quote', { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn })

describe('a worker that has warmed up', () => {
  it('has given back its module-loader isolate\'s start-up heap (worker-entry.ts warmUp)', () => {
    const collections = pool.loaderCollections()
    expect(collections.size).toBe(2)
    console.log(`loader isolates of the warmed workers, committed MB before -> after: ${[...collections.values()].map((c) => `${c?.committedBeforeMb} -> ${c?.committedAfterMb}`).join(', ')}`)
    for (const collected of collections.values()) {
      expect(collected).toBeDefined()
      // compiling the domain's module graph leaves the loader isolate's young generation grown: ~40-50 MB
      expect(collected!.committedBeforeMb).toBeGreaterThan(30)
      expect(collected!.committedAfterMb).toBeLessThan(collected!.committedBeforeMb / 2)
    }
  })
})

describe('a worker lost while it starts', () => {
  it('the pool is full again without a request, renewals spaced by the interval; a later crash is replaced; requests are answered', async () => {
    expect(pool.workerThreadIds()).toHaveLength(2)
    const gone = pool.workerThreads().map((t) => t.threadId)

    gone.push(...(await loseOneWhileLoading(pool.workerThreads()[0])))
    // renewed: a new instance's two workers exist at once
    await until('a renewal', async () => (renewals.length === 1 ? true : undefined), 10_000)
    expect(pool.stats().renewed).toBe(1)
    const renewedThreads = pool.workerThreads().filter((t) => !gone.includes(t.threadId))
    expect(renewedThreads).toHaveLength(2)

    // at once the same again, to the new instance (its first workers count as started from the outset)
    const lostAgainAt = performance.now()
    gone.push(...(await loseOneWhileLoading(renewedThreads[0])))
    expect(lostAgainAt - renewals[0]).toBeLessThan(RENEW_INTERVAL_MS)
    const full = await until('two workers again after two were lost while they loaded', fullPoolWithout(gone), 90_000)
    expect(renewals).toHaveLength(2)
    expect(pool.stats().renewed).toBe(2)
    // not before the interval since the first renewal
    expect(renewals[1] - renewals[0]).toBeGreaterThanOrEqual(RENEW_INTERVAL_MS)

    // a later crash of a worker that has started: piscina replaces it (the new instance's flag is clear)
    const crashed = pool.workerThreads().find((t) => t.threadId === full[0])!
    expect(await terminateAndTakeReplacement(crashed)).toBeDefined()
    await until('the crashed worker replaced', fullPoolWithout([...gone, full[0]]), 60_000)
    expect(pool.stats().renewed).toBe(2)
    const answers = await Promise.all([quote(10n ** 18n), quote(10n ** 18n + 1n)])
    expect(answers.map((a) => parseQuoteJson(a).amountOut > 0n)).toEqual([true, true])
  }, 180_000)
})
