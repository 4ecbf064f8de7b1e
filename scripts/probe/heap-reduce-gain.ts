/**
 * PROBE_REDUCE=0|1 npx tsx scripts/probe/heap-reduce-gain.ts
 *
 * What a memory-reducing full collection gives back in a quoting isolate, and what it costs (issue
 * 10: V8's committed heaps keep rising after bench:soak's first minute while the live heaps barely
 * move). The bench:quote mix through the quote service in-process (`WORKERS=0`, no answer cache,
 * distinct amounts), one quote at a time: PROBE_WARMUP quotes (default 1500), then PROBE_ROUNDS
 * (default 8) rounds of PROBE_QUOTES (default 1000). After each round: the heap's spaces
 * (committed and used, MB) and VmRSS; with PROBE_REDUCE=1 also one `v8.queryObjects` call (V8's
 * CollectAllAvailableGarbage: the reduce-memory mark-compacts that compact fragmented pages and
 * shrink the young generation) and the spaces again, with that call's wall and CPU ms (this
 * thread). Each round's CPU ms per quote counts everything this thread did, the reducing GC
 * included: run PROBE_REDUCE=0 and 1 alternately and compare rounds, not single figures. The last line is one JSON object.
 */
import { readFileSync } from 'node:fs'
import { getHeapSpaceStatistics, getHeapStatistics, queryObjects } from 'node:v8'
import { parseProcStat } from '../../test/support/thread-cpu.ts'
import { openInProcessQuoter } from '../lib/in-process-quoter.ts'
import { clockTicks } from '../lib/process-cpu.ts'

const WARMUP = Number(process.env.PROBE_WARMUP ?? 1500)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 8)
const QUOTES = Number(process.env.PROBE_QUOTES ?? 1000)
const REDUCE = process.env.PROBE_REDUCE === '1'

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10

/** committed / used MB per space V8 reports, and the heap's total committed */
function heapNow(): Record<string, number> {
  const out: Record<string, number> = { committed: mb(getHeapStatistics().total_heap_size) }
  for (const s of getHeapSpaceStatistics()) {
    const key = s.space_name.replace(/_space$/, '')
    if (s.space_size === 0) continue
    out[`${key}_committed`] = mb(s.space_size)
    out[`${key}_used`] = mb(s.space_used_size)
  }
  out.rss = Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024)
  return out
}

/** this (the JavaScript) thread's CPU ms since it started */
function threadCpuMs(): number {
  const stat = parseProcStat(readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8'))
  return (stat.cpuTicks * 1000) / clockTicks()
}

/** V8's CollectAllAvailableGarbage, through the one public call that runs it (its experimental warning goes to stderr) */
function reducingCollection(): void {
  queryObjects(Object, { format: 'count' })
}

const quoter = await openInProcessQuoter()
const one = () => quoter.next()
for (let i = 0; i < WARMUP; i++) await one()
const rounds = []
for (let r = 1; r <= ROUNDS; r++) {
  const cpu0 = threadCpuMs()
  for (let i = 0; i < QUOTES; i++) await one()
  const before = heapNow()
  let reduce: { wall_ms: number; cpu_ms: number; after: Record<string, number> } | undefined
  if (REDUCE) {
    const c = threadCpuMs()
    const t = performance.now()
    reducingCollection()
    reduce = { wall_ms: Math.round(performance.now() - t), cpu_ms: Math.round(threadCpuMs() - c), after: heapNow() }
  }
  const round = { round: r, cpu_ms_per_quote: Math.round(((threadCpuMs() - cpu0) / QUOTES) * 1000) / 1000, before, ...(reduce === undefined ? {} : { reduce }) }
  console.log(JSON.stringify(round))
  rounds.push(round)
}
await quoter.close()
console.log(JSON.stringify({ name: 'probe:heap-reduce-gain', reduce: REDUCE, warmup: WARMUP, quotes_per_round: QUOTES, rounds }))
process.exit(0)
