/**
 * npx tsx scripts/probe/platform-threads.ts
 *
 * What V8's platform threads do per quote (issue 12: 0.24-0.34 CPU ms per quote in the thirteenth
 * session's idle bench:quote, beside the workers' 2.6-2.8). bench:quote's saturated load
 * (autocannon, BENCH_CONNECTIONS, default 8, distinct amounts) on the service as `npm start` starts
 * it with WORKERS (default 2), after every worker has answered PROBE_WARMUP_QUOTES_PER_WORKER
 * quotes (default 2500, as bench:quote), then PROBE_SECONDS (default 8) measured, PROBE_ROUNDS
 * times (default 1; one service per round). Per round: CPU ms per answered quote of the main thread,
 * each worker and the platform threads (test/support/thread-cpu.ts tells them apart), and, with
 * PROBE_PERF=1, `perf record -e cpu-clock` on the platform threads alone over the window (a software
 * clock: this KVM guest has no PMU), its samples grouped by V8 job (scavenger, marker, sweeper,
 * compiler...) from the symbols of the node binary. PROBE_NODE_ARGS (words) go before the start
 * script's node arguments (V8 flags to try: `--single-threaded-gc`, `--no-concurrent-recompilation`...);
 * PROBE_ENV (JSON object) adds to the service's environment. Last line: one JSON object.
 */
import { spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../test/support/net.ts'
import { startScriptEnv, startScriptNodeArgs } from '../../test/support/service-process.ts'
import { msPer, sampleThreads, threadCpuBetween, threadCpuPer, v8PoolSizeOf } from '../../test/support/thread-cpu.ts'
import { clockTicks } from '../lib/process-cpu.ts'
import { postQuote, QUOTE_MIX, quoteBody, quoteLoad } from '../lib/quote-mix.ts'
import { warmUpWorkers } from '../lib/warm-up-workers.ts'
import { perfJobsPer, startPerf } from '../lib/perf-v8-jobs.ts'

const WORKERS = Number(process.env.WORKERS ?? 2)
const SECONDS = Number(process.env.PROBE_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 1)
const WARMUP_QUOTES_PER_WORKER = Number(process.env.PROBE_WARMUP_QUOTES_PER_WORKER ?? 2500)
const WARMUP_MAX_SECONDS = Number(process.env.PROBE_WARMUP_MAX_SECONDS ?? 300)
const PERF = process.env.PROBE_PERF === '1'
/** PROBE_TRACE_OPT=1: the service runs with --trace-opt --trace-deopt; the window's compiles and deopts are counted */
const TRACE_OPT = process.env.PROBE_TRACE_OPT === '1'
const NODE_ARGS = (process.env.PROBE_NODE_ARGS ?? '').split(/\s+/).filter((w) => w !== '')
const EXTRA_ENV = JSON.parse(process.env.PROBE_ENV ?? '{}') as Record<string, string>
const CORES = availableParallelism()

/**
 * The window's part of a --trace-opt --trace-deopt log: optimizing compiles finished (every isolate),
 * the background part of their time ("took prepare, execute, finalize ms": execute runs on a
 * platform thread when concurrent), deopts by reason, and the functions compiled most.
 */
function optOf(text: string, quotes: number) {
  let compiles = 0
  let executeMs = 0
  const byFunction = new Map<string, number>()
  const deopts = new Map<string, number>()
  for (const line of text.split('\n')) {
    const done = /^\[completed compiling 0x[0-9a-f]+ <JSFunction ([^ >]*)[^\]]*took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/.exec(line)
    if (done !== null) {
      compiles++
      executeMs += Number(done[3])
      const name = done[1] === '' || done[1]!.startsWith('(') ? '(anonymous)' : done[1]!
      byFunction.set(name, (byFunction.get(name) ?? 0) + 1)
      continue
    }
    const deopt = /^\[bailout \(kind: ([^,]+), reason: ([^)]*)\).*deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >]*)/.exec(line)
    if (deopt !== null) {
      const key = `${deopt[3] || '(anonymous)'}: ${deopt[1]}, ${deopt[2]}`
      deopts.set(key, (deopts.get(key) ?? 0) + 1)
    }
  }
  const top = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)
  return {
    compiles_per_1000_quotes: Math.round((1e6 * compiles) / quotes) / 1000,
    compile_execute_ms_per_quote: Math.round((1000 * executeMs) / quotes) / 1000,
    deopts_per_1000_quotes: Math.round((1e6 * [...deopts.values()].reduce((s, x) => s + x, 0)) / quotes) / 1000,
    top_compiled: top(byFunction),
    top_deopts: top(deopts),
  }
}

