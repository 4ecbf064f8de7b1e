/**
 * The quote rate limit's shared counter in PostgreSQL (DATABASE_URL): one row per (API key id,
 * window length, window start) in the UNLOGGED table `rate_limit_windows` (the submission store's
 * migration 2), counted with one upsert per request. Windows are aligned on the database's clock,
 * the one clock every replica shares, so every replica counts a key's requests in the same window.
 *
 * The counts are not durable (UNLOGGED, no synchronous commit): a database crash forgets the
 * current windows, which only resets a limit early. The same statement deletes the key's older
 * windows, so the table holds about one row per key.
 */
import type pg from 'pg'

import type { WindowCount, WindowCounter } from './shared-rate-limit-store.ts'

/** $1 key, $2 window ms */
const INCREMENT = `
  WITH clock AS (
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms
  ), window_of AS (
    SELECT now_ms, now_ms - now_ms % $2 AS start FROM clock
  ), older AS (
    DELETE FROM rate_limit_windows WHERE key = $1 AND window_ms = $2 AND window_start < (SELECT start FROM window_of)
  )
  INSERT INTO rate_limit_windows AS w (key, window_ms, window_start, count)
  SELECT $1, $2, start, 1 FROM window_of
  ON CONFLICT (key, window_ms, window_start) DO UPDATE SET count = w.count + 1
  RETURNING w.count, (w.window_start + $2 - (SELECT now_ms FROM window_of))::int AS ttl_ms`

export class PostgresWindowCounter implements WindowCounter {
  /** @param pool connections with a short statement timeout: a slow count falls back to memory (shared-rate-limit-store.ts) */
  constructor(private readonly pool: pg.Pool) {}

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    const { rows } = await this.pool.query<{ count: number; ttl_ms: number }>(INCREMENT, [key, windowMs])
    return { count: rows[0].count, ttlMs: rows[0].ttl_ms }
  }
}
