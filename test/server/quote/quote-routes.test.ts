import { afterEach, describe, expect, it } from 'vitest'
import Fastify, { type FastifyInstance } from 'fastify'
import { UpstreamError } from '../../../src/chain/types.ts'
import { QuoteFailedError, type QuoteResult } from '../../../src/quote/types.ts'
import { ApiKeyRegistry } from '../../../src/server/auth/api-keys.ts'
import { registerQuoteRoutes } from '../../../src/server/quote/quote-routes.ts'
import { MAX_UINT256, MAX_UNKNOWN_FIELD_DETAILS } from '../../../src/server/quote/quote-request.ts'
import { quoteRouteSchema } from '../../../src/server/quote/quote-schemas.ts'
import { FakeQuoteService, FIXED_RESULT, FIXED_WIRE, KEY_A, KEY_B, USDC, VALID_BODY, WETH, buildHarness, conformanceErrors, postQuote, type Harness } from './harness.ts'

const schemaFor = (status: keyof typeof quoteRouteSchema.response) => quoteRouteSchema.response[status] as unknown as Record<string, unknown>

let harness: Harness | undefined
async function setup(options?: Parameters<typeof buildHarness>[0]): Promise<Harness> {
  harness = await buildHarness(options)
  return harness
}
afterEach(async () => {
  await harness?.app.close()
  harness = undefined
})

describe('POST /v1/quote: 200', () => {
  it('returns the five spec fields plus the additive ones, amounts as decimal strings, gas as an integer', async () => {
    const { app, service } = await setup()
    const res = await postQuote(app, VALID_BODY)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const body = res.json()
    expect(body).toEqual(FIXED_WIRE)
    expect(typeof body.gas).toBe('number')
    expect(conformanceErrors(schemaFor(200), body)).toEqual([])
    // the domain received bigint and lowercase addresses
    expect(service.calls).toEqual([{ tokenIn: WETH.toLowerCase(), tokenOut: USDC.toLowerCase(), amountIn: 10n ** 18n }])
  })

  it('passes the optional slippageBps and recipient through; omits priceImpactBps when the domain has none', async () => {
    const { app, service } = await setup()
    const { priceImpactBps: _omit, ...withoutImpact } = FIXED_RESULT
    service.behaviour = async () => withoutImpact
    const recipient = '0x1111111111111111111111111111111111111111'
    const res = await postQuote(app, { ...VALID_BODY, slippageBps: 0, recipient })
    expect(res.statusCode).toBe(200)
    expect(res.json()).not.toHaveProperty('priceImpactBps')
    expect(service.calls[0]).toEqual({ tokenIn: WETH.toLowerCase(), tokenOut: USDC.toLowerCase(), amountIn: 10n ** 18n, slippageBps: 0, recipient })
  })

  it('accepts amountIn = 2^256-1 exactly and a charset parameter on the content type', async () => {
    const { app, service } = await setup()
    const res = await postQuote(app, { ...VALID_BODY, amountIn: MAX_UINT256.toString() }, KEY_A, { 'content-type': 'application/json; charset=utf-8' })
    expect(res.statusCode).toBe(200)
    expect(service.calls[0].amountIn).toBe(MAX_UINT256)
  })

  it('serializes only declared fields: an extra property on the domain result never leaks', async () => {
    const { app, service } = await setup()
    service.behaviour = async () => ({ ...FIXED_RESULT, internalSecret: 'do-not-send', routes: [{ ...FIXED_RESULT.routes[0], poolState: 1n }] }) as unknown as QuoteResult
    const res = await postQuote(app, VALID_BODY)
    expect(res.statusCode).toBe(200)
    expect(res.body).not.toContain('do-not-send')
    expect(res.body).not.toContain('poolState')
    expect(res.json()).toEqual(FIXED_WIRE)
  })
})

