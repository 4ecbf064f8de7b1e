/**
 * Probe (issue 10, sixteenth session): which allocations of a running service die in old space,
 * per isolate (the main thread and each worker). Those are what a scavenge promoted (they had lived
 * through two of them) and a later mark-compact found dead: the holes old space keeps committed
 * between its compactions (BENCHMARKS "h15-heap"). V8's sampling heap profiler tells them apart by
 * how a sampled object's life ended: with `includeObjectsCollectedByMajorGC` its profile keeps the
 * samples that a mark-compact collected beside those still alive; without it, only the live ones.
 * So each isolate is sampled in alternating windows of PROBE_WINDOW_S seconds (default 60), "major"
 * then "live", PROBE_ROUNDS times (default 2); per allocation site the "major" windows' bytes a
 * minute minus the "live" windows' is what died in a mark-compact (mostly promoted garbage; also
 * young objects dead when a mark-compact ran, a few percent of them at ~30 scavenges per
 * mark-compact). Sites are named twice: by the allocating function (the stack's leaf) and by the
 * nearest frame in this project's src/ (what to change).
 *
 * Run beside a soak (the soak's stderr carries the service's; loopback only):
 *   SOAK_SERVICE_NODE_ARGS=--inspect=127.0.0.1:0 SOAK_SECONDS=600 npm run bench:soak 2>soak.err &
 *   PROBE_START_S=90 node --experimental-websocket --import tsx scripts/probe/promoted-allocations.ts soak.err
 * PROBE_START_S (default 90): seconds after the inspector is found before the first window (the
 * first minute is the service warming up). PROBE_INTERVAL_KB (default 32): the mean bytes between
 * samples. PROBE_TOP (default 20): sites listed per isolate.
 */
import { Cdp, findInspector, sleep, type WorkerTarget } from '../lib/inspector-client.ts'
import { positiveFromEnv } from '../lib/probe-env.ts'

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

type Mode = 'major' | 'live'

interface Tally {
  /** per mode: summed window seconds, and bytes per site key */
  seconds: Record<Mode, number>
  byLeaf: Record<Mode, Map<string, number>>
  bySrc: Record<Mode, Map<string, number>>
}

const logFile = process.argv[2]
if (logFile === undefined) {
  console.error('usage: promoted-allocations.ts <service stderr log>')
  process.exit(2)
}
const WINDOW_S = positiveFromEnv('PROBE_WINDOW_S', 60)
const ROUNDS = positiveFromEnv('PROBE_ROUNDS', 2)
const START_S = Number(process.env.PROBE_START_S ?? 90)
const INTERVAL_BYTES = positiveFromEnv('PROBE_INTERVAL_KB', 32) * 1024
const TOP = positiveFromEnv('PROBE_TOP', 20)
/** a window's commands (start, stop, the profile's transfer) may wait behind a busy isolate's tasks */
const COMMAND_TIMEOUT_MS = 60_000

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length)
  const src = url.lastIndexOf('/src/')
  if (src >= 0) return url.slice(src + 1)
  const scripts = url.lastIndexOf('/scripts/')
  if (scripts >= 0) return url.slice(scripts + 1)
  return url === '' ? '(native)' : url.replace(/^node:/, 'node:')
}

const frameName = (f: ProfileNode['callFrame']): string => `${f.functionName === '' ? '(anonymous)' : f.functionName} ${shortUrl(f.url)}:${f.lineNumber + 1}`
const isProjectSrc = (url: string): boolean => url.includes('/src/') && !url.includes('node_modules')

