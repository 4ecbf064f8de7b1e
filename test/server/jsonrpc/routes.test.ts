import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Fastify from 'fastify'
import {
  createPartnerRegistry,
  jsonRpcLogSerializers,
  registerJsonRpcRoutes,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_PARAMS,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RPC_UNAUTHORIZED,
} from '../../../src/server/jsonrpc/index.ts'
import {
  buildTestApp,
  post,
  request,
  rpcUrl,
  SECRET_INTERNAL_MESSAGE,
  stubEndpoints,
  TOKEN_ALPHA,
  TOKEN_BETA,
  TOKEN_UNKNOWN,
  TX_HASH,
  type TestApp,
} from './helpers.ts'

const RAW_TX = '0x02f8'

describe('JSON-RPC routes over app.inject', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.app.close())

  describe('success envelope (spec 2.5)', () => {
    it('answers a valid request with jsonrpc, the echoed id and result, as JSON', async () => {
      const res = await post(t.app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: RAW_TX }], 7))
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.body).toBe(`{"jsonrpc":"2.0","id":7,"result":"${TX_HASH}"}`)
    })

    it('echoes a string id', async () => {
      const res = await post(t.app, 'backrun', request('eth_backrun', [{ to: '0xabc' }], 'req-α-1'))
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 'req-α-1', result: { contract: '0xabc' } })
    })

    it('sends null for a handler that resolves with null or undefined', async () => {
      expect((await post(t.app, 'backrun', request('eth_backrun', [{}], 1))).json()).toEqual({ jsonrpc: '2.0', id: 1, result: null })
      expect((await post(t.app, 'submit', request('test_undefined', [{}], 2))).json()).toEqual({ jsonrpc: '2.0', id: 2, result: null })
    })

    it("passes the token's partner id and the request id to the handler", async () => {
      const a = (await post(t.app, 'submit', request('test_context', [{}], 1))).json()
      expect(a.result.partnerId).toBe('alpha')
      expect(a.result.requestId).toMatch(/^req-/)
      const b = (await post(t.app, 'submit', request('test_context', [{}], 1), { token: TOKEN_BETA })).json()
      expect(b.result.partnerId).toBe('beta')
      expect(b.result.requestId).not.toBe(a.result.requestId)
    })

    it.each([
      ['application/json', 'application/json'],
      ['application/json with charset', 'application/json; charset=utf-8'],
      ['text/plain', 'text/plain'],
      ['an unrelated type', 'application/x-www-form-urlencoded'],
      ['no Content-Type at all', null],
    ])('reads the body as JSON whatever the Content-Type: %s', async (_name, contentType) => {
      const res = await post(t.app, 'submit', request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 3), { contentType })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 3, result: TX_HASH })
    })

    it('ignores a leading byte-order mark', async () => {
      const body = `\uFEFF${JSON.stringify(request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 4))}`
      expect((await post(t.app, 'submit', body, { raw: true })).json()).toEqual({ jsonrpc: '2.0', id: 4, result: TX_HASH })
    })

    it('ignores unknown envelope members', async () => {
      const res = await post(t.app, 'submit', { ...request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 5), extra: true })
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 5, result: TX_HASH })
    })
  })

  describe('-32700 parse error', () => {
    it.each([
      ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":"eth_backrun"'],
      ['not JSON at all', "'f"],
      ['an empty body', ''],
      ['two JSON values', '{} {}'],
    ])('%s gives -32700 with id null and HTTP 200 (not Fastify 400)', async (_name, body) => {
      const res = await post(t.app, 'backrun', body, { raw: true })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_PARSE_ERROR, message: expect.any(String) } })
    })

    it('a POST without any body gives -32700', async () => {
      const res = await t.app.inject({ method: 'POST', url: rpcUrl('backrun') })
      expect(res.statusCode).toBe(200)
      expect(res.json().error.code).toBe(RPC_PARSE_ERROR)
    })

    it('an invalid Content-Type header gives a JSON-RPC error, not a Fastify error body', async () => {
      const res = await post(t.app, 'backrun', request('eth_backrun', [{}]), { contentType: '/////' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: RPC_INVALID_REQUEST, message: 'invalid request: malformed Content-Type header' } })
    })

    it.each(['/////', 'text', ' ; a=b'])(
      "a malformed Content-Type (%j) answers with the body's id where the body parses",
      async (contentType) => {
        const withId = await post(t.app, 'submit', request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 'abc-7'), { contentType })
        expect(withId.statusCode).toBe(200)
        expect(withId.json()).toEqual({ jsonrpc: '2.0', id: 'abc-7', error: { code: RPC_INVALID_REQUEST, message: 'invalid request: malformed Content-Type header' } })
        // nothing was dispatched: the request is refused as a whole
        const notJson = await post(t.app, 'submit', '{"id":5', { contentType, raw: true })
        expect(notJson.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_INVALID_REQUEST, message: 'invalid request: malformed Content-Type header' } })
        const batch = await post(t.app, 'submit', [request('eth_notifyRawTransaction', [{ tx: RAW_TX }], 8)], { contentType })
        expect(batch.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_INVALID_REQUEST, message: 'invalid request: malformed Content-Type header' } })
      },
    )

    it('a malformed Content-Type with an unknown token is a 401 first (authentication before anything else)', async () => {
      const res = await post(t.app, 'backrun', request('eth_backrun', [{}], 9), { contentType: '/////', token: TOKEN_UNKNOWN })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 9, error: { code: RPC_UNAUTHORIZED, message: expect.any(String) } })
    })
  })

  describe('-32600 invalid request (envelope, spec 2.4)', () => {
    const valid = { jsonrpc: '2.0', method: 'eth_notifyRawTransaction', params: [{ tx: RAW_TX }] }
    it.each<[string, unknown, string | number | null]>([
      ['a number', 1, null],
      ['null', null, null],
      ['a string', 'eth_backrun', null],
      ['a boolean', true, null],
      ['an empty object', {}, null],
      ['jsonrpc "1.0"', { ...valid, id: 1, jsonrpc: '1.0' }, 1],
      ['jsonrpc 2 as a number', { ...valid, id: 1, jsonrpc: 2 }, 1],
      ['no jsonrpc member', { id: 'a', method: valid.method, params: valid.params }, 'a'],
      ['no method', { jsonrpc: '2.0', id: 2, params: valid.params }, 2],
      ['an empty method', { ...valid, id: 3, method: '' }, 3],
      ['a numeric method', { ...valid, id: 4, method: 1 }, 4],
      ['an object id', { ...valid, id: {} }, null],
      ['an array id', { ...valid, id: [1] }, null],
      ['a boolean id', { ...valid, id: true }, null],
      ['a null id (spec 2.4: number or string)', { ...valid, id: null }, null],
      ['a fractional id', { ...valid, id: 1.5 }, null],
      ['an id JavaScript cannot hold exactly', { ...valid, id: 2 ** 53 }, null],
      ['an unreadable id and a bad version', { ...valid, id: {}, jsonrpc: '1.0' }, null],
    ])('%s -> -32600, id %j', async (_name, body, id) => {
      const res = await post(t.app, 'submit', body)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id, error: { code: RPC_INVALID_REQUEST, message: expect.any(String) } })
    })

    it.each<[string, unknown]>([
      ['no params', undefined],
      ['params null', null],
      ['an empty array', []],
      ['positional params', ['0x02f8']],
      ['two objects', [{ tx: RAW_TX }, {}]],
      ['a bare object (named params)', { tx: RAW_TX }],
      ['an array holding an array', [[RAW_TX]]],
      ['an array holding null', [null]],
      ['a string', 'x'],
    ])('params as %s -> -32600 with the id echoed (params must be [ {…} ])', async (_name, params) => {
      const body: Record<string, unknown> = { jsonrpc: '2.0', id: 9, method: 'eth_sendPrivateRawTransaction' }
      if (params !== undefined) body.params = params
      const res = await post(t.app, 'submit', body)
      expect(res.statusCode).toBe(200)
      const json = res.json()
      expect(json).toEqual({ jsonrpc: '2.0', id: 9, error: { code: RPC_INVALID_REQUEST, message: expect.stringContaining('params') } })
    })

    it('accepts ids that are strings, zero, negative and large safe integers', async () => {
      for (const id of ['', '0x1', 0, -5, Number.MAX_SAFE_INTEGER]) {
        const res = await post(t.app, 'submit', request('eth_notifyRawTransaction', [{ tx: RAW_TX }], id))
        expect(res.json()).toEqual({ jsonrpc: '2.0', id, result: TX_HASH })
      }
    })

    it('drops __proto__ members from the parsed body, also when written with escapes', async () => {
      const body = `{"jsonrpc":"2.0","id":1,"method":"test_context","params":[{"__proto__":{"polluted":1},"\\u005f_proto__":{"x":1}}]}`
      const res = await post(t.app, 'submit', body, { raw: true })
      expect(res.json().result.partnerId).toBe('alpha')
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    })
  })

  describe('-32601 method not found', () => {
    it('an unknown method', async () => {
      const res = await post(t.app, 'submit', request('eth_sendRawTransaction', [{}], 1))
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: RPC_METHOD_NOT_FOUND, message: expect.stringContaining('eth_sendRawTransaction') } })
    })

    it('a submission method on the backrun endpoint names the submit endpoint', async () => {
      const res = await post(t.app, 'backrun', request('eth_sendBundle', [{ txs: [] }], 2))
      const json = res.json()
      expect(json).toEqual({ jsonrpc: '2.0', id: 2, error: { code: RPC_METHOD_NOT_FOUND, message: expect.any(String) } })
      expect(json.error.message).toContain('eth_sendBundle')
      expect(json.error.message).toContain('submit endpoint')
    })

    it('eth_backrun on the submit endpoint names the backrun endpoint', async () => {
      const json = (await post(t.app, 'submit', request('eth_backrun', [{}], 3))).json()
      expect(json.error.code).toBe(RPC_METHOD_NOT_FOUND)
      expect(json.error.message).toContain('backrun endpoint')
    })

    it('is checked before params, so an unknown method without params is still -32601', async () => {
      const json = (await post(t.app, 'submit', { jsonrpc: '2.0', id: 4, method: 'foobar' })).json()
      expect(json.error.code).toBe(RPC_METHOD_NOT_FOUND)
    })

    it('does not treat Object.prototype names as methods', async () => {
      for (const method of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        const json = (await post(t.app, 'submit', request(method, [{}], 5))).json()
        expect(json.error.code).toBe(RPC_METHOD_NOT_FOUND)
      }
    })

    it('a known method whose handler is not registered yet is -32601 "not available"', async () => {
      const partial = await buildTestApp({ endpoints: { backrun: {}, submit: {} } })
      const json = (await post(partial.app, 'backrun', request('eth_backrun', [{}], 6))).json()
      expect(json.error.code).toBe(RPC_METHOD_NOT_FOUND)
      expect(json.error.message).toContain('not available')
      await partial.app.close()
    })

    it('quotes at most 64 characters of a long method name', async () => {
      const json = (await post(t.app, 'submit', request('x'.repeat(5000), [{}], 7))).json()
      expect(json.error.message.length).toBeLessThan(200)
    })
  })

  describe('errors thrown by handlers', () => {
    it('InvalidParamsError -> -32000 with its message', async () => {
      const res = await post(t.app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: 'nothex' }], 1))
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: RPC_INVALID_PARAMS, message: 'tx must be a 0x-prefixed hex string' } })
      expect(RPC_INVALID_PARAMS).toBe(-32000)
    })

    it('JsonRpcError keeps its code, message and data; the error object has exactly these keys', async () => {
      const withData = await post(t.app, 'submit', request('test_customError', [{}], 2))
      expect(withData.body).toBe('{"jsonrpc":"2.0","id":2,"error":{"code":-32050,"message":"custom failure","data":{"retryAfterMs":250}}}')
      const noData = await post(t.app, 'submit', request('test_customErrorNoData', [{}], 3))
      expect(Object.keys(noData.json().error)).toEqual(['code', 'message'])
    })

    it('a plain Error -> -32603 "internal error" without its message, logged with the request id', async () => {
      const res = await post(t.app, 'submit', request('eth_sendBundle', [{ txs: [RAW_TX] }], 4))
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 4, error: { code: RPC_INTERNAL_ERROR, message: 'internal error' } })
      expect(res.body).not.toContain('hunter2')
      expect(res.body).not.toContain('stack')
      const logged = t.logLines().find((l) => l.msg === 'json-rpc handler failed' && (l.err as { message?: string })?.message === SECRET_INTERNAL_MESSAGE)
      expect(logged).toBeDefined()
      expect(logged?.rpcMethod).toBe('eth_sendBundle')
      expect(logged?.rpcRequestId).toBe(logged?.reqId)
      expect(logged?.level).toBe(50)
    })

    it('a handler that throws synchronously -> -32603', async () => {
      const json = (await post(t.app, 'submit', request('test_syncThrow', [{}], 5))).json()
      expect(json).toEqual({ jsonrpc: '2.0', id: 5, error: { code: RPC_INTERNAL_ERROR, message: 'internal error' } })
    })

    it('a result that is not JSON (a BigInt) -> -32603 instead of a crash', async () => {
      const json = (await post(t.app, 'submit', request('test_bigint', [{}], 6))).json()
      expect(json).toEqual({ jsonrpc: '2.0', id: 6, error: { code: RPC_INTERNAL_ERROR, message: 'internal error' } })
    })

    it('error data that is not JSON -> -32603', async () => {
      const json = (await post(t.app, 'submit', request('test_unserializableErrorData', [{}], 7))).json()
      expect(json.error.code).toBe(RPC_INTERNAL_ERROR)
    })
  })

  describe('partner token (-32001, HTTP 401)', () => {
    it('an unknown token gets 401 with the JSON-RPC error and the id echoed', async () => {
      const res = await post(t.app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: RAW_TX }], 'abc'), { token: TOKEN_UNKNOWN })
      expect(res.statusCode).toBe(401)
      expect(res.body).toBe('{"jsonrpc":"2.0","id":"abc","error":{"code":-32001,"message":"unauthorized: unknown partner token"}}')
      expect(RPC_UNAUTHORIZED).toBe(-32001)
    })

    it.each<[string, string]>([
      ['invalid JSON', '{'],
      ['a batch', JSON.stringify([request('eth_backrun', [{}], 1)])],
      ['an unreadable id', JSON.stringify(request('eth_backrun', [{}], { a: 1 }))],
      ['a notification', JSON.stringify({ jsonrpc: '2.0', method: 'eth_backrun', params: [{}] })],
    ])('401 with id null for %s', async (_name, body) => {
      const res = await post(t.app, 'backrun', body, { token: TOKEN_UNKNOWN, raw: true })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'unauthorized: unknown partner token' } })
    })

    it.each([
      ['a prefix of a real token', TOKEN_ALPHA.slice(0, -1)],
      ['a real token with a suffix', `${TOKEN_ALPHA}x`],
      ['another case', TOKEN_ALPHA.toUpperCase()],
      ['a short token', 'x'],
    ])('refuses %s', async (_name, token) => {
      const res = await post(t.app, 'backrun', request('eth_backrun', [{}], 1), { token })
      expect(res.statusCode).toBe(401)
    })

    it('does not run the handler for an unknown token', async () => {
      let calls = 0
      const counted = await buildTestApp({ endpoints: { backrun: { eth_backrun: async () => ++calls }, submit: {} } })
      await post(counted.app, 'backrun', request('eth_backrun', [{}], 1), { token: TOKEN_UNKNOWN })
      expect(calls).toBe(0)
      await counted.app.close()
    })
  })

  describe('other addresses under /rpc/', () => {
    it('GET on an endpoint -> 405 with Allow: POST and a JSON-RPC error body', async () => {
      const res = await t.app.inject({ method: 'GET', url: rpcUrl('backrun') })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow).toBe('POST')
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_INVALID_REQUEST, message: expect.any(String) } })
    })

    it('POST to an unknown endpoint name -> 404 with a JSON-RPC error body', async () => {
      const res = await t.app.inject({ method: 'POST', url: `/rpc/${TOKEN_ALPHA}/quote`, payload: '{}', headers: { 'content-type': 'application/json' } })
      expect(res.statusCode).toBe(404)
      expect(res.json().error.code).toBe(RPC_INVALID_REQUEST)
    })

    it('HEAD on an endpoint answers 405 as well', async () => {
      const res = await t.app.inject({ method: 'HEAD', url: rpcUrl('submit') })
      expect(res.statusCode).toBe(405)
    })
  })
})