describe('POST /v1/quote: 401', () => {
  it('missing X-API-Key', async () => {
    const { app, service } = await setup()
    const res = await postQuote(app, VALID_BODY, null)
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ code: 'UNAUTHORIZED', message: 'missing X-API-Key header' })
    expect(conformanceErrors(schemaFor(401), res.json())).toEqual([])
    expect(service.calls).toHaveLength(0)
  })

  it('invalid, empty and repeated keys; the message never echoes the key', async () => {
    const { app } = await setup()
    for (const key of ['not-a-key', '', KEY_A + ' ', KEY_A.toUpperCase()]) {
      const res = await postQuote(app, VALID_BODY, key)
      expect(res.statusCode, JSON.stringify(key)).toBe(401)
      expect(res.json()).toEqual({ code: 'UNAUTHORIZED', message: 'invalid API key' })
    }
    const repeated = await app.inject({
      method: 'POST',
      url: '/v1/quote',
      headers: { 'content-type': 'application/json', 'x-api-key': [KEY_A, KEY_A] },
      payload: JSON.stringify(VALID_BODY),
    })
    expect(repeated.statusCode).toBe(401)
    expect(repeated.json().code).toBe('UNAUTHORIZED')
  })

  it('auth runs before validation and body parsing: invalid key + invalid body -> 401', async () => {
    const { app } = await setup({ bodyLimitBytes: 1024 })
    const cases = [
      { body: { tokenIn: 'nope' } },
      { body: '{not json' },
      { body: 'x'.repeat(10_000) },
      { body: 'plain text', headers: { 'content-type': 'text/plain' } },
    ]
    for (const c of cases) {
      const res = await postQuote(app, c.body, 'wrong-key', c.headers)
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({ code: 'UNAUTHORIZED', message: 'invalid API key' })
    }
  })
})

describe('POST /v1/quote: 400', () => {
  async function details(body: unknown, headers?: Record<string, string>) {
    const { app, service } = harness ?? (await setup())
    const res = await postQuote(app, body, KEY_A, headers)
    expect(res.statusCode).toBe(400)
    const json = res.json()
    expect(Object.keys(json).sort()).toEqual(['code', 'details', 'message'])
    expect(json.code).toBe('VALIDATION_ERROR')
    expect(typeof json.message).toBe('string')
    expect(conformanceErrors(schemaFor(400), json)).toEqual([])
    expect(service.calls).toHaveLength(0)
    return json.details as Array<{ field: string; message: string }>
  }
  const fields = (d: Array<{ field: string }>) => d.map((x) => x.field)

  it('one detail per violation, in field order', async () => {
    expect(fields(await details({}))).toEqual(['tokenIn', 'tokenOut', 'amountIn'])
    expect(fields(await details({ tokenIn: 'x', tokenOut: 5, amountIn: '0', slippageBps: 9999, recipient: '0x12', extra: 1 }))).toEqual([
      'tokenIn',
      'tokenOut',
      'amountIn',
      'slippageBps',
      'recipient',
      'extra',
    ])
    const d = await details({ tokenOut: USDC, amountIn: '5' })
    expect(d).toEqual([{ field: 'tokenIn', message: 'is required' }])
  })

  it('address pattern ^0x[a-fA-F0-9]{40}$', async () => {
    for (const bad of ['0x' + 'a'.repeat(39), '0x' + 'a'.repeat(41), 'c02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '0X' + 'a'.repeat(40), '0x' + 'g'.repeat(40), ' ' + WETH, null, 1, [WETH]]) {
      expect(fields(await details({ ...VALID_BODY, tokenIn: bad })), JSON.stringify(bad)).toEqual(['tokenIn'])
    }
  })

  it('amountIn pattern ^[1-9]\\d*$ and the uint256 bound', async () => {
    for (const bad of ['0', '01', '-1', '1.5', '1e18', ' 1', '', '0x10', 1, 1e18, null]) {
      expect(fields(await details({ ...VALID_BODY, amountIn: bad })), JSON.stringify(bad)).toEqual(['amountIn'])
    }
    const over = await details({ ...VALID_BODY, amountIn: (MAX_UINT256 + 1n).toString() })
    expect(over).toEqual([{ field: 'amountIn', message: 'must not exceed 2^256-1 (uint256)' }])
    expect(fields(await details({ ...VALID_BODY, amountIn: '9'.repeat(5000) }))).toEqual(['amountIn'])
  })

  it('optional fields: slippageBps integer 0..5000, recipient address', async () => {
    for (const bad of [-1, 5001, 1.5, '50', null, true]) {
      expect(fields(await details({ ...VALID_BODY, slippageBps: bad })), JSON.stringify(bad)).toEqual(['slippageBps'])
    }
    expect(fields(await details({ ...VALID_BODY, recipient: 'me' }))).toEqual(['recipient'])
    expect(fields(await details({ ...VALID_BODY, recipient: null }))).toEqual(['recipient'])
  })

  it('unknown fields are rejected, one detail each, capped', async () => {
    expect(await details({ ...VALID_BODY, slipageBps: 10 })).toEqual([{ field: 'slipageBps', message: 'is not a recognised field' }])
    const many: Record<string, unknown> = { ...VALID_BODY }
    for (let i = 0; i < 50; i++) many[`f${i}`] = i
    const d = await details(many)
    expect(d).toHaveLength(MAX_UNKNOWN_FIELD_DETAILS + 1)
    expect(d[MAX_UNKNOWN_FIELD_DETAILS]).toEqual({ field: 'body', message: `${50 - MAX_UNKNOWN_FIELD_DETAILS} more unrecognised fields` })
  })

  it('a body that is not a JSON object names `body`', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      expect(await details(body), body).toEqual([{ field: 'body', message: 'must be a JSON object' }])
    }
    expect(await details('{"tokenIn":')).toEqual([{ field: 'body', message: 'is not valid JSON' }])
    expect(await details('')).toEqual([{ field: 'body', message: 'is empty; expected a JSON object' }])
    // prototype poisoning is refused by the parser, and reported as a body problem
    expect(fields(await details('{"__proto__":{"x":1},"tokenIn":"a"}'))).toEqual(['body'])
  })

  it('no body at all', async () => {
    const { app } = await setup()
    const res = await app.inject({ method: 'POST', url: '/v1/quote', headers: { 'x-api-key': KEY_A } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'body', message: 'must be a JSON object' }] })
  })

  it('a wrong content type is 400 with the same body shape', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/jsonx']) {
      expect(await details(JSON.stringify(VALID_BODY), { 'content-type': type }), type).toEqual([{ field: 'Content-Type', message: 'must be application/json' }])
    }
  })

  it('huge bodies are rejected with the 400 shape, before parsing', async () => {
    await setup({ bodyLimitBytes: 2048 })
    const huge = JSON.stringify({ ...VALID_BODY, padding: 'x'.repeat(10_000) })
    expect(await details(huge)).toEqual([{ field: 'body', message: 'exceeds 2048 bytes' }])
  })

  it('the default route body limit is 16 KiB', async () => {
    await setup()
    expect(await details(JSON.stringify({ ...VALID_BODY, padding: 'x'.repeat(20_000) }))).toEqual([{ field: 'body', message: 'exceeds 16384 bytes' }])
  })
})

