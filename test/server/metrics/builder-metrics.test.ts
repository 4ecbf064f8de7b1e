import { describe, expect, it } from 'vitest'
import { registerBuilderMetrics } from '../../../src/server/metrics/builder-metrics.ts'
import { createMetricsRegistry } from '../../../src/server/metrics/registry.ts'
import { expectSamples, parseExposition, sampleValue } from './exposition.ts'

describe('local builder families', () => {
  it('blocks built, bundle outcomes and what waits, read at scrape time', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false })
    // the shape of LocalBuilder's totals and pending (a real builder is scraped in app-scrape.test.ts)
    const builder = {
      totals: { blocksBuilt: 0, bundles: { included: 0, outbid: 0, invalid: 0, expired: 0 } },
      pending: { bundles: 0, transactions: 0 },
    }
    registerBuilderMetrics(registry, builder)
    let exposition = parseExposition(await registry.metrics())
    expect(exposition.types.get('builder_blocks_built_total')).toBe('counter')
    expect(exposition.types.get('builder_bundles_total')).toBe('counter')
    expect(exposition.types.get('builder_pending_bundles')).toBe('gauge')
    expect(exposition.types.get('builder_pending_transactions')).toBe('gauge')
    expect(sampleValue(exposition, 'builder_bundles_total{outcome="outbid"}')).toBe(0)

    builder.totals = { blocksBuilt: 7, bundles: { included: 3, outbid: 2, invalid: 1, expired: 4 } }
    builder.pending = { bundles: 5, transactions: 6 }
    exposition = parseExposition(await registry.metrics())
    expectSamples(exposition, {
      builder_blocks_built_total: 7,
      'builder_bundles_total{outcome="included"}': 3,
      'builder_bundles_total{outcome="outbid"}': 2,
      'builder_bundles_total{outcome="invalid"}': 1,
      'builder_bundles_total{outcome="expired"}': 4,
      builder_pending_bundles: 5,
      builder_pending_transactions: 6,
    })
  })
})
