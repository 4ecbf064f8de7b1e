/**
 * What the service's configuration is: one typed section per subsystem, every value already parsed
 * (numbers, wei amounts, addresses, relay endpoints, key registries). It is read from the
 * environment in one pass by `loadConfig` (src/node/config.ts), which reports every bad value at
 * once in a ConfigError; nothing downstream parses a configuration string again.
 *
 * This module holds only the shape, and re-exports ConfigError (every layer that reports a
 * configuration problem throws it; its home is config-error.ts, so those layers need not import
 * this module, which names their types); its imports are types.
 */
import type { Address } from './chain/types.ts'
import type { Venue } from './pools/pools.ts'
import type { ApiKeyRegistry } from './server/auth/api-keys.ts'
import type { PartnerRegistry } from './server/jsonrpc/partners.ts'
import type { RelayEndpoint } from './submission/relay-client.ts'
import type { LifecycleCommit } from './submission/store/postgres-store.ts'

export { ConfigError } from './config-error.ts'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
export type Hardfork = 'london' | 'paris' | 'shanghai' | 'cancun' | 'prague'

export interface ServiceConfig {
  server: ServerConfig
  access: AccessConfig
  chain: ChainConfig
  quote: QuoteConfig
  backrun: BackrunConfig
  submission: SubmissionConfig
  devnet: DevnetConfig
  evm: EvmConfig
  workers: WorkersConfig
}

/** The HTTP front door: HOST, PORT, LOG_LEVEL, BODY_LIMIT_BYTES, RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS, RPC_MAX_BATCH_SIZE,
 * SERVER_MAX_CONNECTIONS, SERVER_KEEP_ALIVE_TIMEOUT_MS. */
export interface ServerConfig {
  host: string
  port: number
  logLevel: LogLevel
  /** maximum request body, bytes */
  bodyLimitBytes: number
  /** quote requests per API key per window */
  rateLimitMax: number
  rateLimitWindowMs: number
  /**
   * RATE_LIMIT_DB_TIMEOUT_MS: with DATABASE_URL, the longest a quote waits for the shared rate-limit
   * count, ms; past it (or when the database fails) the request is counted in this process only
   */
  rateLimitDbTimeoutMs: number
  /** most entries in one JSON-RPC batch */
  rpcMaxBatchSize: number
  /**
   * SERVER_MAX_CONNECTIONS: open TCP connections the HTTP server holds at once; one more is closed
   * as it arrives (Node's server.maxConnections). Keep-alive clients under load open connections
   * and keep them: without a bound their sockets and buffers were memory no limit covered.
   */
  maxConnections: number
  /** SERVER_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this, ms */
  keepAliveTimeoutMs: number
}

/**
 * Who may call the service: API_KEYS or API_KEYS_FILE, PARTNER_TOKENS or PARTNER_TOKENS_FILE, held
 * as SHA-256 digests only (the registries never give a key or token back).
 */
export interface AccessConfig {
  apiKeys: ApiKeyRegistry
  partners: PartnerRegistry
  /** what start-up must say about them (devnet mode without keys: the public development key and token) */
  warnings: readonly string[]
}

/** Where state comes from (UPSTREAM_RPC_URL: a fork of that node; unset: the embedded devnet) and the rules it is executed with. */
export type ChainConfig = ForkChainConfig | DevnetChainConfig

interface ChainRules {
  /** HARDFORK: rules the simulator applies */
  hardfork: Hardfork
  /** BLOCK_TIME_SECONDS: added to the head's timestamp for the next-block simulation context */
  blockTimeSeconds: bigint
}

export interface DevnetChainConfig extends ChainRules {
  mode: 'devnet'
  /**
   * VENUES (or V2_FACTORY / V3_FACTORY) in devnet mode: the registry's venues routes and backruns
   * use, picked by protocol and factory (e.g. only Uniswap's own, to compare with the grown devnet);
   * unset: every venue of the registry
   */
  venues?: Venue[]
}

export interface ForkChainConfig extends ChainRules {
  mode: 'fork'
  upstream: UpstreamConfig
  /** ROUTER_ADDRESS, WETH_ADDRESS, VENUES (or V2_FACTORY / V3_FACTORY), BASE_TOKENS, BACKRUN_CONTRACT, ETH_USD_FEED */
  contracts: ChainContracts
}

/** The upstream node of fork mode and how it is read. */
export interface UpstreamConfig {
  /** UPSTREAM_RPC_URL */
  url: string
  /** FORK_BLOCK: block to pin at start ('latest' follows the chain) */
  forkBlock: bigint | 'latest'
  timeoutMs: number
  retries: number
  batchSize: number
  /** FORK_CACHE_MAX_ENTRIES */
  cacheMaxEntries: number
  /** FORK_CACHE_MAX_BLOCKS: the newest blocks whose state stays cached (0: no bound in blocks) */
  cacheMaxBlocks: number
  headPollIntervalMs: number
}