describe('body limit', () => {
  it('a body over the app bodyLimit -> 413 with a -32600 "request too large" JSON-RPC body, id null', async () => {
    const t = await buildTestApp({ appBodyLimit: 1024 })
    const big = request('eth_sendPrivateRawTransaction', [{ tx: `0x${'ab'.repeat(2000)}` }], 1)
    const res = await post(t.app, 'submit', big)
    expect(res.statusCode).toBe(413)
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_INVALID_REQUEST, message: 'request too large' } })
    // under the limit still works
    expect((await post(t.app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: RAW_TX }], 2))).statusCode).toBe(200)
    await t.app.close()
  })

  it('a body over the limit with an unknown token: 401 first, not 413', async () => {
    const t = await buildTestApp({ appBodyLimit: 1024 })
    const big = request('eth_sendPrivateRawTransaction', [{ tx: `0x${'ab'.repeat(2000)}` }], 1)
    const res = await post(t.app, 'submit', big, { token: TOKEN_UNKNOWN })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: RPC_UNAUTHORIZED, message: expect.any(String) } })
    await t.app.close()
  })

  it('the bodyLimit option overrides the app limit for the RPC routes only', async () => {
    const t = await buildTestApp({ appBodyLimit: 1_048_576, bodyLimit: 512 })
    const res = await post(t.app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: `0x${'ab'.repeat(400)}` }], 1))
    expect(res.statusCode).toBe(413)
    await t.app.close()
  })
})

