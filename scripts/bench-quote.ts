/**
 * npm run bench:quote
 *
 * POST /v1/quote of the service started as `npm start` starts it (its own process, embedded devnet)
 * on loopback, against the naive peer in the same run: scripts/lib/naive-quoter.ts, in its own
 * process too, which executes a QuoterV2 / getAmountsOut quote in the EVM for every candidate path
 * and answers the best single path. Both read the same devnet state; the load generator
 * (autocannon) runs in this process.
 *
 * Every request carries a distinct amount (the mix's amount plus a counter, in wei), so no answer
 * comes from the service's per-block answer cache: these are the figures of the full path (route
 * search + calldata executed in the EVM). The same mix repeated (cache hits, as when a wallet
 * polls a quote within one block) is measured separately and reported as `repeat`.
 *
 * 1. Warm latency: sequential requests over the mix (one at a time), p50/p99.
 * 2. Sustained throughput: autocannon, BENCH_CONNECTIONS connections for BENCH_SECONDS seconds,
 *    after distinct quotes, unmeasured, until each worker has answered BENCH_WARMUP_QUOTES_PER_WORKER
 *    (default 2500; 0: the sequential runs alone, as before the thirteenth session; `load_warmed`).
 *    The service process's CPU over that window (all its threads, /proc/<pid>/stat): `cpu_percent`
 *    (over 100 when the second core works) and `cpu_ms_per_quote` (CPU ms per answered quote at
 *    saturation), and the same by thread (`cpu_ms_per_quote_by_thread`: main, each worker, V8's
 *    platform threads, the load generator; it has often read up to ~1.5 ms above the scaling phases'
 *    WORKERS=2 window in the same run, which the split should place). Right before and after that
 *    window a fixed workload that runs none of the service's code is timed in a fresh process
 *    (`calibration_cpu_ms`, scripts/lib/cpu-calibration.ts):
 *    this VM's speed varies by up to ~40% between minutes, so a `cpu_ms_per_quote` measured while
 *    the calibration read 30% above its usual value says the machine was slow, not the code.
 * 3. Resident memory of the service process after the run (VmRSS) and its peak (VmHWM).
 * 4. Fork mode: sequential requests over the mix for FORK_SECONDS against the service forking an
 *    anvil loaded with the devnet genesis that mines a block every FORK_BLOCK_TIME seconds
 *    (`fork_p50_ms`: long enough for many heads, so the figure is the steady state with the chain
 *    moving), with the upstream JSON-RPC calls and HTTP requests (round trips) per quote and per
 *    block over the run, read from the service's /metrics: everything the fork sent, head polls and
 *    warm-ups included; and the reads per quote that missed the fork's cache (each one waited for
 *    the upstream).
 * 5. Scaling over the cores (issue 13): two more service processes, one with WORKERS=1 and one with
 *    WORKERS=2, each saturated with distinct requests (autocannon, BENCH_CONNECTIONS connections
 *    for SCALING_SECONDS, after a warm-up of the same load, not measured: at least
 *    SCALING_WARMUP_SECONDS, then more until each worker has answered SCALING_WARMUP_QUOTES_PER_WORKER
 *    quotes, within SCALING_WARMUP_MAX_SECONDS; the pool's completed tasks on /metrics count them):
 *    `workers_scaling` is the second's requests/s over the first's. Then the
 *    WORKERS=2 service at a fixed FIXED_RATE requests/s for FIXED_RATE_SECONDS, distinct requests,
 *    from an open loop (scripts/lib/open-loop.ts): one request every 1/FIXED_RATE s, evenly spaced,
 *    sent when due whatever the answers, each one's latency from its scheduled send time, at most
 *    FIXED_RATE_MAX_INFLIGHT outstanding (one more due is a failure), each with FIXED_RATE_TIMEOUT_MS:
 *    `fixed_rate_p99_ms`, and in `scaling.fixed_rate` its p50, failures, the generator's own send
 *    lag, the latency by time since the last new head (the answers' block numbers mark it) and by
 *    request of the mix (`by_request`: which requests make the tail).
 *    Each run's CPU is in `scaling`: the process's, its main thread's, and this process's own (the
 *    load generator shares the cores). Each saturated run also prints its CPU ms per answered quote
 *    by thread (`scaling.workers_N.cpu_ms_per_quote_by_thread`, from /proc/<pid>/task:
 *    test/support/thread-cpu.ts): the service's main thread, each worker, V8's platform threads (GC
 *    helpers and concurrent compilers of every isolate), its other threads, the load generator
 *    (this process), and `all`, their sum. From these, the largest scaling the measured costs allow
 *    on the machine's `cores` (every process of the benchmark shares them):
 *      workers_scaling_ceiling             = cores x 1000 / all(WORKERS=2) / requests_per_s(WORKERS=1)
 *      workers_scaling_ceiling_uncontended = cores x 1000 / all(WORKERS=1) / requests_per_s(WORKERS=1)
 *    (the first with the costs two workers measured, contention included; the second if a quote
 *    cost two workers what it costs one). Both divide by the requests/s WORKERS=1 measured, which
 *    on a machine others load is below what one worker gives (its thread waits for a core), so
 *    they read too high there;
 *      workers_scaling_ceiling_cpu         = cores x worker(WORKERS=1) / all(WORKERS=2)
 *    takes WORKERS=1 at its best instead, its worker thread busy a full core (1000 / its CPU ms per
 *    quote, as on an idle machine): a ratio of CPU times only. And `scaling.cpu_ms_per_quote_for_1_8`, the `all` at
 *    which x1.8 would fit: cores x 1000 / (1.8 x requests_per_s(WORKERS=1)). A ceiling below 1.8
 *    means these cores cannot carry x1.8 at these costs, however the work is scheduled.
 *    Until 2026-11-26 (eighth session) this run was autocannon's `overallRate` over 16 connections:
 *    each connection sent its per-second budget back to back when each second began (a burst of
 *    ~FIXED_RATE requests at once, then silence), and its histogram added synthetic samples for
 *    coordinated omission; those `fixed_rate_p99_ms` figures measured a burst's queue, not a fixed
 *    rate, and are not comparable with the open loop's. FIXED_RATE_AUTOCANNON=1 runs the old
 *    generator right after the open loop on the same service (`scaling.fixed_rate_autocannon`), to
 *    put the difference on record. The run covers two 12 s blocks by default (FIXED_RATE_SECONDS
 *    24): the 8 s it had saw one head or none, and the heads are where the tail comes from.
 * 6. Venues (issue 15): two more service processes at once, on the same devnet: one with every
 *    venue of the registry (Uniswap V2 and V3 and the devnet's two forks) and one with only
 *    Uniswap's own V2 and V3 (VENUES, picked from the registry), measured alike and in turns (so a
 *    change of the machine's load during the step weighs on both): the sequential p50 over the mix
 *    (BENCH_ITERATIONS each, alternating), and requests/s under autocannon (BENCH_SECONDS each, in
 *    4 alternating slices).
 *    `venues.p50_ratio` is all over single (target <= 1.2), `venues.rps_ratio` all over single
 *    (target >= 0.8): the grown devnet no more than 20% worse.
 * Prints one JSON object on its last line.
 *
 * Options (environment): BENCH_ITERATIONS (default 300), BENCH_SECONDS (default 10),
 * BENCH_CONNECTIONS (default 8), BENCH_FORK (default 1; 0 skips the fork run), FORK_BLOCK_TIME
 * (seconds, default 2), FORK_SECONDS (default 30), BENCH_SCALING (default 1; 0 skips step 5),
 * SCALING_SECONDS (default 8), SCALING_WARMUP_SECONDS (default 4), SCALING_WARMUP_QUOTES_PER_WORKER
 * (default 2500), SCALING_WARMUP_MAX_SECONDS (default 60; step 2's warm-up's bound too),
 * BENCH_WARMUP_QUOTES_PER_WORKER (default 2500), FIXED_RATE (requests/s, default 100), FIXED_RATE_SECONDS (default 24),
 * FIXED_RATE_MAX_INFLIGHT (default 500), FIXED_RATE_TIMEOUT_MS (default 10000), FIXED_RATE_AUTOCANNON
 * (default 0; 1 adds the old autocannon run), BENCH_VENUES (default 1; 0 skips step 6).
 * WORKERS in the environment reaches the service of steps 1-4 (as it reaches `npm start`).
 */
