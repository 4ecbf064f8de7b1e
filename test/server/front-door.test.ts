/**
 * Every answer of the app (buildApp, as npm start composes it) has the documented shape: HTTP
 * routes `{ code, message[, details] }`, the JSON-RPC endpoints JSON-RPC 2.0 errors. No Fastify
 * default body (404, 405, 413, 414, 415, malformed JSON, a path segment over maxParamLength, a
 * malformed URL), no URL or secret repeated in a body, and authentication first where a route
 * needs it.
 */
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFrontDoor } from '../../src/server/http-errors.ts'
import { createPartnerRegistry, jsonRpcLogSerializers, registerJsonRpcRoutes, RPC_INVALID_REQUEST, RPC_UNAUTHORIZED } from '../../src/server/jsonrpc/index.ts'
import { registerOpenApiPlugin } from '../../src/server/openapi/openapi.ts'
import { registerSubmissionStatusRoute } from '../../src/server/rpc/submission-status-route.ts'
import { stubEndpoints } from './jsonrpc/helpers.ts'
import { HTTP_ERROR_CODES } from '../../src/server/openapi/components.ts'
import { buildFullApp, FULL_APP_API_KEY as API_KEY, FULL_APP_TOKEN as TOKEN } from './full-app.ts'

const SECRET = 'S3CRETsegment'
const HASH = `0x${'ab'.repeat(32)}`

let app: FastifyInstance

beforeAll(async () => {
  app = await buildFullApp()
})
afterAll(() => app?.close())

type Injected = Awaited<ReturnType<FastifyInstance['inject']>>

/** `{ code, message[, details] }` with a documented code, and nothing of Fastify's default body */
function expectHttpErrorShape(res: Injected, status: number, code: string): void {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  const body = res.json() as Record<string, unknown>
  expect(Object.keys(body).every((k) => ['code', 'message', 'details'].includes(k)), res.body).toBe(true)
  expect(body.code).toBe(code)
  expect(HTTP_ERROR_CODES).toContain(body.code)
  expect(typeof body.message).toBe('string')
  expect(res.body).not.toContain(SECRET)
  expect(res.body).not.toContain('FST_')
}

function expectJsonRpcErrorShape(res: Injected, status: number, code: number): void {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code, message: expect.any(String) } })
  expect(res.body).not.toContain(SECRET)
  expect(res.body).not.toContain(TOKEN)
}

describe('GET /v1/submissions/{hash} with a hash the router refuses: 401 first, then 400', () => {
  const long = `0x${SECRET}${'a'.repeat(1_000)}`
  it.each([
    ['1,000 characters (over maxParamLength: was a framework 414 echoing the URL)', `/v1/submissions/${long}`],
    ['malformed percent-encoding (was a framework 400 echoing the URL)', `/v1/submissions/%zz${SECRET}`],
  ])('%s', async (_name, url) => {
    const none = await app.inject({ method: 'GET', url })
    expectHttpErrorShape(none, 401, 'UNAUTHORIZED')
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/)
    expectHttpErrorShape(await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer not-a-known-token-000' } }), 401, 'UNAUTHORIZED')
    const ok = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } })
    expectHttpErrorShape(ok, 400, 'VALIDATION_ERROR')
    expect(ok.json().details).toEqual([{ field: 'hash', message: expect.any(String) }])
  })

  it('a short bad hash is answered the same way by the route itself', async () => {
    expectHttpErrorShape(await app.inject({ method: 'GET', url: '/v1/submissions/0x12' }), 401, 'UNAUTHORIZED')
    expectHttpErrorShape(await app.inject({ method: 'GET', url: '/v1/submissions/0x12', headers: { authorization: `Bearer ${TOKEN}` } }), 400, 'VALIDATION_ERROR')
  })
})

