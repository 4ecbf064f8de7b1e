/**
 * The submission store in PostgreSQL (`DATABASE_URL`): one database shared by any number of
 * service processes, on one machine or several. Schema and migrations: postgres-migrations.ts.
 *
 * Durability: every connection runs with `synchronous_commit = on` (postgres-connection.ts) and
 * open() refuses a server with `fsync` off, so `persist` resolves only after the transaction that
 * stores the submission has committed to disk. Each write is one statement, hence one transaction;
 * the server's own group commit shares WAL flushes between concurrent writers, and new submissions
 * issued together share one insert statement (`inserts`, token-groups.ts).
 *
 * De-duplication: the submission's id (`<kind>:<hash>`) is the primary key and the insert is
 * `ON CONFLICT (id) DO NOTHING`: of two processes inserting the same submission at the same moment
 * one inserts, the other waits for it on the key and then finds the row. A retried write (its
 * connection failed, so whether it committed is unknown) is recognized by its token: a persist by
 * `persist_token`, an append by `append_token`; nothing is written twice.
 *
 * Leases: `lease_owner` / `lease_expires_at` on the open row, claimed with
 * `SELECT … FOR UPDATE SKIP LOCKED` so concurrent claims never take the same row, and expiring on
 * the database's clock (the one clock every process shares). A row's own expiry is its first grant
 * (as stored or claimed); after it the row stays its owner's while the owner's heartbeat
 * (`lease_heartbeats`, one row per owner) is live, so a renewal writes one row, not every held one. An append that names its owner
 * writes only if the row's `lease_owner` is that owner, checked in the same statement that writes
 * (the row locked), so a process whose lease was taken over cannot write another line.
 *
 * Lifecycle commits (`lifecycleCommit`, default 'async'): the grouped non-terminal appends (the
 * dispatcher's lifecycle rows: relay sends and results, simulations, plans, most of the database's
 * writes) run on a connection of their own with `synchronous_commit = off`, so their commits do not
 * flush the WAL and acknowledgements do not queue behind those flushes (issue 14: sampled, an
 * acknowledgement's insert spent nearly all its time waiting for WAL flushes, a lifecycle commit's
 * among them; scripts/probe/pg-store-cost.ts PG_STORE_WAIT_SAMPLE_MS). Such a commit is visible to
 * every process at once, and survives any crash of a service process (a replica killed, a lease
 * taken over): what the guarantees of the lifecycle rest on. Only a crash of PostgreSQL itself can
 * lose the newest of them (at most 3 x `wal_writer_delay`, 600 ms by default, before the WAL writer
 * flushes them; any later synchronous commit, an acknowledgement or a terminal event, flushes them
 * too): the WAL is replayed in order, so each submission keeps a prefix of its lifecycle, and a
 * send whose `relay-sending` was lost could be sent again for that block only if the process that
 * sent it also restarted (or lost its lease) before the chain moved on (the same bundle for the same
 * block, which relays treat as one). Terminal events, re-openings, acknowledgements, claims and
 * renewals commit synchronously. 'sync': every write commits synchronously (the previous behaviour).
 *
 * Failures: a statement that fails (server unreachable, connection lost, timeout) is retried with
 * backoff (`writeAttempts`), then rejects with PersistenceError: nothing is acknowledged.
 *
 * stats() is synchronous (metrics read it at scrape time): the counts are read from the database
 * at open, after pruning and at most every `statsMaxAgeMs` when asked, and this process's own
 * writes adjust them in between. With several processes they are approximate between two reads,
 * and so is `maxOpen`, which is checked against them.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'

import type { Hex } from '../../chain/types.ts'
import { errorText } from '../../primitives/error-text.ts'
import { nonNegativeInt, positiveInt } from '../../primitives/numbers.ts'
import { encodeJson } from '../codec.ts'
import { LeaseLostError, OutboxFullError, PersistenceError } from '../errors.ts'
import { SUBMISSION_KINDS, isTerminalEvent, type LifecycleEvent, type NewSubmission, type ReorgEvent, type StoredSubmission, type SubmissionId, type SubmissionRecord } from '../types.ts'
import { describeDatabaseUrl } from './database-url.ts'
import { createPostgresPool } from './postgres-connection.ts'
import { applyMigrations } from './postgres-migrations.ts'
import { resolveStoreSettings, withRetry, type StoreSettings } from './store-settings.ts'
import { buildRecord } from './submission-record.ts'
import { TokenGroups } from './token-groups.ts'
import {
  STORE_DEFAULTS,
  requireLeaseOwner,
  type AppendOptions,
  type LeaseGrant,
  type OutboxStats,
  type PersistOptions,
  type PersistResult,
  type SubmissionLeases,
  type SubmissionStore,
  type SubmissionStoreOptions,
} from './submission-store.ts'

export interface PostgresStoreOptions extends SubmissionStoreOptions {
  /** Errors of idle connections (the server went away); they are also seen by the next statement. Default: ignored. */
  onConnectionError?: (error: Error) => void
  /** Connections at most. Default 10. */
  poolSize?: number
  /** New submissions in one insert statement (one transaction, one WAL flush) at most. Default 256. */
  maxInsertGroup?: number
  /** Insert statements of new submissions running at once, fewer than poolSize. Default 2. */
  insertsInFlight?: number
  /** Connecting gives up after this, ms. Default 5 000. */
  connectTimeoutMs?: number
  /** A statement is cancelled after this, ms. Default 10 000. */
  statementTimeoutMs?: number
  /** An idle connection is closed after this, ms. Default 30 000. */
  idleTimeoutMs?: number
  /** ready() answers false when the database has not answered within this, ms. Default 2 000. */
  readyTimeoutMs?: number
  /** stats() re-counts when its counts are older than this, ms. Default 5 000. */
  statsMaxAgeMs?: number
  /**
   * How the grouped lifecycle appends commit (see the module comment): 'async' (default) on a
   * connection of their own with `synchronous_commit = off`; 'sync' on the pool, flushed.
   */
  lifecycleCommit?: LifecycleCommit
}

