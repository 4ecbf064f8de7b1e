/**
 * bench:submit's acknowledgement trace (BENCH_ACK_TRACE), the report: joins the load generator's
 * per-request times with what the service's probe (ack-trace-probe.ts) saw, by submission hash, and
 * prints where the slowest 1% of acknowledgements spent their time next to the median ones.
 *
 * An acknowledgement's phases, in order (every time epoch ms on the same machine's clock):
 *   lag       due -> sent          the generator's own send lag (its timers, its event loop)
 *   toServer  sent -> arrival      connection, the request's bytes, the service's event loop before it parsed them
 *   decode    arrival -> enqueue   routing, authentication, JSON-RPC, the decode, the dispatcher's admission
 *   waitGroup enqueue -> its batch the group in flight before it (its fsync) and its own duplicate check
 *                                  (PostgreSQL: the inserts in flight before its own, then asked of the pool)
 *   pool      asked -> sent        PostgreSQL: waiting for a free connection (LevelDB: 0)
 *   fsync     its batch            LevelDB's synced write of its group; PostgreSQL its insert statement,
 *                                  one transaction, so its commit (synchronous, WAL flushed) included
 *   wake      fsync -> resolved    the main thread taking up the completion (its event loop)
 *   reply     resolved -> end()    the answer's serialization and write
 *   toClient  end() -> answered    the bytes back and the generator's event loop
 */
import { readFileSync } from 'node:fs'
import type { AckTrace } from './ack-trace-probe.ts'

export interface ClientSample {
  hash: string
  dueAt: number
  sentAt: number
  answeredAt: number
}

const PHASES = ['lag', 'toServer', 'decode', 'waitGroup', 'pool', 'fsync', 'wake', 'reply', 'toClient'] as const
type Phase = (typeof PHASES)[number]

interface Joined {
  latency: number
  phases: Record<Phase, number>
  groupOps: number
  groupAcks: number
  /** the group before its own was still being fsynced when it was enqueued */
  behindFsync: boolean
  gcMsDuring: number
  /** the service's main-thread stalls overlapping its life, ms in all and the longest */
  stallMsDuring: number
  longestStall: number
  /** of stallMsDuring, the share (by each stall's overlap) the main thread ran, and waited runnable for a core */
  stallRanMs: number
  stallWaitedMs: number
  outgoingDuring: number
  /** the dispatcher took a new head (its per-head work) within HEAD_BEFORE_MS before it was sent, or while it waited */
  headsDuring: number
}

/** a head this long before a request was sent still has its per-head work (re-plans, re-sends) running */
const HEAD_BEFORE_MS = 200

/** the stalls overlapping [from, to]: their overlapping ms in all and the longest overlap */
function stallsWithin(stalls: AckTrace['stalls'], from: number, to: number): Pick<Joined, 'stallMsDuring' | 'longestStall' | 'stallRanMs' | 'stallWaitedMs'> {
  let stallMsDuring = 0
  let longestStall = 0
  let stallRanMs = 0
  let stallWaitedMs = 0
  for (const s of stalls) {
    const overlap = Math.min(to, s.startAt + s.ms) - Math.max(from, s.startAt)
    if (overlap <= 0) continue
    stallMsDuring += overlap
    longestStall = Math.max(longestStall, overlap)
    // a stall's run and wait counted for the part of it that overlaps
    stallRanMs += ((s.ranMs ?? 0) * overlap) / s.ms
    stallWaitedMs += ((s.waitedMs ?? 0) * overlap) / s.ms
  }
  return { stallMsDuring, longestStall, stallRanMs, stallWaitedMs }
}

const avg = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length)