import autocannon from 'autocannon'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { postQuote, QUOTE_MIX, quoteBody } from './lib/quote-mix.ts'
import { forkFigures, runOnDevnetFork } from './lib/devnet-fork.ts'
import { freePort } from '../test/support/net.ts'
import { startServiceProcess } from '../test/support/service-process.ts'
import { warmUpWorkers as warmUpWorkersUntil } from './lib/warm-up-workers.ts'
import { scrapeSums, startCpuWindow, startThreadCpuWindow, type CpuWindow } from './lib/process-cpu.ts'
import { msPer, scalingCeiling, threadCpuPer, type ThreadCpu } from '../test/support/thread-cpu.ts'
import { availableParallelism } from 'node:os'
import { summarize } from './lib/stats.ts'
import { calibrate, describeCalibration } from './lib/cpu-calibration.ts'
import { runOpenLoop } from './lib/open-loop.ts'
import { latencyByHead } from './lib/latency-by-head.ts'
import { DEV_API_KEY } from '../src/server/auth/api-keys.ts'

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const FORK = process.env.BENCH_FORK !== '0'
const FORK_BLOCK_TIME = Number(process.env.FORK_BLOCK_TIME ?? 2)
const FORK_SECONDS = Number(process.env.FORK_SECONDS ?? 30)
const SCALING = process.env.BENCH_SCALING !== '0'
const SCALING_SECONDS = Number(process.env.SCALING_SECONDS ?? 8)
/**
 * Seconds of the scaling load before the measured window (0: the 24 sequential warm-up requests
 * only, as before the twelfth session): after those, V8's concurrent compilers were still
 * optimizing the isolates' code during the window, CPU of the platform threads that the steady
 * state does not pay (BENCHMARKS.md, issue 13, twelfth session).
 */