/** How the grouped lifecycle appends commit: see PostgresStoreOptions.lifecycleCommit. */
export type LifecycleCommit = 'sync' | 'async'

export const LIFECYCLE_COMMITS: readonly LifecycleCommit[] = ['sync', 'async']

const DEFAULTS = {
  poolSize: 10,
  maxInsertGroup: 256,
  insertsInFlight: 2,
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  readyTimeoutMs: 2_000,
  statsMaxAgeMs: 5_000,
  lifecycleCommit: 'async',
} as const satisfies Partial<Record<keyof PostgresStoreOptions, unknown>>

/** A row with a submission and its events (events aggregated in seq order, JSON decoded by the pool). */
interface SubmissionRow {
  record: SubmissionRecord
  events: LifecycleEvent[]
}

/**
 * A row of `submission_events` holds one append (migration 6): its body is the JSON array of the
 * append's events, or one event object (rows written before migration 6, and the `received` event
 * stored with the submission). Read back flat, in `seq` order and each append's own order.
 */
const SELECT_SUBMISSION = `
  SELECT s.record,
         (SELECT coalesce(json_agg(x.body ORDER BY e.seq, x.n), '[]'::json)
          FROM submission_events e
          CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(e.body) = 'array' THEN e.body ELSE jsonb_build_array(e.body) END) WITH ORDINALITY AS x(body, n)
          WHERE e.submission_id = s.id) AS events
  FROM submissions s`

