/**
 * The quote route's own CPU per request on the main thread (issue 13, eleventh session): POST
 * /v1/quote composed as buildApp composes it (metrics hook, OpenAPI plugin, the route with its auth,
 * validation, rate limit, error handler and response serializer; the service's logger at `warn`)
 * over a quote service that answers at once with a mix-sized answer (2 legs, 3 hops, 1.4 KB of
 * calldata), driven by Fastify's inject (no socket: HTTP parsing and writing are not in it).
 * PROBE_ROUNDS (default 7) rounds of PROBE_REQUESTS (default 5,000) requests after one warm-up
 * round; prints each round's process CPU µs per request and the minimum (the round least moved by
 * other load). `nice -n 10 npx tsx scripts/probe/quote-route-cost.ts`
 */
import Fastify from 'fastify'
import type { Address } from '../../src/chain/types.ts'
import type { QuoteResult, QuoteService } from '../../src/quote/types.ts'
import { serviceLoggerOptions } from '../../src/server/app.ts'
import { ApiKeyRegistry, DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { registerMetrics } from '../../src/server/metrics/http-metrics.ts'
import { createMetricsRegistry } from '../../src/server/metrics/registry.ts'
import { registerOpenApi } from '../../src/server/openapi/openapi.ts'
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

const service: QuoteService = { quote: async () => ANSWER }

const app = Fastify({ logger: serviceLoggerOptions('warn') })
const registry = createMetricsRegistry({ defaultMetrics: false })
registerMetrics(app, { registry })
await registerOpenApi(app)
await registerQuoteRoutes(app, { quoteService: service, apiKeys: ApiKeyRegistry.fromKeys([DEV_API_KEY]), rateLimit: { max: 1_000_000, timeWindowMs: 60_000 }, metrics: registry })
await app.ready()

const payload = JSON.stringify({ tokenIn: A, tokenOut: B, amountIn: '66000000000000000000' })
const headers = { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY }
const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}
const rounds: number[] = []
for (let r = 0; r <= ROUNDS; r++) {
  const t = cpuUs()
  for (let i = 0; i < REQUESTS; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/quote', headers, payload })
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`)
  }
  if (r > 0) rounds.push(Math.round((10 * (cpuUs() - t)) / REQUESTS) / 10)
}
await app.close()
console.log(JSON.stringify({ name: 'probe:quote-route-cost', requests_per_round: REQUESTS, us_per_request: rounds, min_us_per_request: Math.min(...rounds) }))