function load(url: string, seconds: number) {
  return quoteLoad(url, CONNECTIONS, seconds)
}

async function round(n: number) {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-threads-'))
  const optLog = join(dataDir, 'opt.txt')
  const logFd = TRACE_OPT ? openSync(optLog, 'w') : undefined
  const child = spawn(process.execPath, [...(TRACE_OPT ? ['--trace-opt', '--trace-deopt'] : []), ...NODE_ARGS, ...startScriptNodeArgs()], {
    env: { ...process.env, ...startScriptEnv(), LOG_LEVEL: 'warn', DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: String(WORKERS), EVM_MAX_MS: process.env.EVM_MAX_MS ?? '10000', ...EXTRA_ENV, PORT: String(port) },
    stdio: ['ignore', logFd ?? 'ignore', 'inherit'],
  })
  if (logFd !== undefined) closeSync(logFd)
  const base = `http://127.0.0.1:${port}`
  try {
    for (let i = 0; i < 600 && !(await fetch(`${base}/readyz`).then((r) => r.ok, () => false)); i++) {
      if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    for (let k = 0; k < 3 * QUOTE_MIX.length; k++) await postQuote(`${base}/v1/quote`, quoteBody(k, true))
    const warmUp = await warmUpWorkers({ bases: [base], workers: WORKERS, quotesPerWorker: WARMUP_QUOTES_PER_WORKER, maxSeconds: WARMUP_MAX_SECONDS, slice: () => load(`${base}/v1/quote`, 2) })
    const pid = child.pid!
    const poolSize = v8PoolSizeOf(pid, CORES)
    const before = sampleThreads(pid)
    // the platform threads: the first 1 + pool size threads after the main one (thread-cpu.ts)
    const platformTids = before.threads.filter((t) => t.id !== pid).sort((a, b) => a.startTicks - b.startTicks || a.id - b.id).slice(0, poolSize + 1).map((t) => t.id)
    const perfFile = join(dataDir, 'perf.data')
    // the workers: the busiest threads after the warm-up, besides the main one and the platform's
    const workerTids = before.threads.filter((t) => t.id !== pid && !platformTids.includes(t.id)).sort((a, b) => b.cpuTicks - a.cpuTicks).slice(0, WORKERS).map((t) => t.id)
    const perf = PERF ? startPerf(['-t', [...platformTids, ...workerTids].join(',')], perfFile) : undefined
    const optFrom = TRACE_OPT ? statSync(optLog).size : 0
    const t0 = performance.now()
    const result = await load(`${base}/v1/quote`, SECONDS)
    const wallS = (performance.now() - t0) / 1000
    const after = sampleThreads(pid)
    const optTo = TRACE_OPT ? statSync(optLog).size : 0
    await perf?.stop()
    const quotes = result['2xx']
    const cpu = threadCpuBetween(before, after, { ticksPerSecond: clockTicks(), workers: WORKERS, poolSize })
    return {
      round: n,
      warmed_quotes_per_worker: Math.round(warmUp.quotesPerWorker),
      warmup_seconds: Math.round(warmUp.seconds),
      requests_per_s: Math.round((100 * quotes) / wallS) / 100,
      failures: result.non2xx + result.errors + result.timeouts,
      cpu_ms_per_quote_by_thread: threadCpuPer(cpu, quotes),
      service_cpu_ms_per_quote: msPer(cpu.total, quotes),
      ...(perf === undefined ? {} : { perf: perfJobsPer(perfFile, quotes, (tid) => (platformTids.includes(tid) ? 'platform' : 'workers'), (g) => g === 'platform') }),
      ...(TRACE_OPT ? { opt: optOf(readFileSync(optLog).subarray(optFrom, optTo).toString('utf8'), quotes) } : {}),
    }
  } finally {
    child.kill('SIGKILL')
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const rounds = []
for (let n = 1; n <= ROUNDS; n++) {
  const r = await round(n)
  console.log(`round ${n}: ${r.requests_per_s} req/s, ${JSON.stringify(r.cpu_ms_per_quote_by_thread)}${r.perf === undefined ? '' : ` perf ${JSON.stringify(r.perf.ms_per_unit_by_group)}`}${r.opt === undefined ? '' : ` opt ${JSON.stringify(r.opt)}`}`)
  rounds.push(r)
}
console.log(JSON.stringify({ name: 'probe:platform-threads', workers: WORKERS, connections: CONNECTIONS, seconds: SECONDS, node_args: NODE_ARGS, env: EXTRA_ENV, rounds }))