/** the report's lines; `samples` are the open loop's answered requests */
export function ackTraceReport(traceFile: string, samples: readonly ClientSample[]): string[] {
  const trace = JSON.parse(readFileSync(traceFile, 'utf8')) as AckTrace
  const arrivals = new Map<string, { arrivedAt: number; endAt: number }>()
  for (const r of trace.requests) if (r.hash !== undefined && r.endAt !== undefined) arrivals.set(r.hash, { arrivedAt: r.arrivedAt, endAt: r.endAt })
  const enqueues = new Map(trace.enqueues.map((e) => [e.key.slice(e.key.lastIndexOf(':') + 1), e]))
  const batchOf = new Map<string, number>()
  trace.batches.forEach((b, i) => b.records.forEach((k) => batchOf.set(k.slice(k.lastIndexOf(':') + 1), i)))
  const joined: Joined[] = []
  let unmatched = 0
  for (const s of samples) {
    const server = arrivals.get(s.hash)
    const enqueue = enqueues.get(s.hash)
    const b = batchOf.get(s.hash)
    const batch = b === undefined ? undefined : trace.batches[b]
    if (server === undefined || enqueue?.resolvedAt === undefined || batch?.doneAt === undefined) {
      unmatched++
      continue
    }
    const previous = b! > 0 ? trace.batches[b! - 1] : undefined
    const from = s.sentAt
    const to = s.answeredAt
    joined.push({
      latency: to - s.sentAt,
      phases: {
        lag: s.sentAt - s.dueAt,
        toServer: server.arrivedAt - s.sentAt,
        decode: enqueue.at - server.arrivedAt,
        waitGroup: batch.startAt - enqueue.at,
        pool: (batch.sentAt ?? batch.startAt) - batch.startAt,
        fsync: batch.doneAt - (batch.sentAt ?? batch.startAt),
        wake: enqueue.resolvedAt - batch.doneAt,
        reply: server.endAt - enqueue.resolvedAt,
        toClient: to - server.endAt,
      },
      groupOps: batch.ops,
      groupAcks: batch.records.length,
      behindFsync: previous?.doneAt !== undefined && previous.doneAt > enqueue.at,
      gcMsDuring: trace.gc.filter((g) => g.startAt < to && g.startAt + g.ms > from).reduce((a, g) => a + g.ms, 0),
      outgoingDuring: trace.outgoing.filter((t) => t >= from && t <= to).length,
      headsDuring: trace.heads.filter((h) => h.at >= from - HEAD_BEFORE_MS && h.at <= to).length,
      ...stallsWithin(trace.stalls, from, to),
    })
  }
  joined.sort((a, b) => a.latency - b.latency)
  const slowCount = Math.max(1, Math.ceil(joined.length / 100))
  const slow = joined.slice(joined.length - slowCount)
  const mid = joined.slice(Math.floor(joined.length * 0.45), Math.ceil(joined.length * 0.55))
  const row = (label: string, set: readonly Joined[]) =>
    `${label} (${set.length}): latency ${avg(set.map((j) => j.latency)).toFixed(2)} ms = ` +
    PHASES.map((p) => `${p} ${avg(set.map((j) => j.phases[p])).toFixed(2)}`).join(' + ') +
    `; group ${avg(set.map((j) => j.groupOps)).toFixed(1)} ops (${avg(set.map((j) => j.groupAcks)).toFixed(1)} acks), enqueued while the previous group was fsyncing ${set.filter((j) => j.behindFsync).length}/${set.length}, ` +
    `GC overlapping ${avg(set.map((j) => j.gcMsDuring)).toFixed(2)} ms, main-thread stalls overlapping ${avg(set.map((j) => j.stallMsDuring)).toFixed(2)} ms (longest ${avg(set.map((j) => j.longestStall)).toFixed(2)}; ` +
    `the thread ran ${avg(set.map((j) => j.stallRanMs)).toFixed(2)} of them, waited runnable for a core ${avg(set.map((j) => j.stallWaitedMs)).toFixed(2)}), ` +
    `relay/outgoing requests meanwhile ${avg(set.map((j) => j.outgoingDuring)).toFixed(2)}, ` +
    `a head within ${HEAD_BEFORE_MS} ms before or during ${set.filter((j) => j.headsDuring > 0).length}/${set.length}`
  const fsyncs = trace.batches.filter((b) => b.doneAt !== undefined).map((b) => b.doneAt! - (b.sentAt ?? b.startAt)).sort((a, b) => a - b)
  const q = (xs: readonly number[], p: number) => (xs.length === 0 ? 0 : xs[Math.min(xs.length - 1, Math.floor(xs.length * p))])
  const lines = [
    `ack trace: main-thread stalls over 5 ms in the service's life: ${trace.stalls.length}, ${trace.stalls.reduce((a, x) => a + x.ms, 0).toFixed(0)} ms in all; ` +
      `the thread ran ${trace.stalls.reduce((a, x) => a + (x.ranMs ?? 0), 0).toFixed(0)} ms of them, waited runnable for a core ${trace.stalls.reduce((a, x) => a + (x.waitedMs ?? 0), 0).toFixed(0)} ms`,
    `ack trace: ${joined.length} acknowledgements joined (${unmatched} not), ${trace.batches.length} store writes (LevelDB batches or PostgreSQL inserts) in the service's life: fsync p50 ${q(fsyncs, 0.5).toFixed(2)} / p99 ${q(fsyncs, 0.99).toFixed(2)} / max ${q(fsyncs, 1).toFixed(2)} ms`,
    `ack trace: ${row('median 10%', mid)}`,
    `ack trace: ${row('slowest 1%', slow)}`,
  ]
  for (const j of slow) lines.push(`ack trace:   ${j.latency.toFixed(1)} ms: ${PHASES.map((p) => `${p} ${j.phases[p].toFixed(1)}`).join(', ')}; group ${j.groupOps} ops/${j.groupAcks} acks${j.behindFsync ? ', behind an fsync' : ''}; GC ${j.gcMsDuring.toFixed(1)} ms; stalls ${j.stallMsDuring.toFixed(1)} ms (longest ${j.longestStall.toFixed(1)}; ran ${j.stallRanMs.toFixed(1)}, waited for a core ${j.stallWaitedMs.toFixed(1)}); outgoing ${j.outgoingDuring}${j.headsDuring > 0 ? '; a head' : ''}`)
  return lines
}