const SQL = {
  /**
   * Many persists in one statement, one transaction, one commit (see `inserts`): one element
   * per persist in each of $1 ids, $2 kinds, $3 hashes, $4 partner ids, $5 receivedAt, $6 records
   * (JSON text), $7 persist tokens, $8 lease owners (NULL: none), $9 'received' events (JSON
   * text); $10 the lease period, ms. Each row is inserted unless its id exists (ON CONFLICT DO
   * NOTHING), with its 'received' event and, with an owner, its lease; answers the tokens of the
   * rows it inserted. Rows go in id order: two replicas inserting overlapping groups take their key locks
   * in the same order, so neither waits for the other in a cycle (a deadlock); the same id twice
   * in one group, in the order persist() was called (the first caller's record is the one kept).
   */
  insertMany: `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::uuid[], $8::text[], $9::text[])
        WITH ORDINALITY AS i(id, kind, hash, partner_id, received_at, record, token, owner, received, n)
    ), inserted AS (
      INSERT INTO submissions (id, kind, hash, partner_id, received_at, record, persist_token, lease_owner, lease_expires_at)
      SELECT id, kind, hash, partner_id, received_at, record::jsonb, token, owner,
             CASE WHEN owner IS NULL THEN NULL ELSE clock_timestamp() + $10::double precision * interval '1 millisecond' END
      FROM input ORDER BY id, n
      ON CONFLICT (id) DO NOTHING
      RETURNING id, persist_token
    ), received AS (
      INSERT INTO submission_events (submission_id, append_token, ordinal, body)
      SELECT ins.id, ins.persist_token, 1, i.received::jsonb FROM inserted ins JOIN input i ON i.token = ins.persist_token
    )
    SELECT persist_token::text AS token FROM inserted`,
  existing: 'SELECT record, persist_token FROM submissions WHERE id = $1',
  /**
   * $1 id, $2 events (JSON array), $3 append token, $4 the lease owner the writer must be (NULL:
   * unchecked); the submission must be open. The row is share-locked, so a concurrent terminal
   * append or lease claim (FOR UPDATE) waits for this write, or this write sees its result.
   */
  append: `
    WITH target AS (
      SELECT id FROM submissions WHERE id = $1 AND finished_at IS NULL AND ($4::text IS NULL OR lease_owner = $4::text) FOR SHARE
    ), ${appendEventsFrom('target')}`,
  /** as append, and $5 the finished time: closes the submission and ends its lease in the same statement */
  appendTerminal: `
    WITH target AS (
      UPDATE submissions SET finished_at = $5, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = $1 AND finished_at IS NULL AND ($4::text IS NULL OR lease_owner = $4::text)
      RETURNING id
    ), ${appendEventsFrom('target')}`,
  /**
   * Many terminal appends in one statement (see `terminals`): $1 ids, $2 event arrays (JSON text),
   * $3 append tokens, $4 lease owners (NULL: unchecked), $5 finished times, one element per append;
   * $6 whether an earlier attempt of this statement ran (its answer lost). As `appendTerminal` for
   * each (the row closed and its lease ended only if it is open and the owner's); answers the tokens
   * whose events are stored (now or by an earlier attempt).
   */
  appendTerminalMany: `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::bigint[]) WITH ORDINALITY AS i(id, body, token, owner, finished_at, n)
    ), ${alreadyStored('$6')}, target AS (
      UPDATE submissions s SET finished_at = i.finished_at, lease_owner = NULL, lease_expires_at = NULL
      FROM input i
      WHERE s.id = i.id AND s.finished_at IS NULL AND (i.owner IS NULL OR s.lease_owner = i.owner) AND i.token NOT IN (SELECT token FROM already)
      RETURNING s.id, i.token, i.body, i.n
    ), ${groupedEventsInsert('target t')}`,
  /** as append, to a finished submission: open again (unleased) in the same statement */
  reopen: `
    WITH target AS (
      UPDATE submissions SET finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = $1 AND finished_at IS NOT NULL
      RETURNING id
    ), ${appendEventsFrom('target')}`,
  /**
   * Many non-terminal appends in one statement (see `appends`): $1 ids, $2 event arrays (JSON
   * text), $3 append tokens, $4 lease owners (NULL: unchecked), one element per append; $5 whether
   * an earlier attempt of this statement ran (its answer lost). As `append` for each; answers the
   * tokens whose events are stored (now or by an earlier attempt). A first attempt skips the
   * search for its tokens (one index probe per append): they are new random ids, nothing can hold
   * them yet.
   */
  appendMany: `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[]) WITH ORDINALITY AS i(id, body, token, owner, n)
    ), target AS (
      SELECT id, lease_owner FROM submissions WHERE id IN (SELECT id FROM input) AND finished_at IS NULL FOR SHARE
    ), ${alreadyStored('$5')}, accepted AS (
      SELECT i.* FROM input i JOIN target t ON t.id = i.id
      WHERE (i.owner IS NULL OR t.lease_owner = i.owner) AND i.token NOT IN (SELECT token FROM already)
    ), ${groupedEventsInsert('accepted a')}`,
  /** why an append wrote nothing: the row's state */
  appendRefused: 'SELECT finished_at IS NULL AS open, lease_owner FROM submissions WHERE id = $1',
  appended: 'SELECT EXISTS (SELECT 1 FROM submission_events WHERE submission_id = $1 AND append_token = $2) AS landed',
  get: `${SELECT_SUBMISSION} WHERE s.id = $1`,
  getForPartner: `${SELECT_SUBMISSION} WHERE s.id = $1 AND s.partner_id = $2`,
  findForPartner: `${SELECT_SUBMISSION} WHERE s.hash = $1 AND s.partner_id = $2`,
  listOpen: `${SELECT_SUBMISSION} WHERE s.finished_at IS NULL ORDER BY s.received_at, s.id`,
  /**
   * oldest finished first: those older than $1 (ms) or beyond the newest $2, at most $3, with their
   * events (no foreign key cascades since migration 5). A row re-opened meanwhile (a reorg) stays.
   */
  prune: `
    WITH finished AS (
      SELECT count(*) AS n FROM submissions WHERE finished_at IS NOT NULL
    ), candidates AS (
      SELECT id, finished_at, row_number() OVER (ORDER BY finished_at, id) AS rank
      FROM submissions WHERE finished_at IS NOT NULL
      ORDER BY finished_at, id
      LIMIT $3
    ), deleted AS (
      DELETE FROM submissions s USING candidates c, finished f
      WHERE s.id = c.id AND s.finished_at IS NOT NULL AND (c.finished_at < $1 OR c.rank <= f.n - $2)
      RETURNING s.id
    ), events AS (
      DELETE FROM submission_events e USING deleted d WHERE e.submission_id = d.id
    )
    SELECT id FROM deleted`,
  counts: `
    SELECT (SELECT count(*) FROM submissions WHERE finished_at IS NULL)::int AS open,
           (SELECT count(*) FROM submissions WHERE finished_at IS NOT NULL)::int AS finished`,
  /**
   * $1 owner, $2 limit, $3 lease ms. Claims open rows nobody holds: no owner, or an owner whose row
   * grant and heartbeat have both run out (a claimed row's own grant covers it until the owner's
   * next renewal beats its heartbeat; a claim is no heartbeat, as it renewed nothing before either).
   * Answers each claimed row with its previous owner's send horizon (NULL: none, or no previous
   * owner). Forgets heartbeats and send horizons dead for a hundred lease periods (their rows are
   * claimable either way, and the blocks of such a horizon are long built).
   */
  claim: `
    WITH pruned AS (
      DELETE FROM lease_heartbeats WHERE expires_at < clock_timestamp() - 100 * $3::double precision * interval '1 millisecond'
    ),
    pruned_horizons AS (
      DELETE FROM send_horizons WHERE marked_at < clock_timestamp() - 100 * $3::double precision * interval '1 millisecond'
    ),
    candidates AS (
      SELECT s.id, s.lease_owner AS previous FROM submissions s
      WHERE s.finished_at IS NULL AND (
        s.lease_owner IS NULL OR (
          s.lease_expires_at <= clock_timestamp()
          AND NOT EXISTS (SELECT 1 FROM lease_heartbeats h WHERE h.owner = s.lease_owner AND h.expires_at > clock_timestamp())
        )
      )
      ORDER BY s.received_at, s.id
      LIMIT $2
      FOR UPDATE OF s SKIP LOCKED
    ),
    claimed AS (
      UPDATE submissions s SET lease_owner = $1, lease_expires_at = clock_timestamp() + $3::double precision * interval '1 millisecond'
      FROM candidates c WHERE s.id = c.id
      RETURNING s.id, c.previous
    )
    SELECT c.id, h.block::text AS horizon FROM claimed c LEFT JOIN send_horizons h ON h.owner = c.previous`,
  /**
   * $1 owner, $2 block: the owner's send horizon, never lowered; only while the owner's heartbeat
   * is live (no claim can take its rows meanwhile, and a claim after it reads this block). Answers
   * whether it was marked.
   */
  markSendHorizon: `
    WITH live AS (
      SELECT 1 FROM lease_heartbeats WHERE owner = $1 AND expires_at > clock_timestamp()
    ), marked AS (
      INSERT INTO send_horizons (owner, block, marked_at) SELECT $1, $2, clock_timestamp() WHERE EXISTS (SELECT 1 FROM live)
      ON CONFLICT (owner) DO UPDATE SET block = GREATEST(send_horizons.block, EXCLUDED.block), marked_at = EXCLUDED.marked_at
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM marked) AS marked`,
  /**
   * $1 owner, $2 ids, $3 lease ms: one heartbeat row renews every lease of the owner (until
   * 2026-11-27 this updated every held row, 3,480 rows took 1.4 s and slowed the inserts beside it).
   * Answers which of `ids` are still this owner's (expired or not, as long as nobody took them
   * over) and still open. Rows of this owner's that it no longer names (it gave them up, e.g. a
   * failed release) and whose own grant ran out are let go, so a live heartbeat never holds them.
   */
  renew: `
    WITH beat AS (
      INSERT INTO lease_heartbeats (owner, expires_at) VALUES ($1, clock_timestamp() + $3::double precision * interval '1 millisecond')
      ON CONFLICT (owner) DO UPDATE SET expires_at = EXCLUDED.expires_at
    ),
    let_go AS (
      UPDATE submissions SET lease_owner = NULL, lease_expires_at = NULL
      WHERE lease_owner = $1 AND finished_at IS NULL AND lease_expires_at <= clock_timestamp() AND NOT (id = ANY($2::text[]))
    )
    SELECT id FROM submissions WHERE id = ANY($2::text[]) AND lease_owner = $1 AND finished_at IS NULL`,
  release: 'UPDATE submissions SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ANY($2::text[]) AND lease_owner = $1',
  settings: "SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync",
} as const

