/**
 * The service's metrics registry (one per node), with the families the HTTP app does not know
 * about: the backrun engine, private submission (dispatcher, relays, outbox), the worker pool
 * (WORKERS > 0) and, on the devnet, the local builder. The app adds its own (HTTP, quote, state source, eth_backrun answers) and
 * serves them all at GET /metrics.
 */
import type { ServiceConfig } from '../config.ts'
import { registerBackrunEngineMetrics } from '../server/metrics/backrun-metrics.ts'
import { registerBuilderMetrics } from '../server/metrics/builder-metrics.ts'
import { createMetricsRegistry, type MetricsRegistry } from '../server/metrics/registry.ts'
import { registerSubmissionMetrics } from '../server/metrics/submission-metrics.ts'
import { registerWorkerPoolMetrics } from '../server/metrics/worker-metrics.ts'
import type { DevnetBuilderService } from './devnet-builder.ts'
import type { DomainServices } from './domain.ts'
import type { SubmissionServices } from './submission.ts'

export function createNodeMetrics(config: ServiceConfig, parts: { domain: DomainServices; builder?: DevnetBuilderService; submission: SubmissionServices }): MetricsRegistry {
  const metrics = createMetricsRegistry()
  registerBackrunEngineMetrics(metrics, parts.domain.backrun)
  registerSubmissionMetrics(metrics, {
    dispatcher: parts.submission.dispatcher,
    relays: parts.submission.relays,
    outbox: parts.submission.store,
    outboxCapacity: config.submission.maxPendingSubmissions,
  })
  if (parts.builder !== undefined) registerBuilderMetrics(metrics, parts.builder.builder)
  if (parts.domain.workers !== undefined) registerWorkerPoolMetrics(metrics, parts.domain.workers)
  return metrics
}
