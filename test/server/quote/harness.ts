/**
 * Test harness for the HTTP layer: a FAKE QuoteService (a test double of the routing engine,
 * so these tests exercise only the HTTP surface) and an app composed the way the service
 * composes it: metrics first, then the OpenAPI plugin, then the quote routes.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { Writable } from 'node:stream'
import type { QuoteRequest, QuoteResult, QuoteService } from '../../../src/quote/types.ts'
import { ApiKeyRegistry } from '../../../src/server/auth/api-keys.ts'
import { registerMetrics } from '../../../src/server/metrics/http-metrics.ts'
import { createMetricsRegistry, type MetricsRegistry } from '../../../src/server/metrics/registry.ts'
import { registerOpenApi } from '../../../src/server/openapi/openapi.ts'
import { quoteJson, type QuoteJsonSource } from '../../../src/server/quote/quote-json.ts'
import { registerQuoteRoutes } from '../../../src/server/quote/quote-routes.ts'

export const KEY_A = 'key-a-0123456789abcdef'
export const KEY_B = 'key-b-fedcba9876543210'

export const WETH = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2'
export const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'

export const VALID_BODY = { tokenIn: WETH, tokenOut: USDC, amountIn: '1000000000000000000' }

export const FIXED_RESULT: QuoteResult = {
  amountOut: 3_456_789_012n,
  gas: 152_345n,
  calldata: '0x414bf389deadbeef',
  router: '0xe592427a0aece92de3edee1f18e0157c05861564',
  spender: '0x000000000022d473030f116ddee9f6b43ac78ba3',
  blockNumber: 19_000_000n,
  minAmountOut: 3_439_505_066n,
  priceImpactBps: 12,
  routes: [
    {
      amountIn: 1_000_000_000_000_000_000n,
      amountOut: 3_456_789_012n,
      hops: [
        {
          protocol: 'uniswap-v3',
          pool: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640',
          tokenIn: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
          tokenOut: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
          fee: 500,
        },
      ],
    },
  ],
}

/** What FIXED_RESULT looks like on the wire. */
export const FIXED_WIRE = {
  amountOut: '3456789012',
  gas: 152345,
  calldata: '0x414bf389deadbeef',
  router: '0xe592427a0aece92de3edee1f18e0157c05861564',
  spender: '0x000000000022d473030f116ddee9f6b43ac78ba3',
  blockNumber: '19000000',
  minAmountOut: '3439505066',
  priceImpactBps: 12,
  routes: [
    {
      amountIn: '1000000000000000000',
      amountOut: '3456789012',
      hops: [
        {
          protocol: 'uniswap-v3',
          pool: '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640',
          tokenIn: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
          tokenOut: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
          fee: 500,
        },
      ],
    },
  ],
}

/** Fake routing engine: records requests; answers with FIXED_RESULT unless told otherwise. */
export class FakeQuoteService implements QuoteService {
  readonly calls: QuoteRequest[] = []
  behaviour: (request: QuoteRequest) => Promise<QuoteResult> = async () => FIXED_RESULT

  async quote(request: QuoteRequest): Promise<QuoteResult> {
    this.calls.push(request)
    return this.behaviour(request)
  }
}

/**
 * The same fake answering as the pool's facade does (quoteJson: the 200 body written beforehand,
 * see src/server/quote/quote-json.ts); the route then sends that string as it is.
 */
export class FakeQuoteJsonService extends FakeQuoteService implements QuoteJsonSource {
  async quoteJson(request: QuoteRequest): Promise<string> {
    return quoteJson(await this.quote(request))
  }
}

export interface Harness {
  app: FastifyInstance
  service: FakeQuoteService
  registry: MetricsRegistry
  /** every log line written so far (raw NDJSON) */
  logs: () => string
}

export async function buildHarness(options: { max?: number; timeWindowMs?: number; bodyLimitBytes?: number; json?: boolean } = {}): Promise<Harness> {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'))
      done()
    },
  })
  // trace level and NO redaction configured: the test proves the HTTP layer itself never logs
  // key material, independent of the app's redact paths
  const app = Fastify({ logger: { level: 'trace', stream } })
  const service = options.json === true ? new FakeQuoteJsonService() : new FakeQuoteService()
  const registry = createMetricsRegistry({ defaultMetrics: false })
  registerMetrics(app, { registry })
  await registerOpenApi(app)
  await registerQuoteRoutes(app, {
    quoteService: service,
    apiKeys: ApiKeyRegistry.fromKeys([KEY_A, KEY_B]),
    rateLimit: { max: options.max ?? 100, timeWindowMs: options.timeWindowMs ?? 60_000 },
    metrics: registry,
    bodyLimitBytes: options.bodyLimitBytes,
  })
  app.get('/healthz', async () => ({ status: 'ok' }))
  await app.ready()
  return { app, service, registry, logs: () => lines.join('') }
}

/** key null: send no X-API-Key header */
export function postQuote(app: FastifyInstance, body: unknown, key: string | null = KEY_A, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/v1/quote',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'x-api-key': key }), ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/**
 * A small JSON-schema conformance check (the subset the route schemas use), so tests can
 * assert that real responses match the schemas the OpenAPI document publishes.
 */
export function conformanceErrors(schema: Record<string, unknown>, value: unknown, path = '$'): string[] {
  const errors: string[] = []
  const type = schema.type
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) errors.push(`${path}: not in enum`)
  if (type === 'object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected object`]
    const obj = value as Record<string, unknown>
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
    for (const r of (schema.required ?? []) as string[]) if (!(r in obj)) errors.push(`${path}.${r}: required`)
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...conformanceErrors(props[k], v, `${path}.${k}`))
      else if (schema.additionalProperties === false) errors.push(`${path}.${k}: not allowed`)
    }
  } else if (type === 'array') {
    if (!Array.isArray(value)) return [`${path}: expected array`]
    value.forEach((v, i) => errors.push(...conformanceErrors(schema.items as Record<string, unknown>, v, `${path}[${i}]`)))
  } else if (type === 'string') {
    if (typeof value !== 'string') return [`${path}: expected string`]
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) errors.push(`${path}: pattern`)
  } else if (type === 'integer') {
    if (!Number.isInteger(value)) errors.push(`${path}: expected integer`)
  } else if (type === 'number') {
    if (typeof value !== 'number') errors.push(`${path}: expected number`)
  }
  return errors
}
