/**
 * What a second replica costs each replica's main thread per answer it serves (issue 14).
 *
 * bench:submit's one-replica phase (3) is the service in devnet mode (the chain and its builder in
 * the service process, WORKERS one per core) and its two-replica phase (4) is a cluster (each replica
 * forks a shared chain process over JSON-RPC, WORKERS=1). Their per-answer CPU differs by the replica
 * count and by that setup at once. This probe runs the same closed loop on three setups, in turns,
 * each on a fresh database:
 *   devnet-1   the service as phase 3 starts it;
 *   cluster-1  a cluster of one replica (phase 4's setup with one replica);
 *   cluster-2  a cluster of two replicas (phase 4).
 * Each run: PROBE_PRELOAD submissions first (spread over the replicas, 16 at once, not measured:
 * open submissions the dispatcher keeps re-sending at every head, as bench:submit's open loop leaves
 * them), then a closed loop (16 at once, PROBE_SECONDS) whose CPU per answer is printed by process
 * and thread kind, with the statements the database ran per answer (pg_stat_statements: calls
 * per statement kind) and the relay's bundles per answer.
 *
 * PROBE_SETUPS (comma list, default devnet-1,cluster-1,cluster-2), PROBE_ROUNDS (default 2),
 * PROBE_SECONDS (default 10), PROBE_PRELOAD (default 2000), PROBE_PERF_DIR (a directory: perf's
 * cpu-clock samples of the first service's main thread during each closed loop, with the services
 * started under --perf-basic-prof --interpreted-frames-native-stack; `perf script` text beside).
 * PROBE_RATE (requests/s; unset: the closed loop): an open loop at that rate instead, spread over
 * the replicas, so one replica and two are compared at the same offered load (a closed loop runs
 * each setup at its own rate, and what a process spends per second whatever it answers, a JIT
 * still compiling, timers, a head's re-sends, is then spread over different numbers of answers).
 * Each line also gives the services' CPU ms per second of the loop (`services_cpu_ms_per_s`).
 * PROBE_WARM_SECONDS (default 0, with PROBE_RATE): the same open loop first for that long, not
 * measured, so the measured one starts with the services' JIT past its warm-up (a replica's main
 * thread still runs much of the acknowledgement path as baseline code in its first minute).
 * The services' environment passes through (e.g. SUBMISSION_EXPIRY_BLOCKS=2: open submissions
 * expire as they would once a builder lands or drops them, instead of piling up for the recording
 * relay, which lands nothing).
 *
 *   npx tsx scripts/probe/replica-count-cost.ts
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { Hex } from 'viem'
import { startCluster, stopProcess } from '../../test/support/cluster.ts'
import { startTestPostgres } from '../../test/support/embedded-postgres.ts'
import { freePort } from '../../test/support/net.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'
import { descendants, msPer, threadCpuPer, type ProcStat } from '../../test/support/thread-cpu.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { clockTicks, startThreadCpuWindow } from '../lib/process-cpu.ts'
import { runOpenLoop } from '../lib/open-loop.ts'
import { recordingRelay } from '../lib/recording-relay.ts'
import { signSwaps } from '../lib/submit-load.ts'

/** perf needs the JIT's symbols */
const PERF_NODE_OPTIONS: Record<string, string> = process.env.PROBE_PERF_DIR === undefined ? {} : { NODE_OPTIONS: '--perf-basic-prof --interpreted-frames-native-stack' }
const SETUPS = (process.env.PROBE_SETUPS ?? 'devnet-1,cluster-1,cluster-2').split(',')
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 2)
const SECONDS = Number(process.env.PROBE_SECONDS ?? 10)
const PRELOAD = Number(process.env.PROBE_PRELOAD ?? 2000)
/** an open loop at this rate instead of the closed loop (undefined: closed) */
const RATE = process.env.PROBE_RATE === undefined ? undefined : Number(process.env.PROBE_RATE)
const WARM_SECONDS = Number(process.env.PROBE_WARM_SECONDS ?? 0)
if (RATE !== undefined && !(RATE > 0)) throw new RangeError(`PROBE_RATE must be a positive number of requests/s, got ${process.env.PROBE_RATE}`)
const CONNECTIONS = 16
const CLOSED_MAX = RATE === undefined ? 12_000 : Math.ceil(RATE * SECONDS)
/** signed for the warm-up loop before the measured one (PROBE_WARM_SECONDS) */
const WARM_MAX = RATE === undefined ? 0 : Math.ceil(RATE * WARM_SECONDS)
/** a directory: perf samples (cpu-clock, on-CPU only) of the first service's main thread during each closed loop, summarized there */
const PERF_DIR = process.env.PROBE_PERF_DIR
const PG_SETTINGS = { settings: { shared_preload_libraries: 'pg_stat_statements' } }

