/**
 * The connection pool of the PostgreSQL submission store: every connection commits synchronously,
 * every call has a timeout, JSON comes back with its bigints, and the URL is never logged with its
 * password.
 */
import pg from 'pg'

import { decodeJson } from '../codec.ts'

export interface PostgresPoolSettings {
  /** connections at most */
  poolSize: number
  /** a connection not established within this fails, ms */
  connectTimeoutMs: number
  /** a statement running longer is cancelled by the server, and the client stops waiting shortly after, ms */
  statementTimeoutMs: number
  /** an idle connection is closed after this, ms */
  idleTimeoutMs: number
  /** the pool's clients report errors while idle (the server went away); without a listener they would crash the process */
  onError: (error: Error) => void
  /**
   * Commits wait for the WAL flush (`synchronous_commit=on`). Default true; false only for
   * connections whose writes need no durability (the rate limit's counts).
   */
  synchronousCommit?: boolean
  /** the client stops waiting for an answer this long after the server's statement timeout, ms. Default 1 000. */
  clientTimeoutMarginMs?: number
}

/** Time the client waits beyond the server's statement timeout before it gives up on an answer, ms. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000

const OID_JSON = 114
const OID_JSONB = 3802

/** jsonb/json columns are read with the store's codec ({"$bigint":"…"} back to bigint); the rest as pg reads them. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if ((oid === OID_JSON || oid === OID_JSONB) && format !== 'binary') return (text: string) => decodeJson(text)
    return pg.types.getTypeParser(oid, format ?? 'text')
  }) as pg.CustomTypesConfig['getTypeParser'],
}

/**
 * The pool for `url`. `synchronous_commit=on` is added to the connection's startup options (after
 * any the URL gives, so it wins): a commit returns only once its WAL is flushed to disk (and to a
 * synchronous standby, where one is configured), whatever the database or role default says.
 */
export function createPostgresPool(url: string, settings: PostgresPoolSettings): pg.Pool {
  const parsed = new URL(url)
  const given = parsed.searchParams.get('options') ?? ''
  parsed.searchParams.set('options', `${given} -c synchronous_commit=${settings.synchronousCommit === false ? 'off' : 'on'}`.trim())
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    query_timeout: settings.statementTimeoutMs + (settings.clientTimeoutMarginMs ?? CLIENT_TIMEOUT_MARGIN_MS),
    idle_in_transaction_session_timeout: settings.statementTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs,
    keepAlive: true,
    application_name: 'swap-backrun-router',
    types,
  })
  pool.on('error', (error) => settings.onError(error))
  return pool
}
