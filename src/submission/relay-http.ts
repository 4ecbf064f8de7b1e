/**
 * The HTTP client a relay's requests go out through: node:http(s) over one keep-alive agent per
 * relay, in place of globalThis.fetch.
 *
 * At every head the dispatcher re-sends every open submission's bundle to every relay, so these
 * requests are most of the main thread's work after a head. Measured in one process against a
 * local server (scratch, 2026-11-27, BENCHMARKS.md "Private submission", ninth session), 3,000
 * POSTs of a one-transaction bundle, 32 at once: fetch 0.60 CPU ms and ~73 KB of garbage per
 * request (its Request, Headers and web streams), node:http with a keep-alive agent 0.21 ms and
 * ~40 KB. The transport keeps its timeout, retries and error type (src/transport): this is only
 * the call it makes.
 *
 * Bounds: at most `maxSockets` connections to the relay (its `maxConcurrentRequests`; the
 * RelayClient's limiter already holds requests to that many), at most that many idle ones kept,
 * and an answer of at most `maxAnswerBytes` (a larger one fails the attempt as a network error).
 * Idle sockets do not keep the process alive (Node unrefs a kept-alive free socket).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

import type { FetchLike } from '../transport/json-rpc-transport.ts'

export interface KeepAliveHttp {
  /** one POST, its answer read whole (the transport's FetchLike) */
  fetch: FetchLike
  /** closes the idle connections; requests in flight finish */
  close(): void
}

export function keepAliveHttp(url: string, limits: { maxSockets: number; maxAnswerBytes: number }): KeepAliveHttp {
  const https = new URL(url).protocol === 'https:'
  const agentOptions = { keepAlive: true, maxSockets: limits.maxSockets, maxFreeSockets: limits.maxSockets }
  const agent = https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions)
  const request = https ? httpsRequest : httpRequest
  const fetch: FetchLike = (target, init) =>
    new Promise((resolve, reject) => {
      const signal = init.signal
      if (signal.aborted) {
        reject(abortError(signal))
        return
      }
      const headers: Record<string, string | number> = { ...init.headers, 'content-length': Buffer.byteLength(init.body) }
      const req = request(target, { method: init.method, headers, agent }, (res) => {
        readAnswer(res, limits.maxAnswerBytes).then((text) => {
          const answer = { status: res.statusCode ?? 0, text: () => Promise.resolve(text) }
          resolve(answer)
        }, reject)
      })
      // The abort as one listener, removed when the request closes, instead of http.request's
      // `signal` option: that one also follows the request's end of stream (finished(), a handful of
      // listeners on it and its socket) for every request, ~10-15% of a relay send's main-thread
      // CPU. Aborting destroys the request, so an answer being read is cut off ('close' without 'end').
      const onAbort = (): void => void req.destroy(abortError(signal))
      signal.addEventListener('abort', onAbort, { once: true })
      req.once('close', () => signal.removeEventListener('abort', onAbort))
      req.on('error', reject)
      req.end(init.body)
    })
  return { fetch, close: () => agent.destroy() }
}

/** What an aborted request fails with: Node's AbortError, as http.request's `signal` option gives it, the abort's reason as cause. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' })
}

function readAnswer(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let ended = false
    res.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        res.destroy(new Error(`the answer is larger than ${maxBytes} bytes`))
        return
      }
      chunks.push(chunk)
    })
    res.on('end', () => {
      ended = true
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'))
    })
    res.on('error', reject)
    // aborted mid-answer (the attempt's timeout or the caller's signal): 'close' without 'end'
    res.on('close', () => {
      if (!ended) reject(new Error('the answer was cut off before its end'))
    })
  })
}
