/**
 * Where bench:soak's slow answers wait (issue 13's tail under the mixed load): the service's head
 * as the load sees it, its worker pool's task times by kind, and its main thread's event-loop
 * delay, each read from outside the service (its local builder's JSON-RPC and its /metrics), so
 * the measured process runs no extra code.
 *
 * - Heads: the builder's eth_blockNumber polled every HEAD_POLL_MS; each request is stamped with
 *   the head of its due time, so lib/latency-by-head.ts splits latencies by time since the head
 *   (within HEAD_POLL_MS of the seal; the builder seals in the service's own process).
 * - Task times: the pool's histograms (worker_task_wait_seconds: in the pool's queue, the TaskGate;
 *   worker_task_compute_seconds: the worker's own time; worker_task_dispatch_seconds: the rest of
 *   the run, piscina's dispatch, the messages and the main thread's event loop getting to the
 *   answer), by kind, over the load: the difference of two scrapes.
 * - Event loop: prom-client's nodejs_eventloop_lag_max_seconds describes the time since the
 *   previous scrape (each resets it): scraped every second, each second's longest delay is
 *   classed by the time since the last head at its end.
 */
import { percentile } from './stats.ts'

/** how often the builder's head is read, ms */
export const HEAD_POLL_MS = 100
/** a second of event-loop delay counts as "after a head" when it ends this soon after one, ms */
export const LOOP_AFTER_HEAD_MS = 2_000

const round = (x: number, d = 2): number | null => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null)

export interface HeadWatch {
  /** the head last read (undefined before the first read) */
  current(): bigint | undefined
  /** when each head after the first was first read, ms on `clock` */
  readonly changes: number[]
  stop(): void
}

/** Polls `builderUrl`'s eth_blockNumber every HEAD_POLL_MS; `clock` is the load's own (ms since its start). */
export function watchHeads(builderUrl: string, clock: () => number): HeadWatch {
  let head: bigint | undefined
  let busy = false
  const changes: number[] = []
  const poll = async (): Promise<void> => {
    if (busy) return
    busy = true
    try {
      const res = await fetch(builderUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }), signal: AbortSignal.timeout(5_000) })
      const body = (await res.json()) as { result?: string }
      if (body.result === undefined) return
      const n = BigInt(body.result)
      if (head !== undefined && n > head) changes.push(clock())
      if (head === undefined || n > head) head = n
    } catch {
      // a missed poll only blurs the head's time by one interval
    } finally {
      busy = false
    }
  }
  void poll()
  const timer = setInterval(() => void poll(), HEAD_POLL_MS)
  return { current: () => head, changes, stop: () => clearInterval(timer) }
}

/** One Prometheus histogram's series for one label value: bucket counts by upper bound, count and sum. */
interface HistogramSeries {
  buckets: Map<number, number>
  count: number
  sum: number
}

/** name -> kind -> series, of the histograms in `names`, from a /metrics text */
export function parseHistograms(text: string, names: readonly string[]): Map<string, Map<string, HistogramSeries>> {
  const out = new Map<string, Map<string, HistogramSeries>>(names.map((n) => [n, new Map()]))
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*?)_(bucket|count|sum)\{([^}]*)\} (\S+)$/.exec(line)
    if (m === null) continue
    const byKind = out.get(m[1])
    if (byKind === undefined) continue
    const kind = /kind="([^"]*)"/.exec(m[3])?.[1]
    if (kind === undefined) continue
    let series = byKind.get(kind)
    if (series === undefined) byKind.set(kind, (series = { buckets: new Map(), count: 0, sum: 0 }))
    const value = Number(m[4])
    if (m[2] === 'count') series.count = value
    else if (m[2] === 'sum') series.sum = value
    else {
      const le = /le="([^"]*)"/.exec(m[3])?.[1]
      if (le !== undefined) series.buckets.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), value)
    }
  }
  return out
}

