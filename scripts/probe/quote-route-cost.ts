/**
 * The quote route's own CPU per request on the main thread (issue 13, eleventh session): POST
 * /v1/quote composed as buildApp composes it (metrics hook, OpenAPI plugin, the route with its auth,
 * validation, rate limit, error handler and response serializer; the service's logger at `warn`)
 * over a quote service that answers at once with a mix-sized answer (2 legs, 3 hops, 1.4 KB of
 * calldata), driven by Fastify's inject (no socket: HTTP parsing and writing are not in it).
 * PROBE_ROUNDS (default 7) rounds of PROBE_REQUESTS (default 5,000) requests after one warm-up
 * round; prints each round's process CPU µs per request and the minimum (the round least moved by
 * other load), per variant (below). `nice -n 10 npx tsx scripts/probe/quote-route-cost.ts`
 */
import Fastify from 'fastify'
import type { Address } from '../../src/chain/types.ts'
import type { QuoteResult, QuoteService } from '../../src/quote/types.ts'
import { serviceLoggerOptions } from '../../src/server/app.ts'
import { ApiKeyRegistry, DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { registerMetrics } from '../../src/server/metrics/http-metrics.ts'
import { createMetricsRegistry } from '../../src/server/metrics/registry.ts'
import { registerOpenApi } from '../../src/server/openapi/openapi.ts'
import { quoteJson, type QuoteJsonSource } from '../../src/server/quote/quote-json.ts'
import { registerQuoteRoutes } from '../../src/server/quote/quote-routes.ts'

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 7)
const REQUESTS = Number(process.env.PROBE_REQUESTS ?? 5_000)

const hop = (pool: Address, tokenIn: Address, tokenOut: Address, fee: number) => ({ protocol: 'uniswap-v3' as const, pool, tokenIn, tokenOut, fee })
const A: Address = '0x7fd2f008b0ca3d4ccaf6b88ab8370314cd45a972'
const B: Address = '0x390fc41d31554d120bc63d41b1389b832d774089'
const C: Address = '0x6b175474e89094c44da98b954eedeac495271d0f'
const ANSWER: QuoteResult = {
  amountOut: 65_432_109_876n,
  gas: 431_984n,
  calldata: `0x${'ab'.repeat(1_400)}`,
  router: '0x1111111111111111111111111111111111111111',
  spender: '0x1111111111111111111111111111111111111111',
  blockNumber: 1234n,
  minAmountOut: 65_105_000_000n,
  routes: [
    { amountIn: 40_000_000_000_000_000_000n, amountOut: 40_000_000_000n, hops: [hop('0x2222222222222222222222222222222222222222', A, B, 500)] },
    { amountIn: 26_000_000_000_000_000_000n, amountOut: 25_432_109_876n, hops: [hop('0x3333333333333333333333333333333333333333', A, C, 3000), hop('0x4444444444444444444444444444444444444444', C, B, 100)] },
  ],
}

/**
 * What each part of the route costs is read from variants of it (PROBE_VARIANTS, comma-separated,
 * default all, each measured as above in its own app, in turns):
 *   object     the service answers the domain value; the route converts and serializes it (WORKERS=0)
 *   json       the service answers the 200 body already written (the pool's facade, quote-json.ts)
 *   json-bare-metrics  as json, with no metrics registry (no HTTP or quote histograms and counters)
 *   bare       a bare route on the same path: no schema, auth, rate limit, metrics or error
 *              handler; sends the written body (what any Fastify route costs)
 * object - json: the conversion and serialization the worker now does; json - json-bare-metrics:
 * the metrics; json-bare-metrics - bare: authentication, validation, rate limit, hooks and logging.
 */
type Variant = 'object' | 'json' | 'json-bare-metrics' | 'bare'
const VARIANTS = (process.env.PROBE_VARIANTS ?? 'object,json,json-bare-metrics,bare').split(',') as Variant[]
const WRITTEN = quoteJson(ANSWER)

async function appFor(variant: Variant) {
  const app = Fastify({ logger: serviceLoggerOptions('warn') })
  if (variant === 'bare') {
    app.post('/v1/quote', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(WRITTEN))
    await app.ready()
    return app
  }
  const service: QuoteService & Partial<QuoteJsonSource> = variant === 'object' ? { quote: async () => ANSWER } : { quote: async () => ANSWER, quoteJson: async () => WRITTEN }
  const registry = variant === 'json-bare-metrics' ? undefined : createMetricsRegistry({ defaultMetrics: false })
  if (registry !== undefined) registerMetrics(app, { registry })
  await registerOpenApi(app)
  await registerQuoteRoutes(app, { quoteService: service, apiKeys: ApiKeyRegistry.fromKeys([DEV_API_KEY]), rateLimit: { max: 1_000_000, timeWindowMs: 60_000 }, ...(registry === undefined ? {} : { metrics: registry }) })
  await app.ready()
  return app
}

const payload = JSON.stringify({ tokenIn: A, tokenOut: B, amountIn: '66000000000000000000' })
const headers = { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY }
const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}
const apps = new Map<Variant, Awaited<ReturnType<typeof appFor>>>()
for (const v of VARIANTS) apps.set(v, await appFor(v))
const rounds = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]))
let body: string | undefined
for (let r = 0; r <= ROUNDS; r++) {
  // in turns: each round of every variant meets the same load
  for (const v of VARIANTS) {
    const app = apps.get(v)!
    const t = cpuUs()
    for (let i = 0; i < REQUESTS; i++) {
      const res = await app.inject({ method: 'POST', url: '/v1/quote', headers, payload })
      if (res.statusCode !== 200) throw new Error(`${v}: HTTP ${res.statusCode}: ${res.body}`)
      // every variant answers the same bytes
      if (body === undefined) body = res.body
      else if (res.body !== body) throw new Error(`${v} answered other bytes than ${VARIANTS[0]}`)
    }
    if (r > 0) rounds.get(v)!.push(Math.round((10 * (cpuUs() - t)) / REQUESTS) / 10)
  }
}
for (const app of apps.values()) await app.close()
const variants = Object.fromEntries(VARIANTS.map((v) => [v, { us_per_request: rounds.get(v)!, min_us_per_request: Math.min(...rounds.get(v)!) }]))
console.log(JSON.stringify({ name: 'probe:quote-route-cost', requests_per_round: REQUESTS, variants }))