describe('the JSON-RPC endpoints with a token segment the router refuses', () => {
  it('POST /rpc/<over maxParamLength>/backrun: 401 -32001 (no token is that long), not a framework 414', async () => {
    const res = await app.inject({ method: 'POST', url: `/rpc/${SECRET}${'t'.repeat(300)}/backrun`, headers: { 'content-type': 'application/json' }, payload: '{}' })
    expectJsonRpcErrorShape(res, 401, RPC_UNAUTHORIZED)
  })
  it('POST /rpc/<malformed percent-encoding>/submit: 401 -32001', async () => {
    const res = await app.inject({ method: 'POST', url: `/rpc/%zz${SECRET}/submit`, headers: { 'content-type': 'application/json' }, payload: '{}' })
    expectJsonRpcErrorShape(res, 401, RPC_UNAUTHORIZED)
  })
  it('GET /rpc/<over maxParamLength>/backrun: 405 with Allow: POST', async () => {
    const res = await app.inject({ method: 'GET', url: `/rpc/${SECRET}${'t'.repeat(300)}/backrun` })
    expectJsonRpcErrorShape(res, 405, RPC_INVALID_REQUEST)
    expect(res.headers.allow).toBe('POST')
  })
  it('a body over the body limit: 413 -32600', async () => {
    const res = await app.inject({ method: 'POST', url: `/rpc/${TOKEN}/submit`, headers: { 'content-type': 'application/json' }, payload: 'x'.repeat(1_100_000) })
    expectJsonRpcErrorShape(res, 413, RPC_INVALID_REQUEST)
  })
})

describe('no framework default body on any other route', () => {
  const big = JSON.stringify({ pad: 'x'.repeat(1_100_000) })
  it.each<[string, InjectOptions, number, string]>([
    ['an unknown path: 404', { method: 'GET', url: `/${SECRET}` }, 404, 'NOT_FOUND'],
    ['an unknown path with a query: 404', { method: 'GET', url: `/v1/${SECRET}?key=${SECRET}` }, 404, 'NOT_FOUND'],
    ['a long segment on no route: 404', { method: 'GET', url: `/v1/submissions/${HASH}/${SECRET}${'z'.repeat(500)}` }, 404, 'NOT_FOUND'],
    ['a malformed URL: 400', { method: 'GET', url: `/%zz${SECRET}` }, 400, 'VALIDATION_ERROR'],
    ['POST /healthz: 405', { method: 'POST', url: '/healthz', headers: { 'content-type': 'application/json' }, payload: '{}' }, 405, 'METHOD_NOT_ALLOWED'],
    ['GET /v1/quote: 405', { method: 'GET', url: '/v1/quote' }, 405, 'METHOD_NOT_ALLOWED'],
    ['DELETE /v1/submissions/{hash}: 405', { method: 'DELETE', url: `/v1/submissions/${HASH}` }, 405, 'METHOD_NOT_ALLOWED'],
    ['a body too large on no route: 404, not a framework 413', { method: 'POST', url: `/${SECRET}`, headers: { 'content-type': 'application/json' }, payload: big }, 404, 'NOT_FOUND'],
    ['a body too large on a GET-only route: 405', { method: 'POST', url: '/readyz', headers: { 'content-type': 'application/json' }, payload: big }, 405, 'METHOD_NOT_ALLOWED'],
    ['an unsupported media type on no route: 404, not a framework 415', { method: 'POST', url: `/${SECRET}`, headers: { 'content-type': 'application/x-secret' }, payload: 'a' }, 404, 'NOT_FOUND'],
    ['a malformed Content-Type on no route: 404', { method: 'POST', url: `/${SECRET}`, headers: { 'content-type': '/////' }, payload: 'a' }, 404, 'NOT_FOUND'],
    ['malformed JSON on no route: 404, not a framework 400', { method: 'POST', url: `/${SECRET}`, headers: { 'content-type': 'application/json' }, payload: '{' }, 404, 'NOT_FOUND'],
    ['POST /v1/quote without a key: 401 first', { method: 'POST', url: '/v1/quote', headers: { 'content-type': 'application/json' }, payload: '{' }, 401, 'UNAUTHORIZED'],
    ['POST /v1/quote, malformed JSON: 400', { method: 'POST', url: '/v1/quote', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, payload: '{' }, 400, 'VALIDATION_ERROR'],
    ['POST /v1/quote, unsupported media type: 400', { method: 'POST', url: '/v1/quote', headers: { 'content-type': 'text/xml', 'x-api-key': API_KEY }, payload: '<a/>' }, 400, 'VALIDATION_ERROR'],
    ['POST /v1/quote, body too large: 400', { method: 'POST', url: '/v1/quote', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, payload: big }, 400, 'VALIDATION_ERROR'],
  ])('%s', async (_name, request, status, code) => {
    const res = await app.inject(request)
    expectHttpErrorShape(res, status, code)
  })

  it('405 names the allowed methods in Allow', async () => {
    expect((await app.inject({ method: 'POST', url: '/healthz' })).headers.allow).toBe('GET, HEAD')
    expect((await app.inject({ method: 'GET', url: '/v1/quote' })).headers.allow).toBe('POST')
    expect((await app.inject({ method: 'PUT', url: `/v1/submissions/${HASH}` })).headers.allow).toBe('GET, HEAD')
  })

  it('the documented routes still answer', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' })
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'ready', mode: 'devnet', chainId: '31337' })
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/v1/openapi.json' })).statusCode).toBe(200)
    const status = await app.inject({ method: 'GET', url: `/v1/submissions/${HASH}`, headers: { authorization: `Bearer ${TOKEN}` } })
    expectHttpErrorShape(status, 404, 'NOT_FOUND')
  })
})

