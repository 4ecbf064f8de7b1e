/**
 * GET /v1/submissions/:hash with a real OutboxStore: submissions made through the JSON-RPC
 * methods, lifecycle events appended as the Dispatcher writes them, read back by their owner
 * only.
 */
import { join } from 'node:path'
import { Writable } from 'node:stream'

import Fastify, { type FastifyInstance } from 'fastify'
import { concat, keccak256 } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { Hex } from '../../../src/chain/types.ts'
import { createPartnerRegistry, registerJsonRpcRoutes } from '../../../src/server/jsonrpc/index.ts'
import { submissionMethods } from '../../../src/server/rpc/submission-methods.ts'
import { registerSubmissionStatusRoute, type SubmissionStatusResponse } from '../../../src/server/rpc/submission-status-route.ts'
import { OutboxStore, submissionId, type LifecycleEvent } from '../../../src/submission/index.ts'
import { sharedSchemas } from '../../../src/server/openapi/components.ts'
import { loadFixtureTxs } from '../../support/devnet.ts'
import { schemaViolations } from '../openapi-check.ts'
import { tempDir } from '../../submission/helpers.ts'
import { TOKEN_ALPHA, TOKEN_BETA, TOKEN_UNKNOWN } from '../jsonrpc/helpers.ts'

const [A, B] = loadFixtureTxs().filter((f) => f.name === 'v2-swapExactETHForTokens-small' || f.name === 'v2-swapExactETHForTokens-large')
const PROFIT_TOKEN = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2'
const BACKRUN_HASH = `0x${'bb'.repeat(32)}` as Hex
const BACKRUN_RAW = '0x02f8deadbeefcafe' as Hex

/** the shared schemas as the OpenAPI document publishes them (`Name#` references as JSON pointers) */
const DOCUMENT = JSON.parse(
  JSON.stringify({ components: { schemas: Object.fromEntries(sharedSchemas().map((schema) => [(schema as { $id: string }).$id, schema])) } }).replace(
    /"\$ref":"([A-Za-z]+)#"/g,
    '"$ref":"#/components/schemas/$1"',
  ),
) as Record<string, unknown>
const statusSchemaViolations = (body: unknown) => schemaViolations(DOCUMENT, { $ref: '#/components/schemas/SubmissionStatusResponse' }, body)

let dir: { path: string; cleanup: () => Promise<void> }
let store: OutboxStore
let app: FastifyInstance
let logs: string[]

beforeEach(async () => {
  dir = await tempDir('submission-status-')
  store = new OutboxStore(join(dir.path, 'outbox'), { writeBackoff: { baseMs: 1, maxMs: 2 } })
  await store.open()
  logs = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      logs.push(chunk.toString())
      callback()
    },
  })
  app = Fastify({ logger: { level: 'trace', stream } })
  const partners = createPartnerRegistry([
    { partnerId: 'alpha', token: TOKEN_ALPHA },
    { partnerId: 'beta', token: TOKEN_BETA },
  ])
  registerJsonRpcRoutes(app, {
    partners,
    endpoints: { backrun: {}, submit: submissionMethods({ submissions: { accept: (i) => store.persist(i) }, decode: { chainId: 31337n, hardfork: 'prague' } }) },
  })
  registerSubmissionStatusRoute(app, { store, partners })
  await app.ready()
})

afterEach(async () => {
  await app.close()
  await store.close()
  await dir.cleanup()
})

async function submit(method: string, params: Record<string, unknown>, token = TOKEN_ALPHA): Promise<Hex> {
  const res = await app.inject({ method: 'POST', url: `/rpc/${token}/submit`, headers: { 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method, params: [params] } })
  const body = res.json() as { result?: Hex; error?: unknown }
  expect(body.error).toBeUndefined()
  return body.result as Hex
}

function status(hash: string, authorization?: string) {
  return app.inject({ method: 'GET', url: `/v1/submissions/${hash}`, headers: authorization === undefined ? {} : { authorization } })
}

