/**
 * CPU time per thread of a Node process, and per process of a tree, from /proc, split by what the
 * threads are (issues 13 and 14: the ceilings of `workers_scaling` and `replicas_acks_per_s` on the
 * machine's cores come from these figures). Shared by the benchmark scripts and their tests (tests
 * may not import scripts/lib); nothing here starts a process.
 *
 * Node 20 names every thread `node` in /proc, so threads are told apart by when Node creates them:
 * - the main thread: tid = pid;
 * - V8's platform threads: the first 1 + `--v8-pool-size` (default 4) threads Node creates, before
 *   anything else (node::InitializeOncePerProcess: the NodePlatform's worker threads and its
 *   delayed-task scheduler). They serve every isolate of the process, the workers' too: parallel
 *   scavenges and marking, concurrent marking and sweeping, concurrent TurboFan compiles;
 * - the worker pool's threads: among the rest, the `workers` busiest in the window (a worker thread
 *   runs the quotes, simulations and plans; the rest are libuv's pool, the inspector's signal
 *   thread, the module-loader threads of tsx's hooks, LevelDB's compaction, nearly idle under load);
 * - the rest: `other`, with the CPU of threads that exited during the window (the process's own
 *   counter keeps it; no thread does any more).
 */
import { readdirSync, readFileSync } from 'node:fs'

/** the fields of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat the benchmarks read */
export interface ProcStat {
  /** pid, or tid for a thread's file */
  id: number
  /** the command name, without its parentheses */
  comm: string
  ppid: number
  /** user + system time, in clock ticks (USER_HZ) */
  cpuTicks: number
  /** when it started, clock ticks after boot */
  startTicks: number
  /** its nice value (WORKER_NICE raises the worker threads') */
  nice: number
}

/**
 * One line of /proc/.../stat. The command name may hold spaces and parentheses, so the fields are
 * counted after its last ')'.
 * @throws Error when the line does not read as a stat line
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  if (open < 0 || close < open) throw new Error(`not a /proc stat line: ${JSON.stringify(line.slice(0, 120))}`)
  const fields = line.slice(close + 2).trim().split(' ')
  // after "pid (comm) ", field 3 (state) is index 0: ppid (4) is 1, utime (14) 11, stime (15) 12,
  // nice (19) 16, starttime (22) 19
  const numbers = [fields[1], fields[11], fields[12], fields[16], fields[19]].map(Number)
  if (numbers.some((n) => !Number.isFinite(n)) || fields.length < 20) throw new Error(`not a /proc stat line: ${JSON.stringify(line.slice(0, 120))}`)
  const [ppid, utime, stime, nice, startTicks] = numbers as [number, number, number, number, number]
  return { id: Number(line.slice(0, open).trim()), comm: line.slice(open + 1, close), ppid, cpuTicks: utime + stime, startTicks, nice }
}

/** a process's CPU counter and each of its live threads', read at one moment */
export interface ThreadSample {
  pid: number
  /** the process's CPU ticks: every thread it ever had, those that exited included */
  processTicks: number
  threads: ProcStat[]
}

/**
 * Reads /proc/<pid>/stat and every /proc/<pid>/task/<tid>/stat (a thread that exits while listed is
 * left out).
 * @throws Error when the process is gone
 */
export function sampleThreads(pid: number): ThreadSample {
  const processTicks = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuTicks
  const threads: ProcStat[] = []
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.push(parseProcStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')))
    } catch {
      // exited while listed
    }
  }
  return { pid, processTicks, threads }
}

/** Node's --v8-pool-size when unset (node_options.h: v8_thread_pool_size = 4) */
export const DEFAULT_V8_POOL_SIZE = 4

/**
 * The number of V8 platform worker threads of a node started with `args` (its command line and
 * NODE_OPTIONS' words): --v8-pool-size=N, the last one wins; 0 lets Node pick the machine's
 * parallelism less one (at least 1), like NodePlatform does.
 */
export function v8PoolSize(args: readonly string[], cores: number): number {
  let size = DEFAULT_V8_POOL_SIZE
  for (const [i, a] of args.entries()) {
    const m = /^--v8[-_]pool[-_]size(?:=(\d+))?$/.exec(a)
    if (m === null) continue
    const value = Number(m[1] ?? args[i + 1])
    if (Number.isInteger(value) && value >= 0) size = value
  }
  return size === 0 ? Math.max(1, cores - 1) : size
}

/** --v8-pool-size of a running node, from its command line and the NODE_OPTIONS it started with */
export function v8PoolSizeOf(pid: number, cores: number): number {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  let nodeOptions: string[] = []
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('NODE_OPTIONS='))
    nodeOptions = env === undefined ? [] : env.slice('NODE_OPTIONS='.length).split(/\s+/)
  } catch {
    // not ours to read: the command line alone
  }
  return v8PoolSize([...nodeOptions, ...cmdline], cores)
}

