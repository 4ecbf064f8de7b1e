/**
 * npx tsx scripts/probe/bare-quote-floor.ts
 *
 * The floor of "main thread + load generator" per quote on this machine (issue 13: with two
 * workers on two cores, everything beside the workers takes its share of the cores, which bounds
 * `workers_scaling`): the cheapest server that answers bench:quote's requests through a worker
 * pool, under bench:quote's own load generator.
 *
 * 1. The real service (as `npm start`, WORKERS=1) answers the quote mix once; its eight answers
 *    are kept and the service is stopped.
 * 2. For WORKERS 1 and 2: a child process (this file with BARE_QUOTE_SERVER=1) serves
 *    `POST /v1/quote` on a bare fastify route (no authentication, rate limit, schema, metrics or
 *    logs) that hands the parsed body to a piscina pool of that many workers
 *    (scripts/probe/echo-worker.mjs: the service's answer for the pair, nothing computed) and
 *    returns what the worker answers: the same JSON as the service, through the same kind of pool.
 *    autocannon as in bench:quote's scaling runs (BENCH_CONNECTIONS connections, default 8, for
 *    SCALING_SECONDS, default 8, distinct amounts) saturates it; the CPU of the server's threads
 *    (/proc: its main thread, the workers, V8's platform threads, the rest) and of this process
 *    (the generator) over the run, in ms per answered request.
 * `main + load_generator` is the floor the service's main thread and the generator cannot go
 * below on this machine. Last line: one JSON object.
 */
import autocannon from 'autocannon'
import { spawn, type ChildProcess } from 'node:child_process'
import { availableParallelism } from 'node:os'
import Fastify from 'fastify'
import { Piscina } from 'piscina'
import { freePort } from '../../test/support/net.ts'
import { startScriptEnv, startServiceProcess } from '../../test/support/service-process.ts'
import { msPer, threadCpuPer } from '../../test/support/thread-cpu.ts'
import { startCpuWindow, startThreadCpuWindow } from '../lib/process-cpu.ts'
import { mixRequests, postQuote, QUOTE_MIX, quoteBody } from '../lib/quote-mix.ts'

const SECONDS = Number(process.env.SCALING_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)

interface PairAnswer {
  tokenIn: string
  tokenOut: string
  answer: Record<string, unknown>
}

/** The child: the bare server (see the header); BARE_ANSWERS holds the answers, WORKERS the pool's size. */
async function serve(): Promise<void> {
  const workers = Number(process.env.WORKERS)
  const pool = new Piscina({ filename: new URL('./echo-worker.mjs', import.meta.url).href, minThreads: workers, maxThreads: workers, workerData: JSON.parse(process.env.BARE_ANSWERS!) as PairAnswer[] })
  const app = Fastify({ logger: false })
  app.post('/v1/quote', async (req) => (await pool.run(req.body)) as Record<string, unknown>)
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) })
  process.stdout.write('listening\n')
}

async function startBare(answers: PairAnswer[], workers: number): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/probe/bare-quote-floor.ts'], {
    env: { ...process.env, ...startScriptEnv(), BARE_QUOTE_SERVER: '1', PORT: String(port), WORKERS: String(workers), BARE_ANSWERS: JSON.stringify(answers) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve())
    child.once('exit', (code) => reject(new Error(`the bare server exited with code ${code}`)))
  })
  return { child, url: `http://127.0.0.1:${port}/v1/quote` }
}

/** bench:quote's scaling load (its `sustained`): autocannon, distinct amounts, the server's threads and this process measured */
async function saturate(url: string, pid: number, workers: number) {
  const requests = mixRequests()
  const server = startThreadCpuWindow(pid, workers)
  const generator = startCpuWindow(process.pid)
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests })
  const generatorCpu = generator.stop()
  const threads = server.stop()
  const ok = result['2xx']
  const { total, ...service } = threadCpuPer(threads, ok)
  return {
    workers,
    requests_per_s: result.requests.average,
    failures: result.non2xx + result.errors + result.timeouts,
    cpu_ms_per_request: { server: total, ...service, load_generator: msPer(generatorCpu.cpuSeconds, ok), main_plus_generator: msPer(threads.main + generatorCpu.cpuSeconds, ok), all: msPer(threads.total + generatorCpu.cpuSeconds, ok) },
  }
}

async function main(): Promise<void> {
  const port = await freePort()
  // EVM_MAX_MS raised: on a loaded machine a first quote can run past the 1 s budget
  const service = await startServiceProcess(port, { RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: '1', EVM_MAX_MS: '10000' })
  const answers: PairAnswer[] = []
  try {
    for (const [k, m] of QUOTE_MIX.entries()) answers.push({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, answer: (await postQuote(`http://127.0.0.1:${port}/v1/quote`, quoteBody(k, false))).json })
  } finally {
    service.kill('SIGKILL')
  }
  const runs = []
  for (const workers of [1, 2]) {
    const bare = await startBare(answers, workers)
    try {
      for (let k = 0; k < 3 * QUOTE_MIX.length; k++) await postQuote(bare.url, quoteBody(k, true))
      const run = await saturate(bare.url, bare.child.pid!, workers)
      console.log(`bare route, WORKERS=${workers}: ${run.requests_per_s} req/s (${run.failures} failed), CPU ms per request ${JSON.stringify(run.cpu_ms_per_request)}`)
      runs.push(run)
    } finally {
      bare.child.kill('SIGKILL')
    }
  }
  console.log(JSON.stringify({ name: 'probe:bare-quote-floor', connections: CONNECTIONS, seconds: SECONDS, cores: availableParallelism(), runs }))
}

if (process.env.BARE_QUOTE_SERVER === '1') await serve()
else await main()
