/**
 * The JSON-RPC transport against a real HTTP server started here: timeouts per attempt, bounded
 * retries with backoff, final and retryable failures, the caller's abort, batches matched by id,
 * per-request headers over the exact body, the concurrency bound, and URLs kept out of messages.
 */
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'

import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import { BaseError } from '../../src/primitives/base-error.ts'
import { Limiter } from '../../src/submission/limiter.ts'
import { JsonRpcTransport, TransportError, type JsonRpcTransportOptions } from '../../src/transport/index.ts'
import { deadUrl } from '../chain/fork/fake-upstream.ts'
import { startScriptedNode, type ScriptedNode } from './scripted-node.ts'

let node: ScriptedNode
const transports: JsonRpcTransport[] = []

beforeEach(async () => {
  node = await startScriptedNode()
})
afterEach(async () => {
  for (const t of transports.splice(0)) t.close()
  await node.close()
})

function transport(options: Partial<JsonRpcTransportOptions> = {}): JsonRpcTransport {
  const t = new JsonRpcTransport({ url: node.url, timeoutMs: 2_000, maxAttempts: 3, backoff: { baseMs: 1, maxMs: 5 }, ...options })
  transports.push(t)
  return t
}

async function failure(promise: Promise<unknown>): Promise<TransportError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TransportError)
  return error as TransportError
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

describe('request', () => {
  it('posts one JSON-RPC 2.0 object and resolves with its result, null included', async () => {
    const t = transport({ headers: { 'x-api-key': 'k' } })
    node.script.push({ each: () => null })
    expect(await t.request('eth_getTransactionReceipt', ['0xab'])).toBeNull()
    expect(await t.request('eth_chainId')).toBe('eth_chainId')
    const [first, second] = node.requests
    expect(JSON.parse(first.text)).toEqual({ jsonrpc: '2.0', id: first.calls[0].id, method: 'eth_getTransactionReceipt', params: ['0xab'] })
    expect(second.calls[0].params).toEqual([])
    expect(first.headers['content-type']).toBe('application/json')
    expect(first.headers['x-api-key']).toBe('k')
  })

  it('signs each request with headers made from the exact body sent, once per body, the same bytes on every attempt', async () => {
    const t = transport()
    node.script.push({ status: 503, body: 'busy' })
    let made = 0
    const headers = (body: string) => {
      made++
      return { 'x-body-sha256': sha256(body) }
    }
    expect(await t.request('eth_sendBundle', [{ txs: ['0x01'] }], { headers })).toBe('eth_sendBundle')
    expect(node.requests).toHaveLength(2)
    expect(new Set(node.requests.map((r) => r.text)).size).toBe(1)
    for (const r of node.requests) expect(r.headers['x-body-sha256']).toBe(sha256(r.text))
    expect(made).toBe(1)
  })
})

