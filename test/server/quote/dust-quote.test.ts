/**
 * A quote for a dust amount (1 wei of WETH, 1,000 wei of DAI) over the real route search and EVM
 * on the devnet, through POST /v1/quote: the output rounds down to zero on every route, and the
 * answer says so (AMOUNT_TOO_SMALL), instead of blaming shallow pools. An amount the pools cannot
 * take still answers INSUFFICIENT_LIQUIDITY.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Erc20StateWriter } from '../../../src/evm/erc20-slots.ts'
import { EvmQuoteService } from '../../../src/quote/evm-quote-service.ts'
import { RoutingEngine } from '../../../src/routing/routing-engine.ts'
import { ApiKeyRegistry } from '../../../src/server/auth/api-keys.ts'
import { registerQuoteRoutes } from '../../../src/server/quote/quote-routes.ts'
import { DEX, lower, registry, sim, source, tok } from '../../routing/helpers.ts'

const KEY = 'dust-test-key-0123456789'
let app: FastifyInstance
let routing: RoutingEngine

beforeAll(async () => {
  routing = new RoutingEngine(sim, { dex: DEX })
  const quote = new EvmQuoteService({
    chain: source,
    simulator: sim,
    erc20: new Erc20StateWriter(sim),
    planner: routing,
    router: lower(registry.extensions!['swap-plan-router']),
    defaultSlippageBps: 50,
    maxCachedQuotes: 0,
    log: { warn: () => {} },
  })
  app = Fastify({ logger: false })
  await registerQuoteRoutes(app, { quoteService: quote, apiKeys: ApiKeyRegistry.fromKeys([KEY]), rateLimit: { max: 1000, timeWindowMs: 60_000 } })
  await app.ready()
})
afterAll(() => app?.close())

function quote(tokenIn: string, tokenOut: string, amountIn: bigint) {
  return app.inject({
    method: 'POST',
    url: '/v1/quote',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    payload: { tokenIn, tokenOut, amountIn: amountIn.toString() },
  })
}

describe('POST /v1/quote for a dust amount', () => {
  it.each([
    ['1 wei of WETH to USDC', 'WETH', 'USDC', 1n],
    ['1,000 wei of DAI to USDC', 'DAI', 'USDC', 1_000n],
    ['1,000 wei of DAI to WETH', 'DAI', 'WETH', 1_000n],
  ])('%s: 422 AMOUNT_TOO_SMALL, the output rounds to zero', async (_name, a, b, amount) => {
    const res = await quote(tok(a), tok(b), amount)
    expect(res.statusCode).toBe(422)
    const body = res.json()
    expect(body.code).toBe('QUOTE_ERROR')
    expect(body.details.reason).toBe('AMOUNT_TOO_SMALL')
    expect(body.message).toMatch(/rounds down to zero/)
    expect(body.message).not.toMatch(/shallow/)
  })

  it('an amount just large enough is quoted (the route exists)', async () => {
    const res = await quote(tok('WETH'), tok('USDC'), 10n ** 12n)
    expect(res.statusCode).toBe(200)
    expect(BigInt(res.json().amountOut)).toBeGreaterThan(0n)
  })

  it('an amount no pool can take (2^256-1) is still INSUFFICIENT_LIQUIDITY', async () => {
    const res = await quote(tok('WETH'), tok('USDC'), (1n << 256n) - 1n)
    expect(res.statusCode).toBe(422)
    expect(res.json().details.reason).toBe('INSUFFICIENT_LIQUIDITY')
  })

  it('the route search tells the two apart', async () => {
    const reader = source.latest()
    expect((await routing.route(reader, { tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: 1n })).kind).toBe('amount-too-small')
    expect((await routing.route(reader, { tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: (1n << 256n) - 1n })).kind).toBe('insufficient-liquidity')
  })
})
