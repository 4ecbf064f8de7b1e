/**
 * CPU samples of a Node process's threads (`perf record -e cpu-clock -g`: a software clock, since this
 * KVM guest has no PMU) grouped by what V8 was doing: scavenges, marking, sweeping, the optimizing
 * compiler... by the C++ symbols of the node binary on each sample's stack, and by the thread group
 * a caller names. For the probes that ask where V8's platform threads' CPU goes (issue 12).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'

/** perf's sampling rate, Hz: a sample stands for 1000 / PERF_HZ ms of CPU */
export const PERF_HZ = 1000

/** V8 jobs by the C++ symbols their samples fall in (the first whose pattern matches any frame of the stack) */
const JOBS: Array<[string, RegExp]> = [
  ['scavenge', /Scavenge|Scavenger|SemiSpace|YoungGeneration|MinorMarkSweep|MinorMC|PageEvacuation.*Young/],
  ['marking', /ConcurrentMarking|MarkingVisitor|MarkCompactCollector|MarkingWorklist|IncrementalMarking|MarkingBarrier/],
  ['sweeping', /Sweeper|Sweep/],
  ['compaction/evacuation', /Evacuat|PointersUpdating|Compaction/],
  ['compiler (TurboFan)', /compiler::|OptimizingCompileDispatcher|TurboFan|Pipeline/],
  ['compiler (Maglev)', /maglev::|Maglev/],
  ['compiler (baseline/Sparkplug, lazy)', /baseline::|Sparkplug|BackgroundCompile|LazyCompile|CompileTask/],
  ['heap other (allocation, free lists, pages)', /MemoryAllocator|Heap::|Unmapper|PagedSpace|FreeList|ArrayBufferSweeper/],
  ['platform idle/wait (futex, scheduler)', /WorkerThread|TaskQueue|ConditionVariable|futex|__lll_lock|pthread_cond|DelayedTaskScheduler|uv_cond/],
]
const REST = 'JavaScript and the rest'

export function jobOf(stack: readonly string[]): string {
  for (const [name, re] of JOBS) if (stack.some((frame) => re.test(frame))) return name
  return REST
}

/** Starts sampling `target` (`-p pid`: every thread; `-t tid,...`: those) into `file`; stop() ends it (SIGINT) and waits. */
export function startPerf(target: ['-p' | '-t', string], file: string): { stop: () => Promise<void> } {
  const perf: ChildProcess = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-g', target[0], target[1], '-o', file], { stdio: ['ignore', 'ignore', 'inherit'] })
  return {
    stop: async () => {
      if (perf.exitCode !== null) return
      perf.kill('SIGINT')
      await new Promise((r) => perf.once('exit', r))
    },
  }
}

/**
 * A recording's samples as CPU ms per `units` (quotes) by job, for each thread group `groupOf`
 * names (a GC job may run on the isolate's own thread, in its pauses, or on the platform threads:
 * counted on both, the sum says whether a flag cut the work or only moved it), and the leaf symbols
 * sampled most in `leavesOf` groups.
 */
export function perfJobsPer(file: string, units: number, groupOf: (tid: number) => string, leavesOf: (group: string) => boolean = () => false) {
  const out = spawnSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym', '--demangle'], { encoding: 'utf8', maxBuffer: 1 << 30 })
  const groups = new Map<string, Record<string, number>>()
  const leaves = new Map<string, number>()
  for (const block of out.stdout.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '')
    if (lines.length < 2) continue
    const tid = Number(lines[0]!.trim().split(/\s+/)[0])
    const stack = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+\s+/, ''))
    const group = groupOf(tid)
    const jobs = groups.get(group) ?? {}
    const job = jobOf(stack)
    jobs[job] = (jobs[job] ?? 0) + 1
    groups.set(group, jobs)
    if (leavesOf(group)) leaves.set(stack[0]!, (leaves.get(stack[0]!) ?? 0) + 1)
  }
  const perUnit = (g: Record<string, number>) => Object.fromEntries(Object.entries(g).sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, Math.round((1e6 * n) / PERF_HZ / units) / 1000]))
  return {
    ms_per_unit_by_group: Object.fromEntries([...groups].map(([g, jobs]) => [g, perUnit(jobs)])),
    top_leaves: [...leaves.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12),
  }
}
