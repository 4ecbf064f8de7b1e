/**
 * What a PostgreSQL database did over a window, per answer of a benchmark loop (issue 14: where an
 * acknowledgement's database time goes), from counters that are exact at the moment they are read:
 * - `write_transactions`: transaction ids assigned (`pg_current_snapshot()`'s xmax): every
 *   transaction that wrote, each committed with its own WAL flush (synchronous_commit on), unless
 *   the server's group commit shares one between several;
 * - `wal_bytes`: WAL written (`pg_current_wal_lsn()`), everything in the cluster;
 * - `rows`: net new rows of the store's tables (count(*) before and after);
 * - with `pg_stat_statements` preloaded: every statement kind's calls and execution time (its
 *   shared counters are updated as each statement ends).
 * pg_stat_database / pg_stat_wal / pg_stat_user_tables are not used: each backend flushes its
 * counts to them only when idle, at most once a second and up to 10 s late, which a 10 s loop
 * cannot wait for.
 */
import pg from 'pg'

export interface PgActivity {
  write_transactions: number
  wal_bytes: number
  /** net new rows per table */
  rows: Record<string, number>
  /** with pg_stat_statements: each statement kind's calls and total execution ms */
  statements?: Record<string, { calls: number; ms: number }>
}

/** the store's tables whose rows are counted */
const TABLES = ['submissions', 'submission_events'] as const

interface Snapshot {
  xid: bigint
  lsn: bigint
  rows: Record<string, number>
  statements: Map<string, { calls: number; ms: number }> | undefined
}

/** the service's statements by what they are: their first meaningful words, whitespace folded */
function statementKind(query: string): string {
  const text = query.replace(/\s+/g, ' ').trim()
  const cte = /^WITH (\w+) AS \(/i.exec(text)
  // the store's statements are CTEs: name them by their first CTE and what its body starts with
  if (cte) return `WITH ${cte[1]} … ${text.slice(cte[0].length, cte[0].length + 60).trim()}`.slice(0, 100)
  return text.slice(0, 100)
}

/** an LSN `X/Y` (two hex halves) as a byte position */
function lsnBytes(lsn: string): bigint {
  const [hi, lo] = lsn.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

async function snapshot(client: pg.Client, withStatements: boolean): Promise<Snapshot> {
  const { rows: head } = await client.query<{ xid: string; lsn: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid, pg_current_wal_lsn()::text AS lsn')
  const rows: Record<string, number> = {}
  for (const table of TABLES) {
    const { rows: n } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`).catch(() => ({ rows: [{ n: 0 }] }))
    rows[table] = n[0]!.n
  }
  let statements: Snapshot['statements']
  if (withStatements) {
    const { rows: stats } = await client.query<{ query: string; calls: string; ms: number }>(
      'SELECT query, calls::text AS calls, total_exec_time AS ms FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())',
    )
    statements = new Map()
    for (const r of stats) {
      const kind = statementKind(r.query)
      const seen = statements.get(kind) ?? { calls: 0, ms: 0 }
      statements.set(kind, { calls: seen.calls + Number(r.calls), ms: seen.ms + r.ms })
    }
  }
  return { xid: BigInt(head[0]!.xid), lsn: lsnBytes(head[0]!.lsn), rows, statements }
}

const per = (n: number, answers: number): number => Math.round((n / Math.max(1, answers)) * 1000) / 1000

/**
 * Start a window on the database at `url`. stop(answers) answers the counts per answer.
 * Statements are counted when the server has pg_stat_statements preloaded (the extension is
 * created in the database for that).
 */
export async function startPgActivityWindow(url: string): Promise<{ stop(answers: number): Promise<PgActivity> }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 })
  await client.connect()
  const preloaded = await client.query<{ libs: string }>("SELECT current_setting('shared_preload_libraries') AS libs")
  const withStatements = preloaded.rows[0]!.libs.split(',').some((l) => l.trim() === 'pg_stat_statements')
  if (withStatements) await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  const before = await snapshot(client, withStatements)
  return {
    async stop(answers: number): Promise<PgActivity> {
      try {
        const after = await snapshot(client, withStatements)
        const rows: PgActivity['rows'] = {}
        for (const table of TABLES) rows[table] = per(after.rows[table]! - before.rows[table]!, answers)
        let statements: PgActivity['statements']
        if (after.statements !== undefined) {
          statements = {}
          const ranked = [...after.statements].map(([kind, s]) => {
            const b = before.statements?.get(kind) ?? { calls: 0, ms: 0 }
            return { kind, calls: s.calls - b.calls, ms: s.ms - b.ms }
          })
          // the window's own reads are a handful of calls over the whole loop: left out
          for (const s of ranked.filter((s) => s.calls > 2).sort((a, b) => b.ms - a.ms)) {
            statements[s.kind] = { calls: per(s.calls, answers), ms: per(s.ms, answers) }
          }
        }
        return {
          write_transactions: per(Number(after.xid - before.xid), answers),
          wal_bytes: per(Number(after.lsn - before.lsn), answers),
          rows,
          ...(statements === undefined ? {} : { statements }),
        }
      } finally {
        await client.end().catch(() => undefined)
      }
    },
  }
}
