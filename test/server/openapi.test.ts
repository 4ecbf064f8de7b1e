/**
 * GET /v1/openapi.json of the app as npm start composes it: it describes every route the app
 * registered (compared with the app's own route list) and every documented answer, it is a
 * structurally valid OpenAPI 3.0 document, and real answers conform to the schemas it publishes.
 */
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listRegisteredRoutes } from '../../src/server/openapi/openapi.ts'
import { buildFullApp, FULL_APP_TOKEN as TOKEN } from './full-app.ts'
import { openApiProblems, resolvePointer, schemaViolations } from './openapi-check.ts'

type Json = Record<string, unknown>

let app: FastifyInstance
let doc: Json
let paths: Record<string, Record<string, Json>>

beforeAll(async () => {
  app = await buildFullApp()
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  doc = res.json()
  paths = doc.paths as typeof paths
})
afterAll(() => app?.close())

/** where a route appears in the document: relative to the /v1 server, or from the root with its own server */
function documentedPath(url: string): string {
  const relative = url.startsWith('/v1/') ? url.slice('/v1'.length) : url
  return relative.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/** the JSON schema of a response, references followed */
function responseSchema(op: Json, status: string): Json {
  const response = (op.responses as Record<string, Json>)[status]
  return ((response.content as Record<string, Json>)['application/json'] as Json).schema as Json
}

describe('the OpenAPI document lists every route', () => {
  it('every registered route (but HEAD twins and the /rpc/ catch-all) is an operation, and every operation a registered route', () => {
    const routes = listRegisteredRoutes(app)
    // the JSON-RPC plugin's catch-all (any method, any path under /rpc/: a JSON-RPC 404/405) has no OpenAPI form
    const documentable = routes.filter((r) => r.method !== 'HEAD' && r.url !== '/rpc/*')
    expect(documentable.map((r) => `${r.method} ${r.url}`).sort()).toEqual(
      [
        'GET /healthz',
        'GET /metrics',
        'GET /readyz',
        'GET /v1/openapi.json',
        'GET /v1/submissions/:hash',
        'POST /rpc/:partnerToken/backrun',
        'POST /rpc/:partnerToken/submit',
        'POST /v1/quote',
      ].sort(),
    )
    for (const route of documentable) {
      expect(paths[documentedPath(route.url)]?.[route.method.toLowerCase()], `${route.method} ${route.url}`).toBeDefined()
    }
    const operations = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    expect(operations.sort()).toEqual(documentable.map((r) => `${r.method.toLowerCase()} ${documentedPath(r.url)}`).sort())
  })

  it('operations outside /v1 carry the root server, those under /v1 the document server /v1', () => {
    expect(doc.servers).toEqual([{ url: '/v1' }])
    for (const path of ['/healthz', '/readyz', '/metrics', '/rpc/{partnerToken}/backrun', '/rpc/{partnerToken}/submit']) {
      for (const op of Object.values(paths[path])) expect((op.servers as Json[])[0]).toMatchObject({ url: '/' })
    }
    for (const path of ['/quote', '/submissions/{hash}', '/openapi.json']) for (const op of Object.values(paths[path])) expect(op.servers).toBeUndefined()
  })

  it('is structurally valid OpenAPI 3.0: paths, parameters, responses, and every referenced component exists', () => {
    expect(openApiProblems(doc)).toEqual([])
    const schemas = (doc.components as Json).schemas as Json
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'ErrorResponse',
        'Health',
        'Readiness',
        'JsonRpcErrorResponse',
        'EthBackrunRequest',
        'EthBackrunParams',
        'EthBackrunResult',
        'EthSendPrivateRawTransactionRequest',
        'EthSendBundleRequest',
        'EthNotifyRawTransactionRequest',
        'SubmissionHashResponse',
        'SubmissionStatusResponse',
        'SubmissionStatus',
        'BlockView',
        'FinalState',
      ]),
    )
  })
})

