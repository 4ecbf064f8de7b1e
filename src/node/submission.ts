/**
 * Private submission from configuration (issue: committed delivery): the durable submission store
 * (PostgreSQL when DATABASE_URL is set, else LevelDB in DATA_DIR), the relays, the dispatcher and
 * what it is injected with (simulation, backrun planning with the backrun engine, inclusion checks
 * against a JSON-RPC node). Part of the composition root, beside domain.ts.
 *
 * Given a worker pool (`workers`), the dispatcher's simulations and backrun planning run in its
 * workers (src/workers: pooled-submission-simulator.ts, pooled-backrun-planner.ts), so the thread
 * that acknowledges submissions never executes them; the searcher keys stay on this thread, which
 * leases and signs for the workers. Without one (WORKERS=0) they run here. npm start (start.ts)
 * passes the pool: the dispatcher plans in the background of its head steps (a plan never holds a
 * user's next send back) and bounds a task's wait for a worker (DISPATCHER_QUEUE_WAIT_MS) apart
 * from its run, and the pool runs simulations before quotes (src/workers/task-gate.ts).
 */
import { readFileSync } from 'node:fs'
import type { AppServices } from '../server/app.ts'
import type { ServiceConfig } from '../config.ts'
import { ConfigError } from '../config.ts'
import type { BackrunEngine } from '../backrun/backrun-engine.ts'
import type { ChainStateSource } from '../chain/types.ts'
import type { Simulator } from '../evm/simulator.ts'
import { Dispatcher, OutboxStore, RelayClient, SearcherKey, type DispatcherLogger, type RelayEndpoint } from '../submission/index.ts'
import { PostgresSubmissionStore } from '../submission/store/postgres-store.ts'
import type { SubmissionStore } from '../submission/store/submission-store.ts'
import { EngineBackrunPlanner, privateKeyBackrunSigner } from '../submission/engine-backrun-planner.ts'
import { engineSubmissionSimulator } from '../submission/engine-simulator.ts'
import { Limiter } from '../submission/limiter.ts'
import { RpcInclusionChecker } from '../submission/rpc-inclusion-checker.ts'
import { SearcherKeyPool } from '../submission/searcher-key-pool.ts'
import type { BackrunPlanner, SubmissionSimulator } from '../submission/dispatcher-ports.ts'
import { PooledBackrunPlanner } from '../workers/pooled-backrun-planner.ts'
import { pooledSubmissionSimulator } from '../workers/pooled-submission-simulator.ts'
import type { WorkerPool } from '../workers/worker-pool.ts'

/**
 * The searcher account of the devnet when no key is configured: the well-known anvil development
 * account of this index in the devnet registry. Its key is public: devnet only.
 */
export const DEVNET_SEARCHER_ACCOUNT_INDEX = 8

/**
 * The devnet's searcher keys when none are configured: the dev accounts the registry reserves for
 * searchers (`devAccounts.searcherIndexes`, the first being DEVNET_SEARCHER_ACCOUNT_INDEX), or that
 * one account in a registry that names none. Their keys are public: devnet only.
 */
function devnetSearcherKeys(registryPath: string): string[] {
  const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as {
    devAccounts: { searcherIndexes?: number[]; accounts: Array<{ index: number; privateKey: string }> }
  }
  const indexes = registry.devAccounts.searcherIndexes ?? [DEVNET_SEARCHER_ACCOUNT_INDEX]
  return indexes.map((index) => {
    const account = registry.devAccounts.accounts.find((a) => a.index === index)
    if (account === undefined) throw new ConfigError([`the devnet registry ${registryPath} has no dev account ${index}`])
    return account.privateKey
  })
}

export interface SubmissionServices {
  store: SubmissionStore
  dispatcher: Dispatcher
  /** the dispatcher's relays (for their metrics) */
  relays: readonly RelayClient[]
  searcherAddress: string
  /** every account that signs backruns (one backrun per account per block) */
  searcherAddresses: string[]
  /** what the HTTP app serves the submission methods and the status route with */
  app: NonNullable<AppServices['submission']>
  close(): Promise<void>
}

export interface SubmissionServicesOptions {
  config: ServiceConfig
  chain: ChainStateSource
  simulator: Simulator
  backrun: BackrunEngine
  /** a worker pool: the dispatcher's simulations and planning run in it (npm start passes the domain's, WORKERS > 0) */
  workers?: WorkerPool
  /** devnet mode: the local builder's JSON-RPC URL (the relay, and where inclusion is read) */
  localBuilderUrl?: string
  log: DispatcherLogger & { warn(obj: object, msg: string): void }
}

/** PostgreSQL when DATABASE_URL is set (a store several processes share), else LevelDB in DATA_DIR (one process). */
function createSubmissionStore(settings: ServiceConfig['submission'], log: SubmissionServicesOptions['log']): SubmissionStore {
  const limits = { maxOpen: settings.maxPendingSubmissions }
  if (settings.databaseUrl === undefined) {
    const { maxGroupOps, ...leveldb } = settings.outboxLevelDb
    return new OutboxStore(settings.dataDir, { ...limits, maxGroupOps, leveldb })
  }
  return new PostgresSubmissionStore(settings.databaseUrl, {
    ...limits,
    leaseMs: settings.leaseMs,
    ...settings.postgres,
    // an idle connection lost (the database restarted): the next statement reconnects or fails with PersistenceError
    onConnectionError: (error) => log.warn({ err: error }, 'submission store: a database connection failed'),
  })
}

