/**
 * npm run bench:soak   (node --expose-gc --import tsx scripts/bench-soak.ts)
 *
 * A mixed open-loop soak of the service started as `npm start` starts it (its own process, the
 * embedded devnet, a fresh temp DATA_DIR, free ports for PORT and LOCAL_BUILDER_PORT; the local
 * builder seals blocks at the service's default interval unless SOAK_BLOCK_TIME_MS is given), at
 * SOAK_RATE requests/s for SOAK_SECONDS s, on loopback:
 * - 1/2 POST /v1/quote (dev API key), distinct pairs and amounts over the devnet's tokens;
 * - 1/4 eth_backrun on /rpc/dev-partner-token-insecure/backrun, distinct V2 Router02 user swaps,
 *   40% of them large enough to leave an arbitrage;
 * - 1/4 eth_sendPrivateRawTransaction on /rpc/dev-partner-token-insecure/submit, distinct signed
 *   small swaps (0.01-0.2 ETH for a token through V2 Router02) from the devnet's user accounts
 *   (searcher keys excluded), each account with its own nonce counter starting from its on-chain
 *   nonce (the local builder's eth_getTransactionCount), fee cap from the latest block's base fee.
 * Open loop: requests go out on schedule whatever the answers; at most SOAK_MAX_INFLIGHT (500) in
 * flight, a request due beyond that is counted as an error and not sent; each has a 30 s timeout.
 * Errors: non-2xx, JSON-RPC error objects, timeouts, connection failures.
 *
 * Measured: per kind count, errors, p50/p99; the service's VmRSS every second (peak, and the
 * least-squares slope after the first minute, or after the first half of a run shorter than two
 * minutes; and per minute of the load its lowest and highest sample, `rss_by_minute_mb`); where
 * the service's memory is at the end of each minute of the load (`memory_parts_by_minute_mb`: V8
 * heaps, malloc, other anonymous, mapped files, from /proc/<pid>/smaps, see lib/memory-parts.ts;
 * null where smaps cannot be read); after the load, 3 blocks later, how many of a sample of up to 200 submitted hashes the
 * status API reports included. Then, in this process, the heap per pending submission of the real
 * submission pipeline (scripts/lib/soak-pending.ts; SOAK_PENDING submissions, default 2,000).
 * Prints one JSON object on its last line.
 *
 * Options (environment): SOAK_RATE (50), SOAK_SECONDS (120), SOAK_BLOCK_TIME_MS (service default),
 * SOAK_PENDING (2000), SOAK_MAX_INFLIGHT (500), SOAK_TIMEOUT_MS (30000), SOAK_CHAIN (`embedded`:
 * the devnet inside the service, as `npm start` runs it; `process`: the devnet chain and its builder
 * in a process of their own and the service in fork mode against it, as in production, where the
 * chain is not in the service's process (lib/soak-chain.ts); the last line then also has `chain`,
 * `chain_rss_peak_mb` and `chain_rss_slope_mb_per_min`, the chain process's own). For finding where the
 * service's memory goes: SOAK_SERVICE_NODE_ARGS (node arguments put before npm start's, e.g.
 * `--trace-gc` or `--heapsnapshot-signal=SIGUSR2`), SOAK_SERVICE_STDOUT (a file that receives the
 * service's whole stdout, where --trace-gc writes; `npx tsx scripts/lib/soak-gc-trace.ts <file>`
 * prints it per isolate and minute: each full collection's live heap and the committed heap).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { freePort } from '../test/support/net.ts'
import { summarize } from './lib/stats.ts'
import { latencyAfterHeads, latencyByHead, type HeadPhase, type HeadSample } from './lib/latency-by-head.ts'
import { loopLagByHead, sampleLoopLag, taskTimesByHead, taskTimesWindow, watchHeads, type LoopLagSecond, type TaskTimes } from './lib/soak-head-probe.ts'
import { measurePendingSubmissionMemory, type PendingMemoryResult } from './lib/soak-pending.ts'
import { memoryParts, type MemoryParts } from './lib/memory-parts.ts'
import { rssMb, slope, startSoakService, type SoakService } from './lib/soak-service.ts'
import { backrunParams, quoteRequests, smallSwapSigner, userAccounts } from './lib/soak-txs.ts'
import { EMBEDDED_CREDENTIALS, soakChainMode, startSoakChain, type SoakChain, type SoakCredentials } from './lib/soak-chain.ts'

const RATE = Number(process.env.SOAK_RATE ?? 50)
const SECONDS = Number(process.env.SOAK_SECONDS ?? 120)
const BLOCK_TIME_MS = process.env.SOAK_BLOCK_TIME_MS
const PENDING = Number(process.env.SOAK_PENDING ?? 2000)
const MAX_INFLIGHT = Number(process.env.SOAK_MAX_INFLIGHT ?? 500)
const TIMEOUT_MS = Number(process.env.SOAK_TIMEOUT_MS ?? 30_000)
const STATUS_SAMPLE = 200
const CHAIN = soakChainMode(process.env.SOAK_CHAIN)

type Kind = 'quote' | 'backrun' | 'submit'
const KINDS: Kind[] = ['quote', 'backrun', 'submit']

interface KindStats {
  count: number
  errors: number
  latencies: number[]
  /** the answered requests by due time and the head of that time (see lib/soak-head-probe.ts) */
  byHead: HeadSample[]
  /** error class -> count, and a few examples */
  errorClasses: Map<string, number>
  examples: string[]
}
const newStats = (): KindStats => ({ count: 0, errors: 0, latencies: [], byHead: [], errorClasses: new Map(), examples: [] })