/**
 * The statements every acknowledgement, lifecycle write and head runs, as named (prepared)
 * statements: PostgreSQL parses, analyzes and plans each once per connection, then only binds and
 * executes it. pg sends an unnamed statement (the default) through the extended protocol's Parse at
 * every call, so the server parsed and planned these multi-CTE statements again for every group of
 * new submissions and every lifecycle append: per-statement CPU that grows with the statements per
 * answer, which doubles with two replicas (each groups only its own requests; issue 14, BENCHMARKS.md
 * h15-pg). The names are this module's: a connection prepares each at its first use (pg keeps
 * which it has parsed per connection, and a new connection, after a lost one, prepares again).
 *
 * Generic plans: after five runs PostgreSQL keeps a generic plan of each (plan_cache_mode auto;
 * pg_prepared_statements shows it); their parameters keep one meaning (an id, an owner or NULL), and
 * a plan changes what a statement costs, never what it does. Reverted once (session 15) because the
 * replicas' kill test failed with them; in session 16 the base commit failed that test the same way
 * on the loaded machine (a replica behind the chain: every send refused as "not in the future"),
 * and no error of these statements was found (BENCHMARKS.md h16-pg).
 *
 * Not `appendMany`: a prepared statement is planned generically after five runs (plan_cache_mode
 * auto), and its generic plan cost PostgreSQL 0.068-0.073 CPU ms per lifecycle row against
 * 0.024-0.027 planned per call (scripts/probe/pg-store-cost.ts, groups of hundreds): planned with
 * the values, `$5 = false` removes the token search and the arrays' lengths size the joins.
 */
const PREPARED = {
  insertMany: { name: 'submissions.insert-many', text: SQL.insertMany },
  append: { name: 'submissions.append', text: SQL.append },
  appendTerminal: { name: 'submissions.append-terminal', text: SQL.appendTerminal },
  markSendHorizon: { name: 'submissions.mark-send-horizon', text: SQL.markSendHorizon },
} as const satisfies Record<string, { name: string; text: string }>

/**
 * A grouped statement's tokens that an earlier attempt of it stored (its answer lost), from its
 * `input` (id, token): searched only when `retried` (a boolean parameter) says it is not the first.
 */
function alreadyStored(retried: string): string {
  return `already AS (
      SELECT DISTINCT e.append_token AS token FROM submission_events e JOIN input i ON e.submission_id = i.id AND e.append_token = i.token
      WHERE ${retried}::boolean
    )`
}

/**
 * A grouped statement's end: one row per append of `source` (`<cte> <alias>`, with id, token, body
 * and n, its place in the group) written in the group's order; answers the tokens stored now and
 * those `already` stored.
 */
function groupedEventsInsert(source: string): string {
  const a = source.split(' ')[1]
  return `inserted AS (
      INSERT INTO submission_events (submission_id, append_token, ordinal, body)
      SELECT ${a}.id, ${a}.token, 1, ${a}.body::jsonb
      FROM ${source}
      ORDER BY ${a}.n
      ON CONFLICT DO NOTHING
      RETURNING append_token
    )
    SELECT append_token::text AS token FROM inserted UNION SELECT token::text FROM already`
}

/** The events of one append: inserted once per append token, as one row (their JSON array), onto the row `target` yields. */
function appendEventsFrom(target: string): string {
  return `already AS (
      SELECT EXISTS (SELECT 1 FROM submission_events WHERE submission_id = $1 AND append_token = $3) AS landed
    ), inserted AS (
      INSERT INTO submission_events (submission_id, append_token, ordinal, body)
      SELECT ${target}.id, $3, 1, $2::jsonb
      FROM ${target}
      WHERE NOT (SELECT landed FROM already)
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT landed FROM already) AS landed`
}