/** Addresses of the contracts the service routes through (lowercase). */
export interface ChainContracts {
  router: Address
  weth: Address
  /**
   * VENUES: the V2- and V3-style deployments routes use (src/pools/venues.ts); the router and the
   * backrun contract must have been deployed with the same ones
   */
  venues: Venue[]
  /** tokens routes may pass through */
  baseTokens: Address[]
  /** Chainlink-style ETH/USD feed (AggregatorV3Interface) */
  ethUsdFeed: Address
  /** every token the deployment lists (the devnet registry's): backrun cycle tokens unless BACKRUN_CYCLE_TOKENS says otherwise */
  listedTokens?: Address[]
  /** the deployed BackrunExecutor (src/contracts/BackrunExecutor.sol) */
  backrunExecutor: Address
}

/** POST /v1/quote: DEFAULT_SLIPPAGE_BPS, QUOTE_CACHE_MAX_ENTRIES. */
export interface QuoteConfig {
  /** default slippage tolerance of a quote's minAmountOut, basis points */
  defaultSlippageBps: number
  /** quote answers cached per (block, request); 0 disables the cache */
  cacheMaxEntries: number
}

/** eth_backrun and the backruns appended to private submissions: BACKRUN_MIN_NET_PROFIT_WEI, BACKRUN_PRIORITY_FEE_WEI, BACKRUN_REFUND_BPS, BACKRUN_CYCLE_TOKENS, BACKRUN_MAX_THIRD_TOKENS, BACKRUN_MAX_POOLS_PER_PAIR, BACKRUN_SEARCH_BUDGET_MS. */
export interface BackrunConfig {
  /** a backrun is answered only when its net profit exceeds this, wei */
  minNetProfitWei: bigint
  /** priority fee assumed for the backrun's gas on top of the next base fee, wei per gas */
  priorityFeeWei: bigint
  /** share of a backrun's gross profit paid back to the user, basis points */
  refundBps: number
  /**
   * BACKRUN_CYCLE_TOKENS: tokens a backrun triangle may pass through besides the base tokens and the
   * moved pools' own tokens; undefined: the devnet registry's tokens in devnet mode, none in fork mode
   */
  cycleTokens?: Address[]
  /** BACKRUN_MAX_THIRD_TOKENS: third tokens of triangles per moved pool (discovery and search) */
  maxThirdTokens: number
  /** BACKRUN_MAX_POOLS_PER_PAIR: pools of one token pair in the cycles (moved pools always) */
  maxPoolsPerPair: number
  /** BACKRUN_SEARCH_BUDGET_MS: time budget of the native cycle search, per request */
  searchBudgetMs: number
}

/** Private submission: the outbox, the relays, the searcher keys and the limits of what is accepted. */
export interface SubmissionConfig {
  /** DATA_DIR: directory of the durable submission outbox (LevelDB), used when no DATABASE_URL is set */
  dataDir: string
  /**
   * DATABASE_URL: a postgres:// URL; when set, submissions are stored in PostgreSQL (one database
   * several service processes can share) instead of LevelDB in DATA_DIR. Never logged: it may hold
   * a password.
   */
  databaseUrl?: string
  /**
   * SUBMISSION_LEASE_MS: with DATABASE_URL, how long a replica holds an open submission without
   * renewing it (it renews every third of this); a replica that dies loses its submissions to the
   * others this long after its last renewal, ms
   */
  leaseMs: number
  /**
   * With DATABASE_URL, the store's connections and its group commit of acknowledgements:
   * SUBMISSION_DB_POOL_SIZE connections at most; new submissions that arrive while an insert runs
   * share the next insert statement (one transaction, one WAL flush), at most
   * SUBMISSION_DB_MAX_INSERT_GROUP each, SUBMISSION_DB_INSERTS_IN_FLIGHT such statements at once
   * (fewer than the pool's connections, so lifecycle writes, claims and reads keep one);
   * SUBMISSION_DB_LIFECYCLE_COMMIT: 'async', the dispatcher's grouped lifecycle writes commit on a
   * connection of their own without waiting for the WAL flush (durable against any crash of a
   * service process, not of PostgreSQL itself: see postgres-store.ts), or 'sync'
   */
  postgres: { poolSize: number; maxInsertGroup: number; insertsInFlight: number; lifecycleCommit: LifecycleCommit }
  /**
   * SEARCHER_PRIVATE_KEY, then SEARCHER_PRIVATE_KEYS, each key once (lowercase 0x-hex, valid
   * secp256k1 keys): one backrun per key per block; the first also signs relay requests. Undefined:
   * none configured (devnet mode: the registry's public development keys). Never logged.
   */
  searcherKeys?: readonly string[]
  /** RELAYS; undefined: none configured (devnet mode: the local builder) */
  relays?: readonly RelayEndpoint[]
  /** undelivered submissions held at most; beyond it a submission is refused (-32603, nothing accepted) */
  maxPendingSubmissions: number
  /** backrun plans per target block at most (CPU bound of re-planning every open submission) */
  maxBackrunPlansPerBlock: number
  /**
   * per target block at most: re-simulations of open submissions, re-sends of their own bundles,
   * and bundle-stats questions, each (a new submission is always simulated and sent). Keeps the
   * per-block work bounded when submissions pile up, so a backlog degrades instead of feeding itself.
   */
  maxResendsPerBlock: number
  /**
   * INCLUSION_INDEX_MAX_HASHES: the transaction hashes the inclusion index holds at most over its
   * window (SUBMISSION_EXPIRY_BLOCKS + 2 blocks), ~56 bytes each allocated at start; a block whose
   * hashes do not fit is checked by receipt instead
   */
  inclusionIndexMaxHashes: number
  /**
   * DISPATCHER_QUEUE_WAIT_MS: the longest one of the dispatcher's simulations or backrun plans waits
   * for a place to run (a worker of the pool, a plan slot), ms; past it the work fails as busy
   * (recorded) and the user's own bundle goes out without it. Its 2 s run bound counts from its start.
   */
  queueWaitMs: number
  /** blocks a submission is re-sent for before it expires */
  expiryBlocks: number
  /**
   * The LevelDB outbox's native memory (unused with DATABASE_URL): OUTBOX_CACHE_BYTES (its block
   * cache), OUTBOX_WRITE_BUFFER_BYTES (its memtable; a second one while the full one is flushed),
   * OUTBOX_MAX_OPEN_FILES (table files kept open, each with its index and filter blocks in memory);
   * and OUTBOX_MAX_GROUP_OPS, the most operations one fsynced group commit writes (an
   * acknowledgement waits for the group in flight and its own)
   */
  outboxLevelDb: { cacheBytes: number; writeBufferBytes: number; maxOpenFiles: number; maxGroupOps: number }
  maxBundleTxs: number
  maxRawTxBytes: number
  maxBundleBytes: number
}