const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`)

/** the kind of the i-th request: 2 of 4 quotes, 1 backrun, 1 submission, interleaved */
const kindOf = (i: number): Kind => (['quote', 'backrun', 'quote', 'submit'] as const)[i % 4]

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(10_000) })
  const body = (await res.json()) as { result?: unknown; error?: unknown }
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`)
  return body.result
}

class RequestError extends Error {
  constructor(
    readonly errorClass: string,
    message: string,
  ) {
    super(message)
  }
}

/** one request; resolves to its parsed body or throws a RequestError naming its class */
async function request(url: string, init: { headers: Record<string, string>; body?: string; method?: string }, jsonRpc: boolean): Promise<unknown> {
  let res: Response
  try {
    res = await fetch(url, { method: init.method ?? 'POST', headers: init.headers, body: init.body, signal: AbortSignal.timeout(TIMEOUT_MS) })
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } }
    if (e.name === 'TimeoutError') throw new RequestError('timeout', `no answer within ${TIMEOUT_MS} ms`)
    throw new RequestError(`connection:${e.cause?.code ?? e.name}`, `${e.message}${e.cause?.code ? ` (${e.cause.code})` : ''}`)
  }
  let text: string
  try {
    text = await res.text()
  } catch (err) {
    const e = err as Error
    if (e.name === 'TimeoutError') throw new RequestError('timeout', `body not complete within ${TIMEOUT_MS} ms`)
    throw new RequestError('connection:body', e.message)
  }
  if (res.status < 200 || res.status > 299) {
    let reason = ''
    try {
      const j = JSON.parse(text) as { code?: string; details?: { reason?: string }; error?: { code?: number } }
      reason = j.details?.reason ?? j.code ?? (j.error?.code !== undefined ? String(j.error.code) : '')
    } catch {
      // not JSON
    }
    throw new RequestError(`http:${res.status}${reason ? `:${reason}` : ''}`, `HTTP ${res.status} ${text.slice(0, 300)}`)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new RequestError('malformed', `not JSON: ${text.slice(0, 200)}`)
  }
  if (jsonRpc) {
    const b = body as { result?: unknown; error?: { code?: number; message?: string } }
    if (b.error !== undefined) throw new RequestError(`rpc:${b.error.code}`, `JSON-RPC error ${JSON.stringify(b.error).slice(0, 300)}`)
    return b.result
  }
  return body
}

interface SoakResult {
  stats: Record<Kind, KindStats>
  fired: number
  backrunFound: number
  submittedHashes: Hex[]
  rss: Array<{ t: number; mb: number }>
  /** SOAK_CHAIN=process: the chain process's VmRSS every second (empty otherwise) */
  chainRss: Array<{ t: number; mb: number }>
  /** where the service's memory is at the end of each minute of the load (smaps; Linux only) */
  parts: Array<MemoryParts | null>
  endBlock: bigint
  /** when each new head was seen during the load, ms after its start */
  headChanges: number[]
  /** each second's longest event-loop delay of the service's main thread */
  loopLag: LoopLagSecond[]
  /** the worker pool's task times by kind over the load */
  taskTimes: Record<string, TaskTimes> | null
  serviceExit?: { code: number | null; signal: NodeJS.Signals | null; atS: number; rssMb: number; fired: number; completed: number; stderr: string[]; stdout: string[] }
}

