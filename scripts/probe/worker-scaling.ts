/**
 * npx tsx scripts/probe/worker-scaling.ts [variant ...]
 *
 * Why a quote costs two workers more worker CPU than it costs one (issue 13: 3.66 against 2.99 ms in
 * the idle bench:quote of the twelfth session), thread by thread. bench:quote's saturated load
 * (autocannon, BENCH_CONNECTIONS connections, default 8, distinct amounts, SCALING_SECONDS, default
 * 8, after SCALING_WARMUP_SECONDS, default 4, of the same load not measured, then more until each
 * worker has answered SCALING_WARMUP_QUOTES_PER_WORKER quotes, default 0, within
 * SCALING_WARMUP_MAX_SECONDS, default 60) on the service as
 * `npm start` starts it, under these variants, in turns for SCALING_ROUNDS rounds (default 2):
 * - `w1`, `w2`: one process with WORKERS=1, with WORKERS=2;
 * - `w1x2`: two processes with WORKERS=1 each, both loaded at once (half the connections each):
 *   the same three busy threads on two cores as `w2`, but no isolate shares a process. If its
 *   workers pay what `w2`'s do, the cost comes from the cores, not from two workers in one process;
 * - `w2_pinned`: `w2` with each worker thread pinned to its own CPU (taskset, an experiment only);
 * - `w2_nice10`: `w2` with WORKER_NICE=10 (the others take WORKER_NICE from the environment, 0 unless set).
 * Per thread (main, each worker, V8's platform threads together; test/support/thread-cpu.ts tells
 * them apart) over the window, per answered quote: CPU ms, voluntary and involuntary context
 * switches, migrations between CPUs (/proc/<pid>/task/<tid>/sched), time runnable but waiting for a
 * CPU (schedstat's run delay), and each worker's time asleep (idle: waiting for a task or a state
 * read); the state link's messages and reads per quote (/metrics); the machine's steal time (a
 * KVM guest: time the host ran something else on our vCPUs). Each service gets its own DATA_DIR and
 * EVM_MAX_MS 10000 unless set. Last line: one JSON object.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../test/support/net.ts'
import { startScriptEnv, startScriptNodeArgs } from '../../test/support/service-process.ts'
import { parseProcStat, v8PoolSizeOf } from '../../test/support/thread-cpu.ts'
import { clockTicks, scrapeSums } from '../lib/process-cpu.ts'
import { postQuote, QUOTE_MIX, quoteBody, quoteLoad } from '../lib/quote-mix.ts'
import { warmUpWorkers } from '../lib/warm-up-workers.ts'

const SECONDS = Number(process.env.SCALING_SECONDS ?? 8)
const WARMUP_SECONDS = Number(process.env.SCALING_WARMUP_SECONDS ?? 4)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const ROUNDS = Number(process.env.SCALING_ROUNDS ?? 2)
/** quotes each worker answers before the first window (default 0: SCALING_WARMUP_SECONDS alone), as bench:quote's SCALING_WARMUP_QUOTES_PER_WORKER */
const WARMUP_QUOTES_PER_WORKER = Number(process.env.SCALING_WARMUP_QUOTES_PER_WORKER ?? 0)
/** the longest that counted warm-up lasts, s */
const WARMUP_MAX_SECONDS = Number(process.env.SCALING_WARMUP_MAX_SECONDS ?? 60)
/** consecutive measured windows per service (default 1): how the costs move as the isolates warm */
const WINDOWS = Number(process.env.SCALING_WINDOWS ?? 1)
const READY_TIMEOUT_MS = 120_000
const CORES = availableParallelism()
/** SCALING_TRACE_GC=1: the services run with V8's --trace-gc (every isolate), read per isolate over the window */
const TRACE_GC = process.env.SCALING_TRACE_GC === '1'

interface Variant {
  name: string
  /** WORKERS of each process */
  workers: number
  processes: number
  env?: Record<string, string>
  pin?: boolean
}

const VARIANTS: Variant[] = [
  { name: 'w1', workers: 1, processes: 1 },
  { name: 'w2', workers: 2, processes: 1 },
  { name: 'w1x2', workers: 1, processes: 2 },
  { name: 'w2_pinned', workers: 2, processes: 1, pin: true },
  { name: 'w2_nice10', workers: 2, processes: 1, env: { WORKER_NICE: '10' } },
]

/** What the scheduler says of one thread at one moment. */
interface ThreadReading {
  tid: number
  startTicks: number
  cpuTicks: number
  voluntary: number
  involuntary: number
  migrations: number
  /** schedstat: ns on a CPU, ns runnable but waiting for one */
  runNs: number
  delayNs: number
}

