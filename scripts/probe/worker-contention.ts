/**
 * npx tsx scripts/probe/worker-contention.ts
 *
 * How much one worker's CPU per quote grows when the second core is busy, and why (issue 13:
 * bench:quote's CPU per quote rises from WORKERS=1 to WORKERS=2, which lowers the ceiling of
 * `workers_scaling`). The service as `npm start` starts it with WORKERS=1, saturated by bench:quote's
 * load (autocannon, BENCH_CONNECTIONS connections, default 8, SCALING_SECONDS, default 8, distinct
 * amounts), under these variants, in turns for CONTENTION_ROUNDS rounds (default 2) so that a change
 * of the machine's load weighs on all alike:
 * - `alone`: nothing of ours beside it;
 * - `spin`: a process spinning in registers on the other core (takes the core, not the caches);
 * - `memory`: a process writing at random over 64 MiB on the other core (takes the core and evicts
 *   the shared L3 and memory bandwidth the worker's heap needs);
 * - `single_threaded_gc`: the service with V8's --single-threaded-gc (no parallel scavenge or
 *   marking on the platform threads: the GC's work moves onto the thread that allocates);
 * - `pool_size_1`: the service with --v8-pool-size=1 (one platform thread for every isolate);
 * - `no_concurrent_recompilation`: the service with V8's --no-concurrent-recompilation (TurboFan
 *   compiles on the thread that runs the code, not on the platform threads).
 * Each prints the CPU ms per answered quote of the worker thread, the main thread, V8's platform
 * threads, the rest, and the load generator (test/support/thread-cpu.ts tells the threads apart).
 * The worker's CPU per quote under `spin` and `memory` against `alone` is what contention for the
 * core's neighbour costs it; `single_threaded_gc` against `alone` says what the parallel GC costs
 * in all (the helpers' CPU against the GC work they take off the worker), and
 * `no_concurrent_recompilation` what the platform threads spend compiling. Each service gets its
 * own DATA_DIR and EVM_MAX_MS 10000 unless set (a loaded machine runs quotes past the 1 s
 * default). Last line: one JSON object.
 */
import autocannon from 'autocannon'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../test/support/net.ts'
import { startScriptEnv, startScriptNodeArgs } from '../../test/support/service-process.ts'
import { msPer, threadCpuPer } from '../../test/support/thread-cpu.ts'
import { startCpuWindow, startThreadCpuWindow } from '../lib/process-cpu.ts'
import { mixRequests, postQuote, QUOTE_MIX, quoteBody } from '../lib/quote-mix.ts'

const SECONDS = Number(process.env.SCALING_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const ROUNDS = Number(process.env.CONTENTION_ROUNDS ?? 2)
const READY_TIMEOUT_MS = 120_000

/** the neighbours: plain node one-liners on the other core, until killed */
const SPIN = 'let x = 1; for (;;) { x = (x * 1103515245 + 12345) | 0 }'
const MEMORY = 'const a = new Int32Array(16 * 1024 * 1024); let x = 1; for (;;) { x = (x * 1103515245 + 12345) | 0; a[(x >>> 0) & 0xffffff] += x }'

interface Variant {
  name: string
  nodeFlags: string[]
  neighbour?: string
}

const VARIANTS: Variant[] = [
  { name: 'alone', nodeFlags: [] },
  { name: 'spin', nodeFlags: [], neighbour: SPIN },
  { name: 'memory', nodeFlags: [], neighbour: MEMORY },
  { name: 'single_threaded_gc', nodeFlags: ['--single-threaded-gc'] },
  { name: 'pool_size_1', nodeFlags: ['--v8-pool-size=1'] },
  { name: 'no_concurrent_recompilation', nodeFlags: ['--no-concurrent-recompilation'] },
]

/** the service as startServiceProcess starts it, with `flags` before the start script's node arguments */
async function startService(port: number, flags: string[], dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...flags, ...startScriptNodeArgs()], {
    env: { ...process.env, ...startScriptEnv(), LOG_LEVEL: 'warn', DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: '1', EVM_MAX_MS: process.env.EVM_MAX_MS ?? '10000', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service (${flags.join(' ')}) exited with code ${child.exitCode}`)
    if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return child
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill('SIGKILL')
  throw new Error(`the service (${flags.join(' ')}) was not ready within ${READY_TIMEOUT_MS} ms`)
}

async function measure(variant: Variant) {
  const port = await freePort()
  // its own outbox directory: LevelDB takes one process at a time, and another benchmark may hold ./data
  const dataDir = mkdtempSync(join(tmpdir(), 'worker-contention-'))
  const service = await startService(port, variant.nodeFlags, dataDir)
  let neighbour: ChildProcess | undefined
  try {
    const url = `http://127.0.0.1:${port}/v1/quote`
    for (let k = 0; k < 3 * QUOTE_MIX.length; k++) await postQuote(url, quoteBody(k, true)).catch((err: unknown) => console.error(`warm-up: ${String(err)}`))
    if (variant.neighbour !== undefined) neighbour = spawn(process.execPath, ['-e', variant.neighbour], { stdio: 'ignore' })
    const requests = mixRequests()
    const threads = startThreadCpuWindow(service.pid!, 1)
    const generator = startCpuWindow(process.pid)
    const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests })
    const generatorCpu = generator.stop()
    const cpu = threads.stop()
    const ok = result['2xx']
    const { total, workers, ...rest } = threadCpuPer(cpu, ok)
    return { variant: variant.name, requests_per_s: result.requests.average, failures: result.non2xx + result.errors + result.timeouts, cpu_ms_per_quote: { worker: workers[0] ?? Number.NaN, ...rest, service: total, load_generator: msPer(generatorCpu.cpuSeconds, ok) } }
  } finally {
    neighbour?.kill('SIGKILL')
    service.kill('SIGKILL')
    await new Promise((r) => service.once('exit', r))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const runs = []
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of VARIANTS) {
      const run = { round, ...(await measure(variant)) }
      console.log(`round ${round}, ${run.variant}: ${run.requests_per_s} req/s (${run.failures} failed), CPU ms per quote ${JSON.stringify(run.cpu_ms_per_quote)}`)
      runs.push(run)
    }
  }
  console.log(JSON.stringify({ name: 'probe:worker-contention', workers: 1, connections: CONNECTIONS, seconds: SECONDS, cores: availableParallelism(), runs }))
}

await main()
