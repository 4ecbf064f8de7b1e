/**
 * What the dispatcher costs the main thread per submission (issues 14 and 10, sixteenth session),
 * without HTTP and without the acknowledgement's JSON-RPC part: the service as `npm start` opens it
 * (startNode in this process, PROBE_WORKERS workers, default 2, the embedded devnet and its builder,
 * a LevelDB outbox with fsync), its relay a recording relay in a child process (so its HTTP server
 * is not counted here), and bench:submit's load (scripts/lib/submit-load.ts) handed to
 * `dispatcher.accept` as the RPC hands it, PROBE_RATE a second (default 100) for PROBE_SECONDS
 * (default 8). Then the next PROBE_HEADS heads (default 2, LOCAL_BUILDER_BLOCK_TIME_MS 6000 unless
 * set) with nothing new: every open submission re-planned and re-sent at each.
 * Printed, from /proc (CPU, not wall time: the machine is shared): the main thread's CPU ms per
 * submission over the feeding window (accept's persist and the dispatcher's first simulation,
 * sends, plans and lifecycle writes), per open submission per head over the heads window, and the
 * pool's workers' and V8's platform threads' beside it; the dispatcher's simulations, plans and the
 * relay's bundles in each window; the main thread's GC pauses (count, ms, over 10 ms).
 * `node --cpu-prof --cpu-prof-dir=<dir> --import tsx scripts/probe/dispatch-main-cost.ts` profiles it
 * (the main thread's profile is the one whose name holds the lowest thread number).
 * Last line: one JSON object.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { startNode } from '../../src/node/start.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { threadCpuPer } from '../../test/support/thread-cpu.ts'
import { startThreadCpuWindow } from '../lib/process-cpu.ts'
import { signSwaps } from '../lib/submit-load.ts'
import { recordingRelayProcess } from '../lib/recording-relay.ts'

const RATE = Number(process.env.PROBE_RATE ?? 100)
const SECONDS = Number(process.env.PROBE_SECONDS ?? 8)
const HEADS = Number(process.env.PROBE_HEADS ?? 2)
const WORKERS = Number(process.env.PROBE_WORKERS ?? 2)
const WARM = 20

interface GcWindow {
  pauses: number
  ms: number
  over10: number
}

function gcWatch(): { take(): GcWindow } {
  let window: GcWindow = { pauses: 0, ms: 0, over10: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.pauses++
      window.ms += entry.duration
      if (entry.duration > 10) window.over10++
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return {
    take: () => {
      const out = { ...window, ms: Math.round(window.ms) }
      window = { pauses: 0, ms: 0, over10: 0 }
      return out
    },
  }
}

const round = (n: number): number => Math.round(n * 1000) / 1000
/** the monotonic clock of --cpu-prof's timestamps (µs), so a profile's samples can be cut to the windows */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