function readThread(pid: number, tid: string): ThreadReading | undefined {
  try {
    const dir = `/proc/${pid}/task/${tid}`
    const stat = parseProcStat(readFileSync(`${dir}/stat`, 'utf8'))
    const status = readFileSync(`${dir}/status`, 'utf8')
    const sched = readFileSync(`${dir}/sched`, 'utf8')
    const [runNs, delayNs] = readFileSync(`${dir}/schedstat`, 'utf8').trim().split(' ').map(Number) as [number, number]
    const field = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN)
    return {
      tid: stat.id,
      startTicks: stat.startTicks,
      cpuTicks: stat.cpuTicks,
      voluntary: field(status, /voluntary_ctxt_switches:\s+(\d+)/),
      involuntary: field(status, /nonvoluntary_ctxt_switches:\s+(\d+)/),
      migrations: field(sched, /se\.nr_migrations\s+:\s+(\d+)/),
      runNs,
      delayNs,
    }
  } catch {
    return undefined
  }
}

function readThreads(pid: number): ThreadReading[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readThread(pid, tid) ?? [])
}

/** steal and total ticks of the machine (/proc/stat's cpu line) */
function machineTicks(): { steal: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  return { steal: fields[7] ?? 0, total: fields.slice(0, 8).reduce((s, x) => s + x, 0) }
}

interface ThreadFigures {
  cpu_ms: number
  voluntary: number
  involuntary: number
  migrations: number
  run_delay_ms: number
}

type Kind = 'main' | 'worker' | 'v8_platform' | 'other'

/** the threads of one process over the window, by kind, per quote of `quotes` (workers one by one) */
function figuresOf(pid: number, before: ThreadReading[], after: ThreadReading[], workers: number, quotes: number, wallMs: number) {
  const poolSize = v8PoolSizeOf(pid, CORES)
  const start = new Map(before.map((t) => [t.tid, t]))
  const ordered = after.filter((t) => t.tid !== pid).sort((a, b) => a.startTicks - b.startTicks || a.tid - b.tid)
  const platform = new Set(ordered.slice(0, poolSize + 1).map((t) => t.tid))
  const tick = 1000 / clockTicks()
  const delta = (t: ThreadReading) => {
    const b = start.get(t.tid)
    return {
      tid: t.tid,
      cpuMs: (t.cpuTicks - (b?.cpuTicks ?? 0)) * tick,
      runMs: (t.runNs - (b?.runNs ?? 0)) / 1e6,
      voluntary: t.voluntary - (b?.voluntary ?? 0),
      involuntary: t.involuntary - (b?.involuntary ?? 0),
      migrations: t.migrations - (b?.migrations ?? 0),
      delayMs: (t.delayNs - (b?.delayNs ?? 0)) / 1e6,
    }
  }
  const rest = ordered.filter((t) => !platform.has(t.tid)).map(delta).sort((a, b) => b.runMs - a.runMs)
  const kinds = new Map<Kind, ReturnType<typeof delta>[]>([
    ['main', after.filter((t) => t.tid === pid).map(delta)],
    ['worker', rest.slice(0, workers)],
    ['v8_platform', ordered.filter((t) => platform.has(t.tid)).map(delta)],
    ['other', rest.slice(workers)],
  ])
  const per = (x: number) => round(x / quotes, 4)
  const sum = (ds: ReturnType<typeof delta>[]): ThreadFigures => ({
    cpu_ms: per(ds.reduce((s, d) => s + d.runMs, 0)),
    voluntary: per(ds.reduce((s, d) => s + d.voluntary, 0)),
    involuntary: per(ds.reduce((s, d) => s + d.involuntary, 0)),
    migrations: per(ds.reduce((s, d) => s + d.migrations, 0)),
    run_delay_ms: per(ds.reduce((s, d) => s + d.delayMs, 0)),
  })
  return {
    main: sum(kinds.get('main')!),
    workers: kinds.get('worker')!.map((d) => ({
      ...sum([d]),
      // asleep: neither on a CPU nor waiting for one (no task, or a state read outstanding)
      idle_percent: round((100 * (wallMs - d.runMs - d.delayMs)) / wallMs, 1),
      busy_percent: round((100 * d.runMs) / wallMs, 1),
    })),
    v8_platform: sum(kinds.get('v8_platform')!),
    other: sum(kinds.get('other')!),
  }
}

const METRICS = ['worker_tasks_completed_total', 'worker_remote_state_reads_total', 'worker_remote_state_batches_total', 'worker_state_l1_hits_total'] as const

