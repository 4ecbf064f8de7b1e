/**
 * Which functions TurboFan compiles again once quotes are warm, and why (issues 12 and 14, session 21).
 *
 * Runs the bench:quote mix through the quote service in-process (`WORKERS=0`, answer cache off:
 * the real pool loading, route search and EVM), distinct amounts, for PROBE_SECONDS (default 180),
 * in a child node started with `--trace-opt --trace-deopt --trace-gc --print-opt-source`
 * (NODE_OPTIONS refuses these, so the child is spawned with them on its command line, its stdout
 * line-buffered by stdbuf so V8's lines and the child's window markers keep their order). The
 * parent reads that stream and keys every TurboFan job by its function's script, name and source
 * position (`--print-opt-source`'s header: stable, unlike the JSFunction and SFI addresses, which
 * a collection moves), so a closure made again per call is one key however many JSFunctions it has.
 *
 * Prints, per 10 s window (PROBE_WINDOW_S): quotes, CPU ms per quote (process.cpuUsage: this
 * thread and V8's helpers, the compiler threads among them), TurboFan jobs (OSR apart), deopts,
 * scavenges and mark-compacts; then for the windows after PROBE_WARMUP_S (default 60) every
 * function compiled more than once: its jobs, OSR jobs, the distinct JSFunction addresses, the
 * marking reasons, its deopts, and the mark-compacts that ran between two of its jobs (a
 * compilation after a full collection with no deopt between is optimized code dropped with the
 * closures that held it). Also which functions its jobs were inlined into. Last line: one JSON object.
 *
 *   npx tsx scripts/probe/recompile-trace.ts
 *   PROBE_SECONDS=240 PROBE_WARMUP_S=90 npx tsx scripts/probe/recompile-trace.ts
 *   PROBE_TRACE_FILE=/tmp/trace.txt ...   # also keep the child's raw stream
 */
import { spawn } from 'node:child_process'
import { createWriteStream, type WriteStream } from 'node:fs'
import { createInterface } from 'node:readline'

const SECONDS = Number(process.env.PROBE_SECONDS ?? 180)
const WINDOW_S = Number(process.env.PROBE_WINDOW_S ?? 10)
const WARMUP_S = Number(process.env.PROBE_WARMUP_S ?? 60)
const MARK = '@@recompile-trace'

async function child(): Promise<void> {
  const { loadConfig } = await import('../../src/node/config.ts')
  const { openDomainServices } = await import('../../src/node/domain.ts')
  const { QUOTE_MIX } = await import('../../test/support/quote-mix.ts')
  const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', LOCAL_BUILDER_PORT: '0', QUOTE_CACHE_MAX_ENTRIES: '0' }), { log: { warn: () => {} } })
  const cpuUs = () => {
    const u = process.cpuUsage()
    return u.user + u.system
  }
  const start = Date.now()
  let counter = 0
  let windowStart = start
  let windowCpu = cpuUs()
  let windowQuotes = 0
  let window = 0
  while (Date.now() - start < SECONDS * 1000) {
    const m = QUOTE_MIX[counter % QUOTE_MIX.length]
    await domain.quote.quote({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: m.amountIn + BigInt(++counter) })
    windowQuotes++
    const now = Date.now()
    if (now - windowStart >= WINDOW_S * 1000) {
      const cpu = cpuUs()
      process.stdout.write(`${MARK} window=${window} end_s=${((now - start) / 1000).toFixed(1)} quotes=${windowQuotes} cpu_us=${cpu - windowCpu}\n`)
      window++
      windowStart = now
      windowCpu = cpu
      windowQuotes = 0
    }
  }
  await domain.close()
  process.exit(0)
}

interface FunctionTally {
  jobs: number
  osrJobs: number
  addresses: Set<string>
  reasons: Map<string, number>
  deopts: Map<string, number>
  /** mark-compacts counted when each of its jobs started: a difference between consecutive jobs is a full collection between them */
  mcAtJobs: number[]
  inlinedInto: Map<string, number>
  firstLine: string
}

interface WindowTally {
  quotes: number
  cpuUs: number
  jobs: number
  osr: number
  deopts: number
  scavenges: number
  markCompacts: number
}

function newWindow(): WindowTally {
  return { quotes: 0, cpuUs: 0, jobs: 0, osr: 0, deopts: 0, scavenges: 0, markCompacts: 0 }
}

/** Reads V8's trace stream line by line; the caller closes a window every WINDOW_S with its quotes and CPU. */
class TraceReader {
  readonly windows: WindowTally[] = []
  private current = newWindow()
  private markCompacts = 0
  readonly late = new Map<string, FunctionTally>()
  // the job whose --print-opt-source header comes next, and the last top-level function key (inlines name it)
  private pending: { address: string; osr: boolean; reason: string } | undefined
  private top: string | undefined
  private readFirstLineOf: FunctionTally | undefined
  private readonly reasonByAddress = new Map<string, string>()