describe('POST /v1/quote: 422 / 502 / 500', () => {
  it('QuoteFailedError -> 422 QUOTE_ERROR with details.reason and JSON-safe details', async () => {
    const { app, service } = await setup()
    service.behaviour = async () => {
      throw new QuoteFailedError('INSUFFICIENT_LIQUIDITY', 'not enough liquidity for this amount', {
        maxAmountIn: 123n,
        pools: ['0xabc'],
        reason: 'SPOOFED',
        raw: new Uint8Array([1, 2]),
        err: new Error('internal'),
      })
    }
    const res = await postQuote(app, VALID_BODY)
    expect(res.statusCode).toBe(422)
    expect(res.json()).toEqual({
      code: 'QUOTE_ERROR',
      message: 'not enough liquidity for this amount',
      details: { reason: 'INSUFFICIENT_LIQUIDITY', maxAmountIn: '123', pools: ['0xabc'], raw: '0x0102' },
    })
    expect(conformanceErrors(schemaFor(422), res.json())).toEqual([])
  })

  it('QuoteFailedError without details', async () => {
    const { app, service } = await setup()
    service.behaviour = async () => {
      throw new QuoteFailedError('NO_ROUTE', 'no route between these tokens')
    }
    const res = await postQuote(app, VALID_BODY)
    expect(res.statusCode).toBe(422)
    expect(res.json()).toEqual({ code: 'QUOTE_ERROR', message: 'no route between these tokens', details: { reason: 'NO_ROUTE' } })
  })

  it('UpstreamError -> 502 UPSTREAM_ERROR without the upstream message', async () => {
    const { app, service } = await setup()
    service.behaviour = async () => {
      throw new UpstreamError('eth_call: HTTP 503 from https://mainnet.example/v3/SECRETPROJECTID', 'http', { method: 'eth_call', status: 503 })
    }
    const res = await postQuote(app, VALID_BODY)
    expect(res.statusCode).toBe(502)
    expect(res.json()).toEqual({ code: 'UPSTREAM_ERROR', message: 'upstream node failed (http)' })
    expect(res.body).not.toContain('SECRETPROJECTID')
    expect(conformanceErrors(schemaFor(502), res.json())).toEqual([])
  })

  it('anything else -> 500 INTERNAL_ERROR with a fixed body and no stack', async () => {
    const { app, service, logs } = await setup()
    const failures: Array<() => Promise<QuoteResult>> = [
      async () => {
        throw new Error('database password is hunter2')
      },
      async () => {
        throw Object.assign(new Error('looks like a client error'), { statusCode: 404 })
      },
      async () => {
        throw 'a string, not an Error'
      },
      // gas beyond 2^53 would lose precision as a JSON number
      async () => ({ ...FIXED_RESULT, gas: 2n ** 60n }),
      // a domain object missing a required field fails response serialization
      async () => ({ ...FIXED_RESULT, calldata: undefined }) as unknown as QuoteResult,
      // a non-bigint amount where bigint is expected
      async () => ({ ...FIXED_RESULT, amountOut: undefined }) as unknown as QuoteResult,
    ]
    for (const f of failures) {
      service.behaviour = f
      const res = await postQuote(app, VALID_BODY)
      expect(res.statusCode).toBe(500)
      expect(res.json()).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error' })
      expect(res.body).not.toMatch(/hunter2|stack|at |looks like/)
    }
    // the operator still gets the error, with its stack, in the log
    expect(logs()).toContain('hunter2')
  })

  it('errors thrown in hooks and failed (bigint) serialization are clean 500s too', async () => {
    // an app with hooks that fail on demand, inherited by the quote route's scope
    const app = Fastify({ logger: false })
    app.addHook('preHandler', async (request) => {
      if (request.headers['x-crash'] === 'preHandler') throw new Error('preHandler secret')
    })
    app.addHook('preValidation', async (request) => {
      // an error that claims a client status: still not ours to describe
      if (request.headers['x-crash'] === 'preValidation') throw Object.assign(new Error('preValidation secret'), { statusCode: 404 })
    })
    app.addHook('onSend', async (request, reply, payload) => {
      if (request.headers['x-crash'] === 'onSend') throw new Error('onSend secret')
      // fails only while an error response is being sent, with a status of its own
      if (request.headers['x-crash'] === 'onSend422' && reply.statusCode === 422) throw Object.assign(new Error('onSend422 secret'), { statusCode: 418 })
      return payload
    })
    app.addHook('preSerialization', async (request, _reply, payload: unknown) => {
      // a bigint smuggled into the free-form 422 details: JSON cannot carry it
      const p = payload as { code?: string; details?: Record<string, unknown> }
      if (request.headers['x-crash'] === 'bigint' && p.code === 'QUOTE_ERROR') return { ...p, details: { ...p.details, extra: 5n } }
      return payload
    })
    const service = new FakeQuoteService()
    service.behaviour = async () => {
      throw new QuoteFailedError('NO_ROUTE', 'no route')
    }
    await registerQuoteRoutes(app, { quoteService: service, apiKeys: ApiKeyRegistry.fromKeys([KEY_A]), rateLimit: { max: 100, timeWindowMs: 60_000 } })
    try {
      for (const crash of ['preHandler', 'preValidation', 'onSend', 'onSend422', 'bigint']) {
        const res = await postQuote(app, VALID_BODY, KEY_A, { 'x-crash': crash })
        expect(res.statusCode, crash).toBe(500)
        expect(res.json()).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error' })
        expect(res.body).not.toContain('secret')
      }
      // and without sabotage the same app answers normally
      expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(422)
    } finally {
      await app.close()
    }
  })
})