/** --trace-gc's line of one collection: isolate, kind, heap before and after (MB), pause (ms) */
const GC_EVENT = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Minor Mark-Sweep)\s+([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/ ([\d.]+) ms/

/**
 * The collections of each isolate in `text` (the window's part of a --trace-gc log), per quote: the
 * busiest isolates first (the workers allocate most). `allocated_mb`: what the heap grew between
 * collections (from one's end to the next one's start), a lower bound of what the isolate allocated.
 */
function gcOf(text: string, quotes: number) {
  const byIsolate = new Map<string, { scavenges: number; fullGcs: number; pauseMs: number; allocatedMb: number; lastEnd?: number }>()
  for (const line of text.split('\n')) {
    const m = GC_EVENT.exec(line)
    if (m === null) continue
    const [, isolate, kind, before, after, pause] = m
    const i = byIsolate.get(isolate!) ?? { scavenges: 0, fullGcs: 0, pauseMs: 0, allocatedMb: 0 }
    if (kind === 'Scavenge' || kind === 'Minor Mark-Sweep') i.scavenges++
    else i.fullGcs++
    i.pauseMs += Number(pause)
    if (i.lastEnd !== undefined) i.allocatedMb += Math.max(0, Number(before) - i.lastEnd)
    i.lastEnd = Number(after)
    byIsolate.set(isolate!, i)
  }
  return [...byIsolate.values()]
    .sort((a, b) => b.allocatedMb - a.allocatedMb)
    .map((i) => ({ scavenges_per_1000_quotes: round((1000 * i.scavenges) / quotes, 1), full_gcs: i.fullGcs, pause_ms_per_quote: round(i.pauseMs / quotes, 4), allocated_kb_per_quote: round((1024 * i.allocatedMb) / quotes, 1) }))
}

async function startService(port: number, dataDir: string, variant: Variant, gcLog?: string): Promise<ChildProcess> {
  const logFd = gcLog === undefined ? undefined : openSync(gcLog, 'w')
  const child = spawn(process.execPath, [...(gcLog === undefined ? [] : ['--trace-gc']), ...startScriptNodeArgs()], {
    env: {
      ...process.env,
      ...startScriptEnv(),
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      RATE_LIMIT_MAX: '1000000',
      LOCAL_BUILDER_PORT: '0',
      WORKERS: String(variant.workers),
      EVM_MAX_MS: process.env.EVM_MAX_MS ?? '10000',
      ...variant.env,
      PORT: String(port),
    },
    stdio: ['ignore', logFd ?? 'ignore', 'inherit'],
  })
  if (logFd !== undefined) closeSync(logFd)
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service (${variant.name}) exited with code ${child.exitCode}`)
    if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return child
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill('SIGKILL')
  throw new Error(`the service (${variant.name}) was not ready within ${READY_TIMEOUT_MS} ms`)
}

async function measure(variant: Variant) {
  const services: Service[] = []
  try {
    for (let k = 0; k < variant.processes; k++) {
      const port = await freePort()
      const dataDir = mkdtempSync(join(tmpdir(), 'worker-scaling-'))
      const gcLog = TRACE_GC ? join(dataDir, 'gc.txt') : undefined
      services.push({ base: `http://127.0.0.1:${port}`, child: await startService(port, dataDir, variant, gcLog), dataDir, ...(gcLog === undefined ? {} : { gcLog }) })
    }
    const connections = Math.max(1, Math.round(CONNECTIONS / variant.processes))
    for (const s of services) for (let k = 0; k < 3 * QUOTE_MIX.length; k++) await postQuote(`${s.base}/v1/quote`, quoteBody(k, true)).catch((err: unknown) => console.error(`warm-up: ${String(err)}`))
    if (WARMUP_SECONDS > 0) await Promise.all(services.map((s) => quoteLoad(`${s.base}/v1/quote`, connections, WARMUP_SECONDS)))
    // then until every worker has answered WARMUP_QUOTES_PER_WORKER quotes (bench:quote's warm-up), within WARMUP_MAX_SECONDS
    await warmUpWorkers({ bases: services.map((s) => s.base), workers: variant.workers, quotesPerWorker: WARMUP_QUOTES_PER_WORKER, maxSeconds: WARMUP_MAX_SECONDS, slice: () => Promise.all(services.map((s) => quoteLoad(`${s.base}/v1/quote`, connections, 2))) })
    if (variant.pin === true) {
      for (const s of services) {
        const pid = s.child.pid!
        // the workers: the busiest threads besides the main one after the warm-up
        const busiest = readThreads(pid).filter((t) => t.tid !== pid).sort((a, b) => b.runNs - a.runNs).slice(0, variant.workers)
        for (const [k, t] of busiest.entries()) spawnSync('taskset', ['-p', '-c', String(k % CORES), String(t.tid)], { stdio: 'ignore' })
      }
    }
    const windows = []
    for (let w = 0; w < WINDOWS; w++) windows.push(await measureWindow(services, variant, connections))
    return { variant: variant.name, windows }
  } finally {
    for (const s of services) {
      s.child.kill('SIGKILL')
      if (s.child.exitCode === null) await new Promise((r) => s.child.once('exit', r))
      rmSync(s.dataDir, { recursive: true, force: true })
    }
  }
}

