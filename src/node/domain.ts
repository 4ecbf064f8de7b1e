/**
 * The domain objects the HTTP server serves, from configuration: state source, simulator, routing
 * engine, quote service, backrun engine. Both `npm start` (src/node/start.ts) and the end-to-end
 * tests go through here, so what the tests check is what runs.
 *
 * WORKERS > 0: quotes and eth_backrun are computed in a pool of worker threads (src/workers), over
 * this thread's state source (the one cache); `quote` and `backrun` are then the pool's facades,
 * with the interfaces the server already uses, and `workers` is handed to the submission services
 * (src/node/submission.ts), whose dispatcher simulates and plans in the same pool. WORKERS = 0:
 * everything runs on this thread, as before the pool.
 */
import type { ServiceConfig } from '../config.ts'
import type { ChainStateSource } from '../chain/types.ts'
import type { Simulator } from '../evm/simulator.ts'
import { BackrunEngine } from '../backrun/backrun-engine.ts'
import { EvmQuoteService, type QuoteServiceLogger } from '../quote/evm-quote-service.ts'
import type { QuoteService, QuoteServiceStats } from '../quote/types.ts'
import type { RoutingEngine } from '../routing/routing-engine.ts'
import { analyseKnownCode, knownCodeAddresses, type CodeAnalysesAhead } from '../workers/code-analyses-ahead.ts'
import { buildEngines, engineSettings } from '../workers/engines.ts'
import { PooledBackrunEngine } from '../workers/pooled-backrun-engine.ts'
import { PooledQuoteService } from '../workers/pooled-quote-service.ts'
import { WorkerPool } from '../workers/worker-pool.ts'
import { resolveChainContracts, type ChainContracts } from './chain-contracts.ts'
import { openChainSource } from './open-chain-source.ts'

export interface DomainServices {
  chain: ChainStateSource
  contracts: ChainContracts
  /** this thread's simulator (the devnet builder; the dispatcher when WORKERS = 0) */
  simulator: Simulator
  routing: RoutingEngine
  quote: QuoteService & { stats(): QuoteServiceStats }
  /** eth_backrun's engine (in the pool when WORKERS > 0); `searchAfter`, on this thread, is the in-process planner's (WORKERS = 0) */
  backrun: BackrunEngine
  /** the worker pool, when WORKERS > 0 (quotes, eth_backrun, and the dispatcher's simulations and planning) */
  workers?: WorkerPool
  /** what analysing the known contracts' code ahead did on this thread (undefined: their reads failed) */
  codeAnalysesAhead: CodeAnalysesAhead | undefined
  close(): Promise<void>
}

export interface DomainServicesOptions {
  /** where background failures (head polling, warm-up), quote warnings and the pool's events go */
  log: QuoteServiceLogger
}

export async function openDomainServices(config: ServiceConfig, options: DomainServicesOptions): Promise<DomainServices> {
  // resolved first: a devnet registry without the router fails before any connection is opened
  const contracts = resolveChainContracts(config)
  const chain = await openChainSource(config, (err) => options.log.warn({ err }, 'upstream background read failed'))
  const settings = engineSettings(config, contracts, knownCodeAddresses(chain, contracts))
  const engines = buildEngines(chain, settings, options.log)
  const { simulator, routing } = engines
  // this thread's EVMs (the devnet builder's, the dispatcher's when WORKERS = 0) hold the known
  // contracts' analyses from the start, as each worker does from its warm-up (worker-entry.ts)
  const codeAnalysesAhead = await analyseKnownCode(simulator.common, chain.latest(), settings.knownCode).catch((err: unknown) => {
    // an upstream hiccup on a fork: those contracts are analysed when first run, as before
    options.log.warn({ err }, 'analysing the known contracts ahead failed')
    return undefined
  })
  if (config.workers.threads === 0) {
    const quote = new EvmQuoteService(engines.quoteOptions)
    const backrun = new BackrunEngine(engines.backrunOptions)
    return { chain, contracts, simulator, routing, quote, backrun, codeAnalysesAhead, close: () => chain.close() }
  }
  const workers = new WorkerPool({
    threads: config.workers.threads,
    nice: config.workers.nice,
    backgroundEvery: config.workers.backgroundEvery,
    interactiveMaxWaitMs: config.workers.queueMaxWaitMs,
    maxYoungGenerationMb: config.workers.maxYoungGenerationMb,
    ...(config.workers.backgroundMax === 0 ? {} : { maxBackgroundRunning: config.workers.backgroundMax }),
    chain,
    engines: settings,
    log: options.log,
  })
  try {
    // the service is ready when its workers are: the first requests do not wait for them to load
    await workers.ready()
  } catch (err) {
    await workers.close()
    await chain.close()
    throw err
  }
  const quote = new PooledQuoteService(workers, { maxCachedQuotes: config.quote.cacheMaxEntries })
  const backrun = new PooledBackrunEngine(engines.backrunOptions, workers)
  const close = async (): Promise<void> => {
    await workers.close()
    await chain.close()
  }
  return { chain, contracts, simulator, routing, quote, backrun, workers, codeAnalysesAhead, close }
}