/** The embedded devnet and its local block builder: DEVNET_GENESIS, DEVNET_REGISTRY, DEVNET_STATE_LAYER_DEPTH, LOCAL_BUILDER_PORT, LOCAL_BUILDER_BLOCK_TIME_MS, LOCAL_BUILDER_HISTORY_BLOCKS, LOCAL_BUILDER_SLICE_MS. */
export interface DevnetConfig {
  genesisPath: string
  registryPath: string
  /** port of the local block builder (0 = any free port) */
  localBuilderPort: number
  /** the local builder seals a block this often, ms */
  localBuilderBlockTimeMs: number
  /**
   * blocks the local builder keeps readable (header, state for eth_call, receipts, bundle stats):
   * its memory grows with this window, not with the chain's length
   */
  localBuilderHistoryBlocks: number
  /**
   * the local builder's longest synchronous stretch of block building, ms: it runs in the
   * service's main thread, and gives the event loop a turn between transactions once this is spent
   */
  localBuilderSliceMs: number
  /** the devnet's per-block state layers are merged into one every this many blocks */
  stateLayerDepth: number
}

/**
 * What one EVM execution may cost (src/evm/execution-budget.ts): every call and transaction the
 * service executes (quote, eth_backrun, the dispatcher's simulations and backrun planning).
 * EVM_MAX_GAS, EVM_MAX_MS.
 */
export interface EvmConfig {
  /** most gas one execution is given; a signed transaction asking for more is stopped before it runs code */
  maxGas: bigint
  /** wall-clock milliseconds one execution may run before it is stopped */
  maxMs: number
}

/**
 * Worker threads for the CPU-bound work (src/workers): quotes and eth_backrun run there while the
 * main thread keeps HTTP, validation, authentication, rate limits, the outbox and the relay calls.
 * WORKERS.
 */
export interface WorkersConfig {
  /** threads in the pool; 0: everything runs on the main thread, as without a pool */
  threads: number
  /**
   * how much lower the workers are scheduled than the main thread: niceness added to the process's
   * own (0 to 19; Linux applies it per thread): above 0 the main
   * thread, which acknowledges submissions and answers HTTP, gets a core before the EVM work does
   */
  nice: number
  /**
   * while both wait for a worker, interactive tasks (quotes, eth_backrun) let in per background
   * task (the dispatcher's re-simulations and plans at a head): src/workers/task-gate.ts
   */
  backgroundEvery: number
  /** background tasks holding a worker at once at most; 0: threads (no bound beyond the pool's) */
  backgroundMax: number
  /**
   * ms a quote or eth_backrun may wait for a free worker; past it the request fails as busy
   * (422 SIMULATION_FAILED / -32603 worker_busy) instead of being computed for a client that
   * has given up (src/workers/task-gate.ts)
   */
  queueMaxWaitMs: number
  /**
   * WORKER_MAX_YOUNG_GENERATION_MB: V8's young generation of each worker, MB (its
   * resourceLimits.maxYoungGenerationSizeMb: three semi-spaces' worth); larger, a worker scavenges
   * less often for the same allocation (src/workers/worker-pool.ts)
   */
  maxYoungGenerationMb: number
}
