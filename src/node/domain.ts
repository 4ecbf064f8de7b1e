/**
 * The domain objects the HTTP server serves, from configuration: state source, simulator, routing
 * engine, quote service, backrun engine. Both `npm start` (src/node/start.ts) and the end-to-end
 * tests go through here, so what the tests check is what runs.
 */
import type { ServiceConfig } from '../config.ts'
import type { ChainStateSource } from '../chain/types.ts'
import { commonForChain } from '../evm/chain-config.ts'
import { Erc20StateWriter } from '../evm/erc20-slots.ts'
import { Simulator } from '../evm/simulator.ts'
import { BackrunEngine } from '../backrun/backrun-engine.ts'
import { EvmQuoteService, type QuoteServiceLogger } from '../quote/evm-quote-service.ts'
import { RoutingEngine } from '../routing/routing-engine.ts'
import { resolveChainContracts, type ChainContracts } from './chain-contracts.ts'
import { openChainSource } from './open-chain-source.ts'

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
  const simulator = new Simulator({
    common: commonForChain(chain.chainId, config.chain.hardfork),
    blockTimeSeconds: config.chain.blockTimeSeconds,
    // every execution of the service (quote, eth_backrun, the dispatcher) runs on this simulator
    budget: config.evm,
  })
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
    defaultSlippageBps: config.quote.defaultSlippageBps,
    maxCachedQuotes: config.quote.cacheMaxEntries,
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
    minNetProfitWei: config.backrun.minNetProfitWei,
    priorityFeeWei: config.backrun.priorityFeeWei,
    refundBps: config.backrun.refundBps,
    log: options.log,
  })
  return { chain, contracts, simulator, routing, quote, backrun, close: () => chain.close() }
}
