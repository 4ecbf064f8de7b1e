/**
 * npx tsx scripts/probe/isolate-gc-cost.ts [variant ...]
 *
 * What one quoting isolate costs beside its own JavaScript, by V8 flag (issue 12: V8's platform
 * threads' 0.24-0.34 CPU ms per quote in bench:quote): the bench:quote mix through the quote service
 * in-process (`WORKERS=0`, no answer cache, distinct amounts), sequentially on one thread, in a child
 * process per variant started with that variant's V8 flags; variants in turns for PROBE_ROUNDS
 * (default 2). Each child warms up on PROBE_WARMUP quotes (default 1500: its hot code optimized, so
 * what is left is mostly GC), then measures PROBE_QUOTES (default 1500): CPU ms per quote of its
 * JavaScript thread (tid = pid) and of V8's platform threads (the first 1 + --v8-pool-size threads
 * after it: test/support/thread-cpu.ts), with --trace-gc's scavenges and mark-compacts per 1,000
 * quotes and their pauses per quote. CPU times, not wall: a busy machine slows both alike, so
 * compare the variants of one round. PROBE_PERF=1 adds perf's samples of the window by V8 job (scavenge,
 * marking, compiler...) on the JavaScript thread and on the others: GC work wherever it ran.
 * Variants: `base` (npm start's flags), `semi32` / `semi64` (--max-semi-space-size: the young
 * generation a worker's resourceLimits.maxYoungGenerationSizeMb of 96 / 192 gives), `stgc`
 * (--single-threaded-gc), `nopscav` (--no-parallel-scavenge), `nocm` (--no-concurrent-marking),
 * `compact` (--compact-on-every-full-gc: every mark-compact evacuates all of old space's pages, where
 * V8's own heuristics move at most 4 MB of the most fragmented ones; issue 10's fragmentation), `size`
 * (--optimize-for-size: pages 20% free are compacted, 6 MB a mark-compact, and a more conservative heap
 * growing factor; with the 16 MB semi-spaces it would otherwise cut to 1 MB).
 * Last line: one JSON object.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { perfJobsPer, startPerf } from '../lib/perf-v8-jobs.ts'
import { parseProcStat, v8PoolSizeOf } from '../../test/support/thread-cpu.ts'
import { clockTicks } from '../lib/process-cpu.ts'
import { startScriptNodeArgs } from '../../test/support/service-process.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 2)
const WARMUP = Number(process.env.PROBE_WARMUP ?? 1500)
const QUOTES = Number(process.env.PROBE_QUOTES ?? 1500)
/** PROBE_PERF=1: perf samples every thread of the child over the window, grouped by V8 job (scripts/lib/perf-v8-jobs.ts) */
const PERF = process.env.PROBE_PERF === '1'

const VARIANTS: Record<string, string[]> = {
  base: [],
  semi32: ['--max-semi-space-size=32'],
  semi64: ['--max-semi-space-size=64'],
  stgc: ['--single-threaded-gc'],
  nopscav: ['--no-parallel-scavenge'],
  nocm: ['--no-concurrent-marking'],
  semi32_stgc: ['--max-semi-space-size=32', '--single-threaded-gc'],
  compact: ['--compact-on-every-full-gc'],
  size: ['--optimize-for-size', '--max-semi-space-size=16'],
}

