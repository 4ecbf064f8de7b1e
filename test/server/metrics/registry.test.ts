import { Counter, Registry, register as globalRegister } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { COLLECTOR_ERRORS_METRIC, createMetricsRegistry, registerScrapedFamily, samplesByLabel, scrapedFamilies } from '../../../src/server/metrics/registry.ts'
import { parseExposition, sampleValue } from './exposition.ts'

describe('createMetricsRegistry', () => {
  it("a registry of its own, with prom-client's default process, event-loop, GC and heap metrics", async () => {
    const before = globalRegister.getMetricsAsArray().length
    const r = createMetricsRegistry()
    const { types, samples } = parseExposition(await r.metrics())
    for (const [name, type] of [
      ['process_cpu_user_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
      ['nodejs_gc_duration_seconds', 'histogram'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      [COLLECTOR_ERRORS_METRIC, 'counter'],
    ]) {
      expect(types.get(name), name).toBe(type)
    }
    expect(sampleValue({ types, samples }, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(sampleValue({ types, samples }, COLLECTOR_ERRORS_METRIC)).toBe(0)
    expect(r.contentType).toBe('text/plain; version=0.0.4; charset=utf-8')
    // nothing went to prom-client's global registry
    expect(globalRegister.getMetricsAsArray().length).toBe(before)
  })

  it('registries are independent: two apps in one process each expose their own series', async () => {
    const a = createMetricsRegistry({ defaultMetrics: false })
    const b = createMetricsRegistry({ defaultMetrics: false })
    new Counter({ name: 'jobs_total', help: 'Jobs.', registers: [a] }).inc(3)
    new Counter({ name: 'jobs_total', help: 'Jobs.', registers: [b] }).inc(1)
    expect(sampleValue(parseExposition(await a.metrics()), 'jobs_total')).toBe(3)
    expect(sampleValue(parseExposition(await b.metrics()), 'jobs_total')).toBe(1)
    expect(await a.metrics()).not.toContain('process_cpu')
  })
})

describe('scraped families', () => {
  it('are read on every scrape, with their type, HELP and labels; bigint values are numbers', async () => {
    const r = createMetricsRegistry({ defaultMetrics: false })
    const stats = { hits: 5n, byMethod: { eth_getStorageAt: 7, eth_getCode: 2 }, entries: 42 }
    let reads = 0
    registerScrapedFamily(r, { name: 'cache_hits_total', help: 'Cache hits.', type: 'counter' }, () => {
      reads++
      return stats.hits
    })
    registerScrapedFamily(r, { name: 'upstream_calls_total', help: 'Calls by method.', type: 'counter', labelNames: ['method'] }, () => samplesByLabel('method', stats.byMethod))
    registerScrapedFamily(r, { name: 'cache_entries', help: 'Entries.', type: 'gauge' }, () => stats.entries)
    // nothing is read until a scrape
    expect(reads).toBe(0)

    let text = await r.metrics()
    let exposition = parseExposition(text)
    expect(reads).toBe(1)
    expect(text).toContain('# HELP cache_hits_total Cache hits.\n# TYPE cache_hits_total counter\ncache_hits_total 5\n')
    expect(exposition.types.get('cache_entries')).toBe('gauge')
    expect(sampleValue(exposition, 'upstream_calls_total{method="eth_getStorageAt"}')).toBe(7)
    expect(sampleValue(exposition, 'upstream_calls_total{method="eth_getCode"}')).toBe(2)

    stats.hits = 6n
    stats.entries = 40
    exposition = parseExposition(await r.metrics())
    // the domain's value, not an accumulation of scrapes
    expect(sampleValue(exposition, 'cache_hits_total')).toBe(6)
    expect(sampleValue(exposition, 'cache_entries')).toBe(40)
    expect(sampleValue(exposition, 'upstream_calls_total{method="eth_getStorageAt"}')).toBe(7)
  })

  it('report no sample when the read gives undefined, and drop series no longer read', async () => {
    const r = new Registry()
    let head: bigint | undefined
    let relays = ['a', 'b']
    const family = scrapedFamilies(r)
    family({ name: 'head_block', help: 'Head.', type: 'gauge' }, () => head)
    family({ name: 'relay_requests_total', help: 'Requests.', type: 'counter', labelNames: ['relay'] }, () => relays.map((relay) => ({ labels: { relay }, value: 1 })))
    let exposition = parseExposition(await r.metrics())
    expect(exposition.types.get('head_block')).toBe('gauge')
    expect([...exposition.samples.keys()].filter((k) => k.startsWith('head_block'))).toEqual([])
    expect(sampleValue(exposition, 'relay_requests_total{relay="b"}')).toBe(1)

    head = 12n
    relays = ['a']
    exposition = parseExposition(await r.metrics())
    expect(sampleValue(exposition, 'head_block')).toBe(12)
    expect(sampleValue(exposition, 'relay_requests_total{relay="b"}')).toBeUndefined()
  })

  it('a read that throws costs only its own family, counted in metrics_collector_errors_total', async () => {
    const r = createMetricsRegistry({ defaultMetrics: false })
    let broken = false
    registerScrapedFamily(r, { name: 'fragile', help: 'Fragile.', type: 'gauge' }, () => {
      if (broken) throw new Error('stats broke')
      return 1
    })
    registerScrapedFamily(r, { name: 'fragile_by_kind', help: 'Fragile by kind.', type: 'counter', labelNames: ['kind'] }, () => {
      if (broken) return [{ labels: { kind: 'a' }, value: 1 }, { labels: { wrong: 'x' } as never, value: 1 }]
      return [{ labels: { kind: 'a' }, value: 1 }]
    })
    registerScrapedFamily(r, { name: 'sturdy', help: 'Sturdy.', type: 'gauge' }, () => 2)
    expect(sampleValue(parseExposition(await r.metrics()), 'fragile')).toBe(1)

    broken = true
    const exposition = parseExposition(await r.metrics())
    expect(sampleValue(exposition, 'sturdy')).toBe(2)
    expect(sampleValue(exposition, 'fragile')).toBeUndefined()
    // a half-read family is not reported half
    expect(sampleValue(exposition, 'fragile_by_kind{kind="a"}')).toBeUndefined()
    expect(sampleValue(exposition, COLLECTOR_ERRORS_METRIC)).toBe(2)
  })

  it('a name taken twice is refused when registered, not at scrape time', () => {
    const r = createMetricsRegistry({ defaultMetrics: false })
    registerScrapedFamily(r, { name: 'taken', help: 'x', type: 'gauge' }, () => 1)
    expect(() => registerScrapedFamily(r, { name: 'taken', help: 'x', type: 'gauge' }, () => 1)).toThrow(/already been registered/)
    expect(() => registerScrapedFamily(r, { name: 'bad-name', help: 'x', type: 'gauge' }, () => 1)).toThrow(/Invalid metric name/)
  })

  it('samplesByLabel: one sample per key, with the extra labels', () => {
    expect(samplesByLabel('reason', { timeout: 2, http: 0 }, { relay: 'r1' })).toEqual([
      { labels: { relay: 'r1', reason: 'timeout' }, value: 2 },
      { labels: { relay: 'r1', reason: 'http' }, value: 0 },
    ])
  })
})