const SCALING_WARMUP_SECONDS = Number(process.env.SCALING_WARMUP_SECONDS ?? 4)
/**
 * Quotes each worker answers before the measured window (thirteenth session, issue 13). A worker's
 * isolate compiles and re-optimizes its hot code over its first few thousand quotes (probe
 * worker-scaling: V8's platform threads spend 1.9 ms per quote in the first ~250 quotes of an
 * isolate and 0.13 by ~3,000), so a warm-up measured in seconds gave each of two workers half the
 * quotes one worker had had: the WORKERS=2 window sat earlier on that curve, and its extra cost was
 * warm-up, not scaling. Counted per worker, both phases measure isolates equally warm.
 */
const SCALING_WARMUP_QUOTES_PER_WORKER = Number(process.env.SCALING_WARMUP_QUOTES_PER_WORKER ?? 2500)
/**
 * Quotes each worker of the main service answers before step 2's window (0: none beyond the
 * sequential runs, as before the thirteenth session): `cpu_ms_per_quote` (issue 12) is the CPU per
 * quote at saturation, and after the ~160 sequential quotes per worker alone it still paid each
 * isolate's compiles (see SCALING_WARMUP_QUOTES_PER_WORKER).
 */
const BENCH_WARMUP_QUOTES_PER_WORKER = Number(process.env.BENCH_WARMUP_QUOTES_PER_WORKER ?? 2500)
/** the main service's workers: WORKERS from the environment (it reaches the service), else the service's default, one per core */
const LOAD_WORKERS = Number(process.env.WORKERS ?? availableParallelism())
/** The longest the warm-up goes on for SCALING_WARMUP_QUOTES_PER_WORKER (a loaded machine answers slowly), s. */
const SCALING_WARMUP_MAX_SECONDS = Number(process.env.SCALING_WARMUP_MAX_SECONDS ?? 60)
/** Each further slice of warm-up load while a worker has answered fewer quotes than that, s. */
const SCALING_WARMUP_SLICE_SECONDS = 2
const FIXED_RATE = Number(process.env.FIXED_RATE ?? 100)
const FIXED_RATE_SECONDS = Number(process.env.FIXED_RATE_SECONDS ?? 24)
const FIXED_RATE_MAX_INFLIGHT = Number(process.env.FIXED_RATE_MAX_INFLIGHT ?? 500)
const FIXED_RATE_TIMEOUT_MS = Number(process.env.FIXED_RATE_TIMEOUT_MS ?? 10_000)
const FIXED_RATE_AUTOCANNON = process.env.FIXED_RATE_AUTOCANNON === '1'
const VENUES = process.env.BENCH_VENUES !== '0'
/** every venue of the devnet registry: what the service routes over without VENUES */
const REGISTRY_VENUES = (JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as { venues: Array<{ name: string }> }).venues
/** Uniswap's own venues of the devnet registry: the single-venue configuration of step 6 */
const UNISWAP_VENUES = JSON.stringify(
  REGISTRY_VENUES.filter((v) => v.name === 'uniswap-v2' || v.name === 'uniswap-v3'),
)

const MIX = QUOTE_MIX

function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN)
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakRssMb: Math.round(kb('VmHWM') / 1024) }
}

const body = quoteBody
const post = postQuote

async function sequential(url: string, distinct = true): Promise<ReturnType<typeof summarize>> {
  for (let i = 0; i < 3 * MIX.length; i++) await post(url, body(i, distinct))
  const samples: number[] = []
  for (let i = 0; i < ITERATIONS; i++) samples.push((await post(url, body(i, distinct))).ms)
  return summarize(samples)
}