/** the child: quotes in-process, prints one JSON line of its window */
async function child(): Promise<void> {
  const { openInProcessQuoter } = await import('../lib/in-process-quoter.ts')
  const quoter = await openInProcessQuoter()
  const one = () => quoter.next()
  for (let i = 0; i < WARMUP; i++) await one()
  const pid = process.pid
  const read = () => readdirSync(`/proc/${pid}/task`).map((tid) => parseProcStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')))
  const before = read()
  // stdout is --trace-gc's: the window is marked in it; the parent samples it with perf meanwhile.
  // The listener is in place before the mark: SIGUSR2's default action ends the process, and on a
  // loaded machine the parent's signal can arrive before the line after the mark has run
  const go = new Promise<void>((resolve) => {
    // a signal listener alone does not keep the event loop alive
    const keepAlive = setInterval(() => {}, 1000)
    process.once('SIGUSR2', () => {
      clearInterval(keepAlive)
      resolve()
    })
  })
  console.log('@@window-start')
  await go
  for (let i = 0; i < QUOTES; i++) await one()
  console.log('@@window-end')
  const after = read()
  const poolSize = v8PoolSizeOf(pid, availableParallelism())
  const platform = new Set(after.filter((t) => t.id !== pid).sort((a, b) => a.startTicks - b.startTicks || a.id - b.id).slice(0, poolSize + 1).map((t) => t.id))
  const start = new Map(before.map((t) => [t.id, t.cpuTicks]))
  const ms = (t: { id: number; cpuTicks: number }) => ((t.cpuTicks - (start.get(t.id) ?? 0)) * 1000) / clockTicks()
  const js = after.filter((t) => t.id === pid).reduce((s, t) => s + ms(t), 0)
  const plat = after.filter((t) => platform.has(t.id)).reduce((s, t) => s + ms(t), 0)
  const rest = after.filter((t) => t.id !== pid && !platform.has(t.id)).reduce((s, t) => s + ms(t), 0)
  console.log(`@@result ${JSON.stringify({ js_ms_per_quote: js / QUOTES, platform_ms_per_quote: plat / QUOTES, other_ms_per_quote: rest / QUOTES })}`)
  await quoter.close()
  process.exit(0)
}

const GC_LINE = /\d+ ms: (Scavenge|Mark-Compact|Minor Mark-Sweep)[^,]*, ([\d.]+) \/ ([\d.]+) ms/

async function runVariant(name: string) {
  const flags = VARIANTS[name]
  if (flags === undefined) throw new Error(`unknown variant ${name}: one of ${Object.keys(VARIANTS).join(', ')}`)
  const args = [...flags, '--trace-gc', ...startScriptNodeArgs().filter((a) => !a.endsWith('.ts')), new URL(import.meta.url).pathname, '--child']
  const proc = spawn(process.execPath, args, { env: { ...process.env, MALLOC_ARENA_MAX: '2' }, stdio: ['ignore', 'pipe', 'inherit'] })
  const perfFile = join(mkdtempSync(join(tmpdir(), 'isolate-gc-')), 'perf.data')
  let perf: ReturnType<typeof startPerf> | undefined
  let out = ''
  let started = false
  let ended = false
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8')
    // the window starts when the child is told perf is on (or at once without perf)
    if (!started && out.includes('@@window-start')) {
      started = true
      if (PERF) perf = startPerf(['-p', String(proc.pid)], perfFile)
      // perf needs a moment to attach
      setTimeout(() => proc.kill('SIGUSR2'), PERF ? 1000 : 0)
    }
    if (!ended && out.includes('@@window-end')) {
      ended = true
      void perf?.stop()
    }
  })
  const code = await new Promise<number | null>((r) => proc.once('exit', r))
  await perf?.stop()
  if (code !== 0) throw new Error(`variant ${name} exited with ${code}`)
  const window = out.slice(out.indexOf('@@window-start'), out.indexOf('@@window-end'))
  const result = JSON.parse(/@@result (.*)/.exec(out)![1]!) as Record<string, number>
  let scavenges = 0
  let fulls = 0
  let pauseMs = 0
  for (const line of window.split('\n')) {
    const m = GC_LINE.exec(line)
    if (m === null) continue
    if (m[1] === 'Mark-Compact') fulls++
    else scavenges++
    pauseMs += Number(m[2])
  }
  const r3 = (x: number) => Math.round(x * 1000) / 1000
  return {
    variant: name,
    js_ms_per_quote: r3(result.js_ms_per_quote!),
    platform_ms_per_quote: r3(result.platform_ms_per_quote!),
    all_ms_per_quote: r3(result.js_ms_per_quote! + result.platform_ms_per_quote! + result.other_ms_per_quote!),
    scavenges_per_1000_quotes: r3((1000 * scavenges) / QUOTES),
    mark_compacts_per_1000_quotes: r3((1000 * fulls) / QUOTES),
    gc_pause_ms_per_quote: r3(pauseMs / QUOTES),
    ...(PERF ? { perf: perfJobsPer(perfFile, QUOTES, (tid) => (tid === proc.pid ? 'js_thread' : 'other_threads')).ms_per_unit_by_group } : {}),
  }
}

if (process.argv.includes('--child')) {
  await child()
} else {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['base', 'semi32', 'stgc']
  const runs = []
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      const r = { round, load: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]), ...(await runVariant(name)) }
      console.log(JSON.stringify(r))
      runs.push(r)
    }
  }
  console.log(JSON.stringify({ name: 'probe:isolate-gc-cost', warmup: WARMUP, quotes: QUOTES, runs }))
}
