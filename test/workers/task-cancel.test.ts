/**
 * Giving up on a task, and the pool's queue bound, with a real one-worker pool on the embedded
 * devnet. A planning task asks this thread for a searcher key (its TaskCall 'lease'); the test's
 * host holds that answer, which keeps the task running in its worker for as long as the test needs:
 * - a running task whose caller gives up is told to stop: it ends at its next check with the
 *   caller's reason, gives its key back (a 'release' call), and its worker lives on;
 * - a task still waiting for the worker whose caller gives up leaves the queue at once;
 * - beyond the queue bound a task fails at once as busy (piscina's own maxQueue does not hold for
 *   tasks with an abort signal: the pool counts);
 * - a call for a task that gave no host is refused, and the task fails with that error;
 * - a plan waiting for its place tells the dispatcher's clock it queued, and that it started only
 *   once a worker takes it; the caller's give-up (the dispatcher's queue wait bound) takes it out
 *   of the line holding no key;
 * - a task handed to a worker that has not said it took it (still warming up) whose caller gives
 *   up: answered at once, stopped when the worker takes it, and the worker is not replaced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import type { ServiceConfig } from '../../src/config.ts'
import type { DomainServices } from '../../src/node/domain.ts'
import { planningSettings } from '../../src/submission/backrun-planning.ts'
import { privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { Limiter } from '../../src/submission/limiter.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'
import { submissionId } from '../../src/submission/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import type { PlanTaskRequest, SimulateTaskRequest, TaskCall, TaskHost } from '../../src/workers/tasks.ts'
import { PooledBackrunPlanner } from '../../src/workers/pooled-backrun-planner.ts'
import type { WorkerPool } from '../../src/workers/worker-pool.ts'
import { WorkerTaskError } from '../../src/workers/worker-task-error.ts'
import { loadFixtureTxs, loadRegistry, lower } from '../support/devnet.ts'
import { openDomainWithPool, poolOverDomain } from '../support/pooled-domain.ts'

const registry = loadRegistry()
const SEARCHER = lower(registry.devAccounts.accounts.find((a) => a.index === registry.devAccounts.searcherIndexes[0])!.address)
const ARBITRAGE = loadFixtureTxs().find((f) => f.name === 'v2-swapExactTokensForETH-large')!
const SMALL = loadFixtureTxs().find((f) => f.name === 'v2-swapExactETHForTokens-small')!

let config: ServiceConfig
let domain: DomainServices
let pool: WorkerPool

beforeAll(async () => {
  ;({ config, domain, pool } = await openDomainWithPool({ threads: 1, maxQueued: 1 }))
}, 120_000)

afterAll(async () => {
  await pool?.close()
  await domain?.close()
})

function planRequest(raw = ARBITRAGE.raw): PlanTaskRequest {
  const tx = decodeSignedTransaction(raw, { chainId: domain.chain.chainId, common: domain.simulator.common })
  return {
    id: submissionId('private-tx', tx.hash),
    kind: 'private-tx',
    rawTxs: [tx.rawHex],
    simulation: undefined,
    tipFloor: undefined,
    settings: planningSettings({ maxPriorityFeePerGas: 1_000_000_000n }, 'test'),
    searcherKeys: 1,
  }
}

function simulateRequest(): SimulateTaskRequest {
  const tx = decodeSignedTransaction(SMALL.raw, { chainId: domain.chain.chainId, common: domain.simulator.common })
  return { id: submissionId('private-tx', tx.hash), kind: 'private-tx', rawTxs: [tx.rawHex] }
}

async function until(done: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A host whose answer to 'lease' waits until `open(address)`; `leased` resolves when the lease is asked. */
function gatedHost(): { host: TaskHost; calls: TaskCall[]; leased: Promise<void>; open: (key: Address | undefined) => void } {
  const calls: TaskCall[] = []
  let open: (key: Address | undefined) => void = () => {}
  const gate = new Promise<Address | undefined>((resolve) => (open = resolve))
  let asked: () => void = () => {}
  const leased = new Promise<void>((resolve) => (asked = resolve))
  const host: TaskHost = async (call) => {
    calls.push(call)
    if (call.op === 'lease') {
      asked()
      return gate
    }
    if (call.op === 'release') return undefined
    throw new Error(`this host does not ${call.op}`)
  }
  return { host, calls, leased, open }
}