export class PostgresSubmissionStore implements SubmissionStore {
  readonly description: string
  readonly leases: SubmissionLeases
  private readonly url: string
  private pool: pg.Pool | undefined
  /** the grouped appends' connection with lifecycleCommit 'async' (the pool itself with 'sync') */
  private lifecyclePool: pg.Pool | undefined
  private readonly lifecycleCommit: LifecycleCommit
  private readonly settings: StoreSettings
  private readonly onConnectionError: (error: Error) => void
  private readonly poolSize: number
  private readonly maxInsertGroup: number
  private readonly insertsInFlight: number
  private readonly connectTimeoutMs: number
  private readonly statementTimeoutMs: number
  private readonly idleTimeoutMs: number
  private readonly readyTimeoutMs: number
  private readonly statsMaxAgeMs: number

  private counts: OutboxStats = { open: 0, finished: 0 }
  private countedAt = 0
  /** bumped by every change this process makes to the counts; a re-count that overlapped one is not used */
  private countChanges = 0
  private counting: Promise<void> | undefined
  /** persist() calls between their capacity check and their write */
  private reserved = 0
  private pruning: Promise<number> | undefined
  /** statements in progress: close() waits for them */
  private readonly inFlight = new Set<Promise<unknown>>()
  /**
   * Group commit of non-terminal appends: the first runs at once; those issued while a statement
   * runs share the next one (at most APPEND_GROUP_MAX). A false answer (not open, or the lease is
   * another's): append() then runs the single statement with the same token, which stores nothing
   * twice and names the reason.
   */
  private readonly appends = new TokenGroups<QueuedAppend>(
    async (group) => {
      let attempts = 0
      const { rows } = await this.run('append', () =>
        this.requireLifecyclePool().query<{ token: string }>(SQL.appendMany, [group.map((a) => a.id), group.map((a) => a.body), group.map((a) => a.token), group.map((a) => a.owner), ++attempts > 1]),
      )
      return rows.map((r) => r.token)
    },
    { maxGroup: APPEND_GROUP_MAX, maxInFlight: 1 },
  )
  /**
   * Group commit of terminal appends (a head ends many submissions at once: their inclusions, their
   * expiries), synchronous on the pool like a lone one. Under the PostgreSQL replicas' probe with
   * submissions expiring (SUBMISSION_EXPIRY_BLOCKS=2), one statement per finished submission was the
   * largest statement kind per answer after a warm-up (1.18 per answer in two replicas, beside 0.60
   * inserts: BENCHMARKS.md, h22-replicas). A terminal alone runs the named single statement; those
   * issued while one runs share the next (at most APPEND_GROUP_MAX). A false answer: not stored
   * (not open, or the lease is another's), and append() names the reason.
   */
  private readonly terminals = new TokenGroups<QueuedTerminal>(
    async (group) => {
      if (group.length === 1) {
        const { id, body, token, owner, at } = group[0]
        return (await this.appendTerminal(id, body, token, owner, at)) ? [token] : []
      }
      let attempts = 0
      const { rows } = await this.run('append', (pool) =>
        pool.query<{ token: string }>(SQL.appendTerminalMany, [group.map((t) => t.id), group.map((t) => t.body), group.map((t) => t.token), group.map((t) => t.owner), group.map((t) => t.at), ++attempts > 1]),
      )
      return rows.map((r) => r.token)
    },
    { maxGroup: APPEND_GROUP_MAX, maxInFlight: 1 },
  )
  /**
   * Group commit of new submissions: up to `insertsInFlight` statements run at once, each taking
   * the persists queued when it starts (at most `maxInsertGroup`), so a persist never waits for
   * more than the statements already running, and under load many share one transaction and one
   * WAL flush. At 200 submissions/s most statements carry one row; in the closed loops of
   * bench:submit (16 at once) they carry several. A false answer: the id was there already (a
   * duplicate, or an earlier attempt of this persist whose answer was lost): persist() then reads
   * the stored row. A failed statement fails every persist of its group; nothing of it is stored.
   */
  private readonly inserts: TokenGroups<QueuedInsert>

  private insertGroup(): TokenGroups<QueuedInsert> {
    return new TokenGroups<QueuedInsert>(
      async (group) => {
        const { rows } = await this.run('persist', (pool) =>
          pool.query<{ token: string }>(PREPARED.insertMany, [
            group.map((i) => i.record.id),
            group.map((i) => i.record.kind),
            group.map((i) => i.record.hash),
            group.map((i) => i.record.partnerId),
            group.map((i) => i.record.receivedAt),
            group.map((i) => encodeJson(i.record)),
            group.map((i) => i.token),
            group.map((i) => i.owner),
            group.map((i) => encodeJson({ type: 'received', at: i.record.receivedAt })),
            this.settings.leaseMs,
          ]),
        )
        return rows.map((r) => r.token)
      },
      { maxGroup: this.maxInsertGroup, maxInFlight: this.insertsInFlight },
    )
  }