async function send(url: string, raw: Hex): Promise<void> {
  const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(30_000), headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] }) })
  const body = (await res.json()) as { result?: string; error?: unknown }
  if (typeof body.result !== 'string') throw new Error(JSON.stringify(body.error))
}

async function closedLoop(urls: string[], txs: Hex[], seconds: number): Promise<{ done: number; failed: number; wall: number }> {
  let next = 0
  let done = 0
  let failed = 0
  const deadline = performance.now() + seconds * 1000
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, w) => {
      while (performance.now() < deadline && next < txs.length) {
        const ok = await send(urls[w % urls.length], txs[next++]).then(() => true, () => false)
        if (ok) done++
        else failed++
      }
    }),
  )
  return { done, failed, wall: (performance.now() - start) / 1000 }
}

/** the measured loop at a fixed rate, request i to replica i mod n (see PROBE_RATE) */
async function openLoop(urls: string[], txs: Hex[], rate: number, seconds: number): Promise<{ done: number; failed: number; wall: number }> {
  const count = Math.min(txs.length, Math.round(rate * seconds))
  const result = await runOpenLoop({ rate, count, maxInFlight: 512, send: (i) => send(urls[i % urls.length], txs[i]) })
  return { done: result.samples.length, failed: result.failures, wall: result.wallSeconds }
}

/** statements by kind (the first words of their text), calls since the last reset */
async function statementCalls(databaseUrl: string, reset: boolean): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    if (reset) {
      await client.query('SELECT pg_stat_statements_reset()')
      return new Map()
    }
    const { rows } = await client.query<{ query: string; calls: string }>('SELECT query, calls::text FROM pg_stat_statements')
    const out = new Map<string, number>()
    for (const r of rows) {
      const kind = r.query.replace(/\s+/g, ' ').trim().slice(0, 70)
      out.set(kind, (out.get(kind) ?? 0) + Number(r.calls))
    }
    return out
  } finally {
    await client.end()
  }
}

interface Run {
  urls: string[]
  services: Array<{ pid: number; workers: number }>
  databaseUrl: string
  stop(): Promise<void>
}

async function startSetup(setup: string, relayUrl: string): Promise<Run> {
  const relays = JSON.stringify([{ name: 'recorder', url: relayUrl }])
  const maxPending = String(PRELOAD + WARM_MAX + CLOSED_MAX + 100)
  if (setup === 'devnet-1') {
    const pgServer = await startTestPostgres(PG_SETTINGS)
    const databaseUrl = await pgServer.createDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'replica-count-'))
    const port = await freePort()
    const service = await startServiceProcess(port, { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, RELAYS: relays, LOCAL_BUILDER_PORT: '0', MAX_PENDING_SUBMISSIONS: maxPending, ...PERF_NODE_OPTIONS })
    return {
      urls: [`http://127.0.0.1:${port}/rpc/${DEV_PARTNER_TOKEN}/submit`],
      services: [{ pid: service.pid!, workers: Number(process.env.WORKERS ?? availableParallelism()) }],
      databaseUrl,
      async stop() {
        await stopProcess(service, 30_000)
        rmSync(dataDir, { recursive: true, force: true })
        await pgServer.close()
      },
    }
  }
  const replicas = Number(/^cluster-(\d+)$/.exec(setup)?.[1])
  if (!(replicas >= 1)) throw new Error(`unknown setup ${setup}`)
  const cluster = await startCluster({ replicas, blockTimeMs: 12_000, replicaEnv: { RELAYS: relays, LOG_LEVEL: 'warn', MAX_PENDING_SUBMISSIONS: maxPending, ...PERF_NODE_OPTIONS }, postgres: PG_SETTINGS })
  return {
    urls: cluster.replicas.map((r) => `${r.url}/rpc/${cluster.partnerToken}/submit`),
    services: cluster.replicas.map((r) => ({ pid: r.pid, workers: 1 })),
    databaseUrl: cluster.databaseUrl,
    stop: () => cluster.stop(),
  }
}

