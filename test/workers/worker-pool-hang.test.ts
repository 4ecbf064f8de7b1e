/**
 * The pool's watchdog, at the pool itself (src/workers/worker-pool.ts), load-proof: a worker held
 * inside one EVM step for longer than EVM_MAX_MS + HANG_GRACE_MS has its thread terminated by the
 * pool (tasks are handed to piscina without an abort signal, so no abort does it); its task fails
 * at once as 'hung', not as a crash; a new worker takes the thread's place and answers.
 * One worker, in this process, on a copy of the devnet whose UNI transfer calls MODEXP with
 * 2,800-byte operands (~0.9G gas; seconds of one step, more on a busy machine) with a budget of
 * 3 s, so that the quote's ordinary executions before the trap stay within the budget on a
 * loaded machine and only the trap holds the worker past the watchdog's limit.
 * (test/workers/hung-worker.test.ts checks the same through the HTTP service, with a tighter budget.)
 * Each thread is terminated only after its native-call gate is closed (src/crypto/native-call-gate.ts:
 * a thread stopped inside a native call aborts the process): the hung one, and every one at close().
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { parseQuoteJson } from '../../src/server/quote/quote-json.ts'
import { WorkerLink } from '../../src/workers/worker-link.ts'
import { HANG_GRACE_MS, NATIVE_CALL_DRAIN_MS, type WorkerPool } from '../../src/workers/worker-pool.ts'
import { WorkerTaskError } from '../../src/workers/worker-task-error.ts'
import { loadRegistry, tokenAddress } from '../support/devnet.ts'
import { poolOverDomain } from '../support/pooled-domain.ts'
import { callTrap, modexpHang, writeTrappedGenesis } from '../support/trapped-devnet.ts'
import { until } from '../support/waiting.ts'

const registry = loadRegistry()
const UNI = tokenAddress(registry, 'UNI')
const WETH = tokenAddress(registry, 'WETH')
const USDC = tokenAddress(registry, 'USDC')
const HANG: Address = '0x000000000000000000000000000000000000babe'
const BUDGET_MS = 3_000
const LIMIT_MS = BUDGET_MS + HANG_GRACE_MS
/** the watchdog looks every 100 ms; a busy machine adds to that */
const SLACK_MS = 2_500

let dir: string
let domain: DomainServices
let pool: WorkerPool

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pool-hang-'))
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    WORKERS: '0',
    DEVNET_GENESIS: writeTrappedGenesis(dir, { trap: callTrap(HANG), contracts: { [HANG]: modexpHang(2_800) } }),
    DATA_DIR: join(dir, 'data'),
    LOCAL_BUILDER_PORT: '0',
    LOCAL_BUILDER_BLOCK_TIME_MS: '600000',
    EVM_MAX_MS: String(BUDGET_MS),
    EVM_MAX_GAS: '1000000000',
  })
  domain = await openDomainServices(config, { log: { warn: () => {} } })
  pool = poolOverDomain(config, domain, { threads: 1 })
  await pool.ready()
}, 120_000)

afterAll(async () => {
  await pool?.close()
  await domain?.close()
  rmSync(dir, { recursive: true, force: true })
})

const quote = (tokenIn: Address, tokenOut: Address) => pool.run('quote', { tokenIn, tokenOut, amountIn: 10n ** 18n })

describe('a worker held inside one step past the watchdog limit', () => {
  it('fails its task at once as hung (not as a crash), its thread is terminated and replaced, and the new worker answers', async () => {
    const gatesClosed = vi.spyOn(WorkerLink.prototype, 'closeNativeCalls')
    const before = pool.workerThreadIds()
    expect(before).toHaveLength(1)
    const started = performance.now()
    const failure = await quote(UNI, WETH).then(
      () => undefined,
      (err: unknown) => err,
    )
    const ms = performance.now() - started
    console.log(`hung quote answered in ${ms.toFixed(0)} ms (limit ${LIMIT_MS} ms)`)
    expect(failure).toBeInstanceOf(WorkerTaskError)
    expect((failure as WorkerTaskError).failure).toBe('hung')
    expect((failure as WorkerTaskError).message).toMatch(/^the worker running this request did not answer for \d+ ms, more than the execution budget allows \(EVM_MAX_MS 3000 ms \+ 1000 ms\): it was stopped and replaced$/)
    expect(ms).toBeGreaterThanOrEqual(LIMIT_MS)
    expect(ms).toBeLessThan(LIMIT_MS + SLACK_MS)
    expect(pool.stats().hung).toBe(1)
    // its gate closed first, with the drain (the terminate follows once no call is inside)
    expect(gatesClosed.mock.contexts.map((link) => (link as WorkerLink).threadId)).toEqual(before)
    expect(gatesClosed).toHaveBeenCalledWith(NATIVE_CALL_DRAIN_MS)
    // the terminated thread's exit fails its piscina task: that is the hang's, not a crash
    await until('a new worker', async () => (pool.workerThreadIds().length === 1 && pool.workerThreadIds()[0] !== before[0] ? true : undefined), 30_000)
    expect(pool.stats().crashed).toBe(0)
    const answer = parseQuoteJson(await quote(WETH, USDC))
    expect(answer.amountOut).toBeGreaterThan(0n)
    expect(pool.stats().crashed).toBe(0)
    gatesClosed.mockRestore()
  }, 120_000)

  it('close() closes every live worker\'s native-call gate before it terminates the threads', async () => {
    const gatesClosed = vi.spyOn(WorkerLink.prototype, 'closeNativeCalls')
    const live = pool.workerThreadIds()
    expect(live).toHaveLength(1)
    let exitedBeforeGate = false
    for (const thread of pool.workerThreads()) thread.once('exit', () => (exitedBeforeGate ||= gatesClosed.mock.calls.length === 0))
    await pool.close()
    expect(gatesClosed.mock.contexts.map((link) => (link as WorkerLink).threadId)).toEqual(live)
    expect(exitedBeforeGate).toBe(false)
    gatesClosed.mockRestore()
  }, 60_000)
})