describe('timeouts and retries', () => {
  it('times out each attempt, retries a bounded number of times, and says so', async () => {
    const t = transport({ timeoutMs: 100, maxAttempts: 2 })
    node.script.push({ hang: true }, { hang: true })
    const started = performance.now()
    const error = await failure(t.request('eth_blockNumber'))
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(error).toMatchObject({ reason: 'timeout', attempts: 2, retryable: true, message: 'eth_blockNumber: no answer within 100 ms' })
    expect(node.requests).toHaveLength(2)
  })

  it('waits base * 2^(retry-1), capped, between attempts (no jitter when the policy says so)', async () => {
    const t = transport({ backoff: { baseMs: 40, maxMs: 60, jitter: 'none' }, maxAttempts: 4 })
    node.script.push({ status: 502, body: '' }, { status: 502, body: '' }, { status: 502, body: '' })
    const delays: number[] = []
    const started = performance.now()
    expect(await t.request('eth_blockNumber', [], { onRetry: ({ delayMs }) => delays.push(delayMs) })).toBe('eth_blockNumber')
    expect(delays).toEqual([40, 60, 60])
    expect(performance.now() - started).toBeGreaterThanOrEqual(40 + 60 + 60 - 5)
    expect(node.requests).toHaveLength(4)
  })

  it('draws full jitter from the injected source: uniform below the cap', async () => {
    const t = transport({ backoff: { baseMs: 100, maxMs: 1_000 }, random: () => 0.5 })
    node.script.push({ status: 503, body: '' }, { status: 503, body: '' })
    const delays: number[] = []
    await t.request('eth_blockNumber', [], { onRetry: ({ delayMs }) => delays.push(delayMs) })
    expect(delays).toEqual([50, 100])
  })

  it('retries timeouts, network failures, HTTP 408/425/429/5xx and JSON-RPC -32005; gives up with retryable true', async () => {
    const t = transport({ maxAttempts: 6 })
    node.script.push(
      { status: 408, body: '' },
      { status: 425, body: '' },
      { status: 429, body: '' },
      { status: 500, body: '' },
      { each: () => ({ error: { code: -32005, message: 'limit exceeded' } }) },
      { each: () => ({ error: { code: -32005, message: 'limit exceeded' } }) },
    )
    const error = await failure(t.request('eth_getLogs', [{}]))
    expect(error).toMatchObject({ reason: 'rpc', rpcCode: -32005, attempts: 6, retryable: true, details: { method: 'eth_getLogs', rpcCode: -32005, retryable: true } })
    expect(node.requests).toHaveLength(6)
  })

  it('does not retry what will not change: HTTP 400, a JSON-RPC error, a garbage body', async () => {
    const t = transport({ maxAttempts: 5 })
    node.script.push({ status: 400, body: 'bad request' })
    expect(await failure(t.request('a'))).toMatchObject({ reason: 'http', status: 400, attempts: 1, retryable: false, message: 'a: HTTP 400: bad request' })
    node.script.push({ each: () => ({ error: { code: -32602, message: 'invalid argument 0', data: { arg: 0 } } }) })
    const rpc = await failure(t.request('b'))
    expect(rpc).toMatchObject({ reason: 'rpc', rpcCode: -32602, attempts: 1, retryable: false, shortMessage: 'JSON-RPC error -32602: invalid argument 0' })
    expect(rpc.details.rpcData).toEqual({ arg: 0 })
    node.script.push({ body: '<html>bad gateway</html>' })
    expect(await failure(t.request('c'))).toMatchObject({ reason: 'malformed', attempts: 1, retryable: false, message: 'c: the answer is not JSON: <html>bad gateway</html>' })
    expect(node.requests).toHaveLength(3)
  })

  it('follows a caller-given retry policy', async () => {
    const t = transport({ retryable: (f) => f.reason === 'malformed' })
    node.script.push({ body: 'garbage' }, { body: 'garbage' })
    expect(await t.request('eth_chainId')).toBe('eth_chainId')
    expect(node.requests).toHaveLength(3)
  })

  it('a refused connection is a network failure, retried', async () => {
    const t = transport({ url: await deadUrl(), maxAttempts: 2 })
    const error = await failure(t.request('eth_chainId'))
    expect(error).toMatchObject({ reason: 'network', attempts: 2, retryable: true })
    expect(error.message).toMatch(/^eth_chainId: request failed: fetch failed \(.*ECONNREFUSED.*\)$/)
    expect(error.cause).toBeInstanceOf(Error)
  })

  it('matches a lone answer by id; strictIds false accepts it whatever its id', async () => {
    node.script.push({ body: { jsonrpc: '2.0', id: 999, result: 'x' } })
    expect(await failure(transport({ maxAttempts: 1 }).request('m'))).toMatchObject({ reason: 'malformed', shortMessage: 'the answer is not a JSON-RPC response to this request' })
    node.script.push({ body: { jsonrpc: '2.0', id: 999, result: 'x' } })
    expect(await transport({ strictIds: false }).request('m')).toBe('x')
  })
})