/** Sequential quotes in fork mode (see the header) for FORK_SECONDS, after the same warm-up as the devnet run. */
function forkRun() {
  return runOnDevnetFork({
    blockTimeSeconds: FORK_BLOCK_TIME,
    seconds: FORK_SECONDS,
    env: { RATE_LIMIT_MAX: '1000000' },
    warmUp: 3 * MIX.length,
    send: async (base, fork, i) => (await post(`${base}/v1/quote`, body(i, true), fork.apiKey)).ms,
  })
}

/**
 * autocannon on `url`: BENCH_CONNECTIONS connections for `seconds`, as fast as answered, or at
 * `rate` requests/s over all connections (open enough: 16 connections, so a slow answer does not
 * hold the rate back). With `pid`, the service process's CPU over the run.
 */
async function sustained(url: string, distinct = true, options: { seconds?: number; rate?: number; pid?: number; workers?: number } = {}) {
  let i = 0
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY },
      setupRequest: (req) => ({ ...req, body: body(i++, distinct) }),
    },
  ]
  const rate = options.rate === undefined ? {} : { overallRate: options.rate }
  const window = options.pid === undefined ? undefined : startCpuWindow(options.pid)
  // autocannon runs in this process, on the same cores as the service: its CPU is part of what the
  // two cores carry per quote (see BENCHMARKS.md, the bound on workers_scaling)
  const generator = options.pid === undefined ? undefined : startCpuWindow(process.pid)
  // with `workers`: the service's CPU by thread (main, each worker, V8's platform threads, the rest)
  const threadWindow = options.pid === undefined || options.workers === undefined ? undefined : startThreadCpuWindow(options.pid, options.workers)
  const result = await autocannon({ url, connections: options.rate === undefined ? CONNECTIONS : 16, duration: options.seconds ?? SECONDS, requests, ...rate })
  const cpu: CpuWindow | undefined = window?.stop()
  const generatorCpu: CpuWindow | undefined = generator?.stop()
  const threads: ThreadCpu | undefined = threadWindow?.stop()
  return {
    requests_per_s: result.requests.average,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    /** answers with status 2xx: the quotes made */
    ok: result['2xx'],
    cpu,
    generatorCpu,
    threads,
  }
}

/**
 * The fixed-rate run of step 5 (see the header): an open loop of distinct requests at `rate`/s on
 * `url`, with the service process's CPU and this process's (the generator) over it.
 */
async function fixedRateRun(url: string, rate: number, pid: number) {
  const window = startCpuWindow(pid)
  const generator = startCpuWindow(process.pid)
  const run = await runOpenLoop({
    rate,
    count: Math.round(rate * FIXED_RATE_SECONDS),
    maxInFlight: FIXED_RATE_MAX_INFLIGHT,
    send: async (i) => BigInt((await post(url, body(i, true), DEV_API_KEY, FIXED_RATE_TIMEOUT_MS)).json.blockNumber as string),
  })
  const cpu = window.stop()
  const generatorCpu = generator.stop()
  const byHead = latencyByHead(run.samples.map((s) => ({ scheduledMs: s.scheduledMs, latencyMs: s.latencyMs, blockNumber: s.value })))
  // the mix's requests differ in cost (a direct pair against a 4-leg split): which ones make the tail
  const byRequest = MIX.map((_, k) => {
    const latencies = summarize(run.samples.filter((s) => s.index % MIX.length === k).map((s) => s.latencyMs))
    return { request: k, p50_ms: round(latencies.p50), p99_ms: round(latencies.p99) }
  })
  return {
    generator: 'open loop',
    workers: 2,
    rate_per_s: rate,
    seconds: FIXED_RATE_SECONDS,
    requests_per_s: round(run.answeredPerSecond),
    p50_ms: round(run.latency.p50),
    p99_ms: round(run.latency.p99),
    max_ms: round(run.latency.max),
    failures: run.failures,
    ...(run.firstFailure === undefined ? {} : { first_failure: run.firstFailure }),
    send_lag_p99_ms: round(run.sendLag.p99),
    cpu_percent: round(cpu.cpuPercent),
    main_thread_cpu_percent: round(cpu.mainThreadCpuPercent),
    load_generator_cpu_percent: round(generatorCpu.cpuPercent),
    heads: byHead.heads,
    by_time_since_head: byHead.phases,
    by_request: byRequest,
  }
}

/**
 * Step 5 (see the header): a service with WORKERS=`workers` saturated with distinct requests, and
 * with `fixedRate` also run at that rate. Its own process, stopped before the next one starts.
 */
