/**
 * EvmQuoteService when the route math and the EVM disagree: the EVM's figure is quoted, the
 * disagreement is counted and logged, and the calldata is rebuilt with a minimum that follows the
 * EVM (re-executed, so gas is that of the final bytes); a route whose execution reverts fails with
 * SIMULATION_FAILED. And over the benchmark's quote mix (and every token pair, small and large),
 * the math and the EVM never disagree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import { EvmQuoteService, type RoutePlanner } from '../../src/quote/evm-quote-service.ts'
import { QuoteFailedError, type QuoteRequest } from '../../src/quote/types.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { loadRegistry, lower, tokenAddress } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'
import { QUOTE_MIX } from '../support/quote-mix.ts'

const registry = loadRegistry()
const token = (symbol: string) => tokenAddress(registry, symbol)
const units = (symbol: string, amount: number) => {
  const decimals = registry.tokens.find((t) => t.symbol === symbol)!.decimals
  return (BigInt(Math.round(amount * 1e6)) * 10n ** BigInt(decimals)) / 1_000_000n
}

let domain: DomainServices
beforeAll(async () => {
  domain = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
})
afterAll(async () => {
  await domain?.close()
})

/** a quote service over the real route search, whose plans' expected output is altered by `adjust` */
function serviceWith(adjust: (expectedAmountOut: bigint) => bigint) {
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = []
  const planner: RoutePlanner = {
    route: async (reader, request) => {
      const outcome = await domain.routing.route(reader, request)
      return outcome.kind === 'plan' ? { kind: 'plan', plan: { ...outcome.plan, expectedAmountOut: adjust(outcome.plan.expectedAmountOut) } } : outcome
    },
  }
  const service = new EvmQuoteService({
    chain: domain.chain,
    simulator: domain.simulator,
    erc20: new Erc20StateWriter(domain.simulator),
    planner,
    router: domain.contracts.router,
    defaultSlippageBps: 50,
    maxCachedQuotes: 0,
    log: { warn: (obj, msg) => void warnings.push({ obj: obj as Record<string, unknown>, msg }) },
  })
  return { service, warnings }
}

const REQUEST: QuoteRequest = { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 66) }

describe('quote: route math against the EVM', () => {
  it('when the math under-promises, the EVM figure is quoted and the calldata minimum follows it', async () => {
    const honest = serviceWith((x) => x)
    const truth = await honest.service.quote(REQUEST)
    expect(honest.service.stats().mathDisagreements).toBe(0)

    // the math claims one base unit less than the pools pay: within slippage, so the EVM succeeds
    const off = serviceWith((x) => x - 1n)
    const quoted = await off.service.quote(REQUEST)
    expect(off.service.stats()).toMatchObject({ mathDisagreements: 1, quotesExecuted: 1 })
    expect(off.warnings).toHaveLength(1)
    expect(off.warnings[0].msg).toMatch(/disagree/)
    expect(off.warnings[0].obj).toMatchObject({ math: (truth.amountOut - 1n).toString(), evm: truth.amountOut.toString() })
    // the answer is the EVM's, and the calldata is re-encoded with the minimum derived from it
    expect(quoted.amountOut).toBe(truth.amountOut)
    expect(quoted.minAmountOut).toBe((truth.amountOut * 9_950n) / 10_000n)
    expect(quoted.minAmountOut).toBe(truth.minAmountOut)
    expect(quoted.calldata).toBe(truth.calldata)
    expect(quoted.gas).toBe(truth.gas)
  })

  it('a route that reverts when executed fails with SIMULATION_FAILED and its reason', async () => {
    // the math promises twice what the pools pay: the calldata's minimum cannot be met
    const off = serviceWith((x) => x * 2n)
    const err = await off.service.quote(REQUEST).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(QuoteFailedError)
    expect((err as QuoteFailedError).reason).toBe('SIMULATION_FAILED')
    expect((err as QuoteFailedError).message).toMatch(/reverted when executed/)
    expect((err as QuoteFailedError).details.revertReason).toEqual(expect.any(String))
    expect(off.service.stats().quotesExecuted).toBe(0)
  })

  it('the math and the EVM agree on the benchmark mix and on every token pair (no disagreement counted)', async () => {
    const { service, warnings } = serviceWith((x) => x)
    const requests: QuoteRequest[] = [...QUOTE_MIX]
    for (const a of registry.tokens) {
      for (const b of registry.tokens) {
        if (a.symbol === b.symbol) continue
        requests.push({ tokenIn: lower(a.address) as Address, tokenOut: lower(b.address) as Address, amountIn: 10n ** BigInt(a.decimals) + 7n })
      }
    }
    let quoted = 0
    for (const request of requests) {
      try {
        await service.quote(request)
        quoted++
      } catch (err) {
        // a pair with no route or too little liquidity is an answer; an execution failure is not
        expect(err).toBeInstanceOf(QuoteFailedError)
        expect(['NO_ROUTE', 'INSUFFICIENT_LIQUIDITY']).toContain((err as QuoteFailedError).reason)
      }
    }
    expect(quoted).toBeGreaterThanOrEqual(8)
    expect(service.stats()).toMatchObject({ quotesExecuted: quoted, mathDisagreements: 0 })
    expect(warnings).toEqual([])
  })
})