describe('abort', () => {
  it("the caller's signal aborts the attempt in flight at once", async () => {
    const t = transport({ timeoutMs: 10_000 })
    node.script.push({ hang: true })
    const controller = new AbortController()
    const pending = failure(t.request('eth_call', [], { signal: controller.signal }))
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = performance.now()
    controller.abort(new Error('block passed'))
    const error = await pending
    expect(performance.now() - started).toBeLessThan(100)
    expect(error).toMatchObject({ reason: 'aborted', attempts: 1, retryable: false })
    expect((error.cause as Error).message).toBe('block passed')
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('an aborted signal sends nothing (0 attempts)', async () => {
    const attempts: number[] = []
    const error = await failure(transport().request('eth_call', [], { signal: AbortSignal.abort(), onAttempt: ({ attempt }) => attempts.push(attempt) }))
    expect(error).toMatchObject({ reason: 'aborted', attempts: 0 })
    expect(attempts).toEqual([1])
    expect(node.requests).toHaveLength(0)
  })

  it('an abort during the backoff wait ends it, the last failure as cause', async () => {
    const t = transport({ backoff: { baseMs: 5_000, maxMs: 5_000, jitter: 'none' } })
    node.script.push({ status: 503, body: 'busy' })
    const controller = new AbortController()
    const started = performance.now()
    const error = await failure(t.request('eth_sendBundle', [], { signal: controller.signal, onRetry: () => setTimeout(() => controller.abort(), 20) }))
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(error).toMatchObject({ reason: 'aborted', attempts: 1, shortMessage: 'aborted while waiting to retry' })
    expect(error.cause).toMatchObject({ reason: 'http', status: 503 })
    expect(node.requests).toHaveLength(1)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('close() rejects calls in flight and waiting, and refuses new ones', async () => {
    const t = transport({ timeoutMs: 10_000, backoff: { baseMs: 5_000, maxMs: 5_000, jitter: 'none' } })
    node.script.push({ hang: true }, { status: 503, body: '' })
    const hanging = failure(t.request('a'))
    await new Promise((resolve) => setTimeout(resolve, 30))
    const waiting = failure(t.request('b'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.close()
    expect(await hanging).toMatchObject({ reason: 'aborted', shortMessage: 'the transport was closed' })
    expect(await waiting).toMatchObject({ reason: 'aborted', attempts: 1 })
    expect(await failure(t.request('c'))).toMatchObject({ reason: 'aborted', attempts: 0 })
  })
})

describe('batches', () => {
  it('sends calls in one HTTP request, matches answers by id whatever their order, fails only the failing call', async () => {
    const t = transport()
    node.script.push({ reverse: true, each: (call) => (call.method === 'bad' ? { error: { code: -32601, message: 'no such method' } } : `${call.method}!`) })
    const outcomes = await t.batch([{ method: 'one' }, { method: 'bad' }, { method: 'three', params: [3] }])
    expect(node.requests).toHaveLength(1)
    expect(node.requests[0].batched).toBe(true)
    expect(outcomes[0]).toEqual({ ok: true, result: 'one!' })
    expect(outcomes[2]).toEqual({ ok: true, result: 'three!' })
    expect(outcomes[1]).toMatchObject({ ok: false, error: { reason: 'rpc', rpcCode: -32601, message: 'bad: JSON-RPC error -32601: no such method' } })
  })

  it('sends again only the calls whose failure is retryable', async () => {
    const t = transport()
    node.script.push({ each: (call) => (call.method === 'busy' ? { error: { code: -32005, message: 'try later' } } : 'ok') })
    const outcomes = await t.batch([{ method: 'fine' }, { method: 'busy' }])
    expect(outcomes).toEqual([
      { ok: true, result: 'ok' },
      { ok: true, result: 'busy' },
    ])
    expect(node.requests.map((r) => r.calls.map((c) => c.method))).toEqual([['fine', 'busy'], ['busy']])
  })

  it('a whole-request error (id null) answers every call; a missing answer is malformed', async () => {
    const t = transport()
    node.script.push({ body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } } })
    const refused = await t.batch([{ method: 'a' }, { method: 'b' }])
    expect(refused.map((o) => (o.ok ? 'ok' : o.error.rpcCode))).toEqual([-32600, -32600])
    node.script.push({ body: [] })
    const none = await t.batch([{ method: 'a' }, { method: 'b' }])
    expect(none.map((o) => (o.ok ? 'ok' : o.error.reason))).toEqual(['malformed', 'malformed'])
  })

  it('batches request() calls of the same tick automatically, split at maxSize; a lone call goes as an object', async () => {
    const t = transport({ batch: { maxSize: 4 } })
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.request(`m${i}`)))
    expect(results[7]).toBe('m7')
    expect(node.requests.map((r) => r.calls.length)).toEqual([4, 4, 2])
    await t.request('alone')
    expect(node.requests[3].batched).toBe(false)
  })
})

describe('limits and secrets', () => {
  it('holds at most the limiter bound in flight; time is counted from when a request leaves the queue', async () => {
    const t = transport({ limiter: new Limiter(1), timeoutMs: 150, maxAttempts: 1 })
    node.script.push({ each: (call) => call.method, delayMs: 100 }, { each: (call) => call.method, delayMs: 100 })
    expect(await Promise.all([t.request('a'), t.request('b')])).toEqual(['a', 'b'])
    expect(node.maxConcurrent).toBe(1)
  })

  it('never quotes the URL: its key in the path or query is redacted from what the server echoes', async () => {
    const key = 'k3y0123456789abcdef'
    const t = transport({ url: `${node.url}v3/${key}?apikey=${key}`, maxAttempts: 1 })
    node.script.push({ status: 404, body: `Cannot POST /v3/${key}?apikey=${key}` })
    const error = await failure(t.request('eth_chainId'))
    expect(error.message).not.toContain(key)
    expect(error.message).toContain('[redacted]')
    expect(JSON.stringify(error.details)).not.toContain(key)
    expect(node.requests[0].path).toBe(`/v3/${key}?apikey=${key}`)
  })

  it('refuses a URL that is not http(s) without quoting it', () => {
    expect(() => new JsonRpcTransport({ url: 'ftp://user:secret@host/' })).toThrow(/^JsonRpcTransport: url must be an http\(s\) URL$/)
    expect(() => new JsonRpcTransport({ url: node.url, maxAttempts: 0 })).toThrow(RangeError)
  })
})

describe('TransportError', () => {
  it('keeps a short message, structured details and the cause; from() re-brands it as a subclass', () => {
    class RelayishError extends TransportError {
      override readonly name: string = 'RelayishError'
    }
    const cause = new Error('socket hang up')
    const error = new TransportError('request failed', { reason: 'network', retryable: true, attempts: 2, method: 'eth_call', cause })
    expect(error.message).toBe('eth_call: request failed')
    expect(error.shortMessage).toBe('request failed')
    expect(error.details).toEqual({ retryable: true, method: 'eth_call' })
    // a member of the service's error family
    expect(error).toBeInstanceOf(BaseError)
    expect(error.walk()).toBe(cause)
    const sub = RelayishError.from(error)
    expect(sub).toBeInstanceOf(RelayishError)
    expect(sub).toBeInstanceOf(TransportError)
    expect(sub).toMatchObject({ name: 'RelayishError', message: 'eth_call: request failed', reason: 'network', attempts: 2, retryable: true, cause })
  })
})
