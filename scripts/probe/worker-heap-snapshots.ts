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
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Cdp, findInspector, sleep, type WorkerTarget } from '../lib/inspector-client.ts'

const [logFile, outDir, ...times] = process.argv.slice(2)
if (logFile === undefined || outDir === undefined || times.length === 0) {
  console.error('usage: worker-heap-snapshots.ts <service stderr log> <out dir> <seconds> [seconds ...]')
  process.exit(2)
}
const atSeconds = times.map(Number)
if (atSeconds.some((t) => !Number.isFinite(t) || t < 0)) throw new Error(`times must be seconds >= 0, got ${times.join(' ')}`)
mkdirSync(outDir, { recursive: true })

/** how long one worker's snapshot may take before the probe gives up on it */
const SNAPSHOT_TIMEOUT_MS = 120_000

/** One worker's heap snapshot, through the main target's session: its chunks joined. */
async function snapshotWorker(cdp: Cdp, worker: WorkerTarget): Promise<string> {
  const chunks: string[] = []
  await cdp.sendToWorker(worker, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false }, SNAPSHOT_TIMEOUT_MS, (m) => {
    if (m.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(String(m.params?.chunk))
  })
  return chunks.join('')
}

const url = await findInspector(logFile)
const foundAt = Date.now()
console.log(`[probe] inspector ${url}`)
const cdp = await Cdp.open(url)
const workers = await cdp.attachWorkers((line) => console.log(`[probe] ${line}`))

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
