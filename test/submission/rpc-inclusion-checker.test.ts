/**
 * RpcInclusionChecker against a tiny real HTTP JSON-RPC server that answers
 * eth_getTransactionReceipt the way the devnet builder does ({ transactionHash, blockNumber,
 * status, gasUsed } or null), with scripted failures.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import type { InclusionQuery } from '../../src/submission/index.ts'
import { submissionId } from '../../src/submission/index.ts'
import { InclusionCheckError, RpcInclusionChecker } from '../../src/submission/rpc-inclusion-checker.ts'
import { TransportError } from '../../src/transport/transport-error.ts'

const h = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`

type Behaviour =
  | { kind: 'http'; status: number }
  | { kind: 'rpc'; code: number; message: string }
  | { kind: 'hang' }
  | { kind: 'garbage' }
  | { kind: 'wrong-id' }
  | { kind: 'result'; result: unknown }

interface Node {
  url: string
  /** hash (lowercase) -> block number */
  receipts: Map<string, bigint>
  /** block number -> tx hashes, for eth_getBlockByNumber */
  blocks: Map<bigint, Hex[]>
  /** consumed one per request, before the normal answer */
  script: Behaviour[]
  requests: Array<{ method: string; params: unknown[] }>
  close(): Promise<void>
}

async function startNode(): Promise<Node> {
  const receipts = new Map<string, bigint>()
  const blocks = new Map<bigint, Hex[]>()
  const script: Behaviour[] = []
  const requests: Node['requests'] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string; params: unknown[] }
      requests.push({ method: body.method, params: body.params })
      const json = (payload: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
      }
      const next = script.shift()
      if (next !== undefined) {
        switch (next.kind) {
          case 'http':
            res.writeHead(next.status, { 'content-type': 'text/plain' }).end('node unhappy')
            return
          case 'rpc':
            json({ jsonrpc: '2.0', id: body.id, error: { code: next.code, message: next.message } })
            return
          case 'hang':
            return // never answers; the client times out
          case 'garbage':
            res.writeHead(200, { 'content-type': 'application/json' }).end('<html>')
            return
          case 'wrong-id':
            json({ jsonrpc: '2.0', id: body.id + 1000, result: null })
            return
          case 'result':
            json({ jsonrpc: '2.0', id: body.id, result: next.result })
            return
        }
      }
      if (body.method === 'eth_getBlockByNumber') {
        const n = BigInt(String(body.params[0]))
        const txs = blocks.get(n)
        json({ jsonrpc: '2.0', id: body.id, result: txs === undefined ? null : { number: `0x${n.toString(16)}`, hash: h(Number(n) + 1000), transactions: txs } })
        return
      }
      if (body.method !== 'eth_getTransactionReceipt') {
        json({ jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'method not found' } })
        return
      }
      const hash = String(body.params[0]).toLowerCase()
      const block = receipts.get(hash)
      json({
        jsonrpc: '2.0',
        id: body.id,
        result: block === undefined ? null : { transactionHash: hash, blockNumber: `0x${block.toString(16)}`, status: '0x1', gasUsed: '0x5208' },
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    receipts,
    blocks,
    script,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

let node: Node
beforeEach(async () => {
  node = await startNode()
})
afterEach(async () => {
  await node.close()
})

function query(txHashes: Hex[], backrunTxHash?: Hex): InclusionQuery {
  return {
    id: submissionId(txHashes.length > 1 ? 'bundle' : 'private-tx', txHashes[txHashes.length - 1]),
    kind: txHashes.length > 1 ? 'bundle' : 'private-tx',
    txHashes,
    ...(backrunTxHash === undefined ? {} : { backrunTxHash }),
    firstBlock: 10n,
    head: { number: 12n, timestamp: 1_700_000_000n },
  }
}

const fast = (extra: Partial<ConstructorParameters<typeof RpcInclusionChecker>[0]> = {}) =>
  new RpcInclusionChecker({ url: node.url, timeoutMs: 300, maxAttempts: 3, backoff: { baseMs: 1, maxMs: 5 }, ...extra })

describe('RpcInclusionChecker', () => {
  it('pending while the last tx has no receipt: one request per check', async () => {
    const checker = fast()
    expect(await checker.check(query([h(1), h(2), h(3)]))).toEqual({ status: 'pending' })
    expect(node.requests).toEqual([{ method: 'eth_getTransactionReceipt', params: [h(3)] }])
  })

  it('included in the block of the receipts; the backrun counts when it is in the same block', async () => {
    const checker = fast()
    node.receipts.set(h(1), 15n)
    expect(await checker.check(query([h(1)]))).toEqual({ status: 'included', blockNumber: 15n })
    expect(await checker.check(query([h(1)], h(9)))).toEqual({ status: 'included', blockNumber: 15n, backrunIncluded: false })
    node.receipts.set(h(9), 16n)
    expect(await checker.check(query([h(1)], h(9)))).toEqual({ status: 'included', blockNumber: 15n, backrunIncluded: false })
    node.receipts.set(h(9), 15n)
    expect(await checker.check(query([h(1)], h(9)))).toEqual({ status: 'included', blockNumber: 15n, backrunIncluded: true, backrunTxHash: h(9) })
  })

  it('a bundle is included only when every tx has a receipt', async () => {
    const checker = fast()
    node.receipts.set(h(3), 20n)
    expect(await checker.check(query([h(1), h(2), h(3)], h(4)))).toEqual({ status: 'pending' })
    node.receipts.set(h(1), 20n)
    node.receipts.set(h(2), 20n)
    node.receipts.set(h(4), 20n)
    expect(await checker.check(query([h(1), h(2), h(3)], h(4)))).toEqual({ status: 'included', blockNumber: 20n, backrunIncluded: true, backrunTxHash: h(4) })
  })

  it('retries transient failures with backoff, then answers', async () => {
    const checker = fast({ maxAttempts: 4 })
    node.receipts.set(h(1), 7n)
    node.script.push({ kind: 'http', status: 503 }, { kind: 'rpc', code: -32000, message: 'transaction indexing is in progress' }, { kind: 'garbage' })
    expect(await checker.check(query([h(1)]))).toEqual({ status: 'included', blockNumber: 7n })
    expect(node.requests).toHaveLength(4)
  })

  it('a timeout on every attempt ends in a typed error after the bounded retries', async () => {
    const checker = fast({ timeoutMs: 100, maxAttempts: 2 })
    node.script.push({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' })
    const started = Date.now()
    const error = await checker.check(query([h(1)])).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InclusionCheckError)
    // one error family with the transport: InclusionCheckError is a TransportError
    expect(error).toBeInstanceOf(TransportError)
    expect(error).toMatchObject({ name: 'InclusionCheckError', reason: 'timeout', attempts: 2, retryable: true, message: 'eth_getTransactionReceipt: no answer within 100 ms' })
    expect(node.requests).toHaveLength(2)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('does not retry what cannot change: HTTP 400, invalid params, a receipt for another hash', async () => {
    node.script.push({ kind: 'http', status: 400 })
    await expect(fast().check(query([h(1)]))).rejects.toMatchObject({ name: 'InclusionCheckError', reason: 'http', attempts: 1, details: { status: 400, retryable: false } })
    node.script.push({ kind: 'rpc', code: -32602, message: 'invalid argument 0' })
    await expect(fast().check(query([h(1)]))).rejects.toMatchObject({ reason: 'rpc', attempts: 1, details: { rpcCode: -32602 } })
    node.script.push({ kind: 'result', result: { transactionHash: h(2), blockNumber: '0x1' } })
    await expect(fast().check(query([h(1)]))).rejects.toMatchObject({ reason: 'malformed', message: expect.stringMatching(/not 0x0+1$/) })
    expect(node.requests).toHaveLength(3)
  })

  it('malformed answers after their retries: wrong id, bad block number', async () => {
    node.script.push({ kind: 'wrong-id' }, { kind: 'wrong-id' }, { kind: 'wrong-id' })
    await expect(fast().check(query([h(1)]))).rejects.toMatchObject({ reason: 'malformed', attempts: 3 })
    node.script.push({ kind: 'result', result: { transactionHash: h(1), blockNumber: 'twelve' } })
    await expect(fast().check(query([h(1)]))).rejects.toMatchObject({ reason: 'malformed' })
    // a receipt with blockNumber null (a pending receipt) is no receipt
    node.script.push({ kind: 'result', result: { transactionHash: h(1), blockNumber: null } })
    expect(await fast().check(query([h(1)]))).toEqual({ status: 'pending' })
  })

  it('an unreachable node is a network error; the URL is not in the message', async () => {
    const url = node.url
    await node.close()
    node = await startNode() // for afterEach
    const checker = new RpcInclusionChecker({ url: `${url}?apikey=s3cret`, timeoutMs: 200, maxAttempts: 2, backoff: { baseMs: 1, maxMs: 2 } })
    const error = (await checker.check(query([h(1)])).catch((e: unknown) => e)) as InclusionCheckError
    expect(error).toBeInstanceOf(InclusionCheckError)
    expect(error.reason).toBe('network')
    expect(error.attempts).toBe(2)
    expect(error.message).not.toContain('s3cret')
  })

  it("reads a block's tx hashes (without bodies), null for a block the node does not have", async () => {
    const checker = fast()
    node.blocks.set(16n, [h(7), h(8)])
    expect(await checker.blockTransactions(16n)).toEqual([h(7), h(8)])
    expect(node.requests).toEqual([{ method: 'eth_getBlockByNumber', params: ['0x10', false] }])
    expect(await checker.blockTransactions(17n)).toBeNull()
    // a node that sends bodies anyway: the hashes are read from them
    node.script.push({ kind: 'result', result: { number: '0x12', transactions: [{ hash: h(9), input: '0x' }] } })
    expect(await checker.blockTransactions(18n)).toEqual([h(9)])
  })

  it('a block answer for another number or with bad hashes is malformed; transient failures are retried', async () => {
    const checker = fast()
    node.script.push({ kind: 'result', result: { number: '0x5', transactions: [] } })
    await expect(checker.blockTransactions(6n)).rejects.toMatchObject({ name: 'InclusionCheckError', reason: 'malformed', message: expect.stringMatching(/not block 6/) })
    node.script.push({ kind: 'result', result: { number: '0x6', transactions: ['0x12'] } })
    await expect(checker.blockTransactions(6n)).rejects.toMatchObject({ reason: 'malformed' })
    node.blocks.set(6n, [h(1)])
    node.script.push({ kind: 'http', status: 503 })
    expect(await checker.blockTransactions(6n)).toEqual([h(1)])
  })

  it('reads answers through its own keep-alive client, bounded in size: a larger answer fails as a network error', async () => {
    // 40 hashes: ~2.8 KB of JSON. globalThis.fetch has no such bound, so this fails if the checker fell back to it
    const hashes = Array.from({ length: 40 }, (_, i) => h(100 + i))
    node.blocks.set(20n, hashes)
    await expect(fast({ maxAnswerBytes: 1024, maxAttempts: 2 }).blockTransactions(20n)).rejects.toMatchObject({ name: 'InclusionCheckError', reason: 'network', attempts: 2 })
    expect(await fast().blockTransactions(20n)).toEqual(hashes)
    expect(await fast({ maxAnswerBytes: 4096 }).blockTransactions(20n)).toEqual(hashes)
  })

  it('refuses a bad configuration', () => {
    expect(() => new RpcInclusionChecker({ url: 'ftp://x' })).toThrow(TypeError)
    expect(() => new RpcInclusionChecker({ url: 'not a url' })).toThrow(TypeError)
    expect(() => new RpcInclusionChecker({ url: node.url, timeoutMs: 0 })).toThrow(RangeError)
    expect(() => new RpcInclusionChecker({ url: node.url, maxAnswerBytes: 0 })).toThrow(RangeError)
  })
})