/** Adds a profile's self sizes to the tally under both names of each site. */
function addProfile(tally: Tally, mode: Mode, head: ProfileNode): void {
  const walk = (node: ProfileNode, nearestSrc: string): void => {
    const here = isProjectSrc(node.callFrame.url) ? frameName(node.callFrame) : nearestSrc
    if (node.selfSize > 0) {
      const leaf = frameName(node.callFrame)
      tally.byLeaf[mode].set(leaf, (tally.byLeaf[mode].get(leaf) ?? 0) + node.selfSize)
      tally.bySrc[mode].set(here, (tally.bySrc[mode].get(here) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, here)
  }
  walk(head, '(outside src/)')
}

const newTally = (): Tally => ({ seconds: { major: 0, live: 0 }, byLeaf: { major: new Map(), live: new Map() }, bySrc: { major: new Map(), live: new Map() } })

/** The protocol commands of one isolate: the main target's own, or a worker's through it. */
type Send = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>

async function sampleWindow(send: Send, mode: Mode, tally: Tally): Promise<void> {
  await send('HeapProfiler.startSampling', { samplingInterval: INTERVAL_BYTES, includeObjectsCollectedByMajorGC: mode === 'major', includeObjectsCollectedByMinorGC: false })
  const started = Date.now()
  await sleep(WINDOW_S * 1000)
  const result = await send('HeapProfiler.stopSampling')
  tally.seconds[mode] += (Date.now() - started) / 1000
  addProfile(tally, mode, (result.profile as { head: ProfileNode }).head)
}

function report(name: string, tally: Tally): void {
  const perMin = (bytes: number, mode: Mode): number => (bytes / Math.max(tally.seconds[mode], 1e-9)) * 60
  const total = (mode: Mode): number => [...tally.byLeaf[mode].values()].reduce((a, b) => a + b, 0)
  const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(2)
  console.log(`\n${name}: windows major ${tally.seconds.major.toFixed(0)} s, live ${tally.seconds.live.toFixed(0)} s; sampled MB/min: major ${mb(perMin(total('major'), 'major'))}, live ${mb(perMin(total('live'), 'live'))}, died in mark-compacts ${mb(perMin(total('major'), 'major') - perMin(total('live'), 'live'))}`)
  for (const [label, by] of [['allocating function', tally.byLeaf], ['nearest src/ frame', tally.bySrc]] as const) {
    const keys = new Set([...by.major.keys(), ...by.live.keys()])
    const rows = [...keys]
      .map((key) => ({ key, died: perMin(by.major.get(key) ?? 0, 'major') - perMin(by.live.get(key) ?? 0, 'live'), live: perMin(by.live.get(key) ?? 0, 'live') }))
      .sort((a, b) => b.died - a.died)
      .slice(0, TOP)
    console.log(`  by ${label}, KB/min died in mark-compacts (and kept live):`)
    for (const r of rows) console.log(`    ${(r.died / 1024).toFixed(0).padStart(7)} (${(r.live / 1024).toFixed(0).padStart(6)})  ${r.key}`)
  }
}

const url = await findInspector(logFile)
const foundAt = Date.now()
console.log(`[probe] inspector ${url}`)
const cdp = await Cdp.open(url)
const workers = await cdp.attachWorkers((line) => console.log(`[probe] ${line}`))
await cdp.send('HeapProfiler.enable')
const wait = foundAt + START_S * 1000 - Date.now()
if (wait > 0) await sleep(wait)

const targets: Array<{ name: string; send: Send; tally: Tally }> = [{ name: 'main isolate', send: (m, p = {}) => cdp.send(m, p), tally: newTally() }]
for (const w of workers.values()) {
  const worker: WorkerTarget = w
  const send: Send = (m, p = {}) => cdp.sendToWorker(worker, m, p, COMMAND_TIMEOUT_MS)
  await send('HeapProfiler.enable')
  targets.push({ name: `worker ${worker.workerId}`, send, tally: newTally() })
}
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of ['major', 'live'] as const) {
    console.log(`[probe] round ${round + 1}, ${mode} window, ${new Date().toISOString()}`)
    const results = await Promise.allSettled(targets.map((t) => sampleWindow(t.send, mode, t.tally)))
    results.forEach((r, i) => {
      if (r.status === 'rejected') console.log(`[probe] ${targets[i]!.name}: ${String(r.reason)}`)
    })
  }
}
for (const t of targets) report(t.name, t.tally)
cdp.close()
