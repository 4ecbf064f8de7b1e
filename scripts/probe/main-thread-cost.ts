/**
 * What the main thread costs per quote (issue 13, eleventh session): the service started as
 * `npm start` starts it with WORKERS=1 (PROBE_WORKERS), warmed, then two phases of autocannon
 * (PROBE_CONNECTIONS, default 4, PROBE_SECONDS each, default 8):
 *   - repeat: one request over and over, answered from the main thread's per-block answer cache:
 *     HTTP, routing, auth, validation, rate limit, serialization, metrics, without the worker;
 *   - distinct: every request a distinct amount, so each one is a task of the pool.
 * For each: the main thread's CPU ms per answer (/proc/<pid>/task/<pid>) and, in the distinct phase,
 * the busiest other thread's (the worker, with WORKERS=1) and the whole process's. distinct - repeat
 * is what the pool costs the main thread per quote (piscina's dispatch, the messages both ways, the
 * answer cache's bookkeeping). With PROBE_PROFILE=1 the service runs under --cpu-prof and the main
 * thread's samples of the distinct phase are summed by function (inclusive time), top 60.
 * CPU time, not wall time: on a loaded machine the per-second fixed costs (timers, the devnet's
 * builder, the dispatcher) weigh more per answer when fewer answers fit in a second.
 * `WORKER_NICE=0 nice -n 10 npx tsx scripts/probe/main-thread-cost.ts`
 */
import autocannon from 'autocannon'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { freePort } from '../../test/support/net.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'
import type { CpuProfile, ProfileNode } from '../lib/cpu-profile.ts'
import { processCpuSeconds, threadSecondsBetween } from '../lib/process-cpu.ts'
import { sampleThreads } from '../../test/support/thread-cpu.ts'
import { postQuote, QUOTE_MIX, quoteBody } from '../lib/quote-mix.ts'

const WORKERS = Number(process.env.PROBE_WORKERS ?? 1)
const SECONDS = Number(process.env.PROBE_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.PROBE_CONNECTIONS ?? 4)
const PROFILE = process.env.PROBE_PROFILE === '1'

async function phase(pid: number, url: string, distinct: boolean) {
  let i = 0
  const t0 = sampleThreads(pid)
  const p0 = processCpuSeconds(pid)
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY }, setupRequest: (req) => ({ ...req, body: quoteBody(i++, distinct) }) }],
  })
  const toUs = Number(process.hrtime.bigint() / 1000n)
  const t1 = sampleThreads(pid)
  const answers = result['2xx']
  const deltas = threadSecondsBetween(t0, t1)
  const main = deltas.find((d) => d.tid === pid)!.seconds
  const worker = deltas.find((d) => d.tid !== pid)?.seconds ?? 0
  const ms = (s: number) => Math.round((100_000 * s) / answers) / 100
  return {
    fromUs,
    toUs,
    figures: {
      answers,
      requests_per_s: result.requests.average,
      non2xx: result.non2xx,
      main_thread_cpu_ms: ms(main),
      busiest_other_thread_cpu_ms: ms(worker),
      process_cpu_ms: ms(processCpuSeconds(pid) - p0),
    },
  }
}

/** inclusive ms per function of the main thread's samples between fromUs and toUs (V8's clock is CLOCK_MONOTONIC in µs) */
function inclusive(profile: CpuProfile, fromUs: number, toUs: number, answers: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/.*\/(node_modules|src)\//, '$1/')}:${n.callFrame.lineNumber + 1}`
  const sums = new Map<string, number>()
  let busy = 0
  let t = profile.startTime
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i]
    if (t < fromUs || t > toUs) return
    const leaf = byId.get(id)!
    if (leaf.callFrame.functionName === '(idle)') return
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000
    busy += dt
    const seen = new Set<string>()
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const k = name(byId.get(n)!)
      if (seen.has(k)) continue
      seen.add(k)
      sums.set(k, (sums.get(k) ?? 0) + dt)
    }
  })
  const top = [...sums.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60)
  return { busy_ms: Math.round(busy), per_answer_us: Math.round((1000 * busy) / answers), top: top.map(([k, v]) => `${((1000 * v) / answers).toFixed(1).padStart(7)} us/answer ${(100 * v / busy).toFixed(1).padStart(5)}%  ${k}`) }
}

async function main() {
  const dir = PROFILE ? mkdtempSync(join(tmpdir(), 'main-thread-cost-')) : undefined
  if (dir !== undefined) process.env.BENCH_PROFILE_DIR = dir
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const service = await startServiceProcess(port, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: String(WORKERS) })
  const exited = new Promise<void>((resolve) => service.once('exit', () => resolve()))
  try {
    for (let i = 0; i < 6 * QUOTE_MIX.length; i++) await postQuote(`${base}/v1/quote`, quoteBody(i, true))
    const url = `${base}/v1/quote`
    const repeat = await phase(service.pid!, url, false)
    const distinct = await phase(service.pid!, url, true)
    service.kill('SIGTERM')
    await exited
    const out: Record<string, unknown> = { name: 'probe:main-thread-cost', workers: WORKERS, connections: CONNECTIONS, seconds: SECONDS, repeat: repeat.figures, distinct: distinct.figures }
    out.pool_main_thread_cpu_ms = Math.round(100 * (distinct.figures.main_thread_cpu_ms - repeat.figures.main_thread_cpu_ms)) / 100
    if (dir !== undefined) {
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && Number(f.split('.').at(-3)) === 0 && f.includes(`.${service.pid}.`))
      if (file !== undefined) {
        const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
        const r = inclusive(profile, repeat.fromUs, repeat.toUs, repeat.figures.answers)
        const d = inclusive(profile, distinct.fromUs, distinct.toUs, distinct.figures.answers)
        console.log('repeat phase, main thread', r.busy_ms, 'ms,', r.per_answer_us, 'us per answer\n' + r.top.join('\n'))
        console.log('distinct phase, main thread', d.busy_ms, 'ms,', d.per_answer_us, 'us per answer\n' + d.top.join('\n'))
      }
    }
    console.log(JSON.stringify(out))
  } finally {
    if (service.exitCode === null) service.kill('SIGKILL')
  }
}

await main()