export async function openSubmissionServices(options: SubmissionServicesOptions): Promise<SubmissionServices> {
  const { config, chain, simulator } = options
  const settings = config.submission
  let relays: readonly RelayEndpoint[]
  if (settings.relays !== undefined) {
    relays = settings.relays
  } else if (config.chain.mode === 'devnet' && options.localBuilderUrl !== undefined) {
    relays = [{ name: 'local-builder', url: options.localBuilderUrl, hashReference: 'eth_sendBundle', bundleStats: true }]
  } else {
    throw new ConfigError(['RELAYS: required (a JSON array of relay endpoints)'])
  }
  const inclusionUrl = config.chain.mode === 'fork' ? config.chain.upstream.url : options.localBuilderUrl
  if (inclusionUrl === undefined) throw new ConfigError(['no node to read inclusion from: set UPSTREAM_RPC_URL, or run the devnet with its local builder'])

  const rawKeys = settings.searcherKeys ?? [...new Set(devnetSearcherKeys(config.devnet.registryPath).map((k) => k.toLowerCase()))]
  if (settings.searcherKeys === undefined) {
    options.log.warn({ keys: rawKeys.length }, 'no SEARCHER_PRIVATE_KEY(S): backruns are signed with public devnet development keys (devnet only)')
  }
  // the first key also signs relay requests (X-Flashbots-Signature): the relays' view of "us"
  const key = SearcherKey.fromHex(rawKeys[0])
  const keys = new SearcherKeyPool(rawKeys.map((k) => privateKeyBackrunSigner(k)))
  const store = createSubmissionStore(settings, options.log)
  await store.open()
  options.log.info({ store: store.description }, 'submission store open')
  // submitted transactions are decoded with the simulator's chain rules, at the RPC and in the dispatcher alike
  const decode = { chainId: chain.chainId, common: simulator.common }
  const relayClients = relays.map((r) => new RelayClient(r, key))
  const pricing = { refundBps: config.backrun.refundBps, maxPriorityFeePerGas: config.backrun.priorityFeeWei }
  let planner: BackrunPlanner
  let simulate: SubmissionSimulator
  if (options.workers !== undefined) {
    // at most one first simulation per worker in the pool at once (in the pool's queue they go
    // before quotes, see task-gate.ts), and apart from them one re-simulation per worker (a head's
    // re-simulations are background work there, interleaved with quotes); backrun searches (long) take one worker fewer,
    // leaving one to the simulations (short) the user's own bundle waits for. On 2 cores plans on
    // both workers gave fewer backruns, not more (BENCHMARKS.md, bench:flow, issue 13 wired)
    const threads = config.workers.threads
    planner = new PooledBackrunPlanner(options.workers, { keys, share: new Limiter(Math.max(1, threads - 1)), ...pricing })
    simulate = pooledSubmissionSimulator(options.workers, new Limiter(threads), new Limiter(threads))
  } else {
    planner = new EngineBackrunPlanner({ chain, simulator, engine: options.backrun, signer: keys, ...pricing })
    simulate = engineSubmissionSimulator({ chain, simulator })
  }
  const dispatcher = new Dispatcher({
    store,
    relays: relayClients,
    // the fork's reorgs re-plan open submissions and re-open those included in replaced blocks (the devnet has none)
    heads: { onNewHead: (listener) => chain.onNewHead(listener), onReorg: (listener) => chain.onReorg(listener), currentHead: () => chain.latest().block },
    inclusion: new RpcInclusionChecker({ url: inclusionUrl }),
    planner,
    simulate,
    decode,
    expiryBlocks: settings.expiryBlocks,
    maxPlansPerBlock: settings.maxBackrunPlansPerBlock,
    maxSimulationsPerBlock: settings.maxResendsPerBlock,
    maxIndexedHashes: settings.inclusionIndexMaxHashes,
    queueWaitMs: settings.queueWaitMs,
    // a database several replicas share: each dispatches only what it holds a lease on
    leases: settings.databaseUrl === undefined || store.leases === undefined ? undefined : { leases: store.leases },
    log: options.log,
  })
  await dispatcher.start()
  return {
    store,
    dispatcher,
    relays: relayClients,
    searcherAddress: key.address,
    searcherAddresses: keys.signers.map((s) => s.address),
    app: {
      acceptor: dispatcher,
      store,
      decode,
      limits: { maxBundleTxs: settings.maxBundleTxs, maxRawTxBytes: settings.maxRawTxBytes, maxBundleBytes: settings.maxBundleBytes },
    },
    close: async () => {
      await dispatcher.stop()
      await store.close()
    },
  }
}
