/**
 * The service's Prometheus metrics, on prom-client (text exposition format 0.0.4).
 *
 * One `Registry` per app instance, never prom-client's global one: a process (a test run) may
 * build many apps, and each must expose only its own series. `createMetricsRegistry` adds
 * prom-client's default metrics (process CPU and memory, file descriptors, event-loop lag, GC,
 * heap spaces) to it.
 *
 * Numbers the domain already keeps (the state source's upstream calls, the dispatcher's open
 * submissions, a relay's failures...) are not pushed through here as they happen: a scraped family
 * (`registerScrapedFamily`) reads them through a `collect()` run on each scrape, so the hot paths
 * pay nothing for them.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client'

export type { Registry as MetricsRegistry } from 'prom-client'

export interface CreateMetricsRegistryOptions {
  /** prom-client's default process and Node.js metrics. Default true. */
  defaultMetrics?: boolean
}

/**
 * A fresh registry, with the default metrics unless told otherwise. Note that prom-client gives
 * no way to stop what the default metrics start (an event-loop delay monitor and a GC observer,
 * both cheap): build one per app, not one per request.
 */
export function createMetricsRegistry(options: CreateMetricsRegistryOptions = {}): Registry {
  const register = new Registry()
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register })
  collectorErrors(register)
  return register
}

export const COLLECTOR_ERRORS_METRIC = 'metrics_collector_errors_total'

/** The registry's count of scraped families whose reading threw, created on first use. */
function collectorErrors(register: Registry): Counter {
  const existing = register.getSingleMetric(COLLECTOR_ERRORS_METRIC)
  if (existing !== undefined) return existing as Counter
  return new Counter({ name: COLLECTOR_ERRORS_METRIC, help: 'Scraped families whose reading threw during a scrape (the family had no samples in that scrape).', registers: [register] })
}

/** One sample of a scraped family. bigint is accepted because chain-side numbers are bigint. */
export interface ScrapedSample<L extends string> {
  labels?: LabelValues<L>
  value: number | bigint
}

export interface ScrapedFamilyOptions<L extends string> {
  name: string
  help: string
  /** counters are cumulative since start; gauges are a current level */
  type: 'counter' | 'gauge'
  labelNames?: readonly L[]
}

/**
 * What a scraped family reads on each scrape: one value (an unlabelled family), its samples, or
 * undefined for no sample at all this time (e.g. no head block yet).
 */
export type ScrapedRead<L extends string> = () => number | bigint | undefined | Iterable<ScrapedSample<L>>

/**
 * Registers a family whose samples are read by `read` on every scrape. A `read` that throws costs
 * only its own family for that scrape (counted in metrics_collector_errors_total); the scrape
 * itself still succeeds.
 */
export function registerScrapedFamily<L extends string>(register: Registry, options: ScrapedFamilyOptions<L>, read: ScrapedRead<L>): void {
  const errors = collectorErrors(register)
  const base = { name: options.name, help: options.help, labelNames: options.labelNames ?? [], registers: [register] }
  if (options.type === 'counter') {
    new Counter<L>({
      ...base,
      collect() {
        fill(this, read, errors, (labels, value) => this.inc(labels, value))
      },
    })
  } else {
    new Gauge<L>({
      ...base,
      collect() {
        fill(this, read, errors, (labels, value) => this.set(labels, value))
      },
    })
  }
}

/** registerScrapedFamily bound to `register`, for modules that register several families. */
export function scrapedFamilies(register: Registry): <L extends string>(options: ScrapedFamilyOptions<L>, read: ScrapedRead<L>) => void {
  return (options, read) => registerScrapedFamily(register, options, read)
}

function fill<L extends string>(metric: Counter<L> | Gauge<L>, read: ScrapedRead<L>, errors: Counter, put: (labels: LabelValues<L>, value: number) => void): void {
  // the previous scrape's series go: a series that is no longer read (a relay gone, no head) is not reported
  clear(metric)
  try {
    const got = read()
    if (got === undefined) return
    if (typeof got === 'number' || typeof got === 'bigint') put({}, Number(got))
    else for (const sample of got) put(sample.labels ?? {}, Number(sample.value))
  } catch {
    errors.inc()
    clear(metric)
  }
}

/** No series at all (reset() alone leaves an unlabelled metric at 0). */
function clear<L extends string>(metric: Counter<L> | Gauge<L>): void {
  metric.reset()
  metric.remove({})
}

/** One sample per key of `counts`, that key as the value of `label`, plus the `extra` labels. */
export function samplesByLabel<K extends string, E extends string = never>(label: K, counts: Readonly<Record<string, number>>, extra?: LabelValues<E>): ScrapedSample<K | E>[] {
  return Object.entries(counts).map(([key, value]) => ({ labels: { ...extra, [label]: key } as LabelValues<K | E>, value }))
}