async function main(): Promise<void> {
  const relay = await recordingRelayProcess()
  const dataDir = mkdtempSync(join(tmpdir(), 'probe-dispatch-'))
  const node = await startNode({
    ...process.env,
    PORT: '0',
    DATA_DIR: dataDir,
    RELAYS: JSON.stringify([{ name: 'recorder', url: relay.url }]),
    LOCAL_BUILDER_PORT: '0',
    LOCAL_BUILDER_BLOCK_TIME_MS: process.env.LOCAL_BUILDER_BLOCK_TIME_MS ?? '6000',
    MAX_PENDING_SUBMISSIONS: String(RATE * SECONDS + WARM + 1000),
    WORKERS: String(WORKERS),
    WORKER_NICE: process.env.WORKER_NICE ?? '0',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
  })
  const gc = gcWatch()
  try {
    const { dispatcher, store } = node.submission
    // the lifecycle writes the dispatcher asks for (each one an append of one or more events)
    const writes = { appends: 0, events: 0 }
    const append = store.append.bind(store)
    store.append = (id, events, options) => {
      writes.appends++
      writes.events += events.length
      return append(id, events, options)
    }
    // the state reads the workers sent to this thread (messages and reads), and those their L1 answered
    const pool = node.domain.workers
    let reads0 = pool?.stats()
    const takeReads = (): { messages: number; reads: number; l1_hits: number } | undefined => {
      const now = pool?.stats()
      if (now === undefined || reads0 === undefined) return undefined
      const out = { messages: now.remoteBatches - reads0.remoteBatches, reads: now.remoteReads - reads0.remoteReads, l1_hits: now.l1Hits - reads0.l1Hits }
      reads0 = now
      return out
    }
    const takeWrites = (): { appends: number; events: number } => {
      const out = { ...writes }
      writes.appends = 0
      writes.events = 0
      return out
    }
    const decode = node.submission.app.decode
    const raws = await signSwaps(WARM + RATE * SECONDS, 0)
    const accept = async (raw: (typeof raws)[number]): Promise<void> => {
      // as the RPC hands it over (src/server/rpc/submission-methods.ts): decoded there, the tip cap passed
      const tx = decodeSignedTransaction(raw, { ...decode, remember: false })
      await dispatcher.accept({ kind: 'private-tx', partnerId: 'probe', rawTx: tx.rawHex }, { tipCap: tx.gasTipCap })
    }
    for (const raw of raws.slice(0, WARM)) await accept(raw)
    await dispatcher.whenIdle()
    const heads: number[] = []
    const unsubscribe = node.domain.chain.onNewHead(() => heads.push(performance.now()))
    /** what the dispatcher did and what it cost over one window, `units` being what the CPU is divided by */
    const startWindow = async () => {
      const stats = dispatcher.stats()
      const counts = await relay.counts()
      gc.take()
      takeWrites()
      takeReads()
      const cpu = startThreadCpuWindow(process.pid, WORKERS)
      const fromUs = monotonicUs()
      return {
        stop: async (units: number) => {
          const used = cpu.stop()
          const toUs = monotonicUs()
          const after = dispatcher.stats()
          const counted = await relay.counts()
          const writes = takeWrites()
          return {
            simulations: after.simulations - stats.simulations,
            plans: after.plans - stats.plans,
            relay_bundles: counted.received - counts.received,
            with_backrun: counted.withBackrun - counts.withBackrun,
            lifecycle_appends: writes.appends,
            lifecycle_events: writes.events,
            state_reads: takeReads(),
            cpu_ms: threadCpuPer(used, units),
            gc: gc.take(),
            monotonic_us: [fromUs, toUs],
          }
        },
      }
    }
    const count = RATE * SECONDS
    const feedStats = dispatcher.stats()
    const feedWindow = await startWindow()
    const t0 = performance.now()
    const pending: Promise<void>[] = []
    for (let i = 0; i < count; i++) {
      const due = t0 + (i * 1000) / RATE
      const wait = due - performance.now()
      if (wait > 1) await new Promise((r) => setTimeout(r, wait))
      pending.push(accept(raws[WARM + i]))
    }
    await Promise.all(pending)
    // the feeding window ends once the last submission's first simulation and send are done, or at 5 s more
    const settleUntil = performance.now() + 5_000
    while (dispatcher.stats().simulations - feedStats.simulations < count && performance.now() < settleUntil) await new Promise((r) => setTimeout(r, 50))
    const feed = { submissions: count, wall_s: round((performance.now() - t0) / 1000), heads: heads.length, ...(await feedWindow.stop(count)) }
    // the heads window: from the next head to the HEADS-th after it, plus 1 s of its passes' tail
    const firstHead = heads.length
    while (heads.length === firstHead) await new Promise((r) => setTimeout(r, 20))
    const open = dispatcher.stats().active
    const headWindow = await startWindow()
    while (heads.length < firstHead + HEADS) await new Promise((r) => setTimeout(r, 20))
    await new Promise((r) => setTimeout(r, 1000))
    // CPU per open submission per head
    const headPasses = { heads: HEADS, open, ...(await headWindow.stop(open * HEADS)) }
    unsubscribe()
    const out = { name: 'probe:dispatch-main-cost', rate_per_s: RATE, seconds: SECONDS, workers: WORKERS, feed, heads: headPasses }
    const done = (w: typeof feed | typeof headPasses): string =>
      `main thread ${w.cpu_ms.main} CPU ms (workers ${w.cpu_ms.workers.join(' + ')}), ${w.simulations} simulations, ${w.plans} plans, ${w.relay_bundles} bundles, ` +
      `${w.lifecycle_appends} lifecycle appends (${w.lifecycle_events} events); GC ${w.gc.pauses} pauses ${w.gc.ms} ms`
    console.log(`feed: ${count} at ${RATE}/s, per submission ${done(feed)}`)
    console.log(`heads: ${HEADS} with ${open} open, per open submission per head ${done(headPasses)}`)
    console.log(JSON.stringify(out))
  } finally {
    await node.close()
    relay.stop()
  }
}

await main()
process.exit(0)
