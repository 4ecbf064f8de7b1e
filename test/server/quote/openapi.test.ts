import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UpstreamError } from '../../../src/chain/types.ts'
import { QuoteFailedError } from '../../../src/quote/types.ts'
import { type Harness, KEY_A, VALID_BODY, buildHarness, conformanceErrors, postQuote } from './harness.ts'

type Json = Record<string, unknown>

describe('OpenAPI document at GET /v1/openapi.json', () => {
  let h: Harness
  let doc: Json
  let op: Json
  beforeAll(async () => {
    h = await buildHarness({ max: 1 })
    const res = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    doc = res.json()
    op = (doc.paths as Json)['/quote'] as Json
    op = op.post as Json
  })
  afterAll(() => h.app.close())

  const responseSchema = (status: string) => ((((op.responses as Json)[status] as Json).content as Json)['application/json'] as Json).schema as Json

  it('is OpenAPI 3 with version 1.0.0 and the /v1 base address (spec 9)', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/)
    expect((doc.info as Json).version).toBe('1.0.0')
    expect(typeof (doc.info as Json).title).toBe('string')
    expect(doc.servers).toEqual([{ url: '/v1' }])
  })

  it('describes POST /quote as getSwapQuote (the whole app is checked in test/server/openapi.test.ts)', () => {
    // this harness has the quote route and the document's own route; its /healthz has no schema
    expect(Object.keys(doc.paths as Json).sort()).toEqual(['/openapi.json', '/quote'])
    expect(Object.keys((doc.paths as Json)['/quote'] as Json)).toEqual(['post'])
    expect(op.operationId).toBe('getSwapQuote')
  })

  it('declares the X-API-Key header scheme and requires it on the operation (spec 5)', () => {
    const schemes = (doc.components as Json).securitySchemes as Json
    expect(schemes.ApiKeyAuth).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: expect.any(String) })
    expect(op.security).toEqual([{ ApiKeyAuth: [] }])
    // the key is a security scheme, not an ordinary header parameter
    expect(op.parameters).toBeUndefined()
  })

  it('request body is QuoteParams with the spec patterns (2.1) and the optional fields', () => {
    const body = op.requestBody as Json
    expect(body.required).toBe(true)
    const schema = ((body.content as Json)['application/json'] as Json).schema as Json
    expect(schema.required).toEqual(['tokenIn', 'tokenOut', 'amountIn'])
    const props = schema.properties as Record<string, Json>
    expect(props.tokenIn).toMatchObject({ type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' })
    expect(props.tokenOut).toMatchObject({ type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' })
    expect(props.amountIn).toMatchObject({ type: 'string', pattern: '^[1-9]\\d*$' })
    expect(props.slippageBps).toMatchObject({ type: 'integer', minimum: 0, maximum: 5000 })
    expect(props.recipient).toMatchObject({ type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' })
    expect(schema.additionalProperties).toBe(false)
  })

  it('lists 200, 400, 401, 422, 429 and 502 with their body schemas (spec 4.1, 7.1)', () => {
    const responses = op.responses as Record<string, Json>
    for (const status of ['200', '400', '401', '422', '429', '502']) {
      expect(responses[status], status).toBeDefined()
      expect(typeof responses[status].description).toBe('string')
      expect(responseSchema(status).type).toBe('object')
    }
    const ok = responseSchema('200')
    expect(ok.required).toEqual(expect.arrayContaining(['amountOut', 'gas', 'calldata', 'router', 'spender']))
    const okProps = ok.properties as Record<string, Json>
    expect(okProps.amountOut.type).toBe('string')
    expect(okProps.gas.type).toBe('integer')
    for (const f of ['calldata', 'router', 'spender']) expect(okProps[f].type).toBe('string')

    const codes: Record<string, string> = { '400': 'VALIDATION_ERROR', '401': 'UNAUTHORIZED', '422': 'QUOTE_ERROR', '429': 'RATE_LIMIT_EXCEEDED', '502': 'UPSTREAM_ERROR' }
    for (const [status, code] of Object.entries(codes)) {
      const s = responseSchema(status)
      const props = s.properties as Record<string, Json>
      expect(s.required, status).toEqual(expect.arrayContaining(['code', 'message']))
      expect(props.code.enum).toEqual([code])
      expect(props.message.type).toBe('string')
    }
    expect((responseSchema('400').properties as Record<string, Json>).details.type).toBe('array')
    expect(responseSchema('400').required).toContain('details')
    expect(responseSchema('422').required).toContain('details')
    // rate-limit headers are documented
    expect(Object.keys((op.responses as Record<string, Json>)['429'].headers as Json)).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'])
  })

  it('has no dangling $ref', () => {
    const refs: string[] = []
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk)
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) k === '$ref' ? refs.push(String(x)) : walk(x)
    }
    walk(doc)
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((o, part) => (o as Json | undefined)?.[part], doc)
      expect(target, ref).toBeDefined()
    }
  })

  it('real responses conform to the documented schemas', async () => {
    const check = async (status: number, send: () => ReturnType<typeof postQuote>) => {
      const res = await send()
      expect(res.statusCode).toBe(status)
      expect(conformanceErrors(responseSchema(String(status)), res.json()), String(status)).toEqual([])
    }
    await check(401, () => postQuote(h.app, VALID_BODY, null))
    await check(400, () => postQuote(h.app, { tokenIn: 1, extra: true }, KEY_A))
    h.service.behaviour = async () => {
      throw new QuoteFailedError('NO_ROUTE', 'no route', { hops: 3n })
    }
    await check(422, () => postQuote(h.app, VALID_BODY, KEY_A))
    await check(429, () => postQuote(h.app, VALID_BODY, KEY_A))
    // a fresh app for 200 and 502 (the key above is exhausted)
    const other = await buildHarness()
    try {
      let res = await postQuote(other.app, VALID_BODY, KEY_A)
      expect(res.statusCode).toBe(200)
      expect(conformanceErrors(responseSchema('200'), res.json())).toEqual([])
      other.service.behaviour = async () => {
        throw new UpstreamError('down', 'timeout')
      }
      res = await postQuote(other.app, VALID_BODY, KEY_A)
      expect(res.statusCode).toBe(502)
      expect(conformanceErrors(responseSchema('502'), res.json())).toEqual([])
    } finally {
      await other.app.close()
    }
  })
})
