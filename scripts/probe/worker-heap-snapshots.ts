/**
 * Probe (issue 10, eleventh session): heap snapshots of a running service's worker threads, which
 * `--heapsnapshot-signal` does not write (it snapshots the main isolate only) and which
 * `Worker.getHeapSnapshot()` could only take from inside the service. This attaches to the
 * service's inspector from outside instead: the service runs with `--inspect=127.0.0.1:0`, this
 * probe finds the inspector's address in a log of the service's stderr, attaches to every worker
 * through the main target's NodeWorker domain (`NodeWorker.enable`, then
 * `NodeWorker.sendMessageToWorker` carrying `HeapProfiler.takeHeapSnapshot`) and writes each
 * worker's snapshot at each of the given times, as `<out>/worker-<workerId>-<t>s.heapsnapshot`.
 * Summarise two of them with scripts/lib/soak-heap-retained.ts.
 *
 * Run beside a soak (the soak's stderr carries the service's):
 *   SOAK_SERVICE_NODE_ARGS=--inspect=127.0.0.1:0 SOAK_SECONDS=600 WORKER_NICE=0 nice -n 10 npm run bench:soak 2>soak.err &
 *   node --experimental-websocket --import tsx scripts/probe/worker-heap-snapshots.ts soak.err /tmp/snaps 100 560
 * (times in seconds from when the probe finds the inspector, about the service's start). Node 20
 * has WebSocket behind --experimental-websocket only. Loopback only: the inspector listens on
 * 127.0.0.1. A snapshot stops that worker while it is written (21-30 s for a ~50 MB heap on a loaded
 * 2-core machine): a worker holding a task then looks hung to the pool's watchdog and is replaced
 * once its snapshot is out, so take the last snapshot at the end of what is measured.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

interface CdpMessage {
  id?: number
  method?: string
  params?: Record<string, unknown>
  result?: Record<string, unknown>
  error?: { message: string }
}

interface WorkerTarget {
  sessionId: string
  workerId: string
  title: string
}

const [logFile, outDir, ...times] = process.argv.slice(2)
if (logFile === undefined || outDir === undefined || times.length === 0) {
  console.error('usage: worker-heap-snapshots.ts <service stderr log> <out dir> <seconds> [seconds ...]')
  process.exit(2)
}
const atSeconds = times.map(Number)
if (atSeconds.some((t) => !Number.isFinite(t) || t < 0)) throw new Error(`times must be seconds >= 0, got ${times.join(' ')}`)
mkdirSync(outDir, { recursive: true })

const INSPECTOR_LINE = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/
/** how long the probe waits for the service's inspector to be announced */
const FIND_TIMEOUT_MS = 120_000
/** how long one worker's snapshot may take before the probe gives up on it */
const SNAPSHOT_TIMEOUT_MS = 120_000

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function findInspector(): Promise<string> {
  const deadline = Date.now() + FIND_TIMEOUT_MS
  while (Date.now() < deadline) {
    let text = ''
    try {
      text = readFileSync(logFile!, 'utf8')
    } catch {
      // not written yet
    }
    const match = INSPECTOR_LINE.exec(text)
    if (match !== null) return match[1]!
    await sleep(200)
  }
  throw new Error(`no "Debugger listening on ws://127.0.0.1:..." line in ${logFile} within ${FIND_TIMEOUT_MS} ms`)
}

class Cdp {
  private nextId = 1
  private readonly replies = new Map<number, (m: CdpMessage) => void>()
  private readonly listeners: Array<(m: CdpMessage) => void> = []

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as CdpMessage
      if (message.id !== undefined) {
        this.replies.get(message.id)?.(message)
        this.replies.delete(message.id)
        return
      }
      for (const listener of this.listeners) listener(message)
    })
  }

  static open(url: string): Promise<Cdp> {
    const socket = new WebSocket(url)
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(new Cdp(socket)), { once: true })
      socket.addEventListener('error', () => reject(new Error(`could not open ${url}`)), { once: true })
    })
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++
    this.socket.send(JSON.stringify({ id, method, params }))
    return new Promise((resolve, reject) => {
      this.replies.set(id, (m) => (m.error !== undefined ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result ?? {})))
    })
  }

  on(listener: (m: CdpMessage) => void): () => void {
    this.listeners.push(listener)
    return () => this.listeners.splice(this.listeners.indexOf(listener), 1)
  }

  close(): void {
    this.socket.close()
  }
}

/** One worker's heap snapshot, through the main target's session: its chunks joined. */
async function snapshotWorker(cdp: Cdp, worker: WorkerTarget): Promise<string> {
  const chunks: string[] = []
  const id = 1_000_000 + Math.floor(Math.random() * 1_000_000)
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      off()
      reject(new Error(`worker ${worker.workerId}: no snapshot within ${SNAPSHOT_TIMEOUT_MS} ms`))
    }, SNAPSHOT_TIMEOUT_MS)
    const off = cdp.on((m) => {
      if (m.method !== 'NodeWorker.receivedMessageFromWorker' || m.params?.sessionId !== worker.sessionId) return
      const inner = JSON.parse(String(m.params.message)) as CdpMessage
      if (inner.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(String(inner.params?.chunk))
      else if (inner.id === id) {
        clearTimeout(timer)
        off()
        if (inner.error !== undefined) reject(new Error(inner.error.message))
        else resolve()
      }
    })
  })
  await cdp.send('NodeWorker.sendMessageToWorker', { sessionId: worker.sessionId, message: JSON.stringify({ id, method: 'HeapProfiler.takeHeapSnapshot', params: { reportProgress: false } }) })
  await done
  return chunks.join('')
}

const url = await findInspector()
const foundAt = Date.now()
console.log(`[probe] inspector ${url}`)
const cdp = await Cdp.open(url)
const workers = new Map<string, WorkerTarget>()
cdp.on((m) => {
  if (m.method === 'NodeWorker.attachedToWorker') {
    const info = m.params?.workerInfo as { workerId: string; title: string }
    const target = { sessionId: String(m.params?.sessionId), workerId: info.workerId, title: info.title }
    workers.set(target.sessionId, target)
    console.log(`[probe] attached to worker ${target.workerId} (${target.title})`)
  } else if (m.method === 'NodeWorker.detachedFromWorker') {
    const gone = workers.get(String(m.params?.sessionId))
    workers.delete(String(m.params?.sessionId))
    if (gone !== undefined) console.log(`[probe] worker ${gone.workerId} detached`)
  }
})
await cdp.send('NodeWorker.enable', { waitForDebuggerOnStart: false })

for (const at of atSeconds) {
  const wait = foundAt + at * 1000 - Date.now()
  if (wait > 0) await sleep(wait)
  for (const worker of [...workers.values()]) {
    const started = Date.now()
    try {
      const text = await snapshotWorker(cdp, worker)
      const file = join(outDir, `worker-${worker.workerId}-${at}s.heapsnapshot`)
      writeFileSync(file, text)
      console.log(`[probe] t=${at}s worker ${worker.workerId}: ${(text.length / 1e6).toFixed(1)} MB of snapshot in ${Date.now() - started} ms -> ${file}`)
    } catch (err) {
      console.log(`[probe] t=${at}s worker ${worker.workerId}: ${String(err)}`)
    }
  }
}
cdp.close()
