/**
 * The quote rate limit's shared counter from configuration: with DATABASE_URL, PostgreSQL counts
 * every replica's requests per API key (src/server/rate-limit/postgres-window-counter.ts) on a
 * small pool of its own, whose statements give up after RATE_LIMIT_DB_TIMEOUT_MS; without it, none
 * (each process counts in memory). Part of the composition root.
 */
import type { ServiceConfig } from '../config.ts'
import { PostgresWindowCounter } from '../server/rate-limit/postgres-window-counter.ts'
import type { WindowCounter } from '../server/rate-limit/shared-rate-limit-store.ts'
import { createPostgresPool } from '../submission/store/postgres-connection.ts'

export interface RateLimitCounter {
  counter: WindowCounter | undefined
  close(): Promise<void>
}

/** connections of the rate-limit counter at most */
const POOL_SIZE = 4
/** a new connection may take this long at least, ms */
const CONNECT_TIMEOUT_MIN_MS = 2_000

export function openRateLimitCounter(config: ServiceConfig, log: { warn(obj: object, msg: string): void }): RateLimitCounter {
  const url = config.submission.databaseUrl
  if (url === undefined) return { counter: undefined, close: async () => undefined }
  const timeoutMs = config.server.rateLimitDbTimeoutMs
  const pool = createPostgresPool(url, {
    poolSize: POOL_SIZE,
    // opening a connection (SCRAM authentication included) may take longer than a count; it
    // happens once per connection, and a failure keeps the counter away for a second (fallback)
    connectTimeoutMs: Math.max(timeoutMs, CONNECT_TIMEOUT_MIN_MS),
    statementTimeoutMs: timeoutMs,
    idleTimeoutMs: 30_000,
    // counts need no durability: a commit does not wait for the disk
    synchronousCommit: false,
    // a quote waits at most the timeout and this for its count
    clientTimeoutMarginMs: 50,
    onError: (error) => log.warn({ err: error }, 'quote rate limit: a database connection failed'),
  })
  return { counter: new PostgresWindowCounter(pool), close: () => pool.end() }
}