async function scalingRun(workers: number, fixedRate?: number) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/v1/quote`
  const service = await startServiceProcess(port, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: String(workers) })
  try {
    // warm-up: a request refused here (e.g. over EVM_MAX_MS on a busy machine) does not stop the run
    for (let i = 0; i < 3 * MIX.length; i++) await post(url, body(i, true)).catch((err: unknown) => console.error(`warm-up (WORKERS=${workers}): ${String(err)}`))
    const warmup = await warmUpWorkers(url, `http://127.0.0.1:${port}`, workers, SCALING_WARMUP_QUOTES_PER_WORKER, SCALING_WARMUP_SECONDS)
    const saturated = { ...(await sustained(url, true, { seconds: SCALING_SECONDS, pid: service.pid, workers })), warmup }
    const fixed = fixedRate === undefined ? undefined : await fixedRateRun(url, fixedRate, service.pid!)
    // the generator it replaced, on the same service right after (see the header)
    const autocannonFixed = fixedRate === undefined || !FIXED_RATE_AUTOCANNON ? undefined : await sustained(url, true, { seconds: FIXED_RATE_SECONDS, rate: fixedRate, pid: service.pid })
    return { saturated, fixed, autocannonFixed }
  } finally {
    service.kill('SIGKILL')
  }
}

/**
 * Distinct quotes on `url`, unmeasured, for `minSeconds` and then in slices until each of the
 * service's `workers` has answered `quotesPerWorker` quotes (the pool's completed tasks; earlier
 * requests included), or SCALING_WARMUP_MAX_SECONDS have passed: what each worker had answered, and
 * how long it took.
 */
async function warmUpWorkers(url: string, base: string, workers: number, quotesPerWorker: number, minSeconds: number): Promise<{ quotes_per_worker: number; seconds: number }> {
  const startedAt = performance.now()
  if (minSeconds > 0) await sustained(url, true, { seconds: minSeconds })
  const warmed = await warmUpWorkersUntil({ bases: [base], workers, quotesPerWorker, maxSeconds: SCALING_WARMUP_MAX_SECONDS, startedAt, slice: () => sustained(url, true, { seconds: SCALING_WARMUP_SLICE_SECONDS }) })
  return { quotes_per_worker: Math.round(warmed.quotesPerWorker), seconds: round(warmed.seconds) }
}

/** Slices of autocannon per service in step 6: the two services take turns, so load drift hits both alike. */
const VENUE_SLICES = 4

/**
 * Step 6 (see the header): both services at once (Uniswap's venues only, and every venue), measured
 * in turns so that a machine whose load changes during the step weighs on both alike: the
 * sequential requests alternate between them (request i of the mix to one, then to the other), and
 * the BENCH_SECONDS of autocannon each gets are VENUE_SLICES slices, taken in turns.
 */