describe('GET /v1/submissions/:hash', () => {
  it('the owner sees the whole lifecycle: simulation, backrun, per-relay forwarding, final state, raw events', async () => {
    const hash = await submit('eth_sendPrivateRawTransaction', { tx: B.raw })
    expect(hash).toBe(keccak256(B.raw))
    const id = submissionId('private-tx', hash)
    const t = Date.now()
    const events: LifecycleEvent[] = [
      { type: 'simulated', at: t + 1, success: true, gasUsed: 135_191n, blockNumber: 0n },
      { type: 'backrun', at: t + 2, rawTx: BACKRUN_RAW, txHash: BACKRUN_HASH, grossProfit: 12_345_678_901_234_567_890n, profitToken: PROFIT_TOKEN, netProfitWei: 987_654_321_000n, gasUsed: 160_000n },
      { type: 'targeting', at: t + 3, firstBlock: 1n, lastBlock: 25n, relays: ['flashbots', 'titan'] },
      { type: 'relay-sending', at: t + 4, relay: 'flashbots', block: 1n, attemptId: 'a1' },
      { type: 'relay-sending', at: t + 4, relay: 'titan', block: 1n, attemptId: 'a2' },
      { type: 'relay-result', at: t + 5, relay: 'flashbots', block: 1n, attemptId: 'a1', ok: true, attempts: 1, relayBundleHash: '0xfeed' },
      { type: 'relay-result', at: t + 6, relay: 'titan', block: 1n, attemptId: 'a2', ok: false, attempts: 4, lastError: 'HTTP 503 overloaded' },
      { type: 'relay-sending', at: t + 7, relay: 'flashbots', block: 2n, attemptId: 'a3' },
      { type: 'relay-result', at: t + 8, relay: 'flashbots', block: 2n, attemptId: 'a3', ok: true, attempts: 2 },
      { type: 'included', at: t + 9, block: 2n, backrunIncluded: true },
    ]
    await store.append(id, events)

    const res = await status(hash, `Bearer ${TOKEN_ALPHA}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json() as SubmissionStatusResponse
    expect(body.hash).toBe(hash)
    expect(body.submissions).toHaveLength(1)
    const s = body.submissions[0]
    expect(s).toMatchObject({
      kind: 'private-tx',
      hash,
      txHashes: [hash],
      stage: 'included',
      simulation: { success: true, gasUsed: '135191', blockNumber: '0' },
      backrun: { status: 'appended', txHash: BACKRUN_HASH, grossProfit: '12345678901234567890', profitToken: PROFIT_TOKEN, netProfitWei: '987654321000', gasUsed: '160000' },
      targeting: { firstBlock: '1', lastBlock: '25', relays: ['flashbots', 'titan'] },
      final: { state: 'included', block: '2', backrunIncluded: true },
    })
    expect(new Date(s.receivedAt).getTime()).toBe(s.receivedAtMs)
    expect(s.relays).toEqual([
      { relay: 'flashbots', state: 'accepted', attempts: 2, totalAttempts: 3, acceptedBlocks: 2, blocksSent: ['1', '2'] },
      { relay: 'titan', state: 'failed', attempts: 4, totalAttempts: 4, acceptedBlocks: 0, blocksSent: ['1'], lastError: 'HTTP 503 overloaded' },
    ])
    expect(s.events.map((e) => e.type)).toEqual(['received', ...events.map((e) => e.type)])
    expect(s.events[2]).toEqual({ type: 'backrun', at: t + 2, txHash: BACKRUN_HASH, grossProfit: '12345678901234567890', profitToken: PROFIT_TOKEN, netProfitWei: '987654321000', gasUsed: '160000' })
    // our signed backrun is not handed out, only its hash
    expect(res.body).not.toContain(BACKRUN_RAW.slice(2))
    // the token never reaches the logs
    expect(logs.join('')).not.toContain(TOKEN_ALPHA)
  })

  it('the answer conforms to the OpenAPI schema SubmissionStatusResponse, blocks and final included', async () => {
    const hash = await submit('eth_sendPrivateRawTransaction', { tx: A.raw })
    const t = Date.now()
    await store.append(submissionId('private-tx', hash), [
      { type: 'simulated', at: t + 1, success: true, gasUsed: 135_191n, blockNumber: 0n },
      { type: 'no-backrun', at: t + 2, reason: 'no profitable backrun found', block: 1n },
      { type: 'bundle-outcome', at: t + 3, relay: 'local', block: 1n, role: 'user', bundleHash: BACKRUN_HASH, status: 'outbid', reason: 'another bundle took it' },
      {
        type: 'backrun',
        at: t + 4,
        rawTx: BACKRUN_RAW,
        txHash: BACKRUN_HASH,
        grossProfit: 5n,
        profitToken: PROFIT_TOKEN,
        netProfitWei: 1n,
        block: 2n,
        searcher: '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f',
      },
      { type: 'bundle-outcome', at: t + 5, relay: 'local', block: 2n, role: 'backrun', bundleHash: BACKRUN_HASH, status: 'included' },
      { type: 'included', at: t + 6, block: 2n, backrunIncluded: true, backrunTxHash: BACKRUN_HASH, backrunGrossProfit: 5n },
    ])
    const body = (await status(hash, `Bearer ${TOKEN_ALPHA}`)).json() as SubmissionStatusResponse
    expect(body.submissions[0].blocks.map((b) => b.block)).toEqual(['1', '2'])
    expect(body.submissions[0].final).toMatchObject({ state: 'included', block: '2', backrunGrossProfit: '5', at: t + 6 })
    expect(statusSchemaViolations(body)).toEqual([])
  })

  it('a reverted simulation with no backrun, and an expired or dropped end', async () => {
    const hash = await submit('eth_sendBundle', { txs: [A.raw, B.raw], blockNumber: '0x5' })
    expect(hash).toBe(keccak256(concat([keccak256(A.raw), keccak256(B.raw)])))
    const t = Date.now()
    await store.append(submissionId('bundle', hash), [
      { type: 'simulated', at: t, success: false, revertReason: 'UniswapV2Router: EXPIRED', failedTxIndex: 1, blockNumber: 3n },
      { type: 'no-backrun', at: t, reason: 'no profitable backrun found' },
      { type: 'expired', at: t, lastBlock: 5n, reason: "the bundle's blockNumber 5 has passed without inclusion" },
    ])
    const s = ((await status(hash, `Bearer ${TOKEN_ALPHA}`)).json() as SubmissionStatusResponse).submissions[0]
    expect(s).toMatchObject({
      kind: 'bundle',
      stage: 'expired',
      bundleOptions: { blockNumber: '5' },
      simulation: { success: false, revertReason: 'UniswapV2Router: EXPIRED', failedTxIndex: 1, blockNumber: '3' },
      backrun: { status: 'none', reason: 'no profitable backrun found' },
      targeting: null,
      relays: [],
      final: { state: 'expired', lastBlock: '5', reason: "the bundle's blockNumber 5 has passed without inclusion" },
    })

    const notified = await submit('eth_notifyRawTransaction', { tx: A.raw })
    await store.append(submissionId('notify', notified), [{ type: 'dropped', at: t, reason: 'no profitable backrun found; a notified transaction is never dispatched by this service' }])
    const notifiedBody = (await status(notified, `Bearer ${TOKEN_ALPHA}`)).json() as SubmissionStatusResponse
    expect(statusSchemaViolations(notifiedBody)).toEqual([])
    const n = notifiedBody.submissions[0]
    expect(n).toMatchObject({ kind: 'notify', stage: 'dropped', backrun: { status: 'pending' }, final: { state: 'dropped' } })
  })

  it('a hash submitted both as notify and as private tx lists both, oldest first; a fresh one is pending', async () => {
    const hash = await submit('eth_notifyRawTransaction', { tx: A.raw })
    await new Promise((r) => setTimeout(r, 5))
    await submit('eth_sendPrivateRawTransaction', { tx: A.raw })
    const body = (await status(hash.toUpperCase().replace('0X', '0x'), `bearer ${TOKEN_ALPHA}`)).json() as SubmissionStatusResponse
    expect(body.hash).toBe(hash)
    expect(body.submissions.map((s) => s.kind)).toEqual(['notify', 'private-tx'])
    expect(body.submissions[1]).toMatchObject({ stage: 'received', simulation: null, backrun: { status: 'pending' }, final: null })
  })

  it("another partner's submission is 404, exactly like an unknown hash", async () => {
    const hash = await submit('eth_sendPrivateRawTransaction', { tx: B.raw })
    const other = await status(hash, `Bearer ${TOKEN_BETA}`)
    const unknown = await status(`0x${'12'.repeat(32)}`, `Bearer ${TOKEN_BETA}`)
    expect(other.statusCode).toBe(404)
    expect(unknown.statusCode).toBe(404)
    expect(other.json()).toEqual({ code: 'NOT_FOUND', message: `no submission with hash ${hash} for this partner` })
    expect(Object.keys(other.json() as object)).toEqual(Object.keys(unknown.json() as object))
    // the same tx sent by beta as well: the record stays alpha's (first submitter), beta still sees nothing
    expect(await submit('eth_sendPrivateRawTransaction', { tx: B.raw }, TOKEN_BETA)).toBe(hash)
    expect((await status(hash, `Bearer ${TOKEN_BETA}`)).statusCode).toBe(404)
    expect((await status(hash, `Bearer ${TOKEN_ALPHA}`)).statusCode).toBe(200)
  })

  it('401 without a token, with an unknown token or another scheme, before the hash is even looked at', async () => {
    const hash = await submit('eth_sendPrivateRawTransaction', { tx: B.raw })
    for (const [authorization, message] of [
      [undefined, /missing Authorization header/],
      ['', /missing Authorization header/],
      [`Bearer ${TOKEN_UNKNOWN}`, /invalid partner token/],
      ['Bearer ', /Bearer scheme/],
      [`Basic ${Buffer.from(`alpha:${TOKEN_ALPHA}`).toString('base64')}`, /Bearer scheme/],
      [TOKEN_ALPHA, /Bearer scheme/],
    ] as const) {
      for (const h of [hash, 'not-a-hash']) {
        const res = await status(h, authorization)
        expect(res.statusCode, String(authorization)).toBe(401)
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/)
        const body = res.json() as { code: string; message: string }
        expect(body.code).toBe('UNAUTHORIZED')
        expect(body.message).toMatch(message)
        expect(res.body).not.toContain(TOKEN_ALPHA)
      }
    }
    expect(logs.join('')).not.toContain(TOKEN_ALPHA)
    expect(logs.join('')).not.toContain(TOKEN_UNKNOWN)
  })

  it('400 for a malformed hash', async () => {
    for (const bad of ['0x1234', `0x${'zz'.repeat(32)}`, 'a'.repeat(66), `0x${'11'.repeat(33)}`]) {
      const res = await status(bad, `Bearer ${TOKEN_ALPHA}`)
      expect(res.statusCode, bad).toBe(400)
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'hash' }] })
    }
  })

  it('500 without details when the store cannot be read', async () => {
    const hash = await submit('eth_sendPrivateRawTransaction', { tx: B.raw })
    await store.close()
    const res = await status(hash, `Bearer ${TOKEN_ALPHA}`)
    expect(res.statusCode).toBe(500)
    expect(res.json()).toMatchObject({ code: 'INTERNAL_ERROR' })
    await store.open()
  })
})
