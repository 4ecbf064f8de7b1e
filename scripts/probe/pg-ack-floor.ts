/**
 * npx tsx scripts/probe/pg-ack-floor.ts
 *
 * The floor of what one acknowledgement must cost the machine's cores with PostgreSQL (issue 14:
 * `replicas_acks_per_s` >= 1,000 with two replicas on one machine): the cheapest server that does
 * what an acknowledgement cannot do without, on the same kind of HTTP request as bench:submit's
 * closed loop. A child process (this file with PG_ACK_FLOOR_SERVER=1) answers
 * `POST /rpc/...` JSON-RPC `eth_sendPrivateRawTransaction` `[{ tx }]` on node:http: it parses the
 * body, hashes the raw transaction (keccak-256), and runs one
 * `INSERT ... ON CONFLICT (id) DO NOTHING` into a table shaped like the store's `submissions`
 * (its primary key and its two indexes) through `pg` (a pool of PG_ACK_FLOOR_POOL connections),
 * each its own transaction committed with synchronous_commit on (an embedded PostgreSQL from npm,
 * fsync on), then answers the hash. No decode, no dispatcher, no lifecycle, no relay.
 *
 * The load: bench:submit's closed loop (BENCH_CONNECTIONS senders at once, default 16, each
 * sending its next request when answered, for BENCH_SECONDS, default 10), over distinct
 * transactions of a swap's size (random bytes: nothing here decodes them). The CPU of every
 * process over the loop, from /proc, in ms per acknowledgement: the server (its main thread, V8's
 * platform threads, the rest), every PostgreSQL process, this process (the load generator), and
 * `all`, with cores x 1000 / all: the acknowledgements/s these cores could carry at that floor.
 * Last line: one JSON object.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { availableParallelism } from 'node:os'
import { keccak_256 } from '@noble/hashes/sha3.js'
import pg from 'pg'
import { startTestPostgres } from '../../test/support/embedded-postgres.ts'
import { freePort } from '../../test/support/net.ts'
import { startScriptEnv } from '../../test/support/service-process.ts'
import { descendants, msPer, threadCpuPer, throughputCeiling } from '../../test/support/thread-cpu.ts'
import { clockTicks, startThreadCpuWindow } from '../lib/process-cpu.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const POOL = Number(process.env.PG_ACK_FLOOR_POOL ?? 8)
/** bytes of each raw transaction: about a fixture swap's (EIP-1559, a router call) */
const TX_BYTES = 420
const REQUEST_TIMEOUT_MS = 30_000

const TABLE = `
  CREATE TABLE IF NOT EXISTS submissions (
    id text PRIMARY KEY, hash text NOT NULL, partner_id text NOT NULL, received_at bigint NOT NULL,
    record jsonb NOT NULL, finished_at bigint
  );
  CREATE INDEX IF NOT EXISTS submissions_open ON submissions (received_at, id) WHERE finished_at IS NULL;
  CREATE INDEX IF NOT EXISTS submissions_hash ON submissions (hash);`

/** The child: the cheapest acknowledging server (see the header). */
async function serve(): Promise<void> {
  const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: POOL })
  await db.query(TABLE)
  await db.query(`ALTER DATABASE ${(await db.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d} SET synchronous_commit = on`)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; params: [{ tx: string }] }
      const raw = Buffer.from(request.params[0].tx.slice(2), 'hex')
      const hash = `0x${Buffer.from(keccak_256(raw)).toString('hex')}`
      const reply = (body: unknown) => {
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(body))
      }
      db.query('INSERT INTO submissions (id, hash, partner_id, received_at, record) VALUES ($1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING', [hash, 'dev', Date.now(), JSON.stringify({ raw: request.params[0].tx })]).then(
        () => reply({ jsonrpc: '2.0', id: request.id, result: hash }),
        (err: unknown) => reply({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: String(err) } }),
      )
    })
  })
  server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'))
}

async function main(): Promise<void> {
  const postgres = await startTestPostgres()
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/probe/pg-ack-floor.ts'], {
    env: { ...process.env, ...startScriptEnv(), PG_ACK_FLOOR_SERVER: '1', PORT: String(port), DATABASE_URL: await postgres.createDatabase() },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve())
      child.once('exit', (code) => reject(new Error(`the server exited with code ${code}`)))
    })
    const url = `http://127.0.0.1:${port}/rpc/dev/submit`
    const send = async (): Promise<boolean> => {
      const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: `0x${randomBytes(TX_BYTES).toString('hex')}` }] }) })
      const body = (await res.json()) as { result?: string }
      return typeof body.result === 'string'
    }
    for (let i = 0; i < 200; i++) await send() // warm-up
    const loop = async (): Promise<{ acks: number; failed: number; wallSeconds: number }> => {
      let acks = 0
      let failed = 0
      const start = performance.now()
      const deadline = start + SECONDS * 1000
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (performance.now() < deadline) {
            if (await send().catch(() => false)) acks++
            else failed++
          }
        }),
      )
      return { acks, failed, wallSeconds: (performance.now() - start) / 1000 }
    }
    const pgTicks = () => [...descendants(process.pid).values()].filter((p) => p.comm === 'postgres').reduce((s, p) => s + p.cpuTicks, 0)
    const server = startThreadCpuWindow(child.pid!, 0)
    const pg0 = pgTicks()
    const self0 = process.cpuUsage()
    const run = await loop()
    const self = process.cpuUsage(self0)
    const pgSeconds = (pgTicks() - pg0) / clockTicks()
    const serverCpu = server.stop()
    const generator = (self.user + self.system) / 1e6
    const all = msPer(serverCpu.total + pgSeconds + generator, run.acks)
    const result = {
      name: 'probe:pg-ack-floor',
      connections: CONNECTIONS,
      pool: POOL,
      seconds: SECONDS,
      acks_per_s: Math.round(run.acks / run.wallSeconds),
      failed: run.failed,
      cpu_ms_per_ack: { server: threadCpuPer(serverCpu, run.acks), postgres: msPer(pgSeconds, run.acks), load_generator: msPer(generator, run.acks), all },
      cores: availableParallelism(),
      acks_per_s_ceiling: Math.round(throughputCeiling(availableParallelism(), all)),
    }
    console.log(`floor: ${result.acks_per_s} acks/s (${run.failed} failed); CPU ms per ack: server ${result.cpu_ms_per_ack.server.total} (main ${result.cpu_ms_per_ack.server.main}), PostgreSQL ${result.cpu_ms_per_ack.postgres}, generator ${result.cpu_ms_per_ack.load_generator}, all ${all}: at most ${result.acks_per_s_ceiling} acks/s on ${result.cores} cores`)
    console.log(JSON.stringify(result))
  } finally {
    child.kill('SIGKILL')
    await postgres.close()
  }
}

if (process.env.PG_ACK_FLOOR_SERVER === '1') await serve()
else await main()