describe('a dispatcher task the caller gives up on', () => {
  it('running: told to stop, it ends at its next check with the caller reason and gives its key back; its worker lives on', async () => {
    const workers = pool.workerThreadIds()
    const { hung, crashed } = pool.stats()
    const controller = new AbortController()
    const { host, calls, leased, open } = gatedHost()
    const task = pool.run('plan', planRequest(), pool.pinLatest(), { signal: controller.signal, host })
    // the worker executed the user's swap and asks for a key: it is running
    await leased
    expect(pool.stats().running).toBe(1)
    controller.abort(new Error('backrun planning took longer than 2000 ms'))
    open(SEARCHER)
    await expect(task).rejects.toThrow('backrun planning took longer than 2000 ms')
    // the search found the cycle (the swap leaves one), then the abort check stopped it before signing
    expect(calls.map((c) => c.op)).toEqual(['lease', 'release'])
    expect(pool.workerThreadIds()).toEqual(workers)
    // the task ends for its link with piscina's answer (or its rejection), which may come before the worker's 'task-start'
    await until(() => pool.stats().running === 0)
    expect(pool.stats()).toMatchObject({ hung, crashed, running: 0, queued: 0 })
  }, 60_000)

  it('queued: it leaves the queue at once; beyond the queue bound a task is refused as busy', async () => {
    const workers = pool.workerThreadIds()
    const { crashed } = pool.stats()
    const held = gatedHost()
    const holding = pool.run('plan', planRequest(), pool.pinLatest(), { host: held.host })
    await held.leased
    const controller = new AbortController()
    const queued = pool.run('simulate', simulateRequest(), pool.pinLatest(), { signal: controller.signal })
    expect(pool.stats().queued).toBe(1)
    // the bound (maxQueued 1) is reached: refused at once, nothing queued
    const refused = pool.run('simulate', simulateRequest())
    await expect(refused).rejects.toBeInstanceOf(WorkerTaskError)
    await expect(refused).rejects.toMatchObject({ failure: 'busy', message: 'the service is overloaded: 1 requests are already waiting for a worker' })
    controller.abort(new Error('simulation took longer than 2000 ms'))
    await expect(queued).rejects.toThrow('simulation took longer than 2000 ms')
    expect(pool.stats().queued).toBe(0)
    // the held task goes on: no key for it, which planning reports as such
    held.open(undefined)
    await expect(holding).rejects.toMatchObject({ name: 'BackrunPlanError', reason: 'no-searcher-key', message: expect.stringMatching(/^all 1 searcher keys already carry a backrun for block 1;/) })
    expect(pool.workerThreadIds()).toEqual(workers)
    expect(pool.stats().crashed).toBe(crashed)
    // and the worker still answers
    await expect(pool.run('simulate', simulateRequest())).resolves.toMatchObject({ success: true })
  }, 60_000)

  it('a planning task without a host: its call is refused and the plan fails with that error', async () => {
    await expect(pool.run('plan', planRequest())).rejects.toThrow(/^task \d+ is not running, or takes no calls \(lease\)$/)
  }, 60_000)

  it("a plan that waits for its place tells the caller's clock it queued, starts when a worker takes it, and leaves the line holding no key when the caller gives up", async () => {
    const share = new Limiter(1)
    const keys = new SearcherKeyPool([privateKeyBackrunSigner(registry.devAccounts.accounts.find((a) => a.index === registry.devAccounts.searcherIndexes[0])!.privateKey)])
    const planner = new PooledBackrunPlanner(pool, { keys, share, maxPriorityFeePerGas: 1_000_000_000n })
    let release: () => void = () => {}
    const holding = share.run(() => new Promise<void>((resolve) => (release = resolve)))
    const tx = decodeSignedTransaction(ARBITRAGE.raw, { chainId: domain.chain.chainId, common: domain.simulator.common })
    const completed = pool.stats().completed
    const clock: string[] = []
    const progress = { queued: () => clock.push('queued'), started: () => clock.push('started') }
    const id = submissionId('private-tx', tx.hash)

    // the dispatcher gives up on its wait (queueWaitMs): out of the line, nothing run, no key
    const controller = new AbortController()
    const waiting = planner.plan({ id, kind: 'private-tx', userTxs: [tx], simulation: undefined, signal: controller.signal, clock: progress })
    expect(clock).toEqual(['queued'])
    controller.abort(new Error('the backrun planning waited 100 ms for a place to run'))
    await expect(waiting).rejects.toThrow('the backrun planning waited 100 ms for a place to run')
    expect(clock).toEqual(['queued'])
    expect(keys.leased(domain.chain.latest().block.number + 1n)).toBe(0)
    expect(pool.stats().completed).toBe(completed)

    // with room again, the same plan queues, then starts in the worker, and is made
    clock.length = 0
    const planned = planner.plan({ id, kind: 'private-tx', userTxs: [tx], simulation: undefined, signal: new AbortController().signal, clock: progress })
    expect(clock).toEqual(['queued'])
    release()
    await holding
    await expect(planned).resolves.toMatchObject({ searcher: SEARCHER })
    expect(clock).toEqual(['queued', 'started'])
    planner.release(id, domain.chain.latest().block.number + 1n)
  }, 60_000)
})

describe('a task given up before its worker said it took it', () => {
  it('is answered at once with the reason, stopped once the worker takes it, and costs no worker', async () => {
    const warnings: string[] = []
    const fresh = poolOverDomain(config, domain, { threads: 1, log: { warn: (_obj, msg) => warnings.push(msg) } })
    try {
      // piscina starts its thread with the pool; it loads and warms up for seconds before it takes a task
      const threads = fresh.workerThreads().map((t) => t.threadId)
      expect(threads).toHaveLength(1)
      const controller = new AbortController()
      let started = false
      const task = fresh.run('simulate', simulateRequest(), fresh.pinLatest(), { signal: controller.signal, onStart: () => (started = true) })
      await until(() => started)
      // handed to piscina, and so to the warming worker, which has not said it took it
      expect(fresh.stats().running).toBe(0)
      controller.abort(new Error('simulation waited longer than 500 ms'))
      await expect(task).rejects.toThrow('simulation waited longer than 500 ms')
      await fresh.ready()
      // its place is free once the worker is done with the cancelled task: the next one runs there
      await expect(fresh.run('simulate', simulateRequest())).resolves.toMatchObject({ success: true })
      expect(fresh.workerThreads().map((t) => t.threadId)).toEqual(threads)
      // the task ends for its link with piscina's answer (or its rejection), which may come before the worker's 'task-start'
      await until(() => fresh.stats().running === 0)
      expect(fresh.stats()).toMatchObject({ crashed: 0, hung: 0, threads: 1, running: 0, queued: 0 })
      expect(warnings).toEqual([])
    } finally {
      await fresh.close()
    }
  }, 120_000)
})
