import { describe, expect, it } from 'vitest'
import { createMetricsRegistry } from '../../../src/server/metrics/registry.ts'
import { registerSubmissionMetrics } from '../../../src/server/metrics/submission-metrics.ts'
import type { DispatcherStats } from '../../../src/submission/dispatcher.ts'
import { RelayClient, SearcherKey, type RelayBundle } from '../../../src/submission/index.ts'
import { SEARCHER_KEY_HEX } from '../../submission/helpers.ts'
import { expectSamples, parseExposition } from './exposition.ts'

const BUNDLE: RelayBundle = { entries: [{ tx: '0x02' }], blockNumber: 101n }

describe('dispatcher and outbox families', () => {
  it("read the dispatcher's and the outbox's stats() on each scrape", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    let stats: DispatcherStats = { active: 0, queued: 0, inflightSends: 0, overflowed: false, resendsSkipped: 0, head: undefined, simulations: 0, plans: 0 }
    const outbox = { open: 0, finished: 0 }
    let nativeMemory: number | undefined
    registerSubmissionMetrics(registry, { dispatcher: { stats: () => stats }, outbox: { stats: () => outbox, nativeMemoryBytes: () => nativeMemory }, outboxCapacity: 100_000 })

    let exposition = parseExposition(await registry.metrics())
    for (const name of ['submissions_open', 'submissions_queued', 'submission_inflight_sends', 'dispatcher_head_block', 'dispatcher_overflowed', 'outbox_open_submissions', 'outbox_finished_submissions', 'outbox_native_memory_bytes', 'outbox_capacity']) {
      expect(exposition.types.get(name), name).toBe('gauge')
    }
    for (const name of ['dispatcher_resends_skipped_total', 'dispatcher_simulations_total', 'dispatcher_backrun_plans_total']) expect(exposition.types.get(name), name).toBe('counter')
    expectSamples(exposition, {
      submissions_open: 0,
      dispatcher_overflowed: 0,
      // no head seen yet: no sample rather than a made-up block 0
      dispatcher_head_block: undefined,
      // a closed store (or one with no count of its own, PostgreSQL): no sample
      outbox_native_memory_bytes: undefined,
      outbox_capacity: 100_000,
    })

    stats = { active: 3, queued: 2, inflightSends: 5, overflowed: true, resendsSkipped: 17, head: 21_000_000n, simulations: 40, plans: 31 }
    outbox.open = 4
    outbox.finished = 9
    nativeMemory = 4_200_000
    exposition = parseExposition(await registry.metrics())
    expectSamples(exposition, {
      submissions_open: 3,
      submissions_queued: 2,
      submission_inflight_sends: 5,
      dispatcher_head_block: 21_000_000,
      dispatcher_overflowed: 1,
      dispatcher_resends_skipped_total: 17,
      dispatcher_simulations_total: 40,
      dispatcher_backrun_plans_total: 31,
      outbox_open_submissions: 4,
      outbox_finished_submissions: 9,
      outbox_native_memory_bytes: 4_200_000,
    })
  })

  it('registers only the families it is given sources for', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    registerSubmissionMetrics(registry, {})
    const { types } = parseExposition(await registry.metrics())
    expect([...types.keys()].filter((n) => /^(submission|dispatcher|relay|outbox)/.test(n))).toEqual([])
  })
})

describe('relay families', () => {
  /** a relay client whose HTTP answers are the queued ones, in order */
  function relayClient(name: string, answers: Array<() => Response>) {
    const fetch = (async () => {
      const next = answers.shift()
      if (next === undefined) throw new Error('no answer queued')
      return next()
    }) as typeof globalThis.fetch
    return new RelayClient({ name, url: 'http://relay.invalid/', maxAttempts: 2, backoff: { baseMs: 0, maxMs: 0 } }, SearcherKey.fromHex(SEARCHER_KEY_HEX), { fetch })
  }
  const ok = () => Response.json({ jsonrpc: '2.0', id: 1, result: { bundleHash: `0x${'ab'.repeat(32)}` } })
  const unavailable = () => new Response('busy', { status: 503 })
  const refused = () => Response.json({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'bundle refused' } })

  it('count requests (every attempt), failed attempts by reason, and bundle sends by final outcome, per relay', async () => {
    const r1 = relayClient('r1', [ok, unavailable, unavailable, refused])
    const r2 = relayClient('r2', [unavailable, ok])
    await r1.sendBundle(BUNDLE)
    // 503 twice: retried once, then given up
    await expect(r1.sendBundle(BUNDLE)).rejects.toMatchObject({ reason: 'http', attempts: 2 })
    await expect(r1.sendBundle(BUNDLE)).rejects.toMatchObject({ reason: 'rpc' })
    // cancelled before it was sent (its block was built)
    await expect(r1.sendBundle(BUNDLE, { signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: 'aborted' })
    // refused before any request: this relay takes no hash references
    await expect(r1.sendBundle({ entries: [{ hash: `0x${'cd'.repeat(32)}` }, { tx: '0x02' }], blockNumber: 101n })).rejects.toMatchObject({ reason: 'unsupported' })
    // a 503, then accepted on the retry
    await r2.sendBundle(BUNDLE)

    expect(r1.stats()).toEqual({
      requests: 5,
      failures: { timeout: 0, network: 0, http: 2, rpc: 1, malformed: 0, aborted: 1, unsupported: 0 },
      bundles: { accepted: 1, failed: { timeout: 0, network: 0, http: 1, rpc: 1, malformed: 0, aborted: 1, unsupported: 1 } },
    })

    const registry = createMetricsRegistry({ defaultMetrics: false })
    registerSubmissionMetrics(registry, { relays: [r1, r2] })
    const exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('relay_requests_total')).toBe('counter')
    expect(exposition.types.get('relay_request_failures_total')).toBe('counter')
    expect(exposition.types.get('relay_bundles_total')).toBe('counter')
    expectSamples(exposition, {
      'relay_requests_total{relay="r1"}': 5,
      'relay_requests_total{relay="r2"}': 2,
      'relay_request_failures_total{relay="r1",reason="http"}': 2,
      'relay_request_failures_total{relay="r1",reason="aborted"}': 1,
      // every reason is reported, 0 included, so alerts have a series from the start
      'relay_request_failures_total{relay="r1",reason="timeout"}': 0,
      'relay_request_failures_total{relay="r2",reason="http"}': 1,
      'relay_bundles_total{relay="r1",outcome="accepted"}': 1,
      'relay_bundles_total{relay="r1",outcome="unsupported"}': 1,
      'relay_bundles_total{relay="r2",outcome="accepted"}': 1,
      'relay_bundles_total{relay="r2",outcome="http"}': 0,
    })
  })
})
