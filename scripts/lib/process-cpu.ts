/**
 * CPU time of a service process over a measured window, for the benchmarks' `cpu_percent` and
 * `cpu_ms_per_quote` (issues 12 and 13): the kernel's per-process counters, so every thread of the
 * process counts (the main thread, the worker pool, libuv's threads, V8's GC), not only the one
 * that answers. Over 100% means more than one core worked.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { parseProcStat, sampleThreads, threadCpuBetween, v8PoolSizeOf, type ThreadCpu, type ThreadSample } from '../../test/support/thread-cpu.ts'

/** clock ticks per second of /proc's utime and stime (USER_HZ; 100 on Linux almost everywhere) */
let ticksPerSecond: number | undefined
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const answer = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    ticksPerSecond = Number.isInteger(answer) && answer > 0 ? answer : 100
  }
  return ticksPerSecond
}

/**
 * User + system CPU seconds `pid` has used since it started, all its threads summed (fields 14 and
 * 15 of /proc/<pid>/stat).
 * @throws Error when the process is gone or the file does not read as expected
 */
export function processCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`)
}

/**
 * User + system CPU seconds of one thread `tid` of process `pid` (its main thread is tid = pid):
 * what the main thread alone costs, beside the worker threads.
 */
export function threadCpuSeconds(pid: number, tid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`)
}

/** CPU seconds each live thread of `after` used since `before` (a thread new since then counts from 0), the busiest first, with its name */
export function threadSecondsBetween(before: ThreadSample, after: ThreadSample): Array<{ tid: number; name: string; seconds: number }> {
  const start = new Map(before.threads.map((t) => [t.id, t.cpuTicks]))
  return after.threads
    .map((t) => ({ tid: t.id, name: t.comm, seconds: (t.cpuTicks - (start.get(t.id) ?? 0)) / clockTicks() }))
    .sort((a, b) => b.seconds - a.seconds)
}

/** the one parser of /proc stat lines (test/support/thread-cpu.ts), its ticks in seconds */
function statCpuSeconds(file: string): number {
  return parseProcStat(readFileSync(file, 'utf8')).cpuTicks / clockTicks()
}

export interface CpuWindow {
  /** CPU seconds the process used in the window */
  cpuSeconds: number
  /** of which its main thread (HTTP, validation, the workers' state reads; tid = pid) */
  mainThreadCpuSeconds: number
  wallSeconds: number
  /** cpuSeconds / wallSeconds x 100: over 100 when more than one core worked */
  cpuPercent: number
  /** mainThreadCpuSeconds / wallSeconds x 100: at 100 the main thread is the bottleneck */
  mainThreadCpuPercent: number
}

/** Starts a window on `pid`'s CPU time; `stop()` ends it. Windows add up with `sumCpuWindows`. */
export function startCpuWindow(pid: number): { stop(): CpuWindow } {
  const cpu0 = processCpuSeconds(pid)
  const main0 = threadCpuSeconds(pid, pid)
  const wall0 = performance.now()
  return {
    stop(): CpuWindow {
      const cpuSeconds = processCpuSeconds(pid) - cpu0
      const mainThreadCpuSeconds = threadCpuSeconds(pid, pid) - main0
      const wallSeconds = (performance.now() - wall0) / 1000
      return { cpuSeconds, mainThreadCpuSeconds, wallSeconds, ...percents(cpuSeconds, mainThreadCpuSeconds, wallSeconds) }
    },
  }
}

/**
 * Starts a window on the threads of the Node process `pid`, whose worker pool has `workers`
 * threads: `stop()` gives each kind's CPU seconds (test/support/thread-cpu.ts says how threads are
 * told apart: main, workers, V8's platform threads, the rest).
 */
export function startThreadCpuWindow(pid: number, workers: number): { stop(): ThreadCpu } {
  const poolSize = v8PoolSizeOf(pid, availableParallelism())
  const before = sampleThreads(pid)
  return {
    stop: () => threadCpuBetween(before, sampleThreads(pid), { ticksPerSecond: clockTicks(), workers, poolSize }),
  }
}

/** Several windows as one (e.g. the service's request loops, without the idle time between them). */
export function sumCpuWindows(windows: readonly CpuWindow[]): CpuWindow {
  const cpuSeconds = windows.reduce((s, w) => s + w.cpuSeconds, 0)
  const mainThreadCpuSeconds = windows.reduce((s, w) => s + w.mainThreadCpuSeconds, 0)
  const wallSeconds = windows.reduce((s, w) => s + w.wallSeconds, 0)
  return { cpuSeconds, mainThreadCpuSeconds, wallSeconds, ...percents(cpuSeconds, mainThreadCpuSeconds, wallSeconds) }
}

function percents(cpuSeconds: number, mainThreadCpuSeconds: number, wallSeconds: number): { cpuPercent: number; mainThreadCpuPercent: number } {
  if (!(wallSeconds > 0)) return { cpuPercent: Number.NaN, mainThreadCpuPercent: Number.NaN }
  return { cpuPercent: (100 * cpuSeconds) / wallSeconds, mainThreadCpuPercent: (100 * mainThreadCpuSeconds) / wallSeconds }
}

/**
 * The sum of every sample of the metric families `names` on the service's GET /metrics (counters
 * and gauges; labels summed), e.g. a counter read before and after a window.
 */
export async function scrapeSums<N extends string>(baseUrl: string, names: readonly N[]): Promise<Record<N, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
  const sums = Object.fromEntries(names.map((n) => [n, 0])) as Record<N, number>
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] as N | undefined
    if (name !== undefined && name in sums) sums[name] += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sums
}