async function soak(service: SoakService, port: number, builderUrl: string, credentials: SoakCredentials, chainPid: number | undefined): Promise<SoakResult> {
  const base = `http://127.0.0.1:${port}`
  const quoteUrl = `${base}/v1/quote`
  const backrunUrl = `${base}/rpc/${credentials.partnerToken}/backrun`
  const submitUrl = `${base}/rpc/${credentials.partnerToken}/submit`
  const nextQuote = quoteRequests(1)
  const nextBackrun = backrunParams(2)
  const signSwap = smallSwapSigner(3)

  // senders: their on-chain nonces and the latest base fee, from the local builder
  const accounts = userAccounts()
  const nonces = new Map<string, number>()
  for (const a of accounts) nonces.set(a.address, Number(BigInt((await rpc(builderUrl, 'eth_getTransactionCount', [a.address, 'latest'])) as string)))
  let baseFee = 0n
  let headNumber = 0n
  const refreshHead = async () => {
    const block = (await rpc(builderUrl, 'eth_getBlockByNumber', ['latest', false])) as { number: string; baseFeePerGas?: string }
    headNumber = BigInt(block.number)
    baseFee = BigInt(block.baseFeePerGas ?? '0x3b9aca00')
  }
  await refreshHead()
  log(`${accounts.length} sender accounts, nonces from ${Math.min(...nonces.values())} to ${Math.max(...nonces.values())}; head ${headNumber}, base fee ${baseFee} wei`)

  const stats: Record<Kind, KindStats> = { quote: newStats(), backrun: newStats(), submit: newStats() }
  const submittedHashes: Hex[] = []
  const rss: Array<{ t: number; mb: number }> = []
  const chainRss: Array<{ t: number; mb: number }> = []
  const parts: Array<MemoryParts | null> = []
  let backrunFound = 0
  let inflight = 0
  let fired = 0
  let completed = 0
  const pending = new Set<Promise<void>>()
  const taskTimes = await taskTimesWindow(base).catch(() => undefined)
  const start = performance.now()
  const clock = () => performance.now() - start
  const heads = watchHeads(builderUrl, clock)
  const loopLag = sampleLoopLag(base, clock)

  const fail = (kind: Kind, err: unknown) => {
    const s = stats[kind]
    s.errors++
    const cls = err instanceof RequestError ? err.errorClass : 'client'
    s.errorClasses.set(cls, (s.errorClasses.get(cls) ?? 0) + 1)
    if (s.examples.length < 5) s.examples.push(`${cls}: ${err instanceof Error ? err.message : String(err)}`)
  }

  const fire = (i: number) => {
    const kind = kindOf(i)
    stats[kind].count++
    fired++
    if (inflight >= MAX_INFLIGHT) {
      fail(kind, new RequestError('inflight-bound', `${MAX_INFLIGHT} requests already in flight`))
      completed++
      return
    }
    inflight++
    const scheduledMs = (i * 1000) / RATE
    const run = (async () => {
      let url: string
      let body: string
      let headers: Record<string, string> = { 'content-type': 'application/json' }
      if (kind === 'quote') {
        url = quoteUrl
        headers = { ...headers, 'x-api-key': credentials.apiKey }
        body = JSON.stringify(nextQuote(i))
      } else if (kind === 'backrun') {
        url = backrunUrl
        body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_backrun', params: [nextBackrun(i)] })
      } else {
        url = submitUrl
        const account = accounts[Math.floor(i / 4) % accounts.length]
        const nonce = nonces.get(account.address)!
        nonces.set(account.address, nonce + 1)
        const raw = await signSwap({ account, nonce, baseFee }, i + 1)
        body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendPrivateRawTransaction', params: [{ tx: raw }] })
      }
      const head = heads.current()
      const t = performance.now()
      const result = await request(url, { headers, body }, kind !== 'quote')
      const latencyMs = performance.now() - t
      stats[kind].latencies.push(latencyMs)
      if (head !== undefined) stats[kind].byHead.push({ scheduledMs, latencyMs, blockNumber: head })
      if (kind === 'backrun' && result !== null) backrunFound++
      if (kind === 'submit') {
        if (typeof result !== 'string') throw new RequestError('malformed', `submit answered ${JSON.stringify(result)}`)
        submittedHashes.push(result as Hex)
      }
    })()
      .catch((err: unknown) => fail(kind, err))
      .finally(() => {
        inflight--
        completed++
        pending.delete(run)
      })
    pending.add(run)
  }

  const rssTimer = setInterval(() => {
    const t = (performance.now() - start) / 1000
    rss.push({ t, mb: rssMb(service.pid) })
    if (chainPid !== undefined) chainRss.push({ t, mb: rssMb(chainPid) })
    // at the end of each whole minute of the load; the last one's sample comes up to a second after it
    if (Math.floor(t / 60) > parts.length && parts.length < Math.floor(SECONDS / 60)) parts.push(memoryParts(service.pid) ?? null)
  }, 1000)
  const headTimer = setInterval(() => void refreshHead().catch(() => undefined), 2000)
  const progressTimer = setInterval(() => {
    const last = rss[rss.length - 1]
    log(`t=${Math.round((performance.now() - start) / 1000)}s fired ${fired}, done ${completed}, in flight ${inflight}, errors q/b/s ${stats.quote.errors}/${stats.backrun.errors}/${stats.submit.errors}, RSS ${last ? last.mb.toFixed(0) : '?'} MB, head ${headNumber}`)
  }, 10_000)
  rss.push({ t: 0, mb: rssMb(service.pid) })
  let serviceExit: SoakResult['serviceExit']
  try {
    const total = Math.round(RATE * SECONDS)
    for (let i = 0; i < total; i++) {
      const exit = service.exit()
      if (exit !== undefined) {
        const last = rss.filter((r) => Number.isFinite(r.mb)).pop()
        serviceExit = { code: exit.code, signal: exit.signal, atS: round((exit.atMs - start) / 1000, 1) ?? 0, rssMb: round(last?.mb ?? Number.NaN, 1) ?? 0, fired, completed, stderr: service.lastStderr(), stdout: service.lastStdout() }
        log(`THE SERVICE EXITED during the load: code ${exit.code}, signal ${exit.signal}, ${serviceExit.atS} s in, last RSS ${serviceExit.rssMb} MB, ${fired} requests fired, ${completed} completed`)
        break
      }
      const wait = start + (i * 1000) / RATE - performance.now()
      if (wait > 0) await sleep(wait)
      fire(i)
    }
    log(`load done after ${((performance.now() - start) / 1000).toFixed(1)} s; waiting for ${pending.size} requests in flight`)
    while (pending.size > 0) await Promise.allSettled([...pending])
  } finally {
    clearInterval(progressTimer)
    clearInterval(headTimer)
    heads.stop()
    loopLag.stop()
  }
  const loadEnd = (performance.now() - start) / 1000
  const times = (await taskTimes?.stop().catch(() => undefined)) ?? null
  log(`all answered ${loadEnd.toFixed(1)} s after the start`)

  // 3 blocks after the load, read what became of a sample of the submissions
  let endBlock = headNumber
  if (serviceExit === undefined && submittedHashes.length > 0) {
    await refreshHead().catch(() => undefined)
    const target = headNumber + 3n
    const blockMs = Number(BLOCK_TIME_MS ?? 12_000)
    const deadline = performance.now() + 3 * blockMs * 2 + 30_000
    log(`waiting for block ${target} (head ${headNumber})`)
    while (headNumber < target && performance.now() < deadline && service.exit() === undefined) {
      await sleep(500)
      await refreshHead().catch(() => undefined)
    }
    endBlock = headNumber
  }
  clearInterval(rssTimer)
  return { stats, fired, backrunFound, submittedHashes, rss, chainRss, parts, endBlock, headChanges: heads.changes, loopLag: loopLag.samples, taskTimes: times, serviceExit }
}