describe('encapsulation', () => {
  it("the RPC content-type parser and error handler do not change the app's other routes", async () => {
    const app = Fastify({ logger: false })
    registerJsonRpcRoutes(app, { partners: createPartnerRegistry([{ partnerId: 'alpha', token: TOKEN_ALPHA }]), endpoints: stubEndpoints() })
    app.post('/echo', async (req) => ({ got: req.body }))
    await app.ready()
    const bad = await app.inject({ method: 'POST', url: '/echo', payload: '{', headers: { 'content-type': 'application/json' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().code).toBe('FST_ERR_CTP_INVALID_JSON_BODY')
    const good = await app.inject({ method: 'POST', url: '/echo', payload: '{"a":1}', headers: { 'content-type': 'application/json' } })
    expect(good.json()).toEqual({ got: { a: 1 } })
    await app.close()
  })
})

describe('options are checked at registration', () => {
  const partners = createPartnerRegistry([{ partnerId: 'alpha', token: TOKEN_ALPHA }])
  it('refuses a method registered on the endpoint that does not serve it', () => {
    const app = Fastify()
    expect(() => registerJsonRpcRoutes(app, { partners, endpoints: { backrun: { eth_sendBundle: async () => null }, submit: {} } })).toThrow(/served by the submit endpoint/)
  })
  it('refuses the same method on both endpoints', () => {
    const app = Fastify()
    const h = async () => null
    expect(() => registerJsonRpcRoutes(app, { partners, endpoints: { backrun: { test_x: h }, submit: { test_x: h } } })).toThrow(/test_x/)
  })
  it.each([0, -1, 1.5, Number.NaN])('refuses maxBatchSize %s', (maxBatchSize) => {
    expect(() => registerJsonRpcRoutes(Fastify(), { partners, endpoints: { backrun: {}, submit: {} }, maxBatchSize })).toThrow(/maxBatchSize/)
  })
  it('refuses batchConcurrency 0', () => {
    expect(() => registerJsonRpcRoutes(Fastify(), { partners, endpoints: { backrun: {}, submit: {} }, batchConcurrency: 0 })).toThrow(/batchConcurrency/)
  })
})

describe('tokens never reach the logs', () => {
  const tokens = [TOKEN_ALPHA, TOKEN_BETA, TOKEN_UNKNOWN]
  async function exercise(t: TestApp): Promise<void> {
    const { app } = t
    await post(app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: RAW_TX }], 1))
    await post(app, 'submit', request('eth_sendBundle', [{ txs: [RAW_TX] }], 2), { token: TOKEN_BETA })
    await post(app, 'backrun', request('eth_backrun', [{}], 3), { token: TOKEN_UNKNOWN })
    await post(app, 'backrun', '{', { raw: true })
    await post(app, 'backrun', [request('eth_backrun', [{}], 1), { jsonrpc: '2.0', method: 'eth_backrun', params: [{}] }])
    await post(app, 'submit', request('eth_sendPrivateRawTransaction', [{ tx: `0x${'ab'.repeat(2000)}` }], 4))
    await app.inject({ method: 'GET', url: `/rpc/${TOKEN_ALPHA}/backrun?x=1` })
    await app.inject({ method: 'POST', url: `/rpc/${TOKEN_BETA}/nowhere/deeper`, payload: '{}' })
    await app.inject({ method: 'DELETE', url: `/rpc/${TOKEN_UNKNOWN}` })
    // paths that are not canonical, and tokens in the query
    await app.inject({ method: 'POST', url: `/rpc//${TOKEN_ALPHA}/backrun`, payload: '{}' })
    await app.inject({ method: 'POST', url: `/rpc/x/../${TOKEN_BETA}/backrun`, payload: '{}' })
    await app.inject({ method: 'POST', url: `/rpc/backrun?token=${TOKEN_UNKNOWN}`, payload: '{}' })
  }

  it('with the default root logger: the routes redact the token segment themselves', async () => {
    const t = await buildTestApp({ appBodyLimit: 2048 })
    await exercise(t)
    const text = t.logText()
    const lines = t.logLines()
    expect(lines.length).toBeGreaterThan(20)
    for (const token of tokens) expect(text).not.toContain(token)
    const urls = lines.map((l) => (l.req as { url?: string } | undefined)?.url).filter((u): u is string => u !== undefined)
    expect(urls.length).toBeGreaterThanOrEqual(9)
    for (const url of urls) expect(url).toMatch(/^\/rpc\/\[redacted\]/)
    expect(urls).toContain('/rpc/[redacted]/backrun?[redacted]')
    // the 401 is logged, without the token
    expect(lines.some((l) => l.msg === 'json-rpc request with an unknown partner token refused')).toBe(true)
    await t.app.close()
  })

  it('with jsonRpcLogSerializers and redactingNotFoundHandler on the root, requests outside the plugin routes are redacted too', async () => {
    const t = await buildTestApp({ rootSerializers: jsonRpcLogSerializers, redactingNotFound: true })
    // not matched by the plugin (routes are case-sensitive): handled by the app's 404
    const res = await t.app.inject({ method: 'POST', url: `/RPC/${TOKEN_ALPHA}/backrun`, payload: '{}' })
    expect(res.statusCode).toBe(404)
    // the documented error shape; the URL is not repeated in the body
    expect(res.json()).toEqual({ code: 'NOT_FOUND', message: expect.any(String) })
    expect(res.body).not.toContain('RPC')
    await exercise(t)
    expect(t.logText()).not.toContain(TOKEN_ALPHA)
    expect(t.logText()).toContain('/RPC/[redacted]/backrun')
    await t.app.close()
  })

  it("without them, Fastify's default 404 would write the raw URL (why the app must install both)", async () => {
    const t = await buildTestApp()
    await t.app.inject({ method: 'POST', url: `/RPC/${TOKEN_ALPHA}/backrun`, payload: '{}' })
    expect(t.logText()).toContain(TOKEN_ALPHA)
    await t.app.close()
  })
})

