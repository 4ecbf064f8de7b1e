/**
 * npx tsx scripts/probe/pool-handout-cost.ts
 *
 * What a quote costs the main thread and its worker around the computation itself (issue 12,
 * fifteenth session): the pooled quote facade the service uses with WORKERS > 0
 * (src/workers/pooled-quote-service.ts) over the embedded devnet, in this process, with a pool of
 * PROBE_WORKERS workers (default 1), without HTTP. Distinct quotes of bench:quote's mix, as many at
 * once as the pool has workers (one task per worker, as under bench:quote's load): first
 * PROBE_WARMUP quotes per worker (default 1500: the isolates' optimizing compiles done), then
 * PROBE_ROUNDS rounds (default 3) of PROBE_QUOTES quotes (default 1000), each round's CPU by thread
 * from /proc (test/support/thread-cpu.ts), in ms per quote. The main thread's figure is the pool's
 * hand-out (the queue gate, piscina's dispatch, the messages both ways, the answer cache) plus what
 * the devnet's builder and the state host cost it per quote; the workers' the quote and their side
 * of the hand-out (the task's messages, the L1 of state reads). Before the rounds, PROBE_IDLE_SECONDS
 * (default 5) with no quote asked: the main thread's CPU ms per second then (timers, the builder)
 * is taken off each round's as `main_less_idle` (what the quotes themselves cost it, at that
 * round's rate). Read beside the same probe run on the base, in turns.
 * Last line: one JSON object (each round, and the minimum of each figure).
 */
import { availableParallelism } from 'node:os'
import { PooledQuoteService } from '../../src/workers/pooled-quote-service.ts'
import { openDomainWithPool } from '../../test/support/pooled-domain.ts'
import { QUOTE_MIX } from '../../test/support/quote-mix.ts'
import { threadCpuPer } from '../../test/support/thread-cpu.ts'
import { startThreadCpuWindow } from '../lib/process-cpu.ts'

const WORKERS = Number(process.env.PROBE_WORKERS ?? 1)
const WARMUP = Number(process.env.PROBE_WARMUP ?? 1500)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3)
const QUOTES = Number(process.env.PROBE_QUOTES ?? 1000)
const IDLE_SECONDS = Number(process.env.PROBE_IDLE_SECONDS ?? 5)

type RoundFigures = ReturnType<typeof threadCpuPer> & { workers_sum: number; main_less_idle: number; quotes_per_s: number }

/** distinct amounts across the run: no answer comes from the facade's cache */
let counter = 0

/** `count` distinct quotes, `WORKERS` at a time (each lane sends its next when its last is answered). */
async function quotes(service: PooledQuoteService, count: number): Promise<void> {
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < count) {
      const m = QUOTE_MIX[next++ % QUOTE_MIX.length]
      await service.quoteJson({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: m.amountIn + BigInt(++counter) })
    }
  }
  await Promise.all(Array.from({ length: WORKERS }, lane))
}

async function main(): Promise<void> {
  const { domain, pool } = await openDomainWithPool({ threads: WORKERS })
  try {
    const service = new PooledQuoteService(pool, { maxCachedQuotes: 1024 })
    await quotes(service, WARMUP * WORKERS)
    const idle = startThreadCpuWindow(process.pid, WORKERS)
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000))
    const idleMainMsPerS = (1000 * idle.stop().main) / IDLE_SECONDS
    const rounds: RoundFigures[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const window = startThreadCpuWindow(process.pid, WORKERS)
      const t = performance.now()
      await quotes(service, QUOTES)
      const wallMs = performance.now() - t
      const cpu = threadCpuPer(window.stop(), QUOTES)
      const round3 = (x: number) => Math.round(x * 1000) / 1000
      rounds.push({
        ...cpu,
        workers_sum: round3(cpu.workers.reduce((s, w) => s + w, 0)),
        main_less_idle: round3(cpu.main - (idleMainMsPerS * wallMs) / 1000 / QUOTES),
        quotes_per_s: Math.round((QUOTES * 1000) / wallMs),
      })
      console.log(`round ${r + 1}: ${JSON.stringify(rounds[r])}`)
    }
    const min = (pick: (r: RoundFigures) => number) => Math.min(...rounds.map(pick))
    const stats = pool.stats()
    console.log(
      JSON.stringify({
        name: 'probe:pool-handout-cost',
        workers: WORKERS,
        cores: availableParallelism(),
        quotes: QUOTES,
        rounds,
        idle_main_ms_per_s: Math.round(idleMainMsPerS * 100) / 100,
        min: { main: min((r) => r.main), main_less_idle: min((r) => r.main_less_idle), workers_sum: min((r) => r.workers_sum), v8_platform: min((r) => r.v8_platform), total: min((r) => r.total) },
        l1_hits: stats.l1Hits,
        remote_reads: stats.remoteReads,
      }),
    )
  } finally {
    await pool.close()
    await domain.close()
  }
}

await main()
