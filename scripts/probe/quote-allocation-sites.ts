/**
 * node --experimental-websocket --import tsx scripts/probe/quote-allocation-sites.ts
 *
 * Bytes each isolate of the service allocates per answered quote, and where (issue 12: a quote's GC,
 * the workers' scavenges and the V8 platform threads' concurrent GC, is paid per byte allocated).
 * The service is started as `npm start` starts it (WORKERS, default 2) with the inspector on,
 * warmed with bench:quote's saturating load (autocannon, BENCH_CONNECTIONS, default 8, distinct
 * amounts) until every worker has answered PROBE_WARMUP_QUOTES_PER_WORKER (default 1500), then, in the
 * main isolate and every worker at once, V8's sampling heap profiler runs over PROBE_SECONDS (default
 * 10) of the same load with every object kept in its profile whether a scavenge or a mark-compact
 * collected it (`includeObjectsCollectedByMinorGC`/`MajorGC`): its sampled bytes are all the bytes
 * allocated. Prints per isolate: KB allocated per answered quote of the service (each worker answers
 * its share of them, so the workers' figures add up to a quote's), and the top PROBE_TOP (default 15) sites by
 * allocating function and by the nearest frame in this project's src/ (what to change).
 * PROBE_INTERVAL_KB (default 16): the mean bytes between samples. PROBE_SCAVENGED=0: the objects a
 * scavenge collected are left out, so what is counted is what outlived the young generation (promoted
 * to old space, or alive at the window's end): what fills old space and so paces the mark-compacts,
 * whose marking runs on the platform threads. Last line: one JSON object.
 */
import { freePort } from '../../test/support/net.ts'
import { startServiceProcess } from '../../test/support/service-process.ts'
import { Cdp, type WorkerTarget } from '../lib/inspector-client.ts'
import { scrapeSums } from '../lib/process-cpu.ts'
import { postQuote, QUOTE_MIX, quoteBody, quoteLoad } from '../lib/quote-mix.ts'
import { warmUpWorkers } from '../lib/warm-up-workers.ts'
import { positiveFromEnv } from '../lib/probe-env.ts'

const WORKERS = positiveFromEnv('WORKERS', 2)
const CONNECTIONS = positiveFromEnv('BENCH_CONNECTIONS', 8)
const SECONDS = positiveFromEnv('PROBE_SECONDS', 10)
const WARMUP_QUOTES_PER_WORKER = positiveFromEnv('PROBE_WARMUP_QUOTES_PER_WORKER', 1500)
const INTERVAL_BYTES = positiveFromEnv('PROBE_INTERVAL_KB', 16) * 1024
const TOP = positiveFromEnv('PROBE_TOP', 15)
const SCAVENGED = process.env.PROBE_SCAVENGED !== '0'
/** a worker busy with quotes answers the protocol between its tasks */
const COMMAND_TIMEOUT_MS = 60_000

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length)
  const src = url.lastIndexOf('/src/')
  if (src >= 0) return url.slice(src + 1)
  return url === '' ? '(native)' : url
}
const frameName = (f: ProfileNode['callFrame']): string => `${f.functionName === '' ? '(anonymous)' : f.functionName} ${shortUrl(f.url)}:${f.lineNumber + 1}`
const isProjectSrc = (url: string): boolean => url.includes('/src/') && !url.includes('node_modules')

