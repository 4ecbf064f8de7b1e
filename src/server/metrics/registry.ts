/**
 * A deliberately tiny Prometheus registry (text exposition format 0.0.4): counters, gauges and
 * histograms with labels, plus collectors that are asked for samples at scrape time. The service
 * needs a handful of series, not a metrics library; owning ~300 lines beats a new dependency.
 *
 * Collectors are how other modules (the fork state cache: upstream calls, cache hits/misses)
 * export numbers they already keep, without pushing every event through this registry.
 *
 * Format reference: https://prometheus.io/docs/instrumenting/exposition_formats/
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'untyped'
export type Labels = Readonly<Record<string, string>>

/** One line of a collected family. bigint is accepted because chain-side counters are bigint. */
export interface MetricSample {
  labels?: Labels
  value: number | bigint
}

/** What a collector returns: whole families, so HELP/TYPE stay next to their samples. */
export interface CollectedFamily {
  name: string
  help: string
  /** collectors report counters and gauges; histograms belong in the registry proper */
  type: 'counter' | 'gauge' | 'untyped'
  samples: readonly MetricSample[]
}

export type Collector = () => readonly CollectedFamily[] | Promise<readonly CollectedFamily[]>

export interface MetricOptions<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
}

export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** upper bounds, ascending; +Inf is implicit. Defaults to DEFAULT_LATENCY_BUCKETS. */
  buckets?: readonly number[]
}

/** Seconds; the Prometheus client libraries' defaults, which suit HTTP latencies. */
export const DEFAULT_LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** HELP text escapes backslash and newline only (quotes are literal there). */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

/** Label values escape backslash, double quote and newline. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** Go's ParseFloat spelling for the special values; integers and decimals as JS prints them. */
export function formatValue(value: number | bigint): string {
  if (typeof value === 'bigint') return value.toString()
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

function formatLabels(labels: Labels | undefined, extra?: [string, string]): string {
  const parts: string[] = []
  if (labels) for (const [k, v] of Object.entries(labels)) parts.push(`${k}="${escapeLabelValue(v)}"`)
  if (extra) parts.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`)
  return parts.length === 0 ? '' : `{${parts.join(',')}}`
}

function checkName(name: string): void {
  if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`)
}

function checkLabelNames(names: readonly string[], reserved: readonly string[] = []): void {
  const seen = new Set<string>()
  for (const n of names) {
    // names starting with __ are reserved for Prometheus itself
    if (!LABEL_NAME.test(n) || n.startsWith('__') || reserved.includes(n)) throw new Error(`invalid label name ${JSON.stringify(n)}`)
    if (seen.has(n)) throw new Error(`duplicate label name ${JSON.stringify(n)}`)
    seen.add(n)
  }
}

/** Common part: a metric owns series keyed by its label values in declared order. */
abstract class Metric<L extends string, S> {
  readonly name: string
  readonly help: string
  readonly labelNames: readonly L[]
  protected readonly series = new Map<string, { labels: Labels; state: S }>()

  constructor(opts: MetricOptions<L>, reservedLabels: readonly string[] = []) {
    checkName(opts.name)
    this.name = opts.name
    this.help = opts.help
    this.labelNames = opts.labelNames ?? []
    checkLabelNames(this.labelNames, reservedLabels)
  }

  abstract readonly type: MetricType
  protected abstract initial(): S
  abstract render(): string[]

  /**
   * The series for these labels, created on first use. A label set that does not match the
   * declared names is a programming error and throws: a silently mislabelled series is worse.
   */
  protected seriesFor(labels: Partial<Record<L, string>> | undefined): S {
    const given = labels ?? {}
    const values: string[] = []
    for (const n of this.labelNames) {
      const v = (given as Record<string, string | undefined>)[n]
      if (typeof v !== 'string') throw new Error(`${this.name}: missing label ${n}`)
      values.push(v)
    }
    if (Object.keys(given).length !== this.labelNames.length) throw new Error(`${this.name}: unexpected labels ${Object.keys(given).join(',')}`)
    // JSON of a string array is an unambiguous key (no separator collisions)
    const key = JSON.stringify(values)
    let entry = this.series.get(key)
    if (!entry) {
      const ordered: Record<string, string> = {}
      this.labelNames.forEach((n, i) => (ordered[n] = values[i]))
      entry = { labels: ordered, state: this.initial() }
      this.series.set(key, entry)
    }
    return entry.state
  }