describe('POST /v1/quote: 429', () => {
  it('limits per key, with RateLimit-* and Retry-After headers', async () => {
    const { app, service } = await setup({ max: 2, timeWindowMs: 60_000 })
    const r1 = await postQuote(app, VALID_BODY, KEY_A)
    expect(r1.statusCode).toBe(200)
    expect(r1.headers['ratelimit-limit']).toBe('2')
    expect(r1.headers['ratelimit-remaining']).toBe('1')
    expect(Number(r1.headers['ratelimit-reset'])).toBeGreaterThan(0)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
    const limited = await postQuote(app, VALID_BODY, KEY_A)
    expect(limited.statusCode).toBe(429)
    expect(Object.keys(limited.json()).sort()).toEqual(['code', 'message'])
    expect(limited.json().code).toBe('RATE_LIMIT_EXCEEDED')
    expect(conformanceErrors(schemaFor(429), limited.json())).toEqual([])
    expect(limited.headers['retry-after']).toBe('60')
    expect(limited.headers['ratelimit-limit']).toBe('2')
    expect(limited.headers['ratelimit-remaining']).toBe('0')
    expect(limited.headers['ratelimit-reset']).toBe('60')
    expect(service.calls).toHaveLength(2)

    // key B has its own budget
    const b = await postQuote(app, VALID_BODY, KEY_B)
    expect(b.statusCode).toBe(200)
    expect(b.headers['ratelimit-remaining']).toBe('1')
  })

  it('validation runs before the rate limit: exhausted key + invalid body -> 400; invalid key -> 401', async () => {
    const { app } = await setup({ max: 1 })
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(429)
    const invalid = await postQuote(app, { tokenIn: WETH }, KEY_A)
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json().code).toBe('VALIDATION_ERROR')
    expect(invalid.headers['retry-after']).toBeUndefined()
    expect((await postQuote(app, '{bad', KEY_A)).statusCode).toBe(400)
    expect((await postQuote(app, VALID_BODY, 'wrong')).statusCode).toBe(401)
  })

  it('rejected requests (401/400) do not consume a key budget', async () => {
    const { app } = await setup({ max: 2 })
    for (let i = 0; i < 5; i++) expect((await postQuote(app, {}, KEY_A)).statusCode).toBe(400)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(429)
  })

  it('422 and 502 answers count against the budget (the engine did the work)', async () => {
    const { app, service } = await setup({ max: 1 })
    service.behaviour = async () => {
      throw new QuoteFailedError('NO_ROUTE', 'no route')
    }
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(422)
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(429)
  })

  it('the window resets', async () => {
    const { app } = await setup({ max: 1, timeWindowMs: 400 })
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
    const limited = await postQuote(app, VALID_BODY, KEY_A)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBe('1')
    await new Promise((r) => setTimeout(r, 500))
    expect((await postQuote(app, VALID_BODY, KEY_A)).statusCode).toBe(200)
  })
})

