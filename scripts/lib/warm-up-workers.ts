/**
 * The warm-up bench:quote and its probes give a service's workers before they measure (thirteenth
 * session, issue 13): a worker's isolate compiles and re-optimizes its hot code over its first few
 * thousand quotes, so a warm-up counted in seconds leaves two workers each half as warm as one
 * worker alone. This one counts quotes per worker (`worker_tasks_completed_total` on each service's
 * /metrics) and loads the services a slice at a time until every one of them has answered that many
 * per worker, or a time cap is reached (a loaded machine answers slowly).
 */
import { performance } from 'node:perf_hooks'
import { scrapeSums } from './process-cpu.ts'

export interface WarmUpOptions {
  /** each service's base URL (http://host:port), scraped for its workers' completed tasks */
  bases: readonly string[]
  /** workers per service */
  workers: number
  /** quotes each worker answers before the warm-up ends */
  quotesPerWorker: number
  /** the longest the warm-up goes on, s, counted from `startedAt` */
  maxSeconds: number
  /** one slice of load on every service (a couple of seconds), run while a worker is short */
  slice: () => Promise<unknown>
  /** when the warm-up began (performance.now()), if load was already given before this call */
  startedAt?: number
}

/** Warms every service's workers (see the header); the quotes per worker reached (the least of the services) and the seconds it took. */
export async function warmUpWorkers(options: WarmUpOptions): Promise<{ quotesPerWorker: number; seconds: number }> {
  const started = options.startedAt ?? performance.now()
  const elapsed = () => (performance.now() - started) / 1000
  for (;;) {
    const perService = await Promise.all(options.bases.map(async (base) => (await scrapeSums(base, ['worker_tasks_completed_total'] as const)).worker_tasks_completed_total / options.workers))
    const done = Math.min(...perService)
    if (done >= options.quotesPerWorker || elapsed() >= options.maxSeconds) return { quotesPerWorker: done, seconds: elapsed() }
    await options.slice()
  }
}