function minus(after: HistogramSeries | undefined, before: HistogramSeries | undefined): HistogramSeries {
  const buckets = new Map<number, number>()
  for (const [le, n] of after?.buckets ?? []) buckets.set(le, n - (before?.buckets.get(le) ?? 0))
  return { buckets, count: (after?.count ?? 0) - (before?.count ?? 0), sum: (after?.sum ?? 0) - (before?.sum ?? 0) }
}

/** the upper bound (ms) of the bucket holding quantile q: a histogram only says "at most this" */
function quantileBoundMs(series: HistogramSeries, q: number): number | null {
  if (series.count === 0) return null
  const rank = Math.ceil(q * series.count)
  for (const [le, n] of [...series.buckets].sort((a, b) => a[0] - b[0])) if (n >= rank) return Number.isFinite(le) ? le * 1000 : null
  return null
}

/** tasks of the series above `seconds` (a bucket bound) */
function above(series: HistogramSeries, seconds: number): number {
  return series.count - (series.buckets.get(seconds) ?? 0)
}

export interface TaskTimes {
  count: number
  /** waiting in the pool's queue (the TaskGate), ms */
  wait_mean_ms: number | null
  /** the bucket bound at or under which 99% waited ("at most", ms; null: beyond the last bound) */
  wait_p99_at_most_ms: number | null
  /** tasks that waited longer than 250 ms */
  waited_over_250ms: number
  /** the worker's own computation, ms */
  compute_mean_ms: number | null
  compute_p99_at_most_ms: number | null
  /** the rest of the run (dispatch, messages, the main thread getting to the answer), ms */
  dispatch_mean_ms: number | null
  dispatch_p99_at_most_ms: number | null
}

const TASK_HISTOGRAMS = ['worker_task_wait_seconds', 'worker_task_compute_seconds', 'worker_task_dispatch_seconds'] as const

export interface TaskTimesWindow {
  stop(): Promise<Record<string, TaskTimes>>
}

async function scrape(baseUrl: string): Promise<string> {
  return (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
}

/** The pool's task times by kind between now and stop() (see the file's comment). */
export async function taskTimesWindow(baseUrl: string): Promise<TaskTimesWindow> {
  const before = parseHistograms(await scrape(baseUrl), TASK_HISTOGRAMS)
  return {
    async stop() {
      const after = parseHistograms(await scrape(baseUrl), TASK_HISTOGRAMS)
      const kinds = new Set([...(after.get(TASK_HISTOGRAMS[0])?.keys() ?? [])])
      const out: Record<string, TaskTimes> = {}
      for (const kind of kinds) {
        const [wait, compute, dispatch] = TASK_HISTOGRAMS.map((n) => minus(after.get(n)?.get(kind), before.get(n)?.get(kind)))
        const mean = (s: HistogramSeries) => (s.count === 0 ? null : round((s.sum * 1000) / s.count))
        out[kind] = {
          count: wait.count,
          wait_mean_ms: mean(wait),
          wait_p99_at_most_ms: quantileBoundMs(wait, 0.99),
          waited_over_250ms: above(wait, 0.25),
          compute_mean_ms: mean(compute),
          compute_p99_at_most_ms: quantileBoundMs(compute, 0.99),
          dispatch_mean_ms: mean(dispatch),
          dispatch_p99_at_most_ms: quantileBoundMs(dispatch, 0.99),
        }
      }
      return out
    },
  }
}

export interface LoopLagSecond {
  /** the end of the second, ms on the load's clock */
  at: number
  maxMs: number
  /** the pool's task histograms so far (cumulative), per kind: tasks, and their wait and compute sums, s */
  tasks: Record<string, { count: number; waitS: number; computeS: number }>
}

/** Scrapes the event loop's longest delay every second until stop() (see the file's comment). */
export function sampleLoopLag(baseUrl: string, clock: () => number): { samples: LoopLagSecond[]; stop(): void } {
  const samples: LoopLagSecond[] = []
  const timer = setInterval(() => {
    void scrape(baseUrl)
      .then((text) => {
        const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds'))
        if (line === undefined) return
        const histograms = parseHistograms(text, TASK_HISTOGRAMS)
        const tasks: LoopLagSecond['tasks'] = {}
        for (const [kind, wait] of histograms.get('worker_task_wait_seconds') ?? []) {
          tasks[kind] = { count: wait.count, waitS: wait.sum, computeS: histograms.get('worker_task_compute_seconds')?.get(kind)?.sum ?? 0 }
        }
        samples.push({ at: clock(), maxMs: Number(line.slice(line.lastIndexOf(' ') + 1)) * 1000, tasks })
      })
      .catch(() => undefined)
  }, 1_000)
  return { samples, stop: () => clearInterval(timer) }
}

export interface LoopLagByHead {
  /** seconds ending within LOOP_AFTER_HEAD_MS of a head: how many, the median and the highest of their longest delays, ms */
  after_head: { seconds: number; p50_max_ms: number | null; max_ms: number | null }
  rest: { seconds: number; p50_max_ms: number | null; max_ms: number | null }
}

/** Each second's longest event-loop delay, classed by the time since the head before its end. */
export function loopLagByHead(samples: readonly LoopLagSecond[], heads: readonly number[]): LoopLagByHead {
  const after: number[] = []
  const rest: number[] = []
  for (const s of samples) {
    let last: number | undefined
    for (const h of heads) if (h <= s.at) last = h
    if (last === undefined) continue
    ;(s.at - last < LOOP_AFTER_HEAD_MS ? after : rest).push(s.maxMs)
  }
  const describe = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b)
    return { seconds: xs.length, p50_max_ms: round(percentile(sorted, 0.5), 1), max_ms: round(sorted[sorted.length - 1] ?? Number.NaN, 1) }
  }
  return { after_head: describe(after), rest: describe(rest) }
}

