import { getEventListeners } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { afterEach, describe, expect, it } from 'vitest'

import { RelayClient, relayEndpointProblems } from '../../src/submission/relay-client.ts'
import { keepAliveHttp } from '../../src/submission/relay-http.ts'
import { RelayError } from '../../src/submission/errors.ts'
import { SearcherKey } from '../../src/submission/searcher-key.ts'
import { SEARCHER_KEY_HEX, startRelay, userTx, type RecordingRelay } from './helpers.ts'
import { rejectionOf } from '../support/rejection.ts'

const key = SearcherKey.fromHex(SEARCHER_KEY_HEX)
const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function server(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s: Server = createServer(handler)
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  // connections first: close() waits for them, and a test may leave one unanswered
  closers.push(() => void s.closeAllConnections())
  closers.push(() => new Promise<void>((resolve) => s.close(() => resolve())) as Promise<void>)
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/`
}

describe('a relay client over its keep-alive connections (relay-http.ts)', () => {
  it('opens at most maxConcurrentRequests connections however many sends are issued at once', async () => {
    const r: RecordingRelay = await startRelay({ delayMs: 20 })
    closers.push(() => r.close())
    const client = new RelayClient({ name: 'r', url: r.url, maxConcurrentRequests: 3 }, key)
    const user = await userTx(0)
    await Promise.all(Array.from({ length: 24 }, (_, i) => client.sendBundle({ entries: [{ tx: user }], blockNumber: BigInt(i + 1) })))
    expect(r.requests).toHaveLength(24)
    expect(new Set(r.requests.map((q) => q.remotePort)).size).toBeLessThanOrEqual(3)
  })

  it('an answer larger than maxAnswerBytes fails its attempts as a network error, retried then refused', async () => {
    const url = await server((req, res) => {
      req.resume()
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { bundleHash: `0x${'ab'.repeat(4096)}` } })))
    })
    const client = new RelayClient({ name: 'big', url, maxAnswerBytes: 1024, maxAttempts: 2, backoff: { baseMs: 1, maxMs: 2 } }, key)
    const error = await rejectionOf(client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }), RelayError)
    expect(error.reason).toBe('network')
    expect(error.attempts).toBe(2)
    expect(error.message).toMatch(/larger than 1024 bytes/)
  })

  it('an answer that stalls mid-body times out (the attempt timer covers the body)', async () => {
    const url = await server((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' })
        res.write('{"jsonrpc":"2.0",') // and never the rest
      })
    })
    const client = new RelayClient({ name: 'stall', url, timeoutMs: 200, maxAttempts: 1 }, key)
    const error = await rejectionOf(client.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }), RelayError)
    expect(error.reason).toBe('timeout')
  })

  it('a refused connection is a network error; close() ends the idle connections', async () => {
    const url = await server((req, res) => {
      req.resume()
      req.on('end', () => res.end('{"jsonrpc":"2.0","id":1,"result":null}'))
    })
    const http = keepAliveHttp(url, { maxSockets: 2, maxAnswerBytes: 1024 })
    const answer = await http.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: new AbortController().signal })
    expect(answer.status).toBe(200)
    expect(JSON.parse(await answer.text())).toEqual({ jsonrpc: '2.0', id: 1, result: null })
    http.close()
    const closed = new RelayClient({ name: 'gone', url: 'http://127.0.0.1:1/', maxAttempts: 1 }, key)
    expect((await rejectionOf(closed.sendBundle({ entries: [{ tx: await userTx(0) }], blockNumber: 1n }), RelayError)).reason).toBe('network')
  })

  it('an abort destroys the request at once, one already aborted sends nothing, and a request done leaves no listener on its signal', async () => {
    let received = 0
    const url = await server((req, res) => {
      received++
      req.resume()
      // the first request is never answered; the others are
      if (received > 1) req.on('end', () => res.end('{"jsonrpc":"2.0","id":1,"result":null}'))
    })
    const http = keepAliveHttp(url, { maxSockets: 2, maxAnswerBytes: 1024 })
    closers.push(() => http.close())
    const init = (signal: AbortSignal) => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: '{}', signal })
    const stalled = new AbortController()
    const pending = http.fetch(url, init(stalled.signal))
    while (received === 0) await new Promise((r) => setTimeout(r, 5))
    const reason = new Error('block built')
    stalled.abort(reason)
    const notAborted = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting 2 s after the abort')), 2_000))
    const error = await rejectionOf(Promise.race([pending, notAborted]), Error)
    expect(error.name).toBe('AbortError')
    expect(error.cause).toBe(reason)
    expect(getEventListeners(stalled.signal, 'abort')).toHaveLength(0)

    const before = new AbortController()
    before.abort(reason)
    expect((await rejectionOf(http.fetch(url, init(before.signal)), Error)).name).toBe('AbortError')
    expect(received).toBe(1)

    const kept = new AbortController()
    expect((await http.fetch(url, init(kept.signal))).status).toBe(200)
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0)
  })

  it('maxAnswerBytes must be a positive integer', () => {
    expect(relayEndpointProblems({ name: 'r', url: 'http://127.0.0.1:1/', maxAnswerBytes: 0 })).toEqual(['maxAnswerBytes must be a positive integer'])
    expect(relayEndpointProblems({ name: 'r', url: 'http://127.0.0.1:1/', maxAnswerBytes: 4096 })).toEqual([])
  })
})
