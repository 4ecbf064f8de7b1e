/**
 * The upstream client against a real local HTTP server: batching, de-duplication, and every kind of
 * failure surfacing as an UpstreamError with the right reason, method and bounded retries.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { UpstreamError } from '../../../src/chain/types.ts'
import { UpstreamClient, type UpstreamClientOptions } from '../../../src/chain/fork/upstream-client.ts'
import { BaseError } from '../../../src/primitives/base-error.ts'
import { TransportError } from '../../../src/transport/transport-error.ts'
import { answerEach, deadUrl, startFakeUpstream, type FakeUpstream } from './fake-upstream.ts'
import { rejectionOf } from '../../support/rejection.ts'

let server: FakeUpstream
const clients: UpstreamClient[] = []

function client(options: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const c = new UpstreamClient({ url: server.url, retryBaseDelayMs: 10, timeoutMs: 2_000, ...options })
  clients.push(c)
  return c
}

const echo = answerEach((item) => `${item.method}:${JSON.stringify(item.params)}`)

beforeAll(async () => {
  server = await startFakeUpstream(echo)
})
afterEach(() => {
  for (const c of clients.splice(0)) c.close()
  server.setHandler(echo)
  server.reset()
})
afterAll(async () => {
  await server.close()
})

describe('batching and de-duplication', () => {
  it('sends N calls issued in the same tick as ONE HTTP request holding a JSON-RPC batch', async () => {
    const c = client()
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => c.call('eth_getStorageAt', ['0xab', `0x${i}`, '0x1'])))
    expect(results[7]).toBe('eth_getStorageAt:["0xab","0x7","0x1"]')
    expect(server.requests).toHaveLength(1)
    expect(Array.isArray(server.requests[0]!.body)).toBe(true)
    expect(server.requests[0]!.items).toHaveLength(25)
    expect(c.stats()).toMatchObject({ httpRequests: 1, rpcCalls: 25, retries: 0, errors: 0 })
  })

  it('splits a batch at maxBatchSize', async () => {
    const c = client({ maxBatchSize: 10 })
    await Promise.all(Array.from({ length: 25 }, (_, i) => c.call('eth_getBalance', [`0x${i}`, '0x1'])))
    expect(server.requests.map((r) => r.items.length)).toEqual([10, 10, 5])
    expect(c.stats()).toMatchObject({ httpRequests: 3, rpcCalls: 25 })
  })

  it('sends a lone call as a plain JSON-RPC object', async () => {
    const c = client()
    await c.call('eth_chainId')
    expect(Array.isArray(server.requests[0]!.body)).toBe(false)
  })

  it('shares one RPC call between identical calls in flight', async () => {
    const c = client()
    const [a, b, other] = await Promise.all([
      c.call('eth_getStorageAt', ['0xab', '0x1', '0x5']),
      c.call('eth_getStorageAt', ['0xab', '0x1', '0x5']),
      c.call('eth_getStorageAt', ['0xab', '0x2', '0x5']),
    ])
    expect(a).toBe(b)
    expect(other).not.toBe(a)
    expect(server.items()).toHaveLength(2)
    expect(c.stats()).toMatchObject({ rpcCalls: 2, dedupedCalls: 1 })
    // once settled, the same call goes upstream again (de-duplication is not a cache)
    await c.call('eth_getStorageAt', ['0xab', '0x1', '0x5'])
    expect(server.items()).toHaveLength(3)
  })

  it('matches batch answers by id, whatever their order', async () => {
    server.setHandler(({ items }) => ({
      kind: 'json',
      body: [...items].reverse().map((item) => ({ jsonrpc: '2.0', id: item.id, result: item.method })),
    }))
    const c = client()
    expect(await Promise.all([c.call('a_one'), c.call('b_two'), c.call('c_three')])).toEqual(['a_one', 'b_two', 'c_three'])
  })
})

describe('failures become UpstreamError', () => {
  it('a JSON-RPC error is reason rpc with its code and method, and is not retried', async () => {
    server.setHandler(answerEach(() => ({ error: { code: -32000, message: 'header not found' } })))
    const c = client({ maxRetries: 3 })
    const error = await rejectionOf(c.call('eth_getBalance', ['0xab', '0x99']), UpstreamError)
    expect(error.reason).toBe('rpc')
    expect(error.details).toEqual({ method: 'eth_getBalance', rpcCode: -32000 })
    expect(error.message).toContain('header not found')
    expect(server.requests).toHaveLength(1)
    // the upstream reads' member of the transport family: the method in front, the TransportError as cause
    expect(error).toBeInstanceOf(BaseError)
    expect(error.message).toBe(`eth_getBalance: ${error.shortMessage}`)
    expect(error.walk(TransportError)).toMatchObject({ reason: 'rpc', rpcCode: -32000, attempts: 1 })
  })

  it('a per-item error inside a batch fails only that item', async () => {
    server.setHandler(
      answerEach((item) => (item.method === 'eth_getCode' ? { error: { code: -32602, message: 'invalid params' } } : '0x1')),
    )
    const c = client()
    const [balance, code, nonce] = await Promise.allSettled([
      c.call('eth_getBalance', ['0xab', '0x1']),
      c.call('eth_getCode', ['0xab', '0x1']),
      c.call('eth_getTransactionCount', ['0xab', '0x1']),
    ])
    expect(server.requests).toHaveLength(1)
    expect(balance).toEqual({ status: 'fulfilled', value: '0x1' })
    expect(nonce).toEqual({ status: 'fulfilled', value: '0x1' })
    expect(code.status).toBe('rejected')
    const error = (code as PromiseRejectedResult).reason as UpstreamError
    expect(error).toBeInstanceOf(UpstreamError)
    expect(error.reason).toBe('rpc')
    expect(error.details).toEqual({ method: 'eth_getCode', rpcCode: -32602 })
  })

  it('a whole-batch error object (id null) fails every item with reason rpc', async () => {
    server.setHandler(() => ({ kind: 'json', body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } } }))
    const c = client()
    const results = await Promise.allSettled([c.call('eth_getBalance', ['0x1', '0x1']), c.call('eth_getCode', ['0x1', '0x1'])])
    for (const [i, method] of ['eth_getBalance', 'eth_getCode'].entries()) {
      const error = (results[i] as PromiseRejectedResult).reason as UpstreamError
      expect(error.reason).toBe('rpc')
      expect(error.details).toEqual({ method, rpcCode: -32600 })
    }
  })

  it('HTTP 500 is reason http with the status, retried a bounded number of times', async () => {
    server.setHandler(() => ({ kind: 'raw', status: 500, body: 'internal error' }))
    const c = client({ maxRetries: 2 })
    const error = await rejectionOf(c.call('eth_getStorageAt', ['0xab', '0x0', '0x1']), UpstreamError)
    expect(error.reason).toBe('http')
    expect(error.details).toEqual({ method: 'eth_getStorageAt', status: 500 })
    expect(server.requests).toHaveLength(3) // first attempt + 2 retries
    expect(c.stats()).toMatchObject({ httpRequests: 3, rpcCalls: 3, retries: 2, errors: 1 })
  })

  it('HTTP 429 is retried; HTTP 400 is not', async () => {
    server.setHandler(() => ({ kind: 'raw', status: 429, body: 'slow down' }))
    const c = client({ maxRetries: 1 })
    expect((await rejectionOf(c.call('eth_chainId'), UpstreamError)).details?.status).toBe(429)
    expect(server.requests).toHaveLength(2)
    server.reset()
    server.setHandler(() => ({ kind: 'raw', status: 400, body: 'bad request' }))
    const error = await rejectionOf(c.call('eth_chainId'), UpstreamError)
    expect(error.reason).toBe('http')
    expect(error.details?.status).toBe(400)
    expect(server.requests).toHaveLength(1)
  })

  it('retries with exponential backoff and succeeds when the upstream recovers', async () => {
    server.setHandler((_request, index) =>
      index < 2 ? { kind: 'raw', status: 503, body: 'unavailable' } : echo(_request, index),
    )
    const c = client({ maxRetries: 3, retryBaseDelayMs: 40 })
    const started = performance.now()
    expect(await c.call('eth_blockNumber')).toBe('eth_blockNumber:[]')
    const elapsed = performance.now() - started
    expect(server.requests).toHaveLength(3)
    expect(elapsed).toBeGreaterThanOrEqual(40 + 80 - 5) // 40 ms, then 80 ms
    expect(c.stats()).toMatchObject({ retries: 2, errors: 0 })
  })

  it('a garbage body is reason malformed and is not retried', async () => {
    server.setHandler(() => ({ kind: 'raw', body: '<html>502 gateway</html>' }))
    const c = client({ maxRetries: 3 })
    const error = await rejectionOf(c.call('eth_getCode', ['0xab', '0x1']), UpstreamError)
    expect(error.reason).toBe('malformed')
    expect(error.details).toEqual({ method: 'eth_getCode' })
    expect(server.requests).toHaveLength(1)
  })

  it('a batch answer missing an item, or an item without result, is reason malformed', async () => {
    server.setHandler(({ items }) => ({
      kind: 'json',
      body: [{ jsonrpc: '2.0', id: items[0]!.id, result: '0x1' }, { jsonrpc: '2.0', id: items[1]!.id }],
    }))
    const c = client()
    const [first, second, third] = await Promise.allSettled([c.call('m_first'), c.call('m_second'), c.call('m_third')])
    expect(first).toEqual({ status: 'fulfilled', value: '0x1' })
    expect(((second as PromiseRejectedResult).reason as UpstreamError).reason).toBe('malformed')
    const missing = (third as PromiseRejectedResult).reason as UpstreamError
    expect(missing.reason).toBe('malformed')
    expect(missing.details?.method).toBe('m_third')
  })

  it('an upstream that never answers times out (reason timeout), retries bounded, within the time budget', async () => {
    server.setHandler(() => ({ kind: 'hang' }))
    const c = client({ timeoutMs: 150, maxRetries: 1, retryBaseDelayMs: 20 })
    const started = performance.now()
    const error = await rejectionOf(c.call('eth_blockNumber'), UpstreamError)
    const elapsed = performance.now() - started
    expect(error.reason).toBe('timeout')
    expect(error.details).toEqual({ method: 'eth_blockNumber' })
    expect(server.requests).toHaveLength(2)
    expect(elapsed).toBeGreaterThanOrEqual(2 * 150 + 20 - 10)
    expect(elapsed).toBeLessThan(2_000)
  })

  it('a refused connection is reason network, retried a bounded number of times', async () => {
    const c = new UpstreamClient({ url: await deadUrl(), maxRetries: 2, retryBaseDelayMs: 5 })
    clients.push(c)
    const error = await rejectionOf(c.call('eth_chainId'), UpstreamError)
    expect(error.reason).toBe('network')
    expect(error.details).toEqual({ method: 'eth_chainId' })
    expect(c.stats()).toMatchObject({ httpRequests: 3, retries: 2, errors: 1 })
  })

  it('close() rejects calls in flight and refuses new ones', async () => {
    server.setHandler(() => ({ kind: 'hang' }))
    const c = client({ timeoutMs: 10_000 })
    const pending = rejectionOf(c.call('eth_blockNumber'), UpstreamError)
    await new Promise((resolve) => setTimeout(resolve, 50))
    c.close()
    expect((await pending).reason).toBe('network')
    expect((await rejectionOf(c.call('eth_chainId'), UpstreamError)).message).toContain('closed')
  })
})
