/**
 * A property probe of issue 11's "what must hold", over the app as npm start composes it
 * (buildApp, with the service's own logger options at trace level): random requests, canonical
 * or not (paths with the partner token in any place, percent-encoded, doubled slashes, dot
 * segments, other case; the API key, the token and other secrets in headers, queries and
 * bodies; any method and body), and for every one of them:
 * - no secret in any log line, nor in the answer unless the request's own body carried it
 *   (a validation error may quote a field back to its sender);
 * - the documented shape: JSON-RPC 2.0 on the JSON-RPC endpoints (`/rpc/...`), `{ code, message[,
 *   details] }` with a documented code on every other error, JSON everywhere but /metrics;
 * - authentication first: a quote without the API key is 401, a submission status without the
 *   partner's bearer token is 401, a JSON-RPC endpoint under an unknown token is 401 with -32001,
 *   whatever else is wrong with the request.
 */
import { Writable } from 'node:stream'
import fc from 'fast-check'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serviceLoggerOptions } from '../../src/server/app.ts'
import { HTTP_ERROR_CODES } from '../../src/server/openapi/components.ts'
import { buildFullApp, FULL_APP_API_KEY as API_KEY, FULL_APP_TOKEN as TOKEN } from './full-app.ts'

/** secrets a client may send where they do not belong; none may reach a log line */
const WRONG_KEY = 'wrong-api-key-Secret-4242'
const WRONG_TOKEN = 'wrong-partner-tok-Secret-77'
const PRIVATE_KEY = `0x${'5ec7e7'.repeat(10)}abcd`
const SECRETS = [API_KEY, TOKEN, WRONG_KEY, WRONG_TOKEN, PRIVATE_KEY]
const HASH = `0x${'ab'.repeat(32)}`
const RPC_UNAUTHORIZED = -32001

const lines: string[] = []
let app: FastifyInstance

beforeAll(async () => {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      lines.push(chunk.toString())
      callback()
    },
  })
  app = await buildFullApp({ loggerInstance: pino(serviceLoggerOptions('trace'), stream) })
})
afterAll(() => app?.close())

/** a secret, or a word of ours, in one of the spellings a client may use */
const spelled = (word: string) => fc.constantFrom(word, encodeURIComponent(word), word.toUpperCase(), word.split('').map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''))
const secret = fc.constantFrom(...SECRETS)
/**
 * The secrets that are not 32 bytes of hex: after /v1/submissions/ a 32-byte hash is logged as it
 * is (it names a public transaction), and a private key has that form.
 */
const notHashShaped = fc.constantFrom(...SECRETS.filter((s) => s !== PRIVATE_KEY))

const path = fc.oneof(
  fc.tuple(fc.constantFrom('/', '//'), spelled('rpc'), fc.constantFrom('/', '//', '/x/../'), fc.oneof(fc.constant(TOKEN), secret, spelled(TOKEN)), fc.constantFrom('', '/', '/backrun', '/submit', '/backrun/', '/submit/x', '/../backrun', '%2Fbackrun')).map(([a, rpc, b, token, rest]) => `${a}${rpc}${b}${token}${rest}`),
  fc.tuple(fc.constantFrom('/v1/quote', '/v1/quote/', '/V1/QUOTE', '/v1//quote', '/v1/quote/x/..'), fc.option(secret)).map(([p, s]) => (s === null ? p : `${p}?key=${s}`)),
  fc.tuple(fc.constantFrom('/v1/submissions/', '/v1/submissions//', '/V1/submissions/'), fc.oneof(fc.constant(HASH), notHashShaped, fc.constant('%zz'), fc.constant('0x' + 'a'.repeat(1_000)))).map(([p, h]) => `${p}${h}`),
  fc.tuple(fc.constantFrom('/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/', '/docs', '/%zz'), fc.option(secret)).map(([p, s]) => (s === null ? p : `${p}/${s}?t=${s}`)),
  secret.map((s) => `/${s}`),
)

const headers = fc.record(
  {
    'x-api-key': fc.constantFrom(API_KEY, WRONG_KEY, ''),
    authorization: fc.constantFrom(`Bearer ${TOKEN}`, `Bearer ${WRONG_TOKEN}`, TOKEN, `Basic ${WRONG_KEY}`),
    'x-flashbots-signature': fc.constantFrom(`0x${'12'.repeat(20)}:${PRIVATE_KEY}`),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', '/////'),
  },
  { requiredKeys: [] },
)