export interface TaskTimesSince {
  tasks: number
  wait_mean_ms: number | null
  compute_mean_ms: number | null
}

/**
 * The pool's tasks answered in each second, by kind, classed as loopLagByHead classes the seconds:
 * within LOOP_AFTER_HEAD_MS of a head or not. Tells whether the tasks after a head wait longer in
 * the queue (the order of the lines) or compute longer (cold caches, state reads waiting for a busy
 * main thread).
 */
export function taskTimesByHead(samples: readonly LoopLagSecond[], heads: readonly number[]): Record<string, { after_head: TaskTimesSince; rest: TaskTimesSince }> {
  const sums = new Map<string, Record<'after_head' | 'rest', { count: number; waitS: number; computeS: number }>>()
  for (let i = 1; i < samples.length; i++) {
    const s = samples[i]
    let last: number | undefined
    for (const h of heads) if (h <= s.at) last = h
    if (last === undefined) continue
    const phase = s.at - last < LOOP_AFTER_HEAD_MS ? 'after_head' : 'rest'
    for (const [kind, now] of Object.entries(s.tasks)) {
      const before = samples[i - 1].tasks[kind] ?? { count: 0, waitS: 0, computeS: 0 }
      let entry = sums.get(kind)
      if (entry === undefined) sums.set(kind, (entry = { after_head: { count: 0, waitS: 0, computeS: 0 }, rest: { count: 0, waitS: 0, computeS: 0 } }))
      entry[phase].count += now.count - before.count
      entry[phase].waitS += now.waitS - before.waitS
      entry[phase].computeS += now.computeS - before.computeS
    }
  }
  const describe = (x: { count: number; waitS: number; computeS: number }): TaskTimesSince => ({
    tasks: x.count,
    wait_mean_ms: x.count === 0 ? null : round((x.waitS * 1000) / x.count, 1),
    compute_mean_ms: x.count === 0 ? null : round((x.computeS * 1000) / x.count, 1),
  })
  const out: Record<string, { after_head: TaskTimesSince; rest: TaskTimesSince }> = {}
  for (const [kind, entry] of sums) out[kind] = { after_head: describe(entry.after_head), rest: describe(entry.rest) }
  return out
}