async function venuesRun() {
  // two services at once: each its own outbox directory (LevelDB takes one process at a time)
  const dataDirs: string[] = []
  const start = async (env: Record<string, string>) => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-quote-venues-'))
    dataDirs.push(dataDir)
    return { url: `http://127.0.0.1:${port}/v1/quote`, service: await startServiceProcess(port, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', DATA_DIR: dataDir, ...env }) }
  }
  const single = await start({ VENUES: UNISWAP_VENUES })
  try {
    const all = await start({})
    try {
      const both = [single, all]
      for (let i = 0; i < 3 * MIX.length; i++) for (const s of both) await post(s.url, body(i, true))
      const samples: number[][] = [[], []]
      for (let i = 0; i < ITERATIONS; i++) for (const [k, s] of both.entries()) samples[k].push((await post(s.url, body(i, true))).ms)
      const answered = [0, 0]
      const failed = [0, 0]
      const seconds = SECONDS / VENUE_SLICES
      for (let slice = 0; slice < VENUE_SLICES; slice++) {
        for (const [k, s] of both.entries()) {
          const run = await sustained(s.url, true, { seconds })
          answered[k] += run.ok
          failed[k] += failures(run)
        }
      }
      const figures = (k: number) => ({ seq: summarize(samples[k]), requests_per_s: round(answered[k] / SECONDS), failures: failed[k] })
      return { single: figures(0), all: figures(1) }
    } finally {
      all.service.kill('SIGKILL')
    }
  } finally {
    single.service.kill('SIGKILL')
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  }
}

/** the share of one core the service's main thread used (HTTP, validation, the workers' state reads) */
function mainThreadPercent(run: { cpu?: CpuWindow }): number {
  return run.cpu === undefined ? Number.NaN : round(run.cpu.mainThreadCpuPercent)
}

/** the share of one core the load generator (autocannon, in this process) used meanwhile */
function generatorPercent(run: { generatorCpu?: CpuWindow }): number {
  return run.generatorCpu === undefined ? Number.NaN : round(run.generatorCpu.cpuPercent)
}

/** the machine's cores, which every process of the benchmark shares (the load generator's too) */
const CORES = availableParallelism()

/**
 * CPU ms per answered quote of a saturated run of step 5, by thread: the service's threads by kind
 * (test/support/thread-cpu.ts: main, each worker, V8's platform threads, the rest), the load
 * generator (this process, all its threads), and `all`, the two together: what one quote costs the
 * machine's cores.
 */
function perQuoteByThread(run: { ok: number; threads?: ThreadCpu; generatorCpu?: CpuWindow }) {
  if (run.threads === undefined || run.generatorCpu === undefined) return undefined
  const { total, ...service } = threadCpuPer(run.threads, run.ok)
  return { service: total, ...service, load_generator: msPer(run.generatorCpu.cpuSeconds, run.ok), all: msPer(run.threads.total + run.generatorCpu.cpuSeconds, run.ok) }
}

/**
 * The largest `workers_scaling` the measured CPU costs allow on CORES (see the header):
 * `workers_scaling_ceiling` = CORES x 1000 / (CPU ms per quote at WORKERS=2, service + generator) /
 * (requests/s at WORKERS=1), and `workers_scaling_ceiling_uncontended` the same with WORKERS=1's CPU
 * per quote (what two workers would reach if a quote cost them what it costs one alone).
 */
function scalingCeilings(one: Parameters<typeof perQuoteByThread>[0] & { requests_per_s: number }, two: Parameters<typeof perQuoteByThread>[0]) {
  const byThread1 = perQuoteByThread(one)
  const c1 = byThread1?.all ?? Number.NaN
  const c2 = perQuoteByThread(two)?.all ?? Number.NaN
  // WORKERS=1 at its best: its one worker thread busy a full core, 1000 / its CPU ms per quote
  const rps1AtFullCore = 1000 / (byThread1?.workers[0] ?? Number.NaN)
  return {
    workers_scaling_ceiling: round(scalingCeiling(CORES, c2, one.requests_per_s)),
    workers_scaling_ceiling_uncontended: round(scalingCeiling(CORES, c1, one.requests_per_s)),
    workers_scaling_ceiling_cpu: round(scalingCeiling(CORES, c2, rps1AtFullCore)),
  }
}

/** the CPU figures of a run: percent of one core, and CPU ms per answered quote */
function cpuFigures(run: { ok: number; cpu?: CpuWindow }) {
  const cpu = run.cpu
  if (cpu === undefined) return { cpu_percent: Number.NaN, cpu_ms_per_quote: Number.NaN }
  return { cpu_percent: round(cpu.cpuPercent), cpu_ms_per_quote: run.ok > 0 ? round((cpu.cpuSeconds * 1000) / run.ok) : Number.NaN }
}

async function main() {
  const [ourPort, peerPort] = [await freePort(), await freePort()]
  const ours = `http://127.0.0.1:${ourPort}/v1/quote`
  const peer = `http://127.0.0.1:${peerPort}/v1/quote`
  // the rate limit is raised so the benchmark measures the quote path, not 429s
  const service = await startServiceProcess(ourPort, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0' })
  const naive = await startServiceProcess(peerPort, {}, 'scripts/lib/naive-quoter.ts')
  try {
    // both answer, and ours is never worse than the best single path
    const comparison = []
    for (let i = 0; i < MIX.length; i++) {
      const a = (await post(ours, body(i, false))).json
      const b = (await post(peer, body(i, false))).json
      comparison.push({ request: i, ours: a.amountOut, naive: b.amountOut, naivePaths: b.paths, naiveEvmCalls: b.evmCalls, legs: (a.routes as unknown[]).length, gas: a.gas })
      if (BigInt(a.amountOut as string) < BigInt(b.amountOut as string)) throw new Error(`request ${i}: our quote ${a.amountOut} is below the naive best path ${b.amountOut}`)
    }
    console.table(comparison)

    const oursSeq = await sequential(ours)
    const peerSeq = await sequential(peer)
    console.log(`sequential  ours p50 ${oursSeq.p50.toFixed(2)} ms p99 ${oursSeq.p99.toFixed(2)} ms | naive p50 ${peerSeq.p50.toFixed(2)} ms p99 ${peerSeq.p99.toFixed(2)} ms`)
    // warmed like the scaling phases (see BENCH_WARMUP_QUOTES_PER_WORKER): the CPU per quote at saturation is the steady state's
    const loadWarmup = BENCH_WARMUP_QUOTES_PER_WORKER > 0 && LOAD_WORKERS > 0 ? await warmUpWorkers(ours, `http://127.0.0.1:${ourPort}`, LOAD_WORKERS, BENCH_WARMUP_QUOTES_PER_WORKER, 0) : undefined
    // the machine's speed right before and after the window `cpu_ms_per_quote` is measured in (see cpu-calibration.ts)
    const calibrationBefore = calibrate()
    const oursLoad = await sustained(ours, true, { pid: service.pid, workers: LOAD_WORKERS })
    const calibrationAfter = calibrate()
    const oursCpu = cpuFigures(oursLoad)
    console.log(describeCalibration('before the load', calibrationBefore))
    console.log(describeCalibration('after the load', calibrationAfter))
    const peerLoad = await sustained(peer)
    console.log(`autocannon  ours ${oursLoad.requests_per_s} req/s (p50 ${oursLoad.p50_ms} ms, p99 ${oursLoad.p99_ms} ms, non-2xx ${oursLoad.non2xx}; CPU ${oursCpu.cpu_percent}%, ${oursCpu.cpu_ms_per_quote} ms per quote) | naive ${peerLoad.requests_per_s} req/s`)
    const oursByThread = perQuoteByThread(oursLoad)
    console.log(`autocannon  ours CPU ms per quote by thread ${JSON.stringify(oursByThread)}`)
    const repeatSeq = await sequential(ours, false)
    const repeatLoad = await sustained(ours, false)
    console.log(`repeat      ours p50 ${repeatSeq.p50.toFixed(2)} ms p99 ${repeatSeq.p99.toFixed(2)} ms, ${repeatLoad.requests_per_s} req/s under load`)
    const memory = memoryOf(service.pid!)
    console.log(`service memory: RSS ${memory.rssMb} MB after the run, peak ${memory.peakRssMb} MB`)
    const forkRunResult = FORK ? await forkRun() : undefined
    const fork = forkRunResult === undefined ? undefined : { seq: summarize(forkRunResult.samples), figures: forkFigures(forkRunResult, FORK_BLOCK_TIME, 'quote') }
    if (fork !== undefined) console.log(`fork        ours p50 ${fork.seq.p50.toFixed(2)} ms p99 ${fork.seq.p99.toFixed(2)} ms ${JSON.stringify(fork.figures)}`)
    // the main service and the naive peer stop first: the scaling runs have the cores to themselves
    service.kill('SIGKILL')
    naive.kill('SIGKILL')
    const one = SCALING ? await scalingRun(1) : undefined
    const two = SCALING ? await scalingRun(2, FIXED_RATE) : undefined
    const scaling =
      one === undefined || two === undefined || two.fixed === undefined
        ? undefined
        : {
            workers_scaling: round(two.saturated.requests_per_s / one.saturated.requests_per_s),
            ...scalingCeilings(one.saturated, two.saturated),
            fixed_rate_p99_ms: two.fixed.p99_ms,
            scaling: {
              seconds: SCALING_SECONDS,
              warmup_seconds: SCALING_WARMUP_SECONDS,
              warmup_quotes_per_worker: SCALING_WARMUP_QUOTES_PER_WORKER,
              cores: CORES,
              // the CPU per quote (service and generator) at which x1.8 would fit on the cores at WORKERS=1's requests/s
              cpu_ms_per_quote_for_1_8: round(CORES * 1000 / (1.8 * one.saturated.requests_per_s)),
              workers_1: { warmed: one.saturated.warmup, requests_per_s: one.saturated.requests_per_s, p99_ms: one.saturated.p99_ms, failures: failures(one.saturated), ...cpuFigures(one.saturated), main_thread_cpu_percent: mainThreadPercent(one.saturated), load_generator_cpu_percent: generatorPercent(one.saturated), cpu_ms_per_quote_by_thread: perQuoteByThread(one.saturated) },
              workers_2: { warmed: two.saturated.warmup, requests_per_s: two.saturated.requests_per_s, p99_ms: two.saturated.p99_ms, failures: failures(two.saturated), ...cpuFigures(two.saturated), main_thread_cpu_percent: mainThreadPercent(two.saturated), load_generator_cpu_percent: generatorPercent(two.saturated), cpu_ms_per_quote_by_thread: perQuoteByThread(two.saturated) },
              fixed_rate: two.fixed,
              ...(two.autocannonFixed === undefined
                ? {}
                : {
                    fixed_rate_autocannon: { generator: 'autocannon overallRate, 16 connections', rate_per_s: FIXED_RATE, seconds: FIXED_RATE_SECONDS, requests_per_s: two.autocannonFixed.requests_per_s, p50_ms: two.autocannonFixed.p50_ms, p99_ms: two.autocannonFixed.p99_ms, failures: failures(two.autocannonFixed), cpu_percent: cpuFigures(two.autocannonFixed).cpu_percent },
                  }),
            },
          }
    const venueRuns = VENUES ? await venuesRun() : undefined
    const venues =
      venueRuns === undefined
        ? undefined
        : {
            single: 'uniswap-v2 + uniswap-v3',
            // the service without VENUES routes over every venue of the registry
            all: REGISTRY_VENUES.map((v) => v.name).join(' + '),
            single_p50_ms: round(venueRuns.single.seq.p50),
            all_p50_ms: round(venueRuns.all.seq.p50),
            p50_ratio: round(venueRuns.all.seq.p50 / venueRuns.single.seq.p50),
            single_requests_per_s: venueRuns.single.requests_per_s,
            all_requests_per_s: venueRuns.all.requests_per_s,
            rps_ratio: round(venueRuns.all.requests_per_s / venueRuns.single.requests_per_s),
            single_failures: venueRuns.single.failures,
            all_failures: venueRuns.all.failures,
          }
    if (venues !== undefined) console.log(`venues      single p50 ${venues.single_p50_ms} ms, ${venues.single_requests_per_s} req/s | all p50 ${venues.all_p50_ms} ms, ${venues.all_requests_per_s} req/s (p50 x${venues.p50_ratio}, req/s x${venues.rps_ratio})`)
    if (scaling !== undefined) {
      for (const [w, run] of [[1, one!.saturated], [2, two!.saturated]] as const) console.log(`scaling     WORKERS=${w}: CPU ms per quote by thread ${JSON.stringify(perQuoteByThread(run))}`)
      console.log(`scaling     ceiling on ${CORES} cores: x${scaling.workers_scaling_ceiling} at WORKERS=2's CPU per quote, x${scaling.workers_scaling_ceiling_uncontended} at WORKERS=1's (measured x${scaling.workers_scaling}); x1.8 needs <= ${scaling.scaling.cpu_ms_per_quote_for_1_8} CPU ms per quote, service and generator`)
    }
    if (scaling !== undefined) console.log(`scaling     WORKERS=1 ${one!.saturated.requests_per_s} req/s, WORKERS=2 ${two!.saturated.requests_per_s} req/s (x${scaling.workers_scaling}); at ${FIXED_RATE}/s (open loop) p50 ${two!.fixed!.p50_ms} ms p99 ${scaling.fixed_rate_p99_ms} ms, ${two!.fixed!.failures} failures, by time since head ${JSON.stringify(two!.fixed!.by_time_since_head)}${two!.autocannonFixed === undefined ? '' : `; autocannon overallRate p50 ${two!.autocannonFixed.p50_ms} ms p99 ${two!.autocannonFixed.p99_ms} ms`}`)

    const result = {
      name: 'bench:quote',
      p50_ms: round(oursSeq.p50),
      p99_ms: round(oursSeq.p99),
      requests_per_s: oursLoad.requests_per_s,
      load_p50_ms: oursLoad.p50_ms,
      load_p99_ms: oursLoad.p99_ms,
      load_failures: failures(oursLoad),
      ...oursCpu,
      // the headline's window by thread, as the scaling phases print theirs: which thread a higher figure comes from
      cpu_ms_per_quote_by_thread: oursByThread,
      calibration_cpu_ms: { before: calibrationBefore, after: calibrationAfter },
      ...(loadWarmup === undefined ? {} : { load_warmed: loadWarmup }),
      peer: { name: 'naive EVM quoter (QuoterV2 / getAmountsOut per path, best single path)', p50_ms: round(peerSeq.p50), p99_ms: round(peerSeq.p99), requests_per_s: peerLoad.requests_per_s },
      repeat: { p50_ms: round(repeatSeq.p50), p99_ms: round(repeatSeq.p99), requests_per_s: repeatLoad.requests_per_s, load_p99_ms: repeatLoad.p99_ms },
      ratio_p50: round(peerSeq.p50 / oursSeq.p50),
      ratio_rps: round(oursLoad.requests_per_s / peerLoad.requests_per_s),
      ...(fork === undefined
        ? {}
        : {
            fork_p50_ms: round(fork.seq.p50),
            fork_p99_ms: round(fork.seq.p99),
            fork: fork.figures,
          }),
      ...(scaling ?? {}),
      ...(venues === undefined ? {} : { venues }),
      rss_mb_after: memory.rssMb,
      peak_rss_mb: memory.peakRssMb,
      iterations: ITERATIONS,
      connections: CONNECTIONS,
      seconds: SECONDS,
    }
    console.log(JSON.stringify(result))
  } finally {
    service.kill('SIGKILL')
    naive.kill('SIGKILL')
  }
}

const round = (x: number) => Math.round(x * 100) / 100
const failures = (run: { non2xx: number; errors: number; timeouts: number }) => run.non2xx + run.errors + run.timeouts

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