async function measure(setup: string, relay: Awaited<ReturnType<typeof recordingRelay>>, preload: Hex[], warm: Hex[], closed: Hex[]): Promise<void> {
  const run = await startSetup(setup, relay.url)
  try {
    await closedLoop(run.urls, preload, 3_600)
    if (RATE !== undefined && warm.length > 0) await openLoop(run.urls, warm, RATE, WARM_SECONDS)
    await statementCalls(run.databaseUrl, true)
    const relay0 = relay.received()
    const threads = run.services.map((s) => startThreadCpuWindow(s.pid, s.workers))
    const before = descendants(process.pid)
    const self0 = process.cpuUsage()
    const perfFile = PERF_DIR === undefined ? undefined : join(PERF_DIR, `${setup}-${Date.now()}.data`)
    const perf = perfFile === undefined ? undefined : spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '999', '-g', '-t', String(run.services[0].pid), '-o', perfFile], { stdio: 'ignore' })
    const loop = RATE === undefined ? await closedLoop(run.urls, closed, SECONDS) : await openLoop(run.urls, closed, RATE, SECONDS)
    if (perf !== undefined) {
      perf.kill('SIGINT')
      await new Promise((r) => perf.once('exit', r))
    }
    const self = process.cpuUsage(self0)
    const after = descendants(process.pid)
    const split = threads.map((t) => t.stop())
    const answers = loop.done + loop.failed
    const servicePids = new Set(run.services.map((s) => s.pid))
    let postgres = 0
    let others = 0
    for (const [pid, stat] of after as Map<number, ProcStat>) {
      if (servicePids.has(pid)) continue
      const s = (stat.cpuTicks - (before.get(pid)?.cpuTicks ?? 0)) / clockTicks()
      if (stat.comm === 'postgres') postgres += s
      else others += s
    }
    const statements = await statementCalls(run.databaseUrl, false)
    const perAnswer = [...statements].filter(([, n]) => n / answers >= 0.005).sort((a, b) => b[1] - a[1]).map(([q, n]) => `${(n / answers).toFixed(3)} ${q}`)
    const services = split.map((t) => threadCpuPer(t, answers))
    console.log(
      JSON.stringify({
        setup,
        loop: RATE === undefined ? 'closed' : `open ${RATE}/s after ${WARM_SECONDS} s`,
        at: new Date().toISOString().slice(11, 19),
        acks_per_s: Math.round(loop.done / loop.wall),
        failed: loop.failed,
        main_ms_per_answer_each: services.map((s) => s.main),
        main_ms_per_own_answer: round(services.reduce((a, s) => a + s.main, 0)),
        services,
        postgres: msPer(postgres, answers),
        chain_and_others: msPer(others, answers),
        generator_and_relay: msPer((self.user + self.system) / 1e6, answers),
        relay_bundles_per_answer: round((relay.received() - relay0) / answers),
        services_cpu_ms_per_s: services.map((s) => round((s.total * answers) / loop.wall)),
      }),
    )
    for (const line of perAnswer.slice(0, 14)) console.log(`  ${setup} statements per answer: ${line}`)
    if (perfFile !== undefined) writeFileSync(`${perfFile}.txt`, spawnSync('perf', ['script', '-i', perfFile], { maxBuffer: 1 << 30 }).stdout)
  } finally {
    await run.stop()
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000

async function main(): Promise<void> {
  console.log(`signing ${PRELOAD + WARM_MAX + CLOSED_MAX} swaps...`)
  const preload = await signSwaps(PRELOAD, 0)
  const warm = await signSwaps(WARM_MAX, PRELOAD)
  const closed = await signSwaps(CLOSED_MAX, PRELOAD + WARM_MAX)
  const relay = await recordingRelay()
  try {
    for (let r = 0; r < ROUNDS; r++) for (const setup of SETUPS) await measure(setup, relay, preload, warm, closed)
  } finally {
    relay.server.close()
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