async function sampleStatuses(port: number, hashes: readonly Hex[], partnerToken: string): Promise<{ sampled: number; included: number; states: Record<string, number>; examples: string[] }> {
  const n = Math.min(STATUS_SAMPLE, hashes.length)
  const sample: Hex[] = []
  for (let k = 0; k < n; k++) sample.push(hashes[Math.floor((k * hashes.length) / n)])
  const states: Record<string, number> = {}
  const examples: string[] = []
  let included = 0
  let next = 0
  const worker = async () => {
    while (next < sample.length) {
      const hash = sample[next++]
      let state = 'unreadable'
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/submissions/${hash}`, { headers: { authorization: `Bearer ${partnerToken}` }, signal: AbortSignal.timeout(TIMEOUT_MS) })
        const body = (await res.json()) as { submissions?: Array<{ stage?: string; final?: { state: string; reason?: string } | null; blocks?: unknown[] }> }
        const view = body.submissions?.[0]
        state = view === undefined ? `http-${res.status}` : (view.final?.state ?? `open:${view.stage ?? '?'}`)
        if (view?.final?.state === 'included') included++
        else if (view?.final?.reason !== undefined && examples.length < 3) examples.push(`${hash} ${view.final.state}: ${view.final.reason}`)
        else if (view !== undefined && view.final === null && examples.length < 3) examples.push(`${hash} open, its last block: ${JSON.stringify(view.blocks?.[view.blocks.length - 1] ?? null).slice(0, 600)}`)
      } catch (err) {
        if (examples.length < 3) examples.push(`${hash}: ${(err as Error).message}`)
      }
      states[state] = (states[state] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return { sampled: n, included, states, examples }
}

/** The chain process's own memory (SOAK_CHAIN=process): its peak and its slope over the service's window. */
function chainMemory(samples: ReadonlyArray<{ t: number; mb: number }>, from: number, to: number): { chain_rss_peak_mb: number | null; chain_rss_slope_mb_per_min: number | null } {
  const rss = samples.filter((r) => Number.isFinite(r.mb))
  const window = rss.filter((r) => r.t >= from && r.t <= to)
  return { chain_rss_peak_mb: rss.length === 0 ? null : round(Math.max(...rss.map((r) => r.mb)), 1), chain_rss_slope_mb_per_min: round(slope(window.map((r) => ({ x: r.t / 60, y: r.mb }))), 3) }
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-soak-data-'))
  let service: SoakService | undefined
  let chain: SoakChain | undefined
  const cleanup = async () => {
    await service?.stop(10_000).catch(() => undefined)
    await chain?.stop().catch(() => undefined)
    rmSync(dataDir, { recursive: true, force: true })
  }
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the service and removing ${dataDir}`)
    void cleanup().finally(() => process.exit(130))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  // last resort (e.g. an uncaught exception): never leave the service running
  process.once('exit', () => {
    if (service !== undefined && service.exit() === undefined) service.child.kill('SIGKILL')
    if (chain !== undefined && chain.child.exitCode === null && chain.child.signalCode === null) chain.child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })

  let result: SoakResult
  let statuses: Awaited<ReturnType<typeof sampleStatuses>> = { sampled: 0, included: 0, states: {}, examples: [] }
  try {
    const [port, builderPort] = [await freePort(), await freePort()]
    const env: Record<string, string> = { DATA_DIR: dataDir, LOCAL_BUILDER_PORT: String(builderPort) }
    if (BLOCK_TIME_MS !== undefined) env.LOCAL_BUILDER_BLOCK_TIME_MS = BLOCK_TIME_MS
    let builderUrl = `http://127.0.0.1:${builderPort}`
    let credentials = EMBEDDED_CREDENTIALS
    if (CHAIN === 'process') {
      chain = await startSoakChain(Number(BLOCK_TIME_MS ?? 12_000))
      Object.assign(env, chain.serviceEnv)
      builderUrl = chain.url
      credentials = chain.credentials
      log(`SOAK_CHAIN=process: the devnet chain and its builder in process ${chain.pid} at ${chain.url}, RSS ${rssMb(chain.pid).toFixed(0)} MB; the service forks it`)
    }
    log(`starting the service (npm start's node arguments) on 127.0.0.1:${port}, ${CHAIN === 'process' ? 'in fork mode over the chain process' : `local builder on :${builderPort}`}, block time ${BLOCK_TIME_MS ?? 'default (12000)'} ms, DATA_DIR ${dataDir}`)
    service = await startSoakService(port, env)
    log(`service pid ${service.pid} ready, RSS ${rssMb(service.pid).toFixed(0)} MB; open loop at ${RATE}/s for ${SECONDS} s (bound ${MAX_INFLIGHT} in flight, timeout ${TIMEOUT_MS} ms)`)
    result = await soak(service, port, builderUrl, credentials, chain?.pid)
    if (result.serviceExit === undefined) {
      statuses = await sampleStatuses(port, result.submittedHashes, credentials.partnerToken)
      log(`status of ${statuses.sampled} sampled submissions at block ${result.endBlock}: ${JSON.stringify(statuses.states)}${statuses.examples.length ? `; e.g. ${statuses.examples.join(' | ')}` : ''}`)
    }
  } finally {
    await cleanup()
    log('service stopped, DATA_DIR removed')
  }

  // the service's memory
  const rss = result.rss.filter((r) => Number.isFinite(r.mb))
  const peak = Math.max(...rss.map((r) => r.mb))
  const loadSeconds = result.serviceExit?.atS ?? SECONDS
  const from = SECONDS >= 120 ? 60 : SECONDS / 2
  const window = rss.filter((r) => r.t >= from && r.t <= loadSeconds)
  const slopePerMin = slope(window.map((r) => ({ x: r.t / 60, y: r.mb })))
  // per minute of the load: the lowest and highest RSS sample (the V8 heaps' collections make it swing within a minute)
  const byMinute: Array<[number | null, number | null]> = []
  for (let m = 0; m * 60 < loadSeconds; m++) {
    const inMinute = rss.filter((r) => r.t >= m * 60 && r.t < (m + 1) * 60 && r.t <= loadSeconds).map((r) => r.mb)
    if (inMinute.length > 0) byMinute.push([round(Math.min(...inMinute), 0), round(Math.max(...inMinute), 0)])
  }
  log(`RSS per minute of the load, lowest-highest MB: ${byMinute.map(([lo, hi], m) => `${m + 1}: ${lo}-${hi}`).join(', ')}`)
  result.parts.forEach((p, m) => {
    if (p !== null) log(`memory at the end of minute ${m + 1} (smaps), MB: V8 heaps ${p.v8_heap}, malloc ${p.malloc}, other anonymous ${p.other_anon}, mapped files ${p.files}`)
  })
  const chainFigures = CHAIN === 'process' ? chainMemory(result.chainRss, from, loadSeconds) : undefined
  if (chainFigures !== undefined) log(`the chain process (SOAK_CHAIN=process): RSS slope ${chainFigures.chain_rss_slope_mb_per_min} MB/min over the same window, peak ${chainFigures.chain_rss_peak_mb} MB`)
  log(`RSS slope over ${window.length} samples from t=${from} s to the end of the load (${SECONDS >= 120 ? 'after the first minute' : 'after the first half: the run is shorter than two minutes'}): ${round(slopePerMin, 3)} MB/min; peak ${peak.toFixed(1)} MB (${rss.length} samples, load and the 3-block wait)`)

  // per kind
  const summary: Record<string, unknown> = {}
  const byHead: Record<string, HeadPhase[]> = {}
  let errors = 0
  for (const kind of KINDS) {
    const s = result.stats[kind]
    const lat = summarize(s.latencies)
    errors += s.errors
    log(`${kind}: ${s.count} requests, ${s.errors} errors, p50 ${round(lat.p50)} ms, p99 ${round(lat.p99)} ms, max ${round(lat.max)} ms${s.errors ? `; errors ${JSON.stringify(Object.fromEntries(s.errorClasses))}; e.g. ${s.examples.slice(0, 3).join(' | ')}` : ''}`)
    summary[`${kind}_count`] = s.count
    summary[`${kind}_errors`] = s.errors
    summary[`${kind}_p50_ms`] = round(lat.p50)
    summary[`${kind}_p99_ms`] = round(lat.p99)
    if (s.errors > 0) summary[`${kind}_error_classes`] = Object.fromEntries(s.errorClasses)
    // the requests due in the first second after a head against the rest (issue 13's tail under the mix)
    const split = latencyAfterHeads(s.byHead, result.headChanges, 1_000)
    summary[`${kind}_p99_first_s_after_head_ms`] = round(split.after.p99)
    summary[`${kind}_p99_rest_ms`] = round(split.rest.p99)
    byHead[kind] = latencyByHead(s.byHead).phases
    log(`${kind} by time since the head: first second ${split.after.count} requests, p50 ${round(split.after.p50)} / p99 ${round(split.after.p99)} ms; the rest ${split.rest.count}, p50 ${round(split.rest.p50)} / p99 ${round(split.rest.p99)} ms`)
  }
  const loopLag = loopLagByHead(result.loopLag, result.headChanges)
  log(`heads seen during the load: ${result.headChanges.length}; main thread's longest event-loop delay per second, within 2 s of a head: ${JSON.stringify(loopLag.after_head)}, the rest: ${JSON.stringify(loopLag.rest)}`)
  if (result.taskTimes !== null) for (const [kind, t] of Object.entries(result.taskTimes)) log(`pool tasks ${kind}: ${JSON.stringify(t)}`)
  const tasksByHead = taskTimesByHead(result.loopLag, result.headChanges)
  for (const [kind, t] of Object.entries(tasksByHead)) log(`pool tasks ${kind} answered within 2 s of a head: ${JSON.stringify(t.after_head)}; the rest: ${JSON.stringify(t.rest)}`)
  log(`eth_backrun answered a backrun for ${result.backrunFound} of ${result.stats.backrun.count - result.stats.backrun.errors}`)

  // heap per pending submission, in this process (the service is stopped by now)
  let pending: PendingMemoryResult | undefined
  let pendingError: string | undefined
  if (PENDING > 0) {
    try {
      log(`pending: the submission pipeline in this process, ${PENDING} submissions`)
      pending = await measurePendingSubmissionMemory(PENDING, 50, log)
      log(`pending: ${pending.count} accepted in ${pending.acceptMs} ms, one head prepared and sent in ${pending.prepareMs} ms; ${pending.active} active; relay got ${pending.relayBundles} bundles (${pending.relayBundlesWithBackrun} with a backrun); heap ${pending.heapBeforeMb} -> ${pending.heapAfterMb} MB = ${pending.bytesPerPending} bytes per pending submission (external ${pending.externalDeltaBytesPerPending} B each), of which the decoded-transaction memo (bounded at 512 entries) ~${pending.decodeMemoBytesPerEntry} B each; raw tx ${pending.rawTxBytes} bytes`)
    } catch (err) {
      pendingError = err instanceof Error ? err.message : String(err)
      log(`pending measurement failed: ${pendingError}`)
    }
  }

  if (result.serviceExit !== undefined) {
    log(`service stderr (last lines):\n${result.serviceExit.stderr.join('\n')}`)
    log(`service stdout log (last lines):\n${result.serviceExit.stdout.slice(-10).join('\n')}`)
  }

  console.log(
    JSON.stringify({
      bench: 'soak',
      rate: RATE,
      seconds: SECONDS,
      block_time_ms: Number(BLOCK_TIME_MS ?? 12_000),
      requests: result.fired,
      errors,
      rss_peak_mb: round(peak, 1),
      rss_slope_mb_per_min: round(slopePerMin, 3),
      rss_slope_window: SECONDS >= 120 ? 'after the first minute' : 'after the first half',
      rss_by_minute_mb: byMinute,
      memory_parts_by_minute_mb: result.parts,
      bytes_per_pending_submission: pending?.bytesPerPending ?? null,
      raw_tx_bytes: pending?.rawTxBytes ?? null,
      pending_submissions: pending?.count ?? null,
      decode_memo_bytes_per_entry: pending?.decodeMemoBytesPerEntry ?? null,
      ...(pendingError === undefined ? {} : { pending_error: pendingError }),
      ...summary,
      backrun_found: result.backrunFound,
      submissions_included: statuses.included,
      submissions_sampled: statuses.sampled,
      submission_states: statuses.states,
      heads_seen: result.headChanges.length,
      latency_by_head: byHead,
      main_loop_lag_by_head: loopLag,
      task_times: result.taskTimes,
      task_times_by_head: tasksByHead,
      ...(chainFigures === undefined ? {} : { chain: CHAIN, ...chainFigures }),
      ...(result.serviceExit === undefined
        ? {}
        : { service_exit: { code: result.serviceExit.code, signal: result.serviceExit.signal, at_s: result.serviceExit.atS, rss_mb: result.serviceExit.rssMb, fired: result.serviceExit.fired, completed: result.serviceExit.completed } }),
    }),
  )
  if (result.serviceExit !== undefined) process.exitCode = 1
}

main()
  .catch((err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
  .finally(() => {
    // nothing should keep the process alive now; if something does, leave anyway
    setTimeout(() => process.exit(), 2_000).unref()
  })
