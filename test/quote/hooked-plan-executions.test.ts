/**
 * What a quote through a pool the math only estimates (the devnet's directional-fee hook) costs:
 * one route search, whose outcome carries the exact pools' best plan (the same as a search with
 * `exactPoolsOnly`), and the EVM executions the choice needs: the hooked plan without a minimum,
 * then either its final calldata (when it nets more than the exact plan could: the exact plan is
 * not executed) or the exact plan (which wins). Once a hooked hop's estimate held, the next plan
 * through it is executed at once with its final minimum: one execution when it holds again, the
 * same answer. A plan of exactly quoted pools is executed once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import type { Simulator } from '../../src/evm/simulator.ts'
import { EvmQuoteService, type RoutePlanner } from '../../src/quote/evm-quote-service.ts'
import type { QuoteRequest } from '../../src/quote/types.ts'
import { planHasEstimatedHops } from '../../src/routing/swap-plan.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { loadRegistry, lower, tokenAddress } from '../support/devnet.ts'
import { QUOTE_MIX } from '../support/quote-mix.ts'

const registry = loadRegistry()
const token = (symbol: string) => tokenAddress(registry, symbol)
const DIRECTIONAL_POOL = lower(registry.v4.pools.find((p) => p.name.includes(' directional-fee'))!.poolId)

let domain: DomainServices
beforeAll(async () => {
  domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' }), { log: { warn: () => {} } })
})
afterAll(async () => {
  await domain?.close()
})

/**
 * a quote service over the domain's search and simulator, counting both; `withoutAlternative`: the
 * planner drops the exact pools' plan from its outcomes (a planner that does not give it)
 */
function counted(withoutAlternative = false) {
  const counts = { routes: 0, exactOnlyRoutes: 0, executions: 0 }
  const simulator = Object.create(domain.simulator) as Simulator
  simulator.call = (state, request) => {
    if (request.to === domain.contracts.router) counts.executions++
    return domain.simulator.call(state, request)
  }
  const planner: RoutePlanner = {
    route: async (reader, request) => {
      counts.routes++
      if (request.exactPoolsOnly === true) counts.exactOnlyRoutes++
      const outcome = await domain.routing.route(reader, request)
      return withoutAlternative && outcome.kind === 'plan' ? { kind: 'plan', plan: outcome.plan } : outcome
    },
  }
  const service = new EvmQuoteService({ chain: domain.chain, simulator, erc20: new Erc20StateWriter(simulator), planner, router: domain.contracts.router, defaultSlippageBps: 50, maxCachedQuotes: 0, log: { warn: () => {} } })
  return { service, counts }
}

const mix = (tokenIn: string, tokenOut: string): QuoteRequest => QUOTE_MIX.find((m) => m.tokenIn === token(tokenIn) && m.tokenOut === token(tokenOut))!
const crosses = (routes: Array<{ hops: Array<{ pool: string }> }>, pool: string) => routes.some((r) => r.hops.some((h) => h.pool === pool))

describe('quotes through a hooked pool the math only estimates', () => {
  it("the search's outcome carries the exact pools' plan, the same as a search without the hooked pools", async () => {
    for (const request of [mix('UNI', 'LINK'), mix('LINK', 'DAI')]) {
      const reader = domain.chain.latest()
      const outcome = await domain.routing.route(reader, request)
      if (outcome.kind !== 'plan') throw new Error(`no plan: ${outcome.kind}`)
      expect(planHasEstimatedHops(outcome.plan)).toBe(true)
      expect(outcome.exactPools).toEqual(await domain.routing.route(reader, { ...request, exactPoolsOnly: true }))
      expect(outcome.exactPools?.kind === 'plan' && planHasEstimatedHops(outcome.exactPools.plan)).toBe(false)
    }
    // a plan of exactly quoted pools carries none
    const plain = await domain.routing.route(domain.chain.latest(), mix('WETH', 'USDC'))
    expect(plain.kind === 'plan' && plain.exactPools === undefined).toBe(true)
  })

  it('UNI -> LINK: the hooked plan nets more than the exact plan expects, so the exact plan is not executed', async () => {
    const request = mix('UNI', 'LINK')
    const { service, counts } = counted()
    const quote = await service.quote(request)
    expect(crosses(quote.routes, DIRECTIONAL_POOL)).toBe(true)
    expect(counts).toEqual({ routes: 1, exactOnlyRoutes: 0, executions: 2 })
    // why skipping was safe: the exact plan's math is exact, so it could not have given more
    const outcome = await domain.routing.route(domain.chain.latest(), request)
    const exact = outcome.kind === 'plan' ? outcome.exactPools : undefined
    if (exact?.kind !== 'plan') throw new Error('no exact plan')
    expect(quote.amountOut).toBeGreaterThan(exact.plan.expectedAmountOut)
  })

  it("LINK -> DAI: the hook's fee makes the exact plan better; it is executed and answered", async () => {
    const { service, counts } = counted()
    const quote = await service.quote(mix('LINK', 'DAI'))
    expect(crosses(quote.routes, DIRECTIONAL_POOL)).toBe(false)
    expect(counts).toEqual({ routes: 1, exactOnlyRoutes: 0, executions: 2 })
  })

  it('a planner that gives no exact alternative is asked for it with exactPoolsOnly, with the same answer', async () => {
    const request = mix('UNI', 'LINK')
    const { service: reference } = counted()
    const { service, counts } = counted(true)
    expect(await service.quote(request)).toEqual(await reference.quote(request))
    expect(counts).toMatchObject({ routes: 2, exactOnlyRoutes: 1 })
  })

  it('a plan of exactly quoted pools: one search, one execution', async () => {
    const { service, counts } = counted()
    await service.quote(mix('WETH', 'USDC'))
    expect(counts).toEqual({ routes: 1, exactOnlyRoutes: 0, executions: 1 })
  })

  it("once the hooked hops' estimates held, the next plan through them is executed once, with the answer a fresh service gives", async () => {
    const base = mix('UNI', 'LINK')
    const { service, counts } = counted()
    await service.quote({ ...base, amountIn: base.amountIn + 1n })
    expect(counts.executions).toBe(2)
    const request = { ...base, amountIn: base.amountIn + 2n }
    const quote = await service.quote(request)
    expect(counts).toEqual({ routes: 2, exactOnlyRoutes: 0, executions: 3 })
    expect(crosses(quote.routes, DIRECTIONAL_POOL)).toBe(true)
    const { service: fresh, counts: freshCounts } = counted()
    expect(quote).toEqual(await fresh.quote(request))
    expect(freshCounts.executions).toBe(2)
  })

  it("a hooked hop whose estimate did not hold is executed without a minimum first again (LINK -> WETH pays the hook 1%, slot0 says 0.05%)", async () => {
    const base = mix('LINK', 'DAI')
    const { service, counts } = counted()
    for (let i = 1n; i <= 3n; i++) await service.quote({ ...base, amountIn: base.amountIn + i })
    expect(counts).toEqual({ routes: 3, exactOnlyRoutes: 0, executions: 6 })
  })
})
