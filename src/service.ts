/**
 * The composition root: builds the domain objects the HTTP server serves from configuration. Both
 * `npm start` and the end-to-end tests go through here, so what the tests check is what runs.
 */
import type { ServiceConfig } from './config.ts'
import { resolveChainContracts, type ChainContracts } from './chain/chain-contracts.ts'
import { openChainSource } from './chain/open-chain-source.ts'
import type { ChainStateSource } from './chain/types.ts'
import { commonForChain } from './evm/chain-config.ts'
import { Erc20StateWriter } from './evm/erc20-slots.ts'
import { Simulator } from './evm/simulator.ts'
import { BackrunEngine } from './backrun/backrun-engine.ts'
import { EvmQuoteService, type QuoteServiceLogger } from './quote/evm-quote-service.ts'
import { RoutingEngine } from './routing/routing-engine.ts'

export interface DomainServices {
  chain: ChainStateSource
  contracts: ChainContracts
  simulator: Simulator
  routing: RoutingEngine
  quote: EvmQuoteService
  backrun: BackrunEngine
  close(): Promise<void>
}

export interface DomainServicesOptions {
  /** where background failures (head polling, warm-up) and quote warnings go */
  log: QuoteServiceLogger
}

export async function openDomainServices(config: ServiceConfig, options: DomainServicesOptions): Promise<DomainServices> {
  // resolved first: a devnet registry without the router fails before any connection is opened
  const contracts = resolveChainContracts(config)
  const chain = await openChainSource(config, (err) => options.log.warn({ err }, 'upstream background read failed'))
  const simulator = new Simulator({ common: commonForChain(chain.chainId, config.hardfork), blockTimeSeconds: config.blockTimeSeconds })
  const routing = new RoutingEngine(simulator, {
    dex: { weth: contracts.weth, baseTokens: contracts.baseTokens, v2Factory: contracts.v2Factory, v3Factory: contracts.v3Factory },
  })
  const erc20 = new Erc20StateWriter(simulator)
  const quote = new EvmQuoteService({
    chain,
    simulator,
    erc20,
    planner: routing,
    router: contracts.router,
    defaultSlippageBps: config.defaultSlippageBps,
    maxCachedQuotes: config.quoteCacheMaxEntries,
    log: options.log,
  })
  const backrun = new BackrunEngine({
    chain,
    simulator,
    erc20,
    routing,
    weth: contracts.weth,
    baseTokens: contracts.baseTokens,
    executor: contracts.backrunExecutor,
    ethUsdFeed: contracts.ethUsdFeed,
    minNetProfitWei: config.backrunMinNetProfitWei,
    priorityFeeWei: config.backrunPriorityFeeWei,
    refundBps: config.backrunRefundBps,
    log: options.log,
  })
  return { chain, contracts, simulator, routing, quote, backrun, close: () => chain.close() }
}
