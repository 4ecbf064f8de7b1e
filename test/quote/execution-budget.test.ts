/**
 * EvmQuoteService and the execution budget: a quote whose execution the simulator stops (an
 * ExecutionBudgetError, from any of the quote's executions) fails with SIMULATION_FAILED naming
 * the budget, with `details.budget` and `details.limit`; unlike the other quote failures it is not
 * kept in the per-block answer cache (whether the wall clock runs out depends on how busy the
 * process is), so the same request is computed again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import { ExecutionBudgetError } from '../../src/evm/execution-budget.ts'
import type { Simulator } from '../../src/evm/simulator.ts'
import { EvmQuoteService } from '../../src/quote/evm-quote-service.ts'
import { QuoteFailedError, type QuoteRequest } from '../../src/quote/types.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { loadRegistry, tokenAddress } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry()
let domain: DomainServices
beforeAll(async () => {
  domain = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
})
afterAll(async () => {
  await domain?.close()
})

const REQUEST: QuoteRequest = { tokenIn: tokenAddress(registry, 'WETH'), tokenOut: tokenAddress(registry, 'USDC'), amountIn: 10n ** 18n }

/** the domain's simulator, except that the calls `stop` picks are stopped by the time budget */
function stopping(stop: (request: { to?: string }) => boolean): { simulator: Simulator; calls: () => number } {
  let calls = 0
  const real = domain.simulator
  const simulator = Object.create(real) as Simulator
  simulator.call = async (state, request) => {
    calls++
    if (stop(request)) throw ExecutionBudgetError.time(250, 251)
    return real.call(state, request)
  }
  return { simulator, calls: () => calls }
}

function service(simulator: Simulator) {
  return new EvmQuoteService({
    chain: domain.chain,
    simulator,
    erc20: new Erc20StateWriter(simulator),
    planner: domain.routing,
    router: domain.contracts.router,
    defaultSlippageBps: 50,
    log: { warn: () => {} },
  })
}

describe('quote: an execution stopped by the budget', () => {
  it.each([
    ['the token check (the first call)', () => true],
    ['the swap (the router call)', (request: { to?: string }) => request.to === domain.contracts.router],
  ])('in %s: 422 SIMULATION_FAILED naming the budget', async (_where, stop) => {
    const err = await service(stopping(stop).simulator).quote(REQUEST).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(QuoteFailedError)
    expect((err as QuoteFailedError).reason).toBe('SIMULATION_FAILED')
    expect((err as QuoteFailedError).message).toMatch(/^the simulation was stopped: execution stopped after 251 ms: it exceeded the wall-clock budget of 250 ms per EVM execution \(EVM_MAX_MS\)$/)
    expect((err as QuoteFailedError).details).toEqual({ budget: 'time', limit: '250' })
  })

  it('is not kept in the answer cache: the same request is computed again', async () => {
    const { simulator, calls } = stopping(() => true)
    const quotes = service(simulator)
    await expect(quotes.quote(REQUEST)).rejects.toBeInstanceOf(QuoteFailedError)
    const after = calls()
    await expect(quotes.quote(REQUEST)).rejects.toBeInstanceOf(QuoteFailedError)
    expect(calls()).toBeGreaterThan(after)
    expect(quotes.stats().cacheHits).toBe(0)
  })
})
