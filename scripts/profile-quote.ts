/**
 * npx tsx scripts/profile-quote.ts
 *
 * Where the service's threads spend their time while computing quotes (issues 12 and 13): the
 * service started as `npm start` starts it with WORKERS=PROFILE_WORKERS (default 2) and V8's
 * `--cpu-prof` (which the worker pool passes on to its workers: one profile per thread), saturated
 * with distinct quote requests (autocannon, PROFILE_CONNECTIONS connections, default 8, for
 * PROFILE_SECONDS, default 10), then stopped with SIGTERM so the profiles are written. Prints:
 * requests/s; CPU ms per quote of the process and of its main thread alone (/proc/<pid>/task/<pid>);
 * state reads, state messages and L1 hits per quote (GET /metrics, over the window); and the self
 * time of the main thread and of the workers (their profiles summed), each grouped by where the
 * code lives (node internals, fastify, src/evm, src/routing, ...) and by function, from the
 * samples in the window. Last line: one JSON object.
 *
 * The CPU per quote split by thread (`cpu_ms_per_quote_by_thread`), for the bound on
 * workers_scaling: the main thread (tid = pid), the workers (the WORKERS busiest other threads:
 * /proc names every thread of the process `node`, and on an idle machine the workers' JavaScript
 * threads are the busiest; on a loaded one, where they wait for a core, the split is unreliable),
 * the rest (V8's GC helpers and compiler threads, libuv's pool), V8's profiler threads (this
 * script's own cost); beside it the load generator's (autocannon, in this process), which shares
 * the cores.
 */
import autocannon from 'autocannon'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/support/net.ts'
import { startServiceProcess } from '../test/support/service-process.ts'
import type { CpuProfile } from './lib/cpu-profile.ts'
import { scrapeSums, startCpuWindow, threadSecondsBetween } from './lib/process-cpu.ts'
import { sampleThreads } from '../test/support/thread-cpu.ts'
import { mixRequests, postQuote, QUOTE_MIX, quoteBody } from './lib/quote-mix.ts'

const WORKERS = Number(process.env.PROFILE_WORKERS ?? 2)
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 8)
const COUNTERS = ['worker_remote_state_reads_total', 'worker_remote_state_batches_total', 'worker_state_l1_hits_total', 'worker_state_l1_carried_total', 'worker_tasks_completed_total'] as const


/** Where a frame's code lives, by its URL (a few buckets that say which layer spends the time). */
function area(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/').slice(0, 2).join('/')
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (nm !== null) return nm[1]
  const src = /\/(src|scripts|test)\/(.*)$/.exec(url)
  if (src !== null) return `${src[1]}/${src[2].split('/').slice(0, src[1] === 'src' ? 2 : 1).join('/')}`
  return url
}

/** Self time (ms) per area and per function of the samples taken between `fromUs` and `toUs` (the profiles' clock), summed over `profiles`. */
function selfTimes(profiles: readonly CpuProfile[], fromUs: number, toUs: number) {
  const areas = new Map<string, number>()
  const functions = new Map<string, number>()
  let totalMs = 0
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]))
    let t = profile.startTime
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i]
      if (t < fromUs || t > toUs) return
      const node = byId.get(id)!
      const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
      const { functionName, url, lineNumber } = node.callFrame
      // a worker waiting for its next task is not work
      if (functionName === '(idle)') return
      const a = area(url, functionName)
      areas.set(a, (areas.get(a) ?? 0) + ms)
      const f = `${functionName || '(anonymous)'} ${a}:${lineNumber + 1}`
      functions.set(f, (functions.get(f) ?? 0) + ms)
      totalMs += ms
    })
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: Math.round((1000 * ms) / totalMs) / 10 }))
  return { totalMs: Math.round(totalMs), areas: top(areas, 25), functions: top(functions, 40) }
}