  protected header(): string[] {
    return [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`]
  }
}

export class Counter<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'counter' as const
  protected initial() {
    return { value: 0 }
  }
  inc(labels?: Record<L, string>, by = 1): void {
    // counters only go up; a negative increment would read as a counter reset
    if (!(by >= 0)) throw new Error(`${this.name}: counter increment must be >= 0`)
    this.seriesFor(labels).value += by
  }
  /** current value, for tests and collectors */
  get(labels?: Record<L, string>): number {
    return this.seriesFor(labels).value
  }
  render(): string[] {
    const lines = this.header()
    for (const { labels, state } of this.series.values()) lines.push(`${this.name}${formatLabels(labels)} ${formatValue(state.value)}`)
    return lines
  }
}

export class Gauge<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'gauge' as const
  protected initial() {
    return { value: 0 }
  }
  set(labels: Record<L, string> | undefined, value: number): void {
    this.seriesFor(labels).value = value
  }
  inc(labels?: Record<L, string>, by = 1): void {
    this.seriesFor(labels).value += by
  }
  dec(labels?: Record<L, string>, by = 1): void {
    this.seriesFor(labels).value -= by
  }
  get(labels?: Record<L, string>): number {
    return this.seriesFor(labels).value
  }
  render(): string[] {
    const lines = this.header()
    for (const { labels, state } of this.series.values()) lines.push(`${this.name}${formatLabels(labels)} ${formatValue(state.value)}`)
    return lines
  }
}

interface HistogramState {
  /** per-bucket (non-cumulative) counts; the last slot is the +Inf overflow */
  counts: number[]
  sum: number
  count: number
}

export class Histogram<L extends string = never> extends Metric<L, HistogramState> {
  readonly type = 'histogram' as const
  readonly buckets: readonly number[]

  constructor(opts: HistogramOptions<L>) {
    // `le` is the bucket label the format adds itself
    super(opts, ['le'])
    const buckets = [...(opts.buckets ?? DEFAULT_LATENCY_BUCKETS)]
    for (let i = 0; i < buckets.length; i++) {
      if (!Number.isFinite(buckets[i])) throw new Error(`${this.name}: bucket bounds must be finite (+Inf is implicit)`)
      if (i > 0 && !(buckets[i] > buckets[i - 1])) throw new Error(`${this.name}: bucket bounds must be strictly ascending`)
    }
    this.buckets = buckets
  }

  protected initial(): HistogramState {
    return { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 }
  }

  observe(labels: Record<L, string> | undefined, value: number): void {
    const s = this.seriesFor(labels)
    let i = 0
    // buckets are upper-inclusive (value <= le)
    while (i < this.buckets.length && value > this.buckets[i]) i++
    s.counts[i]++
    s.sum += value
    s.count++
  }

  /** snapshot for tests: cumulative bucket counts including +Inf */
  snapshot(labels?: Record<L, string>): { buckets: number[]; sum: number; count: number } {
    const s = this.seriesFor(labels)
    let acc = 0
    return { buckets: s.counts.map((c) => (acc += c)), sum: s.sum, count: s.count }
  }

  render(): string[] {
    const lines = this.header()
    for (const { labels, state } of this.series.values()) {
      // exposition buckets are cumulative: each le counts every observation <= le
      let acc = 0
      for (let i = 0; i < this.buckets.length; i++) {
        acc += state.counts[i]
        lines.push(`${this.name}_bucket${formatLabels(labels, ['le', formatValue(this.buckets[i])])} ${acc}`)
      }
      acc += state.counts[this.buckets.length]
      lines.push(`${this.name}_bucket${formatLabels(labels, ['le', '+Inf'])} ${acc}`)
      lines.push(`${this.name}_sum${formatLabels(labels)} ${formatValue(state.sum)}`)
      lines.push(`${this.name}_count${formatLabels(labels)} ${formatValue(state.count)}`)
    }
    return lines
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric<string, unknown>>()
  private readonly collectors: Collector[] = []
  private collectorErrors = 0

  counter<L extends string = never>(opts: MetricOptions<L>): Counter<L> {
    return this.add(new Counter<L>(opts))
  }

  gauge<L extends string = never>(opts: MetricOptions<L>): Gauge<L> {
    return this.add(new Gauge<L>(opts))
  }

  histogram<L extends string = never>(opts: HistogramOptions<L>): Histogram<L> {
    return this.add(new Histogram<L>(opts))
  }

  /**
   * Register a function asked for samples on every scrape. Returns an unregister function.
   * A collector that throws or returns malformed families costs only its own families for that
   * scrape (counted in metrics_collector_errors_total); the scrape itself still succeeds.
   */
  registerCollector(collector: Collector): () => void {
    this.collectors.push(collector)
    return () => {
      const i = this.collectors.indexOf(collector)
      if (i >= 0) this.collectors.splice(i, 1)
    }
  }

  /** The whole registry in text format 0.0.4, newline-terminated. */
  async render(): Promise<string> {
    const lines: string[] = []
    for (const m of this.metrics.values()) lines.push(...m.render())
    const names = new Set(this.metrics.keys())
    for (const collector of this.collectors) {
      let families: readonly CollectedFamily[]
      try {
        families = await collector()
      } catch {
        this.collectorErrors++
        continue
      }
      for (const family of families) {
        const rendered = renderFamily(family, names)
        if (rendered === undefined) {
          this.collectorErrors++
          continue
        }
        names.add(family.name)
        lines.push(...rendered)
      }
    }
    lines.push(
      '# HELP metrics_collector_errors_total Collectors that threw or returned malformed or duplicate families during scrapes.',
      '# TYPE metrics_collector_errors_total counter',
      `metrics_collector_errors_total ${this.collectorErrors}`,
    )
    return lines.join('\n') + '\n'
  }

  private add<M extends Metric<string, unknown>>(metric: M): M {
    // a duplicate family makes Prometheus reject the whole scrape, so refuse it up front
    if (this.metrics.has(metric.name) || metric.name === 'metrics_collector_errors_total') throw new Error(`metric ${metric.name} already registered`)
    this.metrics.set(metric.name, metric)
    return metric
  }
}

/** undefined when the family is malformed or its name is taken (which would break the scrape) */
function renderFamily(family: CollectedFamily, taken: ReadonlySet<string>): string[] | undefined {
  try {
    checkName(family.name)
    if (taken.has(family.name) || family.name === 'metrics_collector_errors_total') return undefined
    if (family.type !== 'counter' && family.type !== 'gauge' && family.type !== 'untyped') return undefined
    const lines = [`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`]
    for (const sample of family.samples) {
      if (typeof sample.value !== 'number' && typeof sample.value !== 'bigint') return undefined
      if (sample.labels) {
        checkLabelNames(Object.keys(sample.labels))
        for (const v of Object.values(sample.labels)) if (typeof v !== 'string') return undefined
      }
      lines.push(`${family.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`)
    }
    return lines
  } catch {
    return undefined
  }
}
