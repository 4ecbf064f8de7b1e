/**
 * The PostgreSQL schema of the submission store, as a versioned list of plain SQL migrations,
 * applied at open in one transaction under an advisory lock (so replicas starting together apply
 * each migration once) and recorded in `schema_migrations`. A migration is never edited once
 * released: a change is a new version at the end of the list.
 *
 * Schema (version 1):
 * - `submissions`: one row per acknowledged submission. `id` is `<kind>:<hash>` (its primary key is
 *   the de-duplication: a repeated submission conflicts on it), `record` the SubmissionRecord as
 *   JSON (bigint as {"$bigint":"…"}, src/submission/codec.ts), `finished_at` the terminal event's
 *   time in ms (NULL while open), `persist_token` the write that created the row (a retried
 *   persist recognizes its own earlier attempt), `lease_owner` / `lease_expires_at` the lease.
 * - `submission_events`: the lifecycle, in `seq` order; `append_token` + `ordinal` identify the
 *   events of one append() call, so a retried append does not write them twice. Deleting a
 *   submission deletes its events (retention).
 *
 * Version 2: `rate_limit_windows` (UNLOGGED), the quote rate limit's per-key window counts that
 * every replica shares (src/server/rate-limit/postgres-window-counter.ts).
 *
 * Version 3: `lease_heartbeats`, one row per lease owner (a replica's process): a submission whose
 * own lease expired stays its owner's while the owner's heartbeat has not expired, so renewing a
 * replica's leases writes one row instead of every row it holds.
 *
 * Version 4: `submission_events` keeps one index instead of three: its key is the unique
 * (submission_id, append_token, ordinal) a retried append already relied on (all NOT NULL); the
 * index on `seq` (its primary key until now) and the one on (submission_id, seq) go, dropped
 * without rebuilding anything (a large table migrates within the statement timeout). Every read
 * of events is by submission (its key's first column) and sorts that submission's few rows by
 * `seq`, which stays (an identity column, assigned in insertion order). Each event was four
 * writes to the WAL (the row and three index entries) and the dispatcher writes two per open
 * submission per head: this leaves two (issue 14, scripts/probe/pg-store-cost.ts).
 *
 * Version 5: `submission_events` loses its foreign key to `submissions`. Its check was a trigger
 * run for every inserted event (a query on `submissions` per lifecycle row), although every
 * statement that inserts events already holds the submission's row (an append locks it FOR SHARE
 * or updates it; a persist inserts it in the same statement), so no event can name a missing
 * submission. Retention deletes a submission's events in the statement that deletes it (what the
 * cascade did).
 *
 * Version 6: a `submission_events` row holds one append, not one event: its `body` is the JSON
 * array of the append's events (ordinal 1), read back flat (postgres-store.ts SELECT_SUBMISSION);
 * rows written before stay one event object each and read as before. The dispatcher appends
 * several events at once (a send's announcement with the simulation and targeting before it, a
 * send's announcement and result together): each row is a heap tuple, an index entry and ~800
 * bytes of WAL (issue 14). The migration changes no table: it records the new row format, so a
 * release from before it refuses this database instead of reading an array as one event.
 *
 * Version 7: `send_horizons`, one row per lease owner: the newest block its sends may have gone
 * out for (SubmissionLeases.markSendHorizon). Written once per owner per head instead of a
 * `relay-sending` event per submission before each send; a claim reads the previous owner's row.
 */
import type { PoolClient } from 'pg'