  /** @param url a postgres:// URL (DATABASE_URL); nothing is connected before open() */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    if (typeof url !== 'string' || url === '') throw new TypeError('PostgresSubmissionStore: url must be a non-empty postgres:// URL')
    const owner = 'PostgresSubmissionStore'
    this.url = url
    this.description = `postgres ${describeDatabaseUrl(url)}`
    this.settings = resolveStoreSettings(options, owner)
    this.onConnectionError = options.onConnectionError ?? (() => undefined)
    this.poolSize = positiveInt('poolSize', options.poolSize ?? DEFAULTS.poolSize, owner)
    this.maxInsertGroup = positiveInt('maxInsertGroup', options.maxInsertGroup ?? DEFAULTS.maxInsertGroup, owner)
    this.insertsInFlight = positiveInt('insertsInFlight', options.insertsInFlight ?? DEFAULTS.insertsInFlight, owner)
    if (this.insertsInFlight >= this.poolSize) {
      throw new RangeError(`${owner}: insertsInFlight must be less than poolSize (${this.poolSize}), got ${this.insertsInFlight}`)
    }
    this.inserts = this.insertGroup()
    this.connectTimeoutMs = positiveInt('connectTimeoutMs', options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs, owner)
    this.statementTimeoutMs = positiveInt('statementTimeoutMs', options.statementTimeoutMs ?? DEFAULTS.statementTimeoutMs, owner)
    this.idleTimeoutMs = positiveInt('idleTimeoutMs', options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs, owner)
    this.readyTimeoutMs = positiveInt('readyTimeoutMs', options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs, owner)
    this.statsMaxAgeMs = nonNegativeInt('statsMaxAgeMs', options.statsMaxAgeMs ?? DEFAULTS.statsMaxAgeMs, owner)
    this.lifecycleCommit = options.lifecycleCommit ?? DEFAULTS.lifecycleCommit
    if (!LIFECYCLE_COMMITS.includes(this.lifecycleCommit)) throw new RangeError(`${owner}: lifecycleCommit must be one of ${LIFECYCLE_COMMITS.join(', ')}, got ${String(this.lifecycleCommit)}`)
    this.leases = {
      leaseMs: this.settings.leaseMs,
      claim: (leaseOwner, limit) => this.claim(leaseOwner, limit),
      renew: (leaseOwner, ids) => this.renew(leaseOwner, ids),
      release: (leaseOwner, ids) => this.release(leaseOwner, ids),
      markSendHorizon: (leaseOwner, block) => this.markSendHorizon(leaseOwner, block),
    }
  }

  /**
   * Connect, check that commits are durable, apply the migrations and count the submissions.
   * @throws PersistenceError when the database cannot be reached, its `fsync` is off, or a
   *   migration fails (the schema is left as it was)
   */
  async open(): Promise<void> {
    if (this.pool !== undefined) return
    const pool = createPostgresPool(this.url, {
      poolSize: this.poolSize,
      connectTimeoutMs: this.connectTimeoutMs,
      statementTimeoutMs: this.statementTimeoutMs,
      idleTimeoutMs: this.idleTimeoutMs,
      onError: this.onConnectionError,
    })
    try {
      const client = await pool.connect()
      try {
        const { rows } = await client.query<{ synchronous_commit: string; fsync: string }>(SQL.settings)
        if (rows[0].synchronous_commit !== 'on') throw new Error(`synchronous_commit is ${rows[0].synchronous_commit}, not on`)
        if (rows[0].fsync !== 'on') throw new Error('the server runs with fsync off: a commit would not be durable')
        await applyMigrations(client)
      } finally {
        client.release()
      }
      // one connection: the grouped appends run one statement at a time (`appends`)
      this.lifecyclePool =
        this.lifecycleCommit === 'sync'
          ? pool
          : createPostgresPool(this.url, {
              poolSize: 1,
              connectTimeoutMs: this.connectTimeoutMs,
              statementTimeoutMs: this.statementTimeoutMs,
              idleTimeoutMs: this.idleTimeoutMs,
              onError: this.onConnectionError,
              synchronousCommit: false,
            })
      this.pool = pool
      await this.recount()
    } catch (cause) {
      this.pool = undefined
      await this.endLifecyclePool(pool).catch(() => undefined)
      await pool.end().catch(() => undefined)
      throw new PersistenceError(`cannot open the submission store (${this.description}): ${errorText(cause)}`, 'open', 0, { cause })
    }
  }

  /** Waits for statements in progress, then closes every connection. Later calls fail with PersistenceError. */
  async close(): Promise<void> {
    const pool = this.pool
    if (pool === undefined) return
    // grouped appends still queued start their statement as the one before them ends
    for (;;) {
      const running = [...this.inFlight, ...this.appends.inProgress, ...this.terminals.inProgress, ...this.inserts.inProgress]
      if (running.length === 0) break
      await Promise.allSettled(running)
    }
    this.pool = undefined
    await this.endLifecyclePool(pool)
    await pool.end()
  }

  private async endLifecyclePool(pool: pg.Pool): Promise<void> {
    const lifecycle = this.lifecyclePool
    this.lifecyclePool = undefined
    if (lifecycle !== undefined && lifecycle !== pool) await lifecycle.end()
  }

  /** Whether the database answers within `readyTimeoutMs`. */
  async ready(): Promise<boolean> {
    const pool = this.pool
    if (pool === undefined) return false
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.readyTimeoutMs)
    })
    try {
      return await Promise.race([pool.query('SELECT 1').then(() => true, () => false), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  async persist(input: NewSubmission, options: PersistOptions = {}): Promise<PersistResult> {
    const record = buildRecord(input, this.settings.now())
    if (options.leaseOwner !== undefined) requireLeaseOwner(options.leaseOwner)
    this.requireOpen('persist')
    this.recountIfStale()
    if (this.counts.open + this.reserved >= this.settings.maxOpen) {
      // a repeated submission is answered even when full: it takes no new room
      const existing = await this.readExisting(record.id)
      if (existing !== undefined) return { record: existing.record, created: false }
      throw new OutboxFullError(this.settings.maxOpen)
    }
    const token = randomUUID()
    this.reserved++
    try {
      // a second round only when the stored duplicate was pruned between the insert and the read
      for (let round = 0; round < 2; round++) {
        if (await this.inserts.submit({ record, token, owner: options.leaseOwner ?? null })) return this.created(record)
        const existing = await this.readExisting(record.id)
        if (existing === undefined) continue
        // our own earlier attempt committed, though its answer was lost
        if (existing.token === token) return this.created(existing.record)
        return { record: existing.record, created: false }
      }
      throw new PersistenceError(`could not store ${record.id}: its stored duplicate kept disappearing`, 'persist', 2)
    } finally {
      this.reserved--
    }
  }

  async append(id: SubmissionId, events: readonly LifecycleEvent[], options: AppendOptions = {}): Promise<void> {
    if (events.length === 0) return
    this.requireOpen('append')
    const owner = options.leaseOwner ?? null
    if (owner !== null) requireLeaseOwner(owner)
    const terminalAt = events.findIndex(isTerminalEvent)
    if (terminalAt !== -1 && terminalAt !== events.length - 1) {
      throw new Error('PostgresSubmissionStore.append: a terminal event must be the last one appended')
    }
    const token = randomUUID()
    const body = encodeJson(events)
    const terminal = terminalAt === -1 ? undefined : events[terminalAt]
    let stored: boolean
    if (terminal !== undefined) {
      // the terminal appends of one head share statements too (see `terminals`)
      stored = await this.terminals.submit({ id, body, token, owner, at: Math.max(0, Math.trunc(terminal.at)) })
    } else {
      // the common case, events of one head for each open submission: many share one statement
      if (await this.appends.submit({ id, body, token, owner })) return
      const { rows } = await this.run('append', (pool) => pool.query<{ inserted: number; landed: boolean }>(PREPARED.append, [id, body, token, owner]))
      stored = rows[0].inserted > 0 || rows[0].landed || (await this.landed(id, token))
    }
    if (!stored && owner !== null) {
      const { rows: state } = await this.run('append', (pool) => pool.query<{ open: boolean; lease_owner: string | null }>(SQL.appendRefused, [id]))
      if (state.length > 0 && state[0].open && state[0].lease_owner !== owner) throw new LeaseLostError(id, owner)
    }
    if (!stored) throw new Error(`PostgresSubmissionStore.append: submission ${id} is not open (unknown, finished or finishing)`)
    if (terminal !== undefined) this.adjustCounts(-1, +1)
  }

  /** One terminal append by the named single statement: true when its events are stored (now or by an earlier attempt). */
  private async appendTerminal(id: SubmissionId, body: string, token: string, owner: string | null, at: number): Promise<boolean> {
    const { rows } = await this.run('append', (pool) => pool.query<{ inserted: number; landed: boolean }>(PREPARED.appendTerminal, [id, body, token, owner, at]))
    return rows[0].inserted > 0 || rows[0].landed || (await this.landed(id, token))
  }

  /** An append that stored nothing: an earlier attempt of it may still have been running when it was retried, and stored it. */
  private async landed(id: SubmissionId, token: string): Promise<boolean> {
    const check = await this.run('append', (pool) => pool.query<{ landed: boolean }>(SQL.appended, [id, token]))
    return check.rows[0].landed
  }

  async reopen(id: SubmissionId, event: ReorgEvent): Promise<void> {
    this.requireOpen('append')
    const token = randomUUID()
    const { rows } = await this.run('append', (pool) => pool.query<{ inserted: number; landed: boolean }>(SQL.reopen, [id, encodeJson([event]), token]))
    const stored = rows[0].inserted > 0 || rows[0].landed || (await this.landed(id, token))
    if (!stored) throw new Error(`PostgresSubmissionStore.reopen: submission ${id} is not finished (unknown or open)`)
    this.adjustCounts(+1, -1)
  }

  async get(id: SubmissionId): Promise<StoredSubmission | undefined> {
    const { rows } = await this.run('read', (pool) => pool.query<SubmissionRow>(SQL.get, [id]))
    return rows.length === 0 ? undefined : toStored(rows[0])
  }

  async getForPartner(id: SubmissionId, partnerId: string): Promise<StoredSubmission | undefined> {
    const { rows } = await this.run('read', (pool) => pool.query<SubmissionRow>(SQL.getForPartner, [id, partnerId]))
    return rows.length === 0 ? undefined : toStored(rows[0])
  }

  async findForPartner(hash: Hex, partnerId: string): Promise<StoredSubmission[]> {
    const { rows } = await this.run('read', (pool) => pool.query<SubmissionRow>(SQL.findForPartner, [hash.toLowerCase(), partnerId]))
    return rows.map(toStored).sort((a, b) => SUBMISSION_KINDS.indexOf(a.record.kind) - SUBMISSION_KINDS.indexOf(b.record.kind))
  }

  async listUndelivered(): Promise<StoredSubmission[]> {
    const { rows } = await this.run('read', (pool) => pool.query<SubmissionRow>(SQL.listOpen))
    return rows.map(toStored)
  }

  /** As SubmissionStore says; concurrent calls in this process share one run (other processes may prune too). */
  pruneFinished(): Promise<number> {
    this.pruning ??= this.prune().finally(() => {
      this.pruning = undefined
    })
    return this.pruning
  }

  stats(): OutboxStats {
    this.recountIfStale()
    return { ...this.counts }
  }

  // -------------------------------------------------------------------------------------------

  private async prune(): Promise<number> {
    this.requireOpen('prune')
    const cutoff = this.settings.now() - this.settings.finishedTtlMs
    const { rows } = await this.run('prune', (pool) => pool.query<{ id: string }>(SQL.prune, [cutoff, this.settings.maxFinished, STORE_DEFAULTS.pruneBatch]))
    if (rows.length > 0) this.adjustCounts(0, -rows.length)
    this.recountIfStale(true)
    return rows.length
  }

  private async claim(owner: string, limit: number): Promise<LeaseGrant> {
    requireLeaseOwner(owner)
    positiveInt('limit', limit, 'claim')
    const asked = this.settings.now()
    const { rows } = await this.run('append', (pool) => pool.query<{ id: SubmissionId; horizon: string | null }>(SQL.claim, [owner, limit, this.settings.leaseMs]))
    const horizons = new Map<SubmissionId, bigint>()
    for (const row of rows) if (row.horizon !== null) horizons.set(row.id, BigInt(row.horizon))
    return { ids: rows.map((r) => r.id), validUntil: asked + this.settings.leaseMs, horizons }
  }

  private async markSendHorizon(owner: string, block: bigint): Promise<boolean> {
    requireLeaseOwner(owner)
    if (typeof block !== 'bigint' || block < 0n) throw new TypeError(`send horizon must be a non-negative bigint, got ${String(block)}`)
    // on the pool (synchronous commit): the sends it covers go out once it returns
    const { rows } = await this.run('append', (pool) => pool.query<{ marked: boolean }>(PREPARED.markSendHorizon, [owner, block.toString()]))
    return rows[0].marked
  }

  private async renew(owner: string, ids: readonly SubmissionId[]): Promise<LeaseGrant> {
    requireLeaseOwner(owner)
    const asked = this.settings.now()
    // with no ids it still beats: the owner's send horizon is marked only while its heartbeat is live
    const { rows } = await this.run('append', (pool) => pool.query<{ id: SubmissionId }>(SQL.renew, [owner, [...new Set(ids)], this.settings.leaseMs]))
    return { ids: rows.map((r) => r.id), validUntil: asked + this.settings.leaseMs }
  }

  private async release(owner: string, ids: readonly SubmissionId[]): Promise<void> {
    requireLeaseOwner(owner)
    if (ids.length === 0) return
    await this.run('append', (pool) => pool.query(SQL.release, [owner, [...new Set(ids)]]))
  }

  private async readExisting(id: SubmissionId): Promise<{ record: SubmissionRecord; token: string } | undefined> {
    const { rows } = await this.run('persist', (pool) => pool.query<{ record: SubmissionRecord; persist_token: string }>(SQL.existing, [id]))
    return rows.length === 0 ? undefined : { record: rows[0].record, token: rows[0].persist_token }
  }

  private created(record: SubmissionRecord): PersistResult {
    this.adjustCounts(+1, 0)
    return { record, created: true }
  }

  private adjustCounts(open: number, finished: number): void {
    this.counts = { open: Math.max(0, this.counts.open + open), finished: Math.max(0, this.counts.finished + finished) }
    this.countChanges++
  }

  /** Re-count in the background when the counts are older than statsMaxAgeMs (or `force`); one re-count at a time. */
  private recountIfStale(force = false): void {
    if (this.pool === undefined || this.counting !== undefined) return
    if (!force && this.settings.now() - this.countedAt < this.statsMaxAgeMs) return
    this.counting = this.recount()
      .catch(() => undefined) // the statements that need the database report its failure; the counts just stay as they were
      .finally(() => {
        this.counting = undefined
      })
  }

  private async recount(): Promise<void> {
    const changes = this.countChanges
    const { rows } = await this.run('read', (pool) => pool.query<OutboxStats>(SQL.counts))
    this.countedAt = this.settings.now()
    if (this.countChanges === changes) this.counts = { open: rows[0].open, finished: rows[0].finished }
  }

  /** the grouped appends' pool (see lifecycleCommit), set and ended with the pool */
  private requireLifecyclePool(): pg.Pool {
    this.requireOpen('append')
    return this.lifecyclePool as pg.Pool
  }

  private requireOpen(operation: PersistenceError['operation']): pg.Pool {
    if (this.pool === undefined) throw new PersistenceError('the submission store is not open (call open() first)', operation, 0)
    return this.pool
  }

  /** Run one statement with bounded retries; every failure ends as PersistenceError. */
  private run<T>(operation: PersistenceError['operation'], statement: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const running = this.withRetry(operation, statement)
    this.inFlight.add(running)
    void running.then(
      () => this.inFlight.delete(running),
      () => this.inFlight.delete(running),
    )
    return running
  }

  private withRetry<T>(operation: PersistenceError['operation'], statement: (pool: pg.Pool) => Promise<T>): Promise<T> {
    return withRetry(this.settings, 'submission store', operation, () => statement(this.requireOpen(operation)))
  }
}

/** Most appends in one grouped statement. */
const APPEND_GROUP_MAX = 500

interface QueuedInsert {
  record: SubmissionRecord
  token: string
  owner: string | null
}

interface QueuedAppend {
  id: SubmissionId
  /** the events, JSON */
  body: string
  token: string
  owner: string | null
}

interface QueuedTerminal extends QueuedAppend {
  /** the terminal event's time (the row's finished_at) */
  at: number
}

function toStored(row: SubmissionRow): StoredSubmission {
  return { record: row.record, events: row.events }
}