describe('over a real socket (127.0.0.1, port 0)', () => {
  let t: TestApp
  let base: string
  beforeAll(async () => {
    t = await buildTestApp({ appBodyLimit: 4096, maxBatchSize: 3 })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const address = t.app.server.address()
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  })
  afterAll(() => t.app.close())

  const send = (path: string, body: string, contentType = 'application/json') =>
    fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': contentType } })

  it('a call succeeds', async () => {
    const res = await send(rpcUrl('submit'), JSON.stringify(request('eth_sendPrivateRawTransaction', [{ tx: RAW_TX }], 1)))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, result: TX_HASH })
  })

  it('invalid JSON -> 200 with -32700', async () => {
    const res = await send(rpcUrl('backrun'), '{"jsonrpc":')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } })
  })

  it('an unknown token -> 401 with -32001', async () => {
    const res = await send(rpcUrl('backrun', TOKEN_UNKNOWN), JSON.stringify(request('eth_backrun', [{}], 5)))
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32001, message: 'unauthorized: unknown partner token' } })
  })

  it('a wrong endpoint -> -32601, a handler failure -> -32603, in one batch', async () => {
    const res = await send(
      rpcUrl('submit'),
      JSON.stringify([request('eth_backrun', [{}], 1), request('eth_sendBundle', [{ txs: [] }], 2), request('eth_sendPrivateRawTransaction', [{ tx: 'zz' }], 3)]),
    )
    expect(res.status).toBe(200)
    const body = (await res.json()) as { id: number; error: { code: number } }[]
    expect(body.map((r) => [r.id, r.error.code])).toEqual([
      [1, -32601],
      [2, -32603],
      [3, -32000],
    ])
  })

  it('a batch over the limit -> one -32600 in an array', async () => {
    const entries = [1, 2, 3, 4].map((id) => request('eth_notifyRawTransaction', [{ tx: RAW_TX }], id))
    const res = await send(rpcUrl('submit'), JSON.stringify(entries))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([{ jsonrpc: '2.0', id: 1, error: { code: -32600, message: expect.stringContaining('batch too large') } }])
  })

  it('a notification -> 200 with an empty body', async () => {
    const res = await send(rpcUrl('submit'), JSON.stringify({ jsonrpc: '2.0', method: 'eth_notifyRawTransaction', params: [{ tx: RAW_TX }] }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-length')).toBe('0')
    expect(await res.text()).toBe('')
  })

  it('a body over the limit -> 413 with a JSON-RPC body', async () => {
    const res = await send(rpcUrl('submit'), JSON.stringify(request('eth_sendPrivateRawTransaction', [{ tx: `0x${'ab'.repeat(4000)}` }], 1)))
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request too large' } })
  })

  it('text/plain bodies are accepted', async () => {
    const res = await send(rpcUrl('backrun'), JSON.stringify(request('eth_backrun', [{ to: '0x1' }], 'x')), 'text/plain')
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 'x', result: { contract: '0x1' } })
  })

  it('the token is not in the log of real-socket requests either', async () => {
    expect(t.logText()).not.toContain(TOKEN_ALPHA)
    expect(t.logText()).not.toContain(TOKEN_UNKNOWN)
    expect(t.logText()).toContain('/rpc/[redacted]/submit')
  })
})