describe('what the front door logs', () => {
  it('requests the router refuses or no route serves are logged with the URL redacted: no token, no secret', async () => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        lines.push(chunk.toString())
        callback()
      },
    })
    // composed as buildApp composes it, with a captured log at trace level
    const partners = createPartnerRegistry([{ partnerId: 'p', token: TOKEN }])
    const door = createFrontDoor({ partners, submissionStatus: true })
    const logged = Fastify({ frameworkErrors: door.frameworkErrors, logger: { level: 'trace', stream, serializers: jsonRpcLogSerializers } })
    door.install(logged)
    await registerOpenApiPlugin(logged)
    registerJsonRpcRoutes(logged, { partners, endpoints: stubEndpoints() })
    registerSubmissionStatusRoute(logged, { store: { findForPartner: async () => [] }, partners })
    await logged.ready()
    const requests: InjectOptions[] = [
      { method: 'POST', url: `/rpc/${TOKEN}${'x'.repeat(200)}/backrun`, payload: '{}' },
      { method: 'POST', url: `/rpc/%zz${TOKEN}/submit`, payload: '{}' },
      { method: 'GET', url: `/v1/submissions/%zz${SECRET}` },
      { method: 'GET', url: `/v1/submissions/${SECRET}${'y'.repeat(1_000)}` },
      { method: 'GET', url: `/${TOKEN}/${SECRET}?key=${SECRET}` },
      { method: 'POST', url: `/%zz${SECRET}`, payload: '{' },
      { method: 'POST', url: `/RPC/${TOKEN}/backrun`, headers: { 'content-type': 'application/x-secret' }, payload: 'a' },
    ]
    for (const request of requests) {
      const res = await logged.inject(request)
      expect(res.body).not.toContain(TOKEN)
      expect(res.body).not.toContain(SECRET)
    }
    await logged.close()
    const text = lines.join('')
    expect(lines.length).toBeGreaterThan(requests.length)
    expect(text).not.toContain(TOKEN)
    expect(text).not.toContain(SECRET)
    expect(text).toContain('[redacted]')
  })
})

describe("requests Node's HTTP parser refuses, over a real socket", () => {
  /** writes `raw` on a fresh connection and reads until the server closes it */
  async function exchange(raw: string): Promise<string> {
    await app.listen({ host: '127.0.0.1', port: 0 }).catch(() => undefined)
    const address = app.server.address()
    const port = typeof address === 'object' && address !== null ? address.port : 0
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(raw))
      let received = ''
      socket.on('data', (chunk) => (received += chunk.toString()))
      socket.on('close', () => resolve(received))
      socket.on('error', reject)
    })
  }
  const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>

  it('a URL over the 16 KiB header limit: 431 in the documented shape (was Fastify\'s default body), nothing of the URL echoed', async () => {
    const response = await exchange(`GET /v1/submissions/0x${SECRET}${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
    expect(response).toMatch(/^HTTP\/1\.1 431 /)
    expect(response).toContain('Content-Type: application/json; charset=utf-8')
    expect(bodyOf(response)).toEqual({ code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'headers', message: expect.any(String) }] })
    expect(response).not.toContain(SECRET)
    expect(response).not.toContain(TOKEN)
  })

  it('a malformed request: 400 in the documented shape', async () => {
    const response = await exchange(`GET /${SECRET} NOT-HTTP\r\n\r\n`)
    expect(response).toMatch(/^HTTP\/1\.1 400 /)
    expect(bodyOf(response)).toMatchObject({ code: 'VALIDATION_ERROR' })
    expect(response).not.toContain(SECRET)
  })
})
