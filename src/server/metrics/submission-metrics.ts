/**
 * Scraped families of private submission: the dispatcher (open submissions, its queue, relay sends
 * in flight, the head it works on), the relays (requests, failures, bundle outcomes) and the
 * outbox. Each reads the object's stats() at scrape time; nothing is counted here.
 */
import type { Registry } from 'prom-client'
import type { DispatcherStats } from '../../submission/dispatcher.ts'
import type { OutboxStats } from '../../submission/outbox-store.ts'
import type { RelayClientStats } from '../../submission/relay-client.ts'
import { type ScrapedSample, samplesByLabel, scrapedFamilies } from './registry.ts'

export interface SubmissionMetricsSources {
  dispatcher?: { stats(): DispatcherStats }
  relays?: ReadonlyArray<{ readonly name: string; stats(): RelayClientStats }>
  outbox?: { stats(): OutboxStats; nativeMemoryBytes?(): number | undefined }
  /** undelivered submissions the outbox holds at most (persisting more is refused) */
  outboxCapacity?: number
}

export function registerSubmissionMetrics(registry: Registry, sources: SubmissionMetricsSources): void {
  const family = scrapedFamilies(registry)
  const { dispatcher, relays, outbox, outboxCapacity } = sources

  if (dispatcher !== undefined) {
    const stats = () => dispatcher.stats()
    family({ name: 'submissions_open', help: 'Submissions the dispatcher is delivering (prepared or being prepared, not yet included, expired or dropped).', type: 'gauge' }, () => stats().active)
    family({ name: 'submissions_queued', help: 'Submissions waiting for the dispatcher to take them on.', type: 'gauge' }, () => stats().queued)
    family({ name: 'submission_inflight_sends', help: 'Bundle sends to relays in flight.', type: 'gauge' }, () => stats().inflightSends)
    family({ name: 'dispatcher_head_block', help: 'The newest head block the dispatcher has seen (no sample before the first).', type: 'gauge' }, () => stats().head)
    family(
      { name: 'dispatcher_overflowed', help: '1 while the dispatcher queue has overflowed (the outbox is re-read once it drains), else 0.', type: 'gauge' },
      () => (stats().overflowed ? 1 : 0),
    )
    family(
      {
        name: 'dispatcher_resends_skipped_total',
        help: '(submission, block) pairs not re-sent because the block\'s re-send budget (MAX_RESENDS_PER_BLOCK) was spent; they go out again at the next head.',
        type: 'counter',
      },
      () => stats().resendsSkipped,
    )
    family(
      { name: 'dispatcher_simulations_total', help: 'Simulations of submissions\' user txs the dispatcher completed (each open submission is simulated again at each head).', type: 'counter' },
      () => stats().simulations,
    )
    family(
      { name: 'dispatcher_backrun_plans_total', help: 'Backrun plans the dispatcher completed, a backrun found or none (failed and timed-out plans are not counted).', type: 'counter' },
      () => stats().plans,
    )
  }

  if (relays !== undefined && relays.length > 0) {
    const perRelay = <L extends string>(samples: (name: string, stats: RelayClientStats) => ScrapedSample<L>[]) => () => relays.flatMap((r) => samples(r.name, r.stats()))
    family(
      { name: 'relay_requests_total', help: 'JSON-RPC requests to each relay (bundle sends and bundle-stats questions, every attempt, retries included).', type: 'counter', labelNames: ['relay'] },
      perRelay((relay, s) => [{ labels: { relay }, value: s.requests }]),
    )
    family(
      {
        name: 'relay_request_failures_total',
        help: 'Relay requests that failed, by relay and reason (timeout, network, http, rpc, malformed, aborted, unsupported); aborted ones were cancelled, usually because their block was built.',
        type: 'counter',
        labelNames: ['relay', 'reason'],
      },
      perRelay((relay, s) => samplesByLabel('reason', s.failures, { relay })),
    )
    family(
      {
        name: 'relay_bundles_total',
        help: 'Bundle sends by relay and final outcome: accepted by the relay, or the reason the send failed after its retries.',
        type: 'counter',
        labelNames: ['relay', 'outcome'],
      },
      perRelay((relay, s) => samplesByLabel('outcome', { accepted: s.bundles.accepted, ...s.bundles.failed }, { relay })),
    )
  }

  if (outbox !== undefined) {
    family({ name: 'outbox_open_submissions', help: 'Accepted submissions held in the outbox, not yet finished (included, expired or dropped).', type: 'gauge' }, () => outbox.stats().open)
    family({ name: 'outbox_finished_submissions', help: 'Finished submissions still kept in the outbox (until retention prunes them).', type: 'gauge' }, () => outbox.stats().finished)
    family(
      {
        name: 'outbox_native_memory_bytes',
        help: 'The LevelDB outbox\'s memtables and block cache by its own count (bounded by OUTBOX_WRITE_BUFFER_BYTES and OUTBOX_CACHE_BYTES); no sample with DATABASE_URL.',
        type: 'gauge',
      },
      () => outbox.nativeMemoryBytes?.(),
    )
  }
  if (outboxCapacity !== undefined) {
    family({ name: 'outbox_capacity', help: 'Open submissions the outbox holds at most; beyond it new submissions are refused.', type: 'gauge' }, () => outboxCapacity)
  }
}
