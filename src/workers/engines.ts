/**
 * The engines over one state source, from settings: simulator, routing engine, ERC-20 writer, and
 * the options of the quote service and of the backrun engine. One construction for the main thread
 * (src/node/domain.ts) and for each worker (worker-entry.ts), so a worker answers exactly as the
 * main thread would: same rules, same budgets, same contracts.
 *
 * The settings are plain data (structured-clone safe): a worker receives them as its workerData.
 */
import type { BackrunConfig, ChainContracts, EvmConfig, Hardfork, ServiceConfig } from '../config.ts'
import type { Address, ChainStateSource } from '../chain/types.ts'
import type { BackrunEngineOptions } from '../backrun/backrun-engine.ts'
import { commonForChain } from '../evm/chain-config.ts'
import { Erc20StateWriter } from '../evm/erc20-slots.ts'
import { Simulator } from '../evm/simulator.ts'
import type { EvmQuoteServiceOptions, QuoteServiceLogger } from '../quote/evm-quote-service.ts'
import { RoutingEngine } from '../routing/routing-engine.ts'

export interface EngineSettings {
  hardfork: Hardfork
  blockTimeSeconds: bigint
  /** EVM_MAX_GAS, EVM_MAX_MS: every execution's budget */
  evm: EvmConfig
  contracts: ChainContracts
  defaultSlippageBps: number
  /** QUOTE_CACHE_MAX_ENTRIES */
  quoteCacheMaxEntries: number
  backrun: BackrunConfig
  /**
   * the contracts whose code each isolate analyses before its first request (code-analyses-ahead.ts):
   * the main thread lists them once, each worker reads their code through its own chain source
   */
  knownCode: readonly Address[]
}

/** The engine settings of a service's configuration, over the chain's resolved contracts. */
export function engineSettings(config: ServiceConfig, contracts: ChainContracts, knownCode: readonly Address[] = []): EngineSettings {
  return {
    hardfork: config.chain.hardfork,
    blockTimeSeconds: config.chain.blockTimeSeconds,
    evm: config.evm,
    contracts,
    defaultSlippageBps: config.quote.defaultSlippageBps,
    quoteCacheMaxEntries: config.quote.cacheMaxEntries,
    backrun: config.backrun,
    knownCode,
  }
}

export interface Engines {
  simulator: Simulator
  routing: RoutingEngine
  erc20: Erc20StateWriter
  quoteOptions: EvmQuoteServiceOptions
  backrunOptions: BackrunEngineOptions
}

export function buildEngines(chain: ChainStateSource, settings: EngineSettings, log: QuoteServiceLogger): Engines {
  const { contracts } = settings
  const simulator = new Simulator({
    common: commonForChain(chain.chainId, settings.hardfork),
    blockTimeSeconds: settings.blockTimeSeconds,
    // every execution of the service (quote, eth_backrun, the dispatcher) runs on this simulator
    budget: settings.evm,
  })
  const routing = new RoutingEngine(simulator, {
    dex: { weth: contracts.weth, baseTokens: contracts.baseTokens, venues: contracts.venues },
  })
  const erc20 = new Erc20StateWriter(simulator)
  const quoteOptions: EvmQuoteServiceOptions = {
    chain,
    simulator,
    erc20,
    planner: routing,
    router: contracts.router,
    defaultSlippageBps: settings.defaultSlippageBps,
    maxCachedQuotes: settings.quoteCacheMaxEntries,
    log,
  }
  const backrunOptions: BackrunEngineOptions = {
    chain,
    simulator,
    erc20,
    routing,
    weth: contracts.weth,
    baseTokens: contracts.baseTokens,
    executor: contracts.backrunExecutor,
    ethUsdFeed: contracts.ethUsdFeed,
    minNetProfitWei: settings.backrun.minNetProfitWei,
    priorityFeeWei: settings.backrun.priorityFeeWei,
    refundBps: settings.backrun.refundBps,
    cycleTokens: settings.backrun.cycleTokens ?? contracts.listedTokens ?? [],
    maxThirdTokens: settings.backrun.maxThirdTokens,
    maxPoolsPerPair: settings.backrun.maxPoolsPerPair,
    searchBudgetMs: settings.backrun.searchBudgetMs,
    log,
  }
  return { simulator, routing, erc20, quoteOptions, backrunOptions }
}
