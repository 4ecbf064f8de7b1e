import { describe, expect, it } from 'vitest'
import { MetricsRegistry, escapeHelp, escapeLabelValue, formatValue } from '../../../src/server/metrics/registry.ts'

/**
 * A strict reader of the text format: HELP then TYPE precede each family's samples, every
 * sample line parses, and each family appears once. Returns samples by series.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Map<string, string> } {
  expect(text.endsWith('\n')).toBe(true)
  const types = new Map<string, string>()
  const samples = new Map<string, string>()
  let current: string | undefined
  const lines = text.slice(0, -1).split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const help = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (help) {
      expect(types.has(help[1]), `family ${help[1]} twice`).toBe(false)
      const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|untyped)$/.exec(lines[++i] ?? '')
      expect(type?.[1], `TYPE after HELP for ${help[1]}`).toBe(help[1])
      types.set(help[1], type![2])
      current = help[1]
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\})? (\S+)$/.exec(line)
    expect(sample, `bad line: ${line}`).not.toBeNull()
    const base = sample![1].replace(/_(bucket|sum|count)$/, '')
    expect(current === sample![1] || (types.get(current!) === 'histogram' && current === base), `sample ${sample![1]} outside its family`).toBe(true)
    expect(sample![3]).toMatch(/^(-?\d+(\.\d+)?(e[+-]\d+)?|NaN|[+-]Inf)$/)
    samples.set(sample![1] + (sample![2] ?? ''), sample![3])
  }
  return { types, samples }
}

describe('MetricsRegistry exposition (text format 0.0.4)', () => {
  it('renders counters with HELP/TYPE and labels in declared order', async () => {
    const r = new MetricsRegistry()
    const c = r.counter({ name: 'jobs_total', help: 'Jobs done.', labelNames: ['queue', 'result'] })
    c.inc({ result: 'ok', queue: 'a' })
    c.inc({ queue: 'a', result: 'ok' }, 2)
    c.inc({ queue: 'b', result: 'failed' })
    const text = await r.render()
    expect(text).toBe(
      [
        '# HELP jobs_total Jobs done.',
        '# TYPE jobs_total counter',
        'jobs_total{queue="a",result="ok"} 3',
        'jobs_total{queue="b",result="failed"} 1',
        '# HELP metrics_collector_errors_total Collectors that threw or returned malformed or duplicate families during scrapes.',
        '# TYPE metrics_collector_errors_total counter',
        'metrics_collector_errors_total 0',
        '',
      ].join('\n'),
    )
    parseExposition(text)
  })

  it('escapes label values (backslash, quote, newline) and HELP text (backslash, newline)', async () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd')
    expect(escapeHelp('line1\nC:\\path "quoted"')).toBe('line1\\nC:\\\\path "quoted"')
    const r = new MetricsRegistry()
    r.counter({ name: 'odd_total', help: 'Help with \\ and\nnewline.', labelNames: ['v'] }).inc({ v: 'x"y\\z\nw' })
    const text = await r.render()
    expect(text).toContain('# HELP odd_total Help with \\\\ and\\nnewline.\n')
    expect(text).toContain('odd_total{v="x\\"y\\\\z\\nw"} 1\n')
    const { samples } = parseExposition(text)
    expect(samples.get('odd_total{v="x\\"y\\\\z\\nw"}')).toBe('1')
  })

  it('histograms: cumulative buckets, upper-inclusive bounds, +Inf, _sum and _count', async () => {
    const r = new MetricsRegistry()
    const h = r.histogram({ name: 'latency_seconds', help: 'Latency.', labelNames: ['route'], buckets: [0.1, 0.5, 1] })
    for (const v of [0.05, 0.1, 0.3, 0.5, 0.7, 2, 3]) h.observe({ route: '/x' }, v)
    h.observe({ route: '/y' }, 0.2)
    const text = await r.render()
    const lines = text.split('\n').filter((l) => l.startsWith('latency_seconds'))
    expect(lines).toEqual([
      'latency_seconds_bucket{route="/x",le="0.1"} 2',
      'latency_seconds_bucket{route="/x",le="0.5"} 4',
      'latency_seconds_bucket{route="/x",le="1"} 5',
      'latency_seconds_bucket{route="/x",le="+Inf"} 7',
      'latency_seconds_sum{route="/x"} 6.65',
      'latency_seconds_count{route="/x"} 7',
      'latency_seconds_bucket{route="/y",le="0.1"} 0',
      'latency_seconds_bucket{route="/y",le="0.5"} 1',
      'latency_seconds_bucket{route="/y",le="1"} 1',
      'latency_seconds_bucket{route="/y",le="+Inf"} 1',
      'latency_seconds_sum{route="/y"} 0.2',
      'latency_seconds_count{route="/y"} 1',
    ])
    expect(text).toContain('# TYPE latency_seconds histogram\n')
    const { types } = parseExposition(text)
    expect(types.get('latency_seconds')).toBe('histogram')
    expect(h.snapshot({ route: '/x' })).toEqual({ buckets: [2, 4, 5, 7], sum: 6.65, count: 7 })
  })

  it('histogram +Inf count equals _count and buckets never decrease', async () => {
    const r = new MetricsRegistry()
    const h = r.histogram({ name: 'h', help: 'h' })
    for (let i = 0; i < 200; i++) h.observe(undefined, Math.random() * 20)
    const { samples } = parseExposition(await r.render())
    const buckets = [...samples.entries()].filter(([k]) => k.startsWith('h_bucket')).map(([, v]) => Number(v))
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1])
    expect(samples.get('h_bucket{le="+Inf"}')).toBe('200')
    expect(samples.get('h_count')).toBe('200')
  })

  it('gauges set, inc and dec; special values use the Go spelling', async () => {
    const r = new MetricsRegistry()
    const g = r.gauge({ name: 'in_flight', help: 'In flight.' })
    g.set(undefined, 5)
    g.inc()
    g.dec(undefined, 2)
    expect(g.get()).toBe(4)
    expect(await r.render()).toContain('# TYPE in_flight gauge\nin_flight 4\n')
    expect([NaN, Infinity, -Infinity, 1.5, 10n ** 30n].map(formatValue)).toEqual(['NaN', '+Inf', '-Inf', '1.5', '1000000000000000000000000000000'])
  })

  it('refuses invalid names, reserved labels, duplicates, wrong label sets and negative increments', () => {
    const r = new MetricsRegistry()
    expect(() => r.counter({ name: 'bad-name', help: '' })).toThrow(/metric name/)
    expect(() => r.counter({ name: 'x_total', help: '', labelNames: ['bad-label'] })).toThrow(/label name/)
    expect(() => r.counter({ name: 'x_total', help: '', labelNames: ['__reserved'] })).toThrow(/label name/)
    expect(() => r.histogram({ name: 'h', help: '', labelNames: ['le'] })).toThrow(/label name/)
    expect(() => r.histogram({ name: 'h2', help: '', buckets: [1, 0.5] })).toThrow(/ascending/)
    expect(() => r.histogram({ name: 'h3', help: '', buckets: [1, Infinity] })).toThrow(/finite/)
    const c = r.counter({ name: 'ok_total', help: '', labelNames: ['a'] })
    expect(() => r.counter({ name: 'ok_total', help: '' })).toThrow(/already registered/)
    expect(() => r.gauge({ name: 'metrics_collector_errors_total', help: '' })).toThrow(/already registered/)
    expect(() => c.inc({} as { a: string })).toThrow(/missing label a/)
    expect(() => c.inc({ a: '1', b: '2' } as { a: string })).toThrow(/unexpected labels/)
    expect(() => c.inc({ a: '1' }, -1)).toThrow(/>= 0/)
  })
})

describe('collectors', () => {
  it('are asked on every scrape; bigint values and async collectors work', async () => {
    const r = new MetricsRegistry()
    let hits = 0n
    r.registerCollector(() => [
      { name: 'fork_cache_hits_total', help: 'Cache hits.', type: 'counter', samples: [{ value: hits }] },
      {
        name: 'fork_upstream_calls_total',
        help: 'Upstream calls by method.',
        type: 'counter',
        samples: [
          { labels: { method: 'eth_getStorageAt' }, value: 7 },
          { labels: { method: 'eth_getCode' }, value: 2 },
        ],
      },
    ])
    r.registerCollector(async () => [{ name: 'fork_cache_entries', help: 'Entries.', type: 'gauge', samples: [{ value: 42 }] }])
    hits = 5n
    let text = await r.render()
    parseExposition(text)
    expect(text).toContain('# HELP fork_cache_hits_total Cache hits.\n# TYPE fork_cache_hits_total counter\nfork_cache_hits_total 5\n')
    expect(text).toContain('fork_upstream_calls_total{method="eth_getStorageAt"} 7\n')
    expect(text).toContain('# TYPE fork_cache_entries gauge\nfork_cache_entries 42\n')
    hits = 6n
    text = await r.render()
    expect(text).toContain('fork_cache_hits_total 6\n')
  })

  it('a failing, malformed or clashing collector costs only its own families', async () => {
    const r = new MetricsRegistry()
    r.counter({ name: 'taken_total', help: 'x' }).inc()
    r.registerCollector(() => {
      throw new Error('collector broke')
    })
    r.registerCollector(() => [
      { name: 'taken_total', help: 'clash', type: 'counter', samples: [{ value: 1 }] },
      { name: 'bad name', help: 'x', type: 'gauge', samples: [{ value: 1 }] },
      { name: 'bad_labels', help: 'x', type: 'gauge', samples: [{ labels: { 'a-b': 'x' }, value: 1 }] },
      { name: 'good', help: 'fine', type: 'gauge', samples: [{ value: 1 }] },
    ])
    const text = await r.render()
    parseExposition(text)
    expect(text).toContain('good 1\n')
    expect(text).not.toContain('clash')
    expect(text).toContain('metrics_collector_errors_total 4\n')
  })

  it('can be unregistered', async () => {
    const r = new MetricsRegistry()
    const off = r.registerCollector(() => [{ name: 'temp', help: 't', type: 'gauge', samples: [{ value: 1 }] }])
    expect(await r.render()).toContain('temp 1')
    off()
    expect(await r.render()).not.toContain('temp')
  })
})