describe('what the document says', () => {
  it('the JSON-RPC endpoints: the request envelope, each method with its params and result, and the errors', () => {
    const backrun = paths['/rpc/{partnerToken}/backrun'].post
    const body = JSON.stringify((backrun.requestBody as Json).content)
    expect(body).toContain('#/components/schemas/EthBackrunRequest')
    const request = resolvePointer(doc, '#/components/schemas/EthBackrunRequest') as Json
    expect((request.properties as Json).method).toEqual({ type: 'string', enum: ['eth_backrun'] })
    expect(JSON.stringify((request.properties as Json).params)).toContain('#/components/schemas/EthBackrunParams')
    expect(Object.keys(backrun.responses as Json).sort()).toEqual(['200', '401', '413'])
    expect(JSON.stringify(responseSchema(backrun, '200'))).toContain('#/components/schemas/EthBackrunResponse')
    expect(JSON.stringify(responseSchema(backrun, '200'))).toContain('#/components/schemas/JsonRpcErrorResponse')
    expect(backrun.parameters).toEqual([expect.objectContaining({ in: 'path', name: 'partnerToken', required: true })])

    const submit = paths['/rpc/{partnerToken}/submit'].post
    const submitBody = JSON.stringify((submit.requestBody as Json).content)
    for (const method of ['EthSendPrivateRawTransactionRequest', 'EthSendBundleRequest', 'EthNotifyRawTransactionRequest']) expect(submitBody).toContain(`#/components/schemas/${method}`)
    expect(JSON.stringify(responseSchema(submit, '200'))).toContain('#/components/schemas/SubmissionHashResponse')
    const errorObject = resolvePointer(doc, '#/components/schemas/JsonRpcErrorObject') as Json
    expect(((errorObject.properties as Json).code as Json).enum).toEqual([-32700, -32600, -32601, -32000, -32001, -32603])
  })

  it('GET /submissions/{hash}: bearer auth, the status with blocks and final, and its times', () => {
    const op = paths['/submissions/{hash}'].get
    expect(op.security).toEqual([{ PartnerBearerAuth: [] }])
    expect(((doc.components as Json).securitySchemes as Json).PartnerBearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(Object.keys(op.responses as Json).sort()).toEqual(['200', '400', '401', '404', '500'])
    const status = resolvePointer(doc, '#/components/schemas/SubmissionStatus') as Json
    const props = status.properties as Record<string, Json>
    expect(props.receivedAt).toMatchObject({ type: 'string', format: 'date-time' })
    expect(props.receivedAtMs).toMatchObject({ type: 'integer' })
    expect(String(props.receivedAtMs.description)).toMatch(/milliseconds/)
    expect(JSON.stringify(props.blocks)).toContain('#/components/schemas/BlockView')
    expect(JSON.stringify(props.final)).toContain('#/components/schemas/FinalState')
    const final = resolvePointer(doc, '#/components/schemas/FinalState') as Json
    expect(String(((final.properties as Json).at as Json).description)).toMatch(/milliseconds/)
    expect(String(op.description)).toMatch(/ISO 8601/)
  })

  it('the operational routes and the quote', () => {
    expect(Object.keys(paths['/metrics'].get.responses as Json)).toEqual(['200'])
    expect(Object.keys((paths['/metrics'].get.responses as Record<string, Json>)['200'].content as Json)[0]).toMatch(/^text\/plain/)
    expect(Object.keys(paths['/readyz'].get.responses as Json).sort()).toEqual(['200', '503'])
    expect(paths['/quote'].post.operationId).toBe('getSwapQuote')
    expect(((responseSchema(paths['/quote'].post, '422').properties as Json).details as Json).properties).toMatchObject({
      reason: { enum: expect.arrayContaining(['AMOUNT_TOO_SMALL', 'INSUFFICIENT_LIQUIDITY']) },
    })
  })
})

describe('real answers conform to the published schemas', () => {
  const check = async (path: string, method: string, status: string, inject: InjectOptions) => {
    const res = await app.inject(inject)
    expect(String(res.statusCode)).toBe(status)
    expect(schemaViolations(doc, responseSchema(paths[path][method], status), res.json()), `${method} ${path} ${status}`).toEqual([])
  }
  it('health, readiness, the status route and the JSON-RPC endpoints', async () => {
    await check('/healthz', 'get', '200', { method: 'GET', url: '/healthz' })
    await check('/readyz', 'get', '200', { method: 'GET', url: '/readyz' })
    await check('/submissions/{hash}', 'get', '401', { method: 'GET', url: `/v1/submissions/0x${'ab'.repeat(32)}` })
    await check('/submissions/{hash}', 'get', '400', { method: 'GET', url: '/v1/submissions/0x1', headers: { authorization: `Bearer ${TOKEN}` } })
    await check('/submissions/{hash}', 'get', '404', { method: 'GET', url: `/v1/submissions/0x${'ab'.repeat(32)}`, headers: { authorization: `Bearer ${TOKEN}` } })
    const rpc = (endpoint: string, payload: unknown, token = TOKEN) => ({ method: 'POST' as const, url: `/rpc/${token}/${endpoint}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
    await check('/rpc/{partnerToken}/backrun', 'post', '200', rpc('backrun', { jsonrpc: '2.0', id: 1, method: 'eth_backrun', params: [{}] }))
    await check('/rpc/{partnerToken}/backrun', 'post', '401', rpc('backrun', { jsonrpc: '2.0', id: 1, method: 'eth_backrun', params: [{}] }, 'unknown-token-0123456789'))
    await check('/rpc/{partnerToken}/submit', 'post', '200', rpc('submit', [{ jsonrpc: '2.0', id: 'a', method: 'eth_sendPrivateRawTransaction', params: [{ tx: '0x01' }] }]))
  })
})