/** Bytes per site: by the allocating function and by the nearest src/ frame above it. */
function sites(head: ProfileNode): { total: number; byLeaf: Map<string, number>; bySrc: Map<string, number> } {
  const byLeaf = new Map<string, number>()
  const bySrc = new Map<string, number>()
  let total = 0
  const walk = (node: ProfileNode, nearestSrc: string): void => {
    const here = isProjectSrc(node.callFrame.url) ? frameName(node.callFrame) : nearestSrc
    if (node.selfSize > 0) {
      total += node.selfSize
      const leaf = frameName(node.callFrame)
      byLeaf.set(leaf, (byLeaf.get(leaf) ?? 0) + node.selfSize)
      bySrc.set(here, (bySrc.get(here) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, here)
  }
  walk(head, '(outside src/)')
  return { total, byLeaf, bySrc }
}

type Send = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>

const port = await freePort()
const inspectorPort = await freePort()
// the inspector through NODE_OPTIONS, so the service starts as every benchmark starts it; its
// WebSocket address is read from the inspector's own /json/list
const child = await startServiceProcess(port, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:${inspectorPort}`, RATE_LIMIT_MAX: '1000000', LOCAL_BUILDER_PORT: '0', WORKERS: String(WORKERS), EVM_MAX_MS: process.env.EVM_MAX_MS ?? '10000' })
const base = `http://127.0.0.1:${port}`
try {
  for (let k = 0; k < 3 * QUOTE_MIX.length; k++) await postQuote(`${base}/v1/quote`, quoteBody(k, true))
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>
  const cdp = await Cdp.open(target!.webSocketDebuggerUrl)
  const workers = await cdp.attachWorkers(() => {})
  const targets: Array<{ name: string; send: Send }> = [{ name: 'main', send: (m, p = {}) => cdp.send(m, p) }]
  for (const w of workers.values()) {
    const worker: WorkerTarget = w
    targets.push({ name: `worker ${worker.workerId}`, send: (m, p = {}) => cdp.sendToWorker(worker, m, p, COMMAND_TIMEOUT_MS) })
  }
  const warmUp = await warmUpWorkers({ bases: [base], workers: WORKERS, quotesPerWorker: WARMUP_QUOTES_PER_WORKER, maxSeconds: 300, slice: () => quoteLoad(`${base}/v1/quote`, CONNECTIONS, 2) })
  for (const t of targets) await t.send('HeapProfiler.enable')
  await Promise.all(targets.map((t) => t.send('HeapProfiler.startSampling', { samplingInterval: INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: SCAVENGED })))
  const result = await quoteLoad(`${base}/v1/quote`, CONNECTIONS, SECONDS)
  const profiles = await Promise.all(targets.map(async (t) => (await t.send('HeapProfiler.stopSampling')).profile as { head: ProfileNode }))
  const quotes = result['2xx']
  const kb = (bytes: number): number => Math.round((10 * bytes) / 1024 / quotes) / 10
  const isolates = targets.map((t, i) => {
    const s = sites(profiles[i]!.head)
    const top = (m: Map<string, number>) =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(([site, bytes]) => ({ site, kb_per_quote: kb(bytes), share: Math.round((1000 * bytes) / s.total) / 10 }))
    return { name: t.name, kb_per_quote: kb(s.total), by_function: top(s.byLeaf), by_src_frame: top(s.bySrc) }
  })
  for (const iso of isolates) {
    console.log(`\n${iso.name}: ${iso.kb_per_quote} KB ${SCAVENGED ? 'allocated' : 'outlived the young generation'} per quote`)
    console.log('  by allocating function:')
    for (const r of iso.by_function) console.log(`    ${String(r.kb_per_quote).padStart(8)} KB ${String(r.share).padStart(5)}%  ${r.site}`)
    console.log('  by nearest src/ frame:')
    for (const r of iso.by_src_frame) console.log(`    ${String(r.kb_per_quote).padStart(8)} KB ${String(r.share).padStart(5)}%  ${r.site}`)
  }
  const completed = (await scrapeSums(base, ['worker_tasks_completed_total'] as const)).worker_tasks_completed_total
  cdp.close()
  console.log(JSON.stringify({ name: 'probe:quote-allocation-sites', workers: WORKERS, seconds: SECONDS, warm_quotes_per_worker: Math.round(warmUp.quotesPerWorker), quotes, requests_per_s: result.requests.average, tasks_completed: completed, interval_kb: INTERVAL_BYTES / 1024, scavenged_counted: SCAVENGED, kb_per_quote: Object.fromEntries(isolates.map((i) => [i.name, i.kb_per_quote])), workers_kb_per_quote: Math.round(10 * isolates.filter((i) => i.name !== 'main').reduce((sum, i) => sum + i.kb_per_quote, 0)) / 10 }))
} finally {
  child.kill('SIGKILL')
}
