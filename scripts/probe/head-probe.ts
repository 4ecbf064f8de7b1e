/**
 * Probe (issue 13, ninth session): what the first 250 ms after a head are made of. The service runs
 * in this process (startNode, WORKERS=2), the open loop in a child process; timestamps (epoch ms)
 * of: heads, the builder's build (mineNow), main-thread event-loop stalls (a 1 ms timer's gaps),
 * main-thread GC, every pool task's wait / run / compute, and each thread's CPU (schedstat, ns)
 * every 5 ms. Prints per head a timeline of its first 400 ms, then summaries by time since head
 * (0-250 ms, 250-1000 ms, 1 s or more): latency, task wait / compute / dispatch, CPU ms per request
 * by thread, the compute of the first two tasks after each head against the rest, and the pool's
 * L1 counters. The probe's own timers cost the main thread ~1-2 ms of CPU per request: compare runs
 * of the probe with each other, not with bench:quote.
 * `RATE=30 PROBE_SECONDS=40 LOCAL_BUILDER_BLOCK_TIME_MS=4000 nice -n 10 npx tsx scripts/probe/head-probe.ts`
 * (WORKERS 2 and WORKER_NICE 0 unless set; `node --trace-gc --import tsx ...` adds every isolate's GC).
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { PerformanceObserver } from 'node:perf_hooks'
import { startNode } from '../../src/node/start.ts'
import { freePort } from '../../test/support/net.ts'
import { postQuote, QUOTE_MIX, quoteBody } from '../lib/quote-mix.ts'

const now = (): number => performance.timeOrigin + performance.now()
const port = await freePort()
const env = {
  ...process.env,
  PORT: String(port),
  LOCAL_BUILDER_PORT: '0',
  RATE_LIMIT_MAX: '1000000',
  LOG_LEVEL: 'warn',
  WORKERS: process.env.WORKERS ?? '2',
  WORKER_NICE: process.env.WORKER_NICE ?? '0',
  LOCAL_BUILDER_BLOCK_TIME_MS: process.env.LOCAL_BUILDER_BLOCK_TIME_MS ?? '4000',
}
const node = await startNode(env)
const url = `${node.url}/v1/quote`
const heads: Array<{ at: number; number: number }> = []
node.domain.chain.onNewHead((b) => heads.push({ at: now(), number: Number(b.number) }))
const builds: Array<{ start: number; end: number }> = []
const builder = node.builder!.builder as unknown as { mineNow(): Promise<unknown> }
const mine = builder.mineNow.bind(builder)
builder.mineNow = async () => {
  const start = now()
  try {
    return await mine()
  } finally {
    builds.push({ start, end: now() })
  }
}
const tasks: Array<{ end: number; kind: string; waitMs: number; runMs: number; computeMs: number }> = []
node.domain.workers!.onTaskTimed((t) => tasks.push({ end: now(), ...t }))
const stalls: Array<{ start: number; end: number }> = []
let last = now()
const ticker = setInterval(() => {
  const t = now()
  if (t - last > 4) stalls.push({ start: last, end: t })
  last = t
}, 1)
// per-thread CPU (ns, /proc/self/task/<tid>/schedstat) every 5 ms: counts that load changes less than wall time
const cpuSamples: Array<{ at: number; byTid: Map<number, number> }> = []
const readCpu = (): Map<number, number> => {
  const m = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      m.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]))
    } catch {}
  }
  return m
}
const cpuTicker = setInterval(() => cpuSamples.push({ at: now(), byTid: readCpu() }), 5)
const gcs: Array<{ start: number; ms: number; kind: number }> = []
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: performance.timeOrigin + e.startTime, ms: e.duration, kind: ((e as unknown as { detail?: unknown }).detail as { kind: number } | undefined)?.kind ?? 0 })
})
obs.observe({ entryTypes: ['gc'] })

// warm-up as the bench does
for (let i = 0; i < 3 * QUOTE_MIX.length; i++) {
  await postQuote(url, quoteBody(i, true)).catch((err: unknown) => console.error(String(err)))
}
const seconds = Number(process.env.PROBE_SECONDS ?? 40)
const rate = Number(process.env.RATE ?? 100)
const child = spawn(process.execPath, ['--import', 'tsx', new URL('./open-loop-child.ts', import.meta.url).pathname], {
  env: { ...process.env, URL: url, RATE: String(rate), COUNT: String(rate * seconds) },
  stdio: ['ignore', 'pipe', 'inherit'],
})
let out = ''
child.stdout.on('data', (d: Buffer) => (out += d.toString()))
await new Promise((resolve) => child.on('exit', resolve))
clearInterval(ticker)
clearInterval(cpuTicker)
obs.disconnect()
const gen = JSON.parse(out.trim().split('\n').at(-1)!) as { failures: number; startEpoch: number; samples: Array<{ i: number; due: number; ms: number; block: number }> }
const runStart = gen.startEpoch
const runEnd = Math.max(...gen.samples.map((s) => s.due + s.ms))
const inRun = (t: number): boolean => t >= runStart && t <= runEnd
const headTimes = heads.filter((h) => inRun(h.at)).map((h) => h.at)
const sinceHead = (t: number): number => {
  let best = Infinity
  for (const h of heads) if (h.at <= t && t - h.at < best) best = t - h.at
  return best
}
const bucket = (ms: number): string => (ms < 250 ? '0-250' : ms < 1000 ? '250-1000' : '1000+')
const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] * 100) / 100
}
const by = <T>(xs: T[], key: (x: T) => string): Map<string, T[]> => {
  const m = new Map<string, T[]>()
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x])
  return m
}
console.log(`heads in run ${headTimes.length}, failures ${gen.failures}, requests ${gen.samples.length}`)
for (const [b, xs] of by(gen.samples, (s) => bucket(sinceHead(s.due)))) console.log(`requests due ${b}: n ${xs.length} p50 ${pct(xs.map((x) => x.ms), 50)} p99 ${pct(xs.map((x) => x.ms), 99)} max ${pct(xs.map((x) => x.ms), 100)}`)
const quoteTasks = tasks.filter((t) => t.kind === 'quote' && inRun(t.end))
for (const [b, xs] of by(quoteTasks, (t) => bucket(sinceHead(t.end - t.runMs - t.waitMs)))) {
  console.log(`tasks arriving ${b}: n ${xs.length} wait p50/p99 ${pct(xs.map((x) => x.waitMs), 50)}/${pct(xs.map((x) => x.waitMs), 99)} compute p50/p99 ${pct(xs.map((x) => x.computeMs), 50)}/${pct(xs.map((x) => x.computeMs), 99)} dispatch(run-compute) p50/p99 ${pct(xs.map((x) => x.runMs - x.computeMs), 50)}/${pct(xs.map((x) => x.runMs - x.computeMs), 99)}`)
}
// per head: timeline of the first 400 ms
for (const h of headTimes) {
  const rel = (t: number): number => Math.round((t - h) * 10) / 10
  const b = builds.find((x) => x.start <= h && x.end >= h - 1)
  console.log(`\nhead @${rel(h)}: build ${b ? `${rel(b.start)}..${rel(b.end)} (${(b.end - b.start).toFixed(1)} ms)` : '?'}`)
  console.log('  stalls', stalls.filter((s) => s.end > h - 100 && s.start < h + 400).map((s) => `${rel(s.start)}..${rel(s.end)}`).join(' '))
  console.log('  gc', gcs.filter((g) => g.start > h - 100 && g.start < h + 400).map((g) => `${rel(g.start)}+${g.ms.toFixed(1)}(k${g.kind})`).join(' '))
  const ts = quoteTasks.filter((t) => t.end > h - 50 && t.end < h + 400)
  console.log('  tasks(end: wait/compute/disp)', ts.map((t) => `${rel(t.end)}:${t.waitMs.toFixed(0)}/${t.computeMs.toFixed(0)}/${(t.runMs - t.computeMs).toFixed(0)}`).join(' '))
  const rs = gen.samples.filter((s) => s.due > h - 50 && s.due < h + 400 && s.ms > 30)
  console.log('  slow requests (due: ms #mix block)', rs.map((s) => `${rel(s.due)}:${s.ms.toFixed(0)}#${s.i}b${s.block}`).join(' '))
}
// the first two tasks handed out after each head (one per worker, roughly) against the rest
const firstAfterHead: number[] = []
const firstIds = new Set<(typeof quoteTasks)[number]>()
for (const h of headTimes) {
  const after = quoteTasks.filter((t) => t.end - t.runMs >= h).sort((x, y) => x.end - x.runMs - (y.end - y.runMs)).slice(0, 2)
  for (const t of after) {
    firstAfterHead.push(t.computeMs)
    firstIds.add(t)
  }
}
const rest = quoteTasks.filter((t) => !firstIds.has(t)).map((t) => t.computeMs)
const mean = (xs: number[]): number => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100
console.log(`compute of the first 2 tasks after each head: n ${firstAfterHead.length} mean ${mean(firstAfterHead)} p50 ${pct(firstAfterHead, 50)} max ${pct(firstAfterHead, 100)}; other tasks: mean ${mean(rest)} p50 ${pct(rest, 50)} p99 ${pct(rest, 99)}`)
const pool = node.domain.workers!.stats()
console.log(`pool: l1Carried ${pool.l1Carried} over ${heads.length} heads (${Math.round(pool.l1Carried / Math.max(1, heads.length) / 2)} per head and worker), remoteReads ${pool.remoteReads}, l1Hits ${pool.l1Hits}, completed ${pool.completed}`)
const stallsIn = stalls.filter((s) => inRun(s.start))
console.log(`\nmain stalls >4ms in run: ${stallsIn.length}, by bucket`, [...by(stallsIn, (s) => bucket(sinceHead(s.start)))].map(([b, xs]) => `${b}: n ${xs.length} sum ${xs.reduce((a, s) => a + s.end - s.start, 0).toFixed(0)} max ${Math.max(...xs.map((s) => s.end - s.start)).toFixed(1)}`).join('; '))
console.log(`builds: ${builds.map((b) => (b.end - b.start).toFixed(1)).join(' ')}`)
console.log(`main gc in run: ${gcs.filter((g) => inRun(g.start)).length}, ms sum ${gcs.filter((g) => inRun(g.start)).reduce((a, g) => a + g.ms, 0).toFixed(0)}`)
// CPU per thread by time since head: ms of CPU per request due in each window
const comm = (tid: number): string => {
  try {
    return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
  } catch {
    return '?'
  }
}
const cpuBy = new Map<string, Map<number, number>>()
for (let k = 1; k < cpuSamples.length; k++) {
  const a = cpuSamples[k - 1]
  const b = cpuSamples[k]
  if (!inRun(a.at)) continue
  const w = bucket(sinceHead(a.at))
  const m = cpuBy.get(w) ?? new Map<number, number>()
  for (const [tid, ns] of b.byTid) m.set(tid, (m.get(tid) ?? 0) + (ns - (a.byTid.get(tid) ?? ns)) / 1e6)
  cpuBy.set(w, m)
}
const reqBy = by(gen.samples, (s) => bucket(sinceHead(s.due)))
const durBy = new Map<string, number>()
for (let k = 1; k < cpuSamples.length; k++) if (inRun(cpuSamples[k - 1].at)) durBy.set(bucket(sinceHead(cpuSamples[k - 1].at)), (durBy.get(bucket(sinceHead(cpuSamples[k - 1].at))) ?? 0) + cpuSamples[k].at - cpuSamples[k - 1].at)
for (const [w, m] of cpuBy) {
  const n = reqBy.get(w)?.length ?? 0
  const top = [...m].filter(([, ms]) => ms > 5).sort((x, y) => y[1] - x[1])
  console.log(`cpu ${w}: wall ${(durBy.get(w)! / 1000).toFixed(1)} s, requests ${n}; ms CPU per request by thread: ${top.map(([tid, ms]) => `${tid === process.pid ? 'MAIN' : `${comm(tid)}#${tid}`} ${(ms / n).toFixed(2)}`).join(', ')}; all ${([...m.values()].reduce((x, y) => x + y, 0) / n).toFixed(2)}`)
}
await node.close()
process.exit(0)
