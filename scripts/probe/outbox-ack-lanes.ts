/**
 * npx tsx scripts/probe/outbox-ack-lanes.ts
 *
 * What the LevelDB outbox (src/submission/outbox-store.ts) makes an acknowledgement wait for when
 * the dispatcher's lifecycle writes share it, without the service around it (issue 13): new
 * submissions persisted at OUTBOX_LANES_RATE a second (default 200, bench:submit's open loop) for
 * OUTBOX_LANES_SECONDS (default 10), while the open submissions' lifecycle writes arrive as a
 * head's burst does: every OUTBOX_LANES_HEAD_MS (default 1,000) each open submission appends a
 * `relay-sending` event and, once that is durable, a `relay-result` (at most
 * OUTBOX_LANES_OPEN_MAX, default 2,000, per burst, the oldest first).
 *
 * Printed: the persists' latency (p50 / p99 / max, enqueue to resolution: the duplicate check,
 * the batches before its own, its fsynced batch), and per LevelDB batch the operations it wrote,
 * how many of them were lifecycle events in the batches that carried a new submission, and how
 * long each batch took from its hand-over to LevelDB. The disk is the machine's; on a shared one
 * alternate runs of two commits' copies (the probe copied into each) to compare them.
 * Last line: one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID, randomBytes } from 'node:crypto'
import { ClassicLevel } from 'classic-level'

import { OutboxStore } from '../../src/submission/outbox-store.ts'
import type { SubmissionId } from '../../src/submission/types.ts'
import { summarize } from '../lib/stats.ts'

const RATE = Number(process.env.OUTBOX_LANES_RATE ?? 200)
const SECONDS = Number(process.env.OUTBOX_LANES_SECONDS ?? 10)
const HEAD_MS = Number(process.env.OUTBOX_LANES_HEAD_MS ?? 1_000)
const OPEN_MAX = Number(process.env.OUTBOX_LANES_OPEN_MAX ?? 2_000)

interface BatchSeen {
  ops: number
  records: number
  events: number
  ms: number
}

const batches: BatchSeen[] = []
const level = ClassicLevel.prototype as unknown as { batch(ops: Array<{ key: string }>, options?: unknown): Promise<void> }
const batch = level.batch
level.batch = function (this: unknown, ...args: unknown[]) {
  const ops = args[0] as Array<{ key: string }>
  const seen: BatchSeen = { ops: ops.length, records: ops.filter((o) => o.key.startsWith('s!')).length, events: ops.filter((o) => o.key.startsWith('e!')).length, ms: 0 }
  const start = performance.now()
  const done = (batch as (...a: unknown[]) => Promise<void>).apply(this, args)
  done.then(() => {
    seen.ms = performance.now() - start
    batches.push(seen)
  }, () => undefined)
  return done
}

const dir = mkdtempSync(join(tmpdir(), 'outbox-ack-lanes-'))
const store = new OutboxStore(join(dir, 'db'), { maxOpen: 1_000_000 })
await store.open()
const open: SubmissionId[] = []
const latencies: number[] = []
let lifecycleEvents = 0
let bursts = 0

const rawTx = (): `0x${string}` => `0x${randomBytes(350).toString('hex')}`

async function burst(): Promise<void> {
  bursts++
  const ids = open.slice(0, OPEN_MAX)
  await Promise.all(
    ids.map(async (id, i) => {
      const attemptId = randomUUID()
      await store.append(id, [{ type: 'relay-sending', at: Date.now(), relay: 'recorder', block: BigInt(bursts), attemptId, part: 'user', bundleHash: `0x${i.toString(16).padStart(64, '0')}` }])
      await store.append(id, [{ type: 'relay-result', at: Date.now(), relay: 'recorder', block: BigInt(bursts), attemptId, part: 'user', ok: true, attempts: 1 }])
      lifecycleEvents += 2
    }),
  )
}

const start = performance.now()
let bursting: Promise<void> | undefined
const heads = setInterval(() => {
  bursting ??= burst().finally(() => (bursting = undefined))
}, HEAD_MS)
const persists: Array<Promise<void>> = []
for (let i = 0; i < RATE * SECONDS; i++) {
  const wait = start + (i * 1000) / RATE - performance.now()
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  const t0 = performance.now()
  persists.push(
    store.persist({ kind: 'private-tx', partnerId: 'probe', rawTx: rawTx() }).then((r) => {
      latencies.push(performance.now() - t0)
      open.push(r.record.id)
    }),
  )
}
await Promise.all(persists)
clearInterval(heads)
await bursting
await store.close()
rmSync(dir, { recursive: true, force: true })

const ackBatches = batches.filter((b) => b.records > 0)
const lifecycleBatches = batches.filter((b) => b.records === 0)
const s = summarize(latencies)
const batchMs = (set: BatchSeen[]) => summarize(set.map((b) => b.ms))
const round = (x: number) => Math.round(x * 100) / 100
console.log(`persists: ${s.count} at ${RATE}/s, p50 ${s.p50.toFixed(2)} / p99 ${s.p99.toFixed(2)} / max ${s.max.toFixed(2)} ms; lifecycle events ${lifecycleEvents} in ${bursts} bursts`)
console.log(
  `batches with new submissions: ${ackBatches.length}, ${(ackBatches.reduce((a, b) => a + b.ops, 0) / Math.max(1, ackBatches.length)).toFixed(1)} ops each, of them lifecycle events ${(ackBatches.reduce((a, b) => a + b.events - b.records, 0) / Math.max(1, ackBatches.length)).toFixed(1)}; ` +
    `hand-over to done p50 ${batchMs(ackBatches).p50.toFixed(2)} / p99 ${batchMs(ackBatches).p99.toFixed(2)} ms`,
)
console.log(`lifecycle-only batches: ${lifecycleBatches.length}, ${(lifecycleBatches.reduce((a, b) => a + b.ops, 0) / Math.max(1, lifecycleBatches.length)).toFixed(1)} ops each; hand-over to done p50 ${batchMs(lifecycleBatches).p50.toFixed(2)} / p99 ${batchMs(lifecycleBatches).p99.toFixed(2)} ms`)
console.log(
  JSON.stringify({
    probe: 'outbox-ack-lanes',
    rate_per_s: RATE,
    seconds: SECONDS,
    head_ms: HEAD_MS,
    persist_p50_ms: round(s.p50),
    persist_p99_ms: round(s.p99),
    persist_max_ms: round(s.max),
    lifecycle_events: lifecycleEvents,
    bursts,
    ack_batches: ackBatches.length,
    ack_batch_ops: round(ackBatches.reduce((a, b) => a + b.ops, 0) / Math.max(1, ackBatches.length)),
    ack_batch_lifecycle_events: round(ackBatches.reduce((a, b) => a + b.events - b.records, 0) / Math.max(1, ackBatches.length)),
    ack_batch_p99_ms: round(batchMs(ackBatches).p99),
    lifecycle_batches: lifecycleBatches.length,
  }),
)