const body = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('{', '[]', '{}', 'null', '[{}]'),
  fc.constant(JSON.stringify({ tokenIn: `0x${'11'.repeat(20)}`, tokenOut: `0x${'22'.repeat(20)}`, amountIn: '1000' })),
  secret.map((s) => JSON.stringify({ tokenIn: s, tokenOut: s, amountIn: s })),
  fc.tuple(fc.constantFrom('eth_backrun', 'eth_sendPrivateRawTransaction', 'eth_sendBundle', 'eth_notifyRawTransaction', 'eth_call'), secret).map(([method, s]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [{ tx: s, txs: [s], to: s, calldata: s, tokenIn: s, amountIn: s }] })),
  secret.map((s) => JSON.stringify([{ jsonrpc: '2.0', id: s, method: 'eth_sendBundle', params: [{ txs: [s] }] }])),
)

const request = fc.record({ method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'), url: path, headers, body })

type Injected = Awaited<ReturnType<FastifyInstance['inject']>>

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** the first path segment as the router reads it (empty for `//...`), percent-decoded */
function firstSegment(url: string): string {
  return decoded(url.replace(/^\//, '').split(/[/?#]/)[0] ?? '')
}

function expectJsonRpcShape(res: Injected): void {
  const body = res.json() as Record<string, unknown> | unknown[]
  const answers = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[]
  for (const answer of answers) {
    expect(answer.jsonrpc, res.body).toBe('2.0')
    if ('error' in answer) {
      const error = answer.error as Record<string, unknown>
      expect(Object.keys(error).every((k) => ['code', 'message', 'data'].includes(k)), res.body).toBe(true)
      expect(Number.isInteger(error.code), res.body).toBe(true)
      expect(typeof error.message, res.body).toBe('string')
    } else {
      expect('result' in answer, res.body).toBe(true)
    }
  }
}

function expectHttpShape(res: Injected): void {
  if (res.statusCode < 400) return
  const error = res.json() as Record<string, unknown>
  expect(Object.keys(error).every((k) => ['code', 'message', 'details'].includes(k)), res.body).toBe(true)
  expect(HTTP_ERROR_CODES, res.body).toContain(error.code)
  expect(typeof error.message, res.body).toBe('string')
}

/** JSON-RPC 2.0 under /rpc, `{ code, message[, details] }` elsewhere; JSON on every route but /metrics */
function expectDocumentedShape(url: string, res: Injected, method: string): void {
  if (method === 'HEAD') return // no body
  if (firstSegment(url) === 'metrics' && res.statusCode === 200) return // Prometheus text
  expect(res.headers['content-type'], `${method} ${url}`).toMatch(/^application\/json/)
  const segment = firstSegment(url)
  if (segment === 'rpc') return expectJsonRpcShape(res)
  if (segment.toLowerCase() === 'rpc' && 'jsonrpc' in (res.json() as object)) return expectJsonRpcShape(res)
  expectHttpShape(res)
}

describe('the front door under random requests, canonical or not', () => {
  it('logs no secret, answers in the documented shape, and authenticates first', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ method, url, headers: sent, body: payload }) => {
        const before = lines.length
        const options: InjectOptions = { method: method as InjectOptions['method'], url, headers: sent, ...(payload === undefined ? {} : { payload }) }
        const res = await app.inject(options)
        const logged = lines.slice(before).join('')
        for (const s of SECRETS) {
          expect(logged, `${method} ${url}: a log line holds a secret`).not.toContain(s)
          if (!(payload ?? '').includes(s)) expect(res.body, `${method} ${url}: the answer holds a secret`).not.toContain(s)
        }
        expectDocumentedShape(url, res, method)

        // authentication first, on the routes that need it (a path no route serves is a 404 for anyone)
        const keyOk = sent['x-api-key'] === API_KEY
        const bearerOk = sent.authorization === `Bearer ${TOKEN}`
        if (method === 'POST' && /^\/v1\/quote(\?|$)/.test(url) && !keyOk) expect(res.statusCode, res.body).toBe(401)
        if ((method === 'GET' || method === 'HEAD') && /^\/v1\/submissions\/[^/?#]+$/.test(url) && !bearerOk) expect(res.statusCode, res.body).toBe(401)
        const rpc = /^\/rpc\/([^/?#]+)\/(backrun|submit)$/.exec(url)
        if (method === 'POST' && rpc !== null && decoded(rpc[1]!) !== TOKEN) {
          expect(res.statusCode, res.body).toBe(401)
          expect((res.json() as { error: { code: number } }).error.code).toBe(RPC_UNAUTHORIZED)
        }
      }),
      { numRuns: 400 },
    )
  })
})