export interface Migration {
  version: number
  name: string
  sql: string
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'submissions and their lifecycle events, with leases',
    sql: `
      CREATE TABLE submissions (
        id               text PRIMARY KEY,
        kind             text NOT NULL CHECK (kind IN ('private-tx', 'bundle', 'notify')),
        hash             text NOT NULL,
        partner_id       text NOT NULL,
        received_at      bigint NOT NULL,
        record           jsonb NOT NULL,
        persist_token    uuid NOT NULL,
        finished_at      bigint,
        lease_owner      text,
        lease_expires_at timestamptz,
        CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
      );
      -- open submissions, oldest first: listUndelivered, lease claims, the open count
      CREATE INDEX submissions_open ON submissions (received_at, id) WHERE finished_at IS NULL;
      -- finished submissions, oldest first: retention, the finished count
      CREATE INDEX submissions_finished ON submissions (finished_at, id) WHERE finished_at IS NOT NULL;
      -- a status query by hash
      CREATE INDEX submissions_hash ON submissions (hash);

      CREATE TABLE submission_events (
        seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        submission_id text NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
        append_token  uuid NOT NULL,
        ordinal       integer NOT NULL,
        body          jsonb NOT NULL,
        UNIQUE (submission_id, append_token, ordinal)
      );
      CREATE INDEX submission_events_by_submission ON submission_events (submission_id, seq);
    `,
  },
  {
    version: 2,
    name: 'the quote rate limit counts shared by the replicas',
    // UNLOGGED: counts need no durability (a crash only resets the current windows), and their
    // upserts write no WAL
    sql: `
      CREATE UNLOGGED TABLE rate_limit_windows (
        key          text NOT NULL,
        window_ms    integer NOT NULL,
        window_start bigint NOT NULL,
        count        integer NOT NULL,
        PRIMARY KEY (key, window_ms, window_start)
      );
    `,
  },
  {
    version: 3,
    name: 'one heartbeat row per lease owner renews all its leases',
    // logged, like the leases: after a crash of the database no live owner's rows look abandoned.
    // No index on submissions.lease_owner: the renewal's scan of the open rows for ones it let go
    // is a read every third of a lease period, an index would be one more write per insert
    sql: `
      CREATE TABLE lease_heartbeats (
        owner      text PRIMARY KEY,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'lifecycle events: one index, by submission and append',
    sql: `
      ALTER TABLE submission_events DROP CONSTRAINT submission_events_pkey;
      DROP INDEX submission_events_by_submission;
    `,
  },
  {
    version: 5,
    name: 'lifecycle events: no foreign key check per row',
    sql: `
      ALTER TABLE submission_events DROP CONSTRAINT submission_events_submission_id_fkey;
    `,
  },
  {
    version: 6,
    name: 'lifecycle events: one row per append',
    sql: `
      COMMENT ON COLUMN submission_events.body IS 'the events of one append: a JSON array of lifecycle events (one event object in rows from before migration 6)';
    `,
  },
  {
    version: 7,
    name: 'one send horizon per lease owner',
    // logged, like the leases it is read with: after a crash of the database a claim still finds
    // the horizon of an owner that died before it
    sql: `
      CREATE TABLE send_horizons (
        owner      text PRIMARY KEY,
        block      bigint NOT NULL,
        marked_at  timestamptz NOT NULL
      );
    `,
  },
]

/** Any constant shared by every process of this service: the key of the migration lock. */
const MIGRATION_LOCK_KEY = 0x5b_5354_4f52 // "[STOR"

/**
 * Bring the schema up to the newest migration. Runs in one transaction: a failure leaves the
 * schema as it was.
 * @throws Error when the database holds a migration newer than this code knows (a newer release
 *   migrated it: this one must not write to it), or when a migration fails
 */
export async function applyMigrations(client: PoolClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`)
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    const applied = new Set(rows.map((r) => r.version))
    const newest = Math.max(0, ...migrations.map((m) => m.version))
    const unknown = rows.map((r) => r.version).filter((v) => v > newest)
    if (unknown.length > 0) {
      throw new Error(`the database has schema migration ${unknown.join(', ')}, newer than this release knows (${newest}): run the newer release`)
    }
    const done: number[] = []
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue
      await client.query(migration.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
      done.push(migration.version)
    }
    await client.query('COMMIT')
    return done
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