describe('logs', () => {
  it('never contain the API key, valid or not; they carry the non-secret key id', async () => {
    const { app, logs } = await setup({ max: 1 })
    const wrongKey = 'wrong-key-that-must-not-be-logged'
    await postQuote(app, VALID_BODY, KEY_A)
    await postQuote(app, VALID_BODY, KEY_A) // 429
    await postQuote(app, { bad: true }, KEY_B) // 400
    await postQuote(app, VALID_BODY, wrongKey) // 401
    await postQuote(app, VALID_BODY, null) // 401
    const text = logs()
    expect(text.length).toBeGreaterThan(0)
    expect(text).not.toContain(KEY_A)
    expect(text).not.toContain(KEY_B)
    expect(text).not.toContain(wrongKey)
    expect(text.toLowerCase()).not.toContain('x-api-key')
    expect(text).toMatch(/"keyId":"[0-9a-f]{8}"/)
  })
})

describe('over a real socket', () => {
  let listening: FastifyInstance | undefined
  afterEach(async () => {
    await listening?.close()
    listening = undefined
  })

  it('serves POST /v1/quote, /metrics and the OpenAPI document on 127.0.0.1', async () => {
    const h = await setup({ max: 5 })
    listening = h.app
    await h.app.listen({ host: '127.0.0.1', port: 0 })
    const address = h.app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const base = `http://127.0.0.1:${port}`

    const ok = await fetch(`${base}/v1/quote`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY_A }, body: JSON.stringify(VALID_BODY) })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('ratelimit-remaining')).toBe('4')
    expect(await ok.json()).toEqual(FIXED_WIRE)

    const unauth = await fetch(`${base}/v1/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    expect(unauth.status).toBe(401)
    expect(await unauth.json()).toEqual({ code: 'UNAUTHORIZED', message: 'missing X-API-Key header' })

    const bad = await fetch(`${base}/v1/quote`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY_A }, body: '{' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'body', message: 'is not valid JSON' }] })

    const metrics = await fetch(`${base}/metrics`)
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await metrics.text()
    expect(text).toContain('http_requests_total{method="POST",route="/v1/quote",status_code="200"} 1')
    expect(text).toContain('http_requests_total{method="POST",route="/v1/quote",status_code="401"} 1')
    expect(text).toContain('quote_requests_total{outcome="ok"} 1')

    const doc = await fetch(`${base}/v1/openapi.json`)
    expect(doc.status).toBe(200)
    const json = (await doc.json()) as { paths: Record<string, { post: { operationId: string } }> }
    expect(json.paths['/quote'].post.operationId).toBe('getSwapQuote')
  })
})