/** CPU seconds of one Node process's threads over a window, by what the threads are */
export interface ThreadCpu {
  /** the process's own counter: every thread, those that exited included */
  total: number
  main: number
  /** each worker thread's, busiest first */
  workers: number[]
  /** V8's platform threads: GC helpers and concurrent compilers of every isolate */
  v8Platform: number
  /** libuv's pool, loader and signal threads, LevelDB's, and threads that exited in the window */
  other: number
}

/**
 * What `pid`'s threads used between two samples (see the header for how they are told apart).
 * `workers`: how many of the threads are the pool's (WORKERS); `poolSize`: V8's platform threads
 * (v8PoolSizeOf). A thread that started during the window counts from zero.
 */
export function threadCpuBetween(before: ThreadSample, after: ThreadSample, options: { ticksPerSecond: number; workers: number; poolSize: number }): ThreadCpu {
  const { ticksPerSecond, workers, poolSize } = options
  const pid = after.pid
  const startOf = new Map(before.threads.map((t) => [t.id, t.cpuTicks]))
  // creation order: start time, then tid (tids rise within a tick)
  const ordered = [...after.threads].filter((t) => t.id !== pid).sort((a, b) => a.startTicks - b.startTicks || a.id - b.id)
  const platform = new Set(ordered.slice(0, poolSize + 1).map((t) => t.id))
  const used = (t: ProcStat) => (t.cpuTicks - (startOf.get(t.id) ?? 0)) / ticksPerSecond
  const main = after.threads.find((t) => t.id === pid)
  const rest = ordered.filter((t) => !platform.has(t.id)).map(used).sort((a, b) => b - a)
  const mainSeconds = main === undefined ? 0 : used(main)
  const workerSeconds = rest.slice(0, workers)
  const v8Platform = ordered.filter((t) => platform.has(t.id)).reduce((s, t) => s + used(t), 0)
  const live = mainSeconds + v8Platform + rest.reduce((s, x) => s + x, 0)
  // the process's counter is read before its threads' (which ran on meanwhile): what it holds beyond
  // the live threads is the CPU of those that exited
  const exited = Math.max(0, (after.processTicks - before.processTicks) / ticksPerSecond - live)
  const other = rest.slice(workers).reduce((s, x) => s + x, 0) + exited
  return { total: live + exited, main: mainSeconds, workers: workerSeconds, v8Platform, other }
}

/** `seconds` of CPU as ms per unit of work, rounded to 3 decimals (NaN without work) */
export function msPer(seconds: number, count: number): number {
  return count > 0 ? Math.round((seconds * 1e6) / count) / 1000 : Number.NaN
}

/** A ThreadCpu as ms per unit of work (quote, answer), the JSON the benchmarks print */
export function threadCpuPer(cpu: ThreadCpu, count: number): { total: number; main: number; workers: number[]; v8_platform: number; other: number } {
  return { total: msPer(cpu.total, count), main: msPer(cpu.main, count), workers: cpu.workers.map((w) => msPer(w, count)), v8_platform: msPer(cpu.v8Platform, count), other: msPer(cpu.other, count) }
}

/**
 * The most work per second `cores` can carry when each unit costs `cpuMsPerUnit` of CPU over every
 * process that takes part (the load generator's included): cores x 1000 / cpuMsPerUnit. It holds
 * only if nothing else runs on those cores; a real run stays below it (the cores idle between
 * turns, and threads wait for one another).
 */
export function throughputCeiling(cores: number, cpuMsPerUnit: number): number {
  return cpuMsPerUnit > 0 ? (cores * 1000) / cpuMsPerUnit : Number.NaN
}

/**
 * The largest `workers_scaling` (requests/s with WORKERS=2 over requests/s with WORKERS=1) that
 * CPU costs per quote allow on `cores`: throughputCeiling(cores, cpuMsPerQuote) / rps1, where
 * cpuMsPerQuote is the service's and the load generator's CPU per answered quote (at WORKERS=2: the
 * ceiling with the costs measured under contention; at WORKERS=1's: without it) and rps1 the
 * requests/s WORKERS=1 measured.
 */
export function scalingCeiling(cores: number, cpuMsPerQuote: number, rps1: number): number {
  return rps1 > 0 ? throughputCeiling(cores, cpuMsPerQuote) / rps1 : Number.NaN
}

/** The processes below `root` (not itself), from /proc's parent links at one moment: pid -> stat */
export function descendants(root: number): Map<number, ProcStat> {
  const all = new Map<number, ProcStat>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8'))
      all.set(stat.id, stat)
    } catch {
      // exited while listed
    }
  }
  return descendantsIn(all, root)
}

/** the entries of `all` whose chain of parents reaches `root` (not `root` itself) */
export function descendantsIn(all: ReadonlyMap<number, ProcStat>, root: number): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>()
  for (const [pid, stat] of all) {
    if (pid === root) continue
    const seen = new Set<number>()
    for (let p: number | undefined = stat.ppid; p !== undefined && p > 1 && !seen.has(p); p = all.get(p)?.ppid) {
      seen.add(p)
      if (p === root) {
        out.set(pid, stat)
        break
      }
    }
  }
  return out
}