  private warm(): boolean {
    return this.windows.length * WINDOW_S >= WARMUP_S
  }

  private tally(key: string): FunctionTally {
    let t = this.late.get(key)
    if (t === undefined) this.late.set(key, (t = { jobs: 0, osrJobs: 0, addresses: new Set(), reasons: new Map(), deopts: new Map(), mcAtJobs: [], inlinedInto: new Map(), firstLine: '' }))
    return t
  }

  closeWindow(quotes: number, cpuUs: number): void {
    this.current.quotes = quotes
    this.current.cpuUs = cpuUs
    this.windows.push(this.current)
    this.current = newWindow()
  }

  line(line: string): void {
    if (this.readFirstLineOf !== undefined) {
      this.readFirstLineOf.firstLine = line.slice(0, 100)
      this.readFirstLineOf = undefined
      return
    }
    let m = /^\[marking (0x[0-9a-f]+) <JSFunction.*reason: (.*)\]$/.exec(line)
    if (m !== null) {
      this.reasonByAddress.set(m[1], m[2])
      return
    }
    m = /^\[compiling method (0x[0-9a-f]+) <JSFunction ?[^ ]* \(sfi = (0x[0-9a-f]+)\)> \(target TURBOFAN\)( OSR)?/.exec(line)
    if (m !== null) {
      this.pending = { address: m[1], osr: m[3] !== undefined, reason: this.reasonByAddress.get(m[1]) ?? (m[3] !== undefined ? 'OSR' : '?') }
      this.current.jobs++
      if (this.pending.osr) this.current.osr++
      this.top = undefined
      return
    }
    m = /^--- FUNCTION SOURCE \((.*)\) id\{(\d+),(-?\d+)\} start\{(\d+)\} ---$/.exec(line)
    if (m !== null) {
      const key = `${m[1].replace(/^file:\/\/.*?\/(src|scripts|test|node_modules)\//, '$1/')}@${m[4]}`
      if (m[3] === '-1') {
        this.top = key
        if (this.pending !== undefined && this.warm()) {
          const t = this.tally(key)
          t.jobs++
          if (this.pending.osr) t.osrJobs++
          t.addresses.add(this.pending.address)
          bump(t.reasons, this.pending.reason)
          t.mcAtJobs.push(this.markCompacts)
          if (t.firstLine === '') this.readFirstLineOf = t
        }
        this.pending = undefined
      } else if (this.top !== undefined && this.warm()) {
        bump(this.tally(key).inlinedInto, this.top)
      }
      return
    }
    m = /^\[bailout \(kind: ([^,]+), reason: ([^)]*)\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ?([^ ]*) \(sfi = (0x[0-9a-f]+)\)>/.exec(line)
    if (m !== null) {
      this.current.deopts++
      if (this.warm()) bump(this.tally(`deopt:${m[3] || '(anonymous)'}`).deopts, `${m[1]}: ${m[2]}`)
      return
    }
    if (/ Scavenge /.test(line)) this.current.scavenges++
    else if (/ Mark-Compact /.test(line)) {
      this.current.markCompacts++
      this.markCompacts++
    }
  }
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1)
}

const V8_TRACE_FLAGS = ['--trace-opt', '--trace-deopt', '--trace-gc', '--print-opt-source']

/** the quotes in a child node of this script (PROBE_CHILD=1), its windows closed by its markers */
async function inProcess(reader: TraceReader, raw: WriteStream | undefined): Promise<void> {
  const proc = spawn('stdbuf', ['-oL', process.execPath, ...V8_TRACE_FLAGS, '--import', 'tsx', new URL(import.meta.url).pathname], {
    env: { ...process.env, PROBE_CHILD: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  for await (const line of createInterface({ input: proc.stdout })) {
    raw?.write(line + '\n')
    if (line.startsWith(MARK)) {
      const f = Object.fromEntries(line.slice(MARK.length + 1).split(' ').map((kv) => kv.split('=')))
      reader.closeWindow(Number(f.quotes), Number(f.cpu_us))
    } else reader.line(line)
  }
}

/**
 * the service as `npm start` starts it (WORKERS=PROBE_WORKERS, default 2: every isolate's lines in
 * one stream, V8's flags being the process's) under bench:quote's saturating load (autocannon,
 * PROBE_CONNECTIONS, default 8); windows closed by a timer on the lines' arrival, with the
 * answered quotes and the process's CPU (/proc) over each
 */
async function service(reader: TraceReader, raw: WriteStream | undefined): Promise<void> {
  const { default: autocannon } = await import('autocannon')
  const { freePort } = await import('../../test/support/net.ts')
  const { startScriptEnv, startScriptNodeArgs } = await import('../../test/support/service-process.ts')
  const { mixRequests } = await import('../lib/quote-mix.ts')
  const { processCpuSeconds } = await import('../lib/process-cpu.ts')
  const port = await freePort()
  const env = { ...process.env, ...startScriptEnv(), LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: process.env.PROBE_WORKERS ?? '2', PORT: String(port) }
  const proc = spawn('stdbuf', ['-oL', process.execPath, ...V8_TRACE_FLAGS, ...startScriptNodeArgs()], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: proc.stdout })
  const done = (async () => {
    for await (const line of lines) {
      raw?.write(line + '\n')
      reader.line(line)
    }
  })()
  try {
    for (let i = 0; !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) {
      if (i > 600 || proc.exitCode !== null) throw new Error('the service did not become ready')
      await new Promise((r) => setTimeout(r, 100))
    }
    let quotes = 0
    let cpu = processCpuSeconds(proc.pid!)
    const timer = setInterval(() => {
      const now = processCpuSeconds(proc.pid!)
      reader.closeWindow(quotes, Math.round((now - cpu) * 1e6))
      quotes = 0
      cpu = now
    }, WINDOW_S * 1000)
    const finished = new Promise<void>((resolve, reject) => {
      const load = autocannon({ url: `http://127.0.0.1:${port}/v1/quote`, connections: Number(process.env.PROBE_CONNECTIONS ?? 8), duration: SECONDS, requests: mixRequests() }, (err) => (err ? reject(err) : resolve()))
      load.on('response', (_client, status) => {
        if (status === 200) quotes++
      })
    })
    await finished
    clearInterval(timer)
  } finally {
    proc.kill('SIGTERM')
    await done
  }
}

async function parent(): Promise<void> {
  const raw = process.env.PROBE_TRACE_FILE ? createWriteStream(process.env.PROBE_TRACE_FILE) : undefined
  const reader = new TraceReader()
  if (process.env.PROBE_MODE === 'service') await service(reader, raw)
  else await inProcess(reader, raw)
  raw?.end()
  const { windows, late } = reader
  console.log('per window (TurboFan jobs include OSR)')
  console.table(
    windows.map((w, i) => ({
      end_s: (i + 1) * WINDOW_S,
      quotes: w.quotes,
      cpu_ms_per_quote: Math.round(w.cpuUs / w.quotes) / 1000,
      turbofan_jobs: w.jobs,
      osr: w.osr,
      deopts: w.deopts,
      scavenges: w.scavenges,
      mark_compacts: w.markCompacts,
    })),
  )
  const lateWindows = windows.filter((_, i) => i * WINDOW_S >= WARMUP_S)
  const sum = (k: keyof WindowTally) => lateWindows.reduce((s, w) => s + w[k], 0)
  const repeated = [...late.entries()]
    .filter(([k, t]) => !k.startsWith('deopt:') && t.jobs > 1)
    .sort((a, b) => b[1].jobs - a[1].jobs)
    .map(([key, t]) => ({
      key,
      source: t.firstLine.slice(0, 70),
      jobs: t.jobs,
      osr: t.osrJobs,
      closures: t.addresses.size,
      reasons: [...t.reasons].map(([r, n]) => `${r} ${n}`).join('; '),
      // a job after a mark-compact that followed the previous job: its code may have been dropped with the closures
      after_full_gc: t.mcAtJobs.filter((mc, i) => i > 0 && mc > t.mcAtJobs[i - 1]).length,
      inlined_into: t.inlinedInto.size,
    }))
  const deopts = [...late.entries()].filter(([k]) => k.startsWith('deopt:')).map(([k, t]) => ({ function: k.slice(6), deopts: [...t.deopts].map(([r, n]) => `${r} ${n}`).join('; ') }))
  console.log(`after warm-up (${WARMUP_S} s): functions compiled more than once`)
  console.table(repeated.slice(0, 40))
  console.log('deopts after warm-up')
  console.table(deopts.slice(0, 40))
  const lateSeconds = lateWindows.length * WINDOW_S
  console.log(
    JSON.stringify({
      name: 'probe:recompile-trace',
      seconds: SECONDS,
      warmup_s: WARMUP_S,
      late_seconds: lateSeconds,
      late_quotes: sum('quotes'),
      late_cpu_ms_per_quote: Math.round(sum('cpuUs') / sum('quotes')) / 1000,
      late_turbofan_jobs_per_min: Math.round((600 * sum('jobs')) / lateSeconds) / 10,
      late_osr_jobs: sum('osr'),
      late_deopts: sum('deopts'),
      late_mark_compacts: sum('markCompacts'),
      late_functions_compiled: [...late.keys()].filter((k) => !k.startsWith('deopt:')).length,
      late_functions_compiled_again: repeated.length,
      late_jobs_of_functions_compiled_again: repeated.reduce((s, r) => s + r.jobs, 0),
      late_jobs_after_full_gc: repeated.reduce((s, r) => s + r.after_full_gc, 0),
      top_repeated: repeated.slice(0, 10).map((r) => ({ key: r.key, jobs: r.jobs, closures: r.closures, after_full_gc: r.after_full_gc })),
    }),
  )
}

if (process.env.PROBE_CHILD === '1') await child()
else await parent()