type Service = { base: string; child: ChildProcess; dataDir: string; gcLog?: string }

/** One measured window of SECONDS on `services`, all loaded at once. */
async function measureWindow(services: Service[], variant: Variant, connections: number) {
    const metricsBefore = await Promise.all(services.map((s) => scrapeSums(s.base, METRICS)))
    const gcFrom = services.map((s) => (s.gcLog === undefined ? 0 : statSync(s.gcLog).size))
    const before = services.map((s) => readThreads(s.child.pid!))
    const machineBefore = machineTicks()
    const generatorBefore = process.cpuUsage()
    const t0 = performance.now()
    const results = await Promise.all(services.map((s) => quoteLoad(`${s.base}/v1/quote`, connections, SECONDS)))
    const wallMs = performance.now() - t0
    const generator = process.cpuUsage(generatorBefore)
    const machineAfter = machineTicks()
    const after = services.map((s) => readThreads(s.child.pid!))
    const gcTo = services.map((s) => (s.gcLog === undefined ? 0 : statSync(s.gcLog).size))
    const metricsAfter = await Promise.all(services.map((s) => scrapeSums(s.base, METRICS)))
    const quotes = results.reduce((s, r) => s + r['2xx'], 0)
    const processes = services.map((s, k) => {
      const ok = results[k]!['2xx']
      const m = (n: (typeof METRICS)[number]) => metricsAfter[k]![n] - metricsBefore[k]![n]
      return {
        requests_per_s: round(ok / (wallMs / 1000), 1),
        ...figuresOf(s.child.pid!, before[k]!, after[k]!, variant.workers, ok, wallMs),
        tasks: m('worker_tasks_completed_total'),
        // how many quotes each worker had answered by the window's end (its JIT and caches warm with them)
        tasks_per_worker_so_far: round(metricsAfter[k]!.worker_tasks_completed_total / variant.workers, 0),
        remote_reads_per_quote: round(m('worker_remote_state_reads_total') / ok, 3),
        state_messages_per_quote: round(m('worker_remote_state_batches_total') / ok, 3),
        l1_hits_per_quote: round(m('worker_state_l1_hits_total') / ok, 2),
        ...(s.gcLog === undefined ? {} : { gc_by_isolate: gcOf(readFileSync(s.gcLog).subarray(gcFrom[k], gcTo[k]).toString('utf8'), ok) }),
      }
    })
    const stealTicks = machineAfter.steal - machineBefore.steal
    return {
      requests_per_s: round(quotes / (wallMs / 1000), 1),
      failures: results.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0),
      worker_cpu_ms_per_quote: round(processes.reduce((s, p) => s + p.workers.reduce((w, x) => w + x.cpu_ms * p.requests_per_s, 0), 0) / (quotes / (wallMs / 1000)), 3),
      load_generator_cpu_ms_per_quote: round((generator.user + generator.system) / 1000 / quotes, 3),
      steal_percent: round((100 * stealTicks) / Math.max(1, machineAfter.total - machineBefore.total), 2),
      processes,
    }
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

async function main(): Promise<void> {
  const names = process.argv.slice(2)
  const variants = names.length === 0 ? VARIANTS : VARIANTS.filter((v) => names.includes(v.name))
  const runs = []
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of variants) {
      const run = { round, ...(await measure(variant)) }
      for (const [w, win] of run.windows.entries()) {
        const p0 = win.processes[0]!
        console.log(`round ${round}, ${run.variant}, window ${w + 1}: ${win.requests_per_s} req/s (${win.failures} failed), worker CPU ms per quote ${win.worker_cpu_ms_per_quote}, v8 platform ${p0.v8_platform.cpu_ms}, main ${p0.main.cpu_ms}, quotes per worker so far ${p0.tasks_per_worker_so_far}, steal ${win.steal_percent}%`)
      }
      console.log(`  ${JSON.stringify(run.windows.at(-1)!.processes)}`)
      runs.push(run)
    }
  }
  console.log(JSON.stringify({ name: 'probe:worker-scaling', connections: CONNECTIONS, seconds: SECONDS, warmup_seconds: WARMUP_SECONDS, windows: WINDOWS, cores: CORES, runs }))
}

await main()
