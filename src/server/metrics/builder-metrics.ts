/**
 * Scraped families of the devnet's local block builder: blocks built, what became of the bundles
 * sent to it, and what waits for the next block. Read at scrape time.
 */
import type { Registry } from 'prom-client'
import { samplesByLabel, scrapedFamilies } from './registry.ts'

/** What is read from the builder: src/devnet/local-builder.ts' LocalBuilder (the server does not import devnet). */
export interface BuilderMetricsSource {
  readonly totals: { blocksBuilt: number; bundles: Readonly<Record<string, number>> }
  readonly pending: { bundles: number; transactions: number }
}

export function registerBuilderMetrics(registry: Registry, builder: BuilderMetricsSource): void {
  const family = scrapedFamilies(registry)
  family({ name: 'builder_blocks_built_total', help: 'Blocks the local builder built.', type: 'counter' }, () => builder.totals.blocksBuilt)
  family(
    {
      name: 'builder_bundles_total',
      help: 'Bundles the local builder settled, per block targeted, by outcome: included, outbid, invalid (replaced and cancelled included), expired.',
      type: 'counter',
      labelNames: ['outcome'],
    },
    () => samplesByLabel('outcome', builder.totals.bundles),
  )
  family({ name: 'builder_pending_bundles', help: 'Bundles waiting for their block at the local builder.', type: 'gauge' }, () => builder.pending.bundles)
  family({ name: 'builder_pending_transactions', help: 'Public transactions waiting in the local builder mempool.', type: 'gauge' }, () => builder.pending.transactions)
}