/** V8 names a profile CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile; thread 0 is the main thread */
function profileThread(file: string): number {
  return Number(file.split('.').at(-3))
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'profile-quote-'))
  process.env.BENCH_PROFILE_DIR = dir
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const service = await startServiceProcess(port, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: String(WORKERS) })
  const exited = new Promise<void>((resolve) => service.once('exit', () => resolve()))
  try {
    for (let i = 0; i < 3 * QUOTE_MIX.length; i++) await postQuote(`${base}/v1/quote`, quoteBody(i, true))
    const before = await scrapeSums(base, COUNTERS)
    const window = startCpuWindow(service.pid!)
    const generator = startCpuWindow(process.pid)
    const threads0 = sampleThreads(service.pid!)
    // the profile's clock is the process's monotonic clock in µs; the window is found from the samples' density instead
    const startedAt = Date.now()
    const result = await autocannon({
      url: `${base}/v1/quote`,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: mixRequests(),
    })
    const cpu = window.stop()
    const generatorCpu = generator.stop()
    const threadSeconds = threadSecondsBetween(threads0, sampleThreads(service.pid!))
    const threads = threadSeconds.map((t) => ({ tid: t.tid, name: t.name, cpu_percent: Math.round((100 * t.seconds) / SECONDS) })).filter((t) => t.cpu_percent > 0)
    const after = await scrapeSums(base, COUNTERS)
    const quotes = result['2xx']
    const per = (name: (typeof COUNTERS)[number]) => Math.round((100 * (after[name] - before[name])) / quotes) / 100
    const msPerQuote = (seconds: number) => Math.round((100_000 * seconds) / quotes) / 100
    // V8's profiler threads (--cpu-prof, one per isolate) are this script's cost, not the service's
    const profiler = threadSeconds.filter((t) => t.name === 'v8:ProfEvntProc')
    const others = threadSeconds.filter((t) => t.tid !== service.pid && t.name !== 'v8:ProfEvntProc')
    const sumSeconds = (ts: ReadonlyArray<{ seconds: number }>) => ts.reduce((sum, t) => sum + t.seconds, 0)
    const byThread = {
      main: msPerQuote(threadSeconds.find((t) => t.tid === service.pid)?.seconds ?? Number.NaN),
      workers: msPerQuote(sumSeconds(others.slice(0, WORKERS))),
      other_threads: msPerQuote(sumSeconds(others.slice(WORKERS))),
      profiler: msPerQuote(sumSeconds(profiler)),
      load_generator: msPerQuote(generatorCpu.cpuSeconds),
    }
    service.kill('SIGTERM')
    await exited
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
    const file = files.find((f) => profileThread(f) === 0)
    if (file === undefined) throw new Error(`no CPU profile of the main thread written in ${dir}`)
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
    const workerProfiles = files.filter((f) => profileThread(f) !== 0).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile)
    // the load's window on the profiles' clock (one monotonic clock for every thread): its end is
    // SECONDS after its start, which lies (Date.now() - startedAt) ms before the main profile ended, less the shutdown
    const endUs = profile.startTime + profile.timeDeltas.reduce((a, b) => a + b, 0)
    const shutdownUs = (Date.now() - startedAt) * 1000 - SECONDS * 1_000_000
    const toUs = endUs - Math.max(0, shutdownUs)
    const times = selfTimes([profile], toUs - SECONDS * 1_000_000, toUs)
    const workerTimes = selfTimes(workerProfiles, toUs - SECONDS * 1_000_000, toUs)
    console.log('main thread')
    console.table(times.areas)
    console.table(times.functions)
    console.log(`workers (${workerProfiles.length} profiles)`)
    console.table(workerTimes.areas)
    console.table(workerTimes.functions)
    console.table(threads)
    console.log(
      JSON.stringify({
        name: 'profile:quote',
        workers: WORKERS,
        connections: CONNECTIONS,
        seconds: SECONDS,
        requests_per_s: result.requests.average,
        p99_ms: result.latency.p99,
        failures: result.non2xx + result.errors + result.timeouts,
        cpu_percent: Math.round(cpu.cpuPercent),
        main_thread_cpu_percent: Math.round(cpu.mainThreadCpuPercent),
        cpu_ms_per_quote: Math.round((100_000 * cpu.cpuSeconds) / quotes) / 100,
        main_thread_cpu_ms_per_quote: Math.round((100_000 * cpu.mainThreadCpuSeconds) / quotes) / 100,
        cpu_ms_per_quote_by_thread: byThread,
        load_generator_cpu_percent: Math.round(generatorCpu.cpuPercent),
        state_reads_per_quote: per('worker_remote_state_reads_total'),
        state_messages_per_quote: per('worker_remote_state_batches_total'),
        l1_hits_per_quote: per('worker_state_l1_hits_total'),
        l1_carried: after.worker_state_l1_carried_total - before.worker_state_l1_carried_total,
        profile: join(dir, file),
        threads,
        main_thread_profiled_ms: times.totalMs,
        main_thread_areas: times.areas.slice(0, 12),
        worker_profiles: workerProfiles.length,
        // sampled time on the workers' JavaScript threads (like main_thread_profiled_ms): on a loaded
        // machine it counts time a thread waited for a core, so read the shares, not the total
        worker_profiled_ms: workerTimes.totalMs,
        worker_areas: workerTimes.areas.slice(0, 12),
      }),
    )
  } finally {
    if (service.exitCode === null) service.kill('SIGKILL')
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
