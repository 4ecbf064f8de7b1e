/**
 * The environment -> ServiceConfig, in one pass: every variable is parsed here (numbers, wei,
 * addresses, RELAYS, searcher keys, API keys and partner tokens into their registries) and every
 * bad value is reported at once, in one ConfigError naming each variable and what is expected.
 * A secret (API key, partner token, searcher key) is never quoted in a message.
 *
 * I/O: none, except reading API_KEYS_FILE and PARTNER_TOKENS_FILE when they are set (read only).
 * Names, defaults and meanings are the README's Configuration table.
 */
import { availableParallelism } from 'node:os'
import type { Address } from '../chain/types.ts'
import {
  ConfigError,
  type AccessConfig,
  type BackrunConfig,
  type ChainConfig,
  type ChainContracts,
  type DevnetConfig,
  type EvmConfig,
  type Hardfork,
  type LogLevel,
  type QuoteConfig,
  type ServerConfig,
  type ServiceConfig,
  type SubmissionConfig,
  type WorkersConfig,
} from '../config.ts'
import { resolveApiKeys, type ApiKeyRegistry } from '../server/auth/api-keys.ts'
import type { PartnerRegistry } from '../server/jsonrpc/partners.ts'
import { resolvePartnerTokens } from '../server/jsonrpc/partner-tokens-config.ts'
import { parseRelayEndpoints, type RelayEndpoint } from '../submission/relay-client.ts'
import { SearcherKey } from '../submission/searcher-key.ts'
import { databaseUrlProblem } from '../submission/store/database-url.ts'
import { EXECUTION_BUDGET_RANGES } from '../evm/execution-budget.ts'
import type { Venue } from '../pools/pools.ts'
import { parseVenues, uniswapV2Venue, uniswapV3Venue, VenueListError } from '../pools/venues.ts'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[]
const HARDFORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague'] as const satisfies readonly Hardfork[]
const MAX_SEARCHER_KEYS = 256
/** WORKERS at most: each worker holds its own EVM, caches and heap (src/workers/worker-pool.ts) */
const MAX_WORKERS = 64
/** WORKER_MAX_YOUNG_GENERATION_MB's range: semi-spaces of 1 to 128 MB (V8 sizes the young generation as three of them) */
const MIN_WORKER_YOUNG_GENERATION_MB = 3
const MAX_WORKER_YOUNG_GENERATION_MB = 384

export const DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: 8080,
  LOG_LEVEL: 'info',
  BODY_LIMIT_BYTES: 1_048_576,
  FORK_BLOCK: 'latest',
  UPSTREAM_TIMEOUT_MS: 5_000,
  UPSTREAM_RETRIES: 2,
  UPSTREAM_BATCH_SIZE: 100,
  FORK_CACHE_MAX_ENTRIES: 250_000,
  /** the workers' pinned heads (16) and the submissions' simulations read within a few blocks of the head */
  FORK_CACHE_MAX_BLOCKS: 64,
  HEAD_POLL_INTERVAL_MS: 1_000,
  BLOCK_TIME_SECONDS: 12,
  HARDFORK: 'prague',
  DEVNET_GENESIS: 'fixtures/devnet/genesis.json',
  DEVNET_REGISTRY: 'fixtures/devnet/registry.json',
  RATE_LIMIT_MAX: 100,
  RATE_LIMIT_WINDOW_MS: 1_000,
  RATE_LIMIT_DB_TIMEOUT_MS: 250,
  DEFAULT_SLIPPAGE_BPS: 50,
  QUOTE_CACHE_MAX_ENTRIES: 10_000,
  RPC_MAX_BATCH_SIZE: 100,
  SERVER_MAX_CONNECTIONS: 4_096,
  SERVER_KEEP_ALIVE_TIMEOUT_MS: 72_000,
  BACKRUN_MIN_NET_PROFIT_WEI: '0',
  BACKRUN_PRIORITY_FEE_WEI: '1000000000',
  BACKRUN_REFUND_BPS: 0,
  BACKRUN_MAX_THIRD_TOKENS: 16,
  BACKRUN_MAX_POOLS_PER_PAIR: 5,
  BACKRUN_SEARCH_BUDGET_MS: 20,
  DATA_DIR: 'data',
  SUBMISSION_EXPIRY_BLOCKS: 25,
  MAX_PENDING_SUBMISSIONS: 5_000,
  SUBMISSION_LEASE_MS: 30_000,
  SUBMISSION_DB_POOL_SIZE: 10,
  SUBMISSION_DB_MAX_INSERT_GROUP: 256,
  SUBMISSION_DB_INSERTS_IN_FLIGHT: 2,
  SUBMISSION_DB_LIFECYCLE_COMMIT: 'async',
  OUTBOX_CACHE_BYTES: 8_388_608,
  OUTBOX_MAX_GROUP_OPS: 64,
  OUTBOX_WRITE_BUFFER_BYTES: 4_194_304,
  OUTBOX_MAX_OPEN_FILES: 500,
  MAX_BACKRUN_PLANS_PER_BLOCK: 32,
  MAX_RESENDS_PER_BLOCK: 512,
  INCLUSION_INDEX_MAX_HASHES: 16_384,
  DISPATCHER_QUEUE_WAIT_MS: 500,
  MAX_BUNDLE_TXS: 16,
  MAX_RAW_TX_BYTES: 131_072,
  MAX_BUNDLE_BYTES: 300_000,
  LOCAL_BUILDER_PORT: 8546,
  LOCAL_BUILDER_BLOCK_TIME_MS: 12_000,
  LOCAL_BUILDER_HISTORY_BLOCKS: 8,
  LOCAL_BUILDER_SLICE_MS: 10,
  DEVNET_STATE_LAYER_DEPTH: 8,
  EVM_MAX_GAS: 50_000_000,
  EVM_MAX_MS: 1_000,
  /** one worker thread per core the process may use (at most MAX_WORKERS) */
  WORKERS: Math.min(availableParallelism(), MAX_WORKERS),
  /** the workers yield a core to the main thread (acknowledgements, HTTP) whenever both want it */
  WORKER_NICE: 10,
  /** while both wait, quotes and eth_backrun let into the pool per background task (the dispatcher's per-head work) */
  WORKER_BACKGROUND_EVERY: 4,
  /** background tasks holding a worker at once at most; 0: WORKERS (no bound beyond the pool's) */
  WORKER_BACKGROUND_MAX: 0,
  /** a quote or eth_backrun that found no free worker within this many ms fails as busy instead of being computed after its client gave up */
  WORKER_QUEUE_MAX_WAIT_MS: 10_000,
  /**
   * each worker's V8 young generation, MB: V8's own 48 (semi-spaces of 16 MB). 96 halves a worker's
   * scavenges (a quote's ~1.7 MB of garbage dies young; GC CPU per quote -0.09 ms in process,
   * BENCHMARKS.md h14-mainq) but held ~80 MB more RSS under bench:soak with two workers (~560
   * against ~480 MB, the lead's idle runs, fourteenth session): memory is what issue 10 watches
   */
  WORKER_MAX_YOUNG_GENERATION_MB: 48,
} as const

export interface LoadConfigOptions {
  /** reads API_KEYS_FILE and PARTNER_TOKENS_FILE; default readFileSync(path, 'utf8') */
  readFile?: (path: string) => string
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * @throws ConfigError listing every problem found, each naming its variable
 */
export function loadConfig(env: Env, options: LoadConfigOptions = {}): ServiceConfig {
  const problems: string[] = []
  const read = new EnvReader(env, problems)
  const mode = read.set('UPSTREAM_RPC_URL') ? 'fork' : 'devnet'

  const server: ServerConfig = {
    host: read.host('HOST'),
    port: read.int('PORT', 0, 65_535),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS),
    bodyLimitBytes: read.int('BODY_LIMIT_BYTES', 1_024, 64 * 1_048_576),
    rateLimitMax: read.int('RATE_LIMIT_MAX', 1, 1_000_000),
    rateLimitWindowMs: read.int('RATE_LIMIT_WINDOW_MS', 100, 3_600_000),
    rateLimitDbTimeoutMs: read.int('RATE_LIMIT_DB_TIMEOUT_MS', 10, 10_000),
    rpcMaxBatchSize: read.int('RPC_MAX_BATCH_SIZE', 1, 10_000),
    maxConnections: read.int('SERVER_MAX_CONNECTIONS', 1, 1_000_000),
    keepAliveTimeoutMs: read.int('SERVER_KEEP_ALIVE_TIMEOUT_MS', 1_000, 600_000),
  }
  const access = readAccess(env, mode, problems, options.readFile)
  const chain = readChain(read, mode)
  const quote: QuoteConfig = {
    defaultSlippageBps: read.int('DEFAULT_SLIPPAGE_BPS', 0, 5_000),
    cacheMaxEntries: read.int('QUOTE_CACHE_MAX_ENTRIES', 0, 1_000_000),
  }
  const backrun: BackrunConfig = {
    minNetProfitWei: read.wei('BACKRUN_MIN_NET_PROFIT_WEI'),
    priorityFeeWei: read.wei('BACKRUN_PRIORITY_FEE_WEI'),
    refundBps: read.int('BACKRUN_REFUND_BPS', 0, 10_000),
    cycleTokens: read.addresses('BACKRUN_CYCLE_TOKENS'),
    maxThirdTokens: read.int('BACKRUN_MAX_THIRD_TOKENS', 0, 256),
    maxPoolsPerPair: read.int('BACKRUN_MAX_POOLS_PER_PAIR', 1, 64),
    searchBudgetMs: read.int('BACKRUN_SEARCH_BUDGET_MS', 1, 10_000),
  }
  const submission: SubmissionConfig = {
    dataDir: read.str('DATA_DIR'),
    databaseUrl: readDatabaseUrl(read),
    leaseMs: read.int('SUBMISSION_LEASE_MS', 1_000, 600_000),
    postgres: {
      poolSize: read.int('SUBMISSION_DB_POOL_SIZE', 2, 1_000),
      maxInsertGroup: read.int('SUBMISSION_DB_MAX_INSERT_GROUP', 1, 10_000),
      insertsInFlight: read.int('SUBMISSION_DB_INSERTS_IN_FLIGHT', 1, 999),
      lifecycleCommit: read.oneOf('SUBMISSION_DB_LIFECYCLE_COMMIT', ['async', 'sync'] as const),
    },
    searcherKeys: readSearcherKeys(env, mode, problems),
    relays: readRelays(env, mode, problems),
    maxPendingSubmissions: read.int('MAX_PENDING_SUBMISSIONS', 1, 10_000_000),
    maxBackrunPlansPerBlock: read.int('MAX_BACKRUN_PLANS_PER_BLOCK', 1, 100_000),
    maxResendsPerBlock: read.int('MAX_RESENDS_PER_BLOCK', 1, 1_000_000),
    inclusionIndexMaxHashes: read.int('INCLUSION_INDEX_MAX_HASHES', 256, 10_000_000),
    queueWaitMs: read.int('DISPATCHER_QUEUE_WAIT_MS', 1, 60_000),
    expiryBlocks: read.int('SUBMISSION_EXPIRY_BLOCKS', 1, 10_000),
    // LevelDB's own ranges (it clips the last two silently; refused here instead)
    outboxLevelDb: {
      cacheBytes: read.int('OUTBOX_CACHE_BYTES', 0, 1_073_741_824),
      writeBufferBytes: read.int('OUTBOX_WRITE_BUFFER_BYTES', 65_536, 1_073_741_824),
      maxOpenFiles: read.int('OUTBOX_MAX_OPEN_FILES', 74, 50_000),
      maxGroupOps: read.int('OUTBOX_MAX_GROUP_OPS', 1, 100_000),
    },
    maxBundleTxs: read.int('MAX_BUNDLE_TXS', 1, 1_000),
    maxRawTxBytes: read.int('MAX_RAW_TX_BYTES', 100, 1_048_576),
    maxBundleBytes: read.int('MAX_BUNDLE_BYTES', 100, 16_777_216),
  }
  const devnet: DevnetConfig = {
    genesisPath: read.str('DEVNET_GENESIS'),
    registryPath: read.str('DEVNET_REGISTRY'),
    localBuilderPort: read.int('LOCAL_BUILDER_PORT', 0, 65_535),
    localBuilderBlockTimeMs: read.int('LOCAL_BUILDER_BLOCK_TIME_MS', 50, 600_000),
    localBuilderHistoryBlocks: read.int('LOCAL_BUILDER_HISTORY_BLOCKS', 1, 10_000),
    localBuilderSliceMs: read.int('LOCAL_BUILDER_SLICE_MS', 1, 1_000),
    stateLayerDepth: read.int('DEVNET_STATE_LAYER_DEPTH', 1, 4_096),
  }
  const evm: EvmConfig = {
    // the ranges npm run replay reads the same variables with
    maxGas: BigInt(read.int('EVM_MAX_GAS', Number(EXECUTION_BUDGET_RANGES.maxGas.min), Number(EXECUTION_BUDGET_RANGES.maxGas.max))),
    maxMs: read.int('EVM_MAX_MS', EXECUTION_BUDGET_RANGES.maxMs.min, EXECUTION_BUDGET_RANGES.maxMs.max),
  }
  const workers: WorkersConfig = {
    threads: read.int('WORKERS', 0, MAX_WORKERS),
    nice: read.int('WORKER_NICE', 0, 19),
    backgroundEvery: read.int('WORKER_BACKGROUND_EVERY', 1, 1_000),
    backgroundMax: read.int('WORKER_BACKGROUND_MAX', 0, MAX_WORKERS),
    queueMaxWaitMs: read.int('WORKER_QUEUE_MAX_WAIT_MS', 100, 600_000),
    maxYoungGenerationMb: read.int('WORKER_MAX_YOUNG_GENERATION_MB', MIN_WORKER_YOUNG_GENERATION_MB, MAX_WORKER_YOUNG_GENERATION_MB),
  }

  // across variables
  if (submission.maxBundleBytes < submission.maxRawTxBytes) problems.push('MAX_BUNDLE_BYTES: must be at least MAX_RAW_TX_BYTES')
  // the acknowledgements' inserts must leave a connection to the lifecycle writes, claims and reads
  if (submission.postgres.insertsInFlight >= submission.postgres.poolSize) problems.push('SUBMISSION_DB_INSERTS_IN_FLIGHT: must be less than SUBMISSION_DB_POOL_SIZE')
  if (server.bodyLimitBytes < 2 * submission.maxBundleBytes + 1_024) {
    problems.push(`BODY_LIMIT_BYTES: must exceed 2 x MAX_BUNDLE_BYTES + 1024 (hex doubles the bytes), ${2 * submission.maxBundleBytes + 1_024}`)
  }

  if (problems.length > 0 || access === undefined) throw new ConfigError(problems)
  return { server, access, chain, quote, backrun, submission, devnet, evm, workers }
}

/** Reads one variable at a time; a bad value adds a problem and yields the default, so reading goes on. */
class EnvReader {
  constructor(
    private readonly env: Env,
    readonly problems: string[],
  ) {}

  /** the value as given */
  raw(name: string): string | undefined {
    return this.env[name]
  }

  /** set and not empty */
  set(name: string): boolean {
    const v = this.env[name]
    return v !== undefined && v !== ''
  }

  str(name: keyof typeof DEFAULTS): string {
    const v = this.env[name]
    return v === undefined || v === '' ? String(DEFAULTS[name]) : v
  }

  int(name: keyof typeof DEFAULTS, min: number, max: number): number {
    const raw = this.str(name)
    if (!/^\d+$/.test(raw)) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`)
      return Number(DEFAULTS[name])
    }
    const n = Number(raw)
    if (n < min || n > max) {
      this.problems.push(`${name}=${raw}: expected a whole number from ${min} to ${max}`)
      return Number(DEFAULTS[name])
    }
    return n
  }

  oneOf<T extends string>(name: keyof typeof DEFAULTS, allowed: readonly T[]): T {
    const raw = this.str(name)
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`)
      return DEFAULTS[name] as T
    }
    return raw as T
  }

  /** a whole number of wei, uint256, decimal */
  wei(name: keyof typeof DEFAULTS): bigint {
    const raw = this.str(name)
    if (!/^\d{1,78}$/.test(raw) || BigInt(raw) >= 1n << 256n) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number of wei (uint256, decimal)`)
      return BigInt(DEFAULTS[name])
    }
    return BigInt(raw)
  }

  host(name: 'HOST'): string {
    const host = this.str(name)
    if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) this.problems.push(`${name}=${JSON.stringify(host)}: expected an IP address or host name`)
    return host
  }

  /** a 0x-prefixed 20-byte address, lowercase; undefined when unset */
  address(name: string): Address | undefined {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return undefined
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) {
      this.problems.push(`${name}: expected a 0x-prefixed 20-byte address`)
      return undefined
    }
    return raw.toLowerCase() as Address
  }

  addresses(name: string): Address[] | undefined {
    const raw = this.env[name]
    if (raw === undefined || raw === '') return undefined
    const list = raw.split(',').map((t) => t.trim().toLowerCase())
    if (list.some((t) => !/^0x[0-9a-f]{40}$/.test(t))) {
      this.problems.push(`${name}: expected comma-separated 0x-prefixed 20-byte addresses`)
      return undefined
    }
    return list as Address[]
  }
}

/** DATABASE_URL: undefined when unset (LevelDB in DATA_DIR); a problem (never the URL, which may hold a password) when it is no postgres:// URL. */
function readDatabaseUrl(read: EnvReader): string | undefined {
  const url = read.raw('DATABASE_URL')
  if (url === undefined || url === '') return undefined
  const problem = databaseUrlProblem(url)
  if (problem === undefined) return url
  read.problems.push(`DATABASE_URL: ${problem}`)
  return undefined
}

function readChain(read: EnvReader, mode: 'fork' | 'devnet'): ChainConfig {
  const rules = { hardfork: read.oneOf('HARDFORK', HARDFORKS), blockTimeSeconds: BigInt(read.int('BLOCK_TIME_SECONDS', 1, 3_600)) }

  let url: string | undefined
  if (mode === 'fork') {
    const raw = read.raw('UPSTREAM_RPC_URL') ?? ''
    const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined
    if (protocol === 'http:' || protocol === 'https:') url = raw
    // the URL may carry a provider's API key: not echoed
    else read.problems.push('UPSTREAM_RPC_URL: expected an http(s) URL of a JSON-RPC node')
  }
  let forkBlock: bigint | 'latest' = 'latest'
  const rawBlock = read.str('FORK_BLOCK')
  if (rawBlock !== 'latest') {
    if (/^\d+$/.test(rawBlock)) forkBlock = BigInt(rawBlock)
    else read.problems.push(`FORK_BLOCK=${JSON.stringify(rawBlock)}: expected 'latest' or a block number`)
  }
  const upstream = {
    url: url ?? '',
    forkBlock,
    timeoutMs: read.int('UPSTREAM_TIMEOUT_MS', 100, 120_000),
    retries: read.int('UPSTREAM_RETRIES', 0, 10),
    batchSize: read.int('UPSTREAM_BATCH_SIZE', 1, 1_000),
    cacheMaxEntries: read.int('FORK_CACHE_MAX_ENTRIES', 1_000, 5_000_000),
    cacheMaxBlocks: read.int('FORK_CACHE_MAX_BLOCKS', 0, 1_000_000),
    headPollIntervalMs: read.int('HEAD_POLL_INTERVAL_MS', 50, 600_000),
  }

  // checked in both modes (a typo is a typo); used in fork mode, where the devnet registry does not apply
  const router = read.address('ROUTER_ADDRESS')
  const weth = read.address('WETH_ADDRESS')
  const venues = readVenues(read)
  const baseTokens = read.addresses('BASE_TOKENS')
  const backrunExecutor = read.address('BACKRUN_CONTRACT')
  const ethUsdFeed = read.address('ETH_USD_FEED')
  // the devnet's venues are the registry's; VENUES picks some of them (chain-contracts.ts checks which)
  if (mode === 'devnet') return venues === undefined ? { mode, ...rules } : { mode, ...rules, venues }

  const required = (name: string, value: Address | undefined): Address => {
    // a malformed value was reported already
    if (value === undefined && !read.set(name)) read.problems.push(`${name}: required in fork mode (UPSTREAM_RPC_URL is set)`)
    return value ?? ('0x' as Address)
  }
  const requiredVenues = (): Venue[] => {
    if (!read.set('VENUES') && !read.set('V2_FACTORY') && !read.set('V3_FACTORY')) {
      read.problems.push('VENUES (or its shorthand V2_FACTORY / V3_FACTORY): required in fork mode (UPSTREAM_RPC_URL is set)')
    }
    return []
  }
  const contracts: ChainContracts = {
    router: required('ROUTER_ADDRESS', router),
    weth: required('WETH_ADDRESS', weth),
    venues: venues ?? requiredVenues(),
    // default: WETH only
    baseTokens: baseTokens ?? (weth === undefined ? [] : [weth]),
    ethUsdFeed: required('ETH_USD_FEED', ethUsdFeed),
    backrunExecutor: required('BACKRUN_CONTRACT', backrunExecutor),
  }
  return { mode, ...rules, upstream, contracts }
}

/**
 * VENUES, or V2_FACTORY / V3_FACTORY as the shorthand for Uniswap's own venues at those factories
 * (one of each at most; not beside VENUES). In fork mode the venues routes use; in devnet mode the
 * registry's venues to keep (the rest are not routed). Undefined when unset or after a reported problem.
 */
function readVenues(read: EnvReader): Venue[] | undefined {
  const v2Factory = read.address('V2_FACTORY')
  const v3Factory = read.address('V3_FACTORY')
  const text = read.raw('VENUES')
  if (text !== undefined && text.trim() !== '') {
    if (read.set('V2_FACTORY') || read.set('V3_FACTORY')) {
      read.problems.push('VENUES: V2_FACTORY and V3_FACTORY are its one-venue shorthand; set VENUES alone')
      return undefined
    }
    try {
      return parseVenues(text)
    } catch (err) {
      if (!(err instanceof VenueListError)) throw err
      read.problems.push(...err.problems.map((problem) => `VENUES${problem.startsWith('[') ? '' : ': '}${problem}`))
      return undefined
    }
  }
  const venues: Venue[] = []
  if (v2Factory !== undefined) venues.push(uniswapV2Venue(v2Factory))
  if (v3Factory !== undefined) venues.push(uniswapV3Venue(v3Factory))
  return venues.length > 0 ? venues : undefined
}

/** API keys and partner tokens, resolved into their registries by the rules of src/server (the same messages). */
function readAccess(env: Env, mode: 'fork' | 'devnet', problems: string[], readFile: ((path: string) => string) | undefined): AccessConfig | undefined {
  const warnings: string[] = []
  const log = { warn: (message: string) => warnings.push(message) }
  const collect = <T>(resolve: () => T): T | undefined => {
    try {
      return resolve()
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      problems.push(...err.problems)
      return undefined
    }
  }
  const apiKeys: ApiKeyRegistry | undefined = collect(() => resolveApiKeys({ mode, apiKeys: env.API_KEYS, apiKeysFile: env.API_KEYS_FILE, log, readFile }))
  const partners: PartnerRegistry | undefined = collect(() => {
    try {
      return resolvePartnerTokens({ mode, partnerTokens: env.PARTNER_TOKENS, partnerTokensFile: env.PARTNER_TOKENS_FILE, log, readFile })
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      // the registry's own list ("invalid partner tokens:\n  - partner entry 0 (id): ...") becomes
      // one problem per entry, each naming the variable
      const source = env.PARTNER_TOKENS?.trim() ? 'PARTNER_TOKENS' : 'PARTNER_TOKENS_FILE'
      throw new ConfigError(
        err.problems.flatMap((problem) => {
          const [head, ...entries] = problem.split(/\n\s*- /)
          return head === 'invalid partner tokens:' && entries.length > 0 ? entries.map((e) => `${source}: ${e}`) : [problem]
        }),
      )
    }
  })
  if (apiKeys === undefined || partners === undefined) return undefined
  return { apiKeys, partners, warnings }
}

/**
 * SEARCHER_PRIVATE_KEY then SEARCHER_PRIVATE_KEYS, each a valid secp256k1 key, each once. The values
 * are never echoed: a bad entry is named by its position.
 */
function readSearcherKeys(env: Env, mode: 'fork' | 'devnet', problems: string[]): string[] | undefined {
  const keys: string[] = []
  /** `what`: the variable and, in a list, the entry's position (never the value) */
  const check = (key: string, what: string): void => {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
      problems.push(`${what} is not a 0x-prefixed 32-byte hex private key`)
      return
    }
    try {
      SearcherKey.fromHex(key)
    } catch {
      problems.push(`${what} is not a valid secp256k1 private key`)
      return
    }
    keys.push(key.toLowerCase())
  }
  const single = env.SEARCHER_PRIVATE_KEY
  if (single !== undefined && single !== '') check(single, 'SEARCHER_PRIVATE_KEY: the value')
  const many = env.SEARCHER_PRIVATE_KEYS
  if (many !== undefined && many.trim() !== '') {
    const list = many.split(',').map((k) => k.trim())
    list.forEach((key, i) => check(key, `SEARCHER_PRIVATE_KEYS: entry ${i + 1}`))
    if (new Set(list.map((k) => k.toLowerCase())).size !== list.length) problems.push('SEARCHER_PRIVATE_KEYS: a key appears twice')
    if (list.length > MAX_SEARCHER_KEYS) problems.push(`SEARCHER_PRIVATE_KEYS: at most ${MAX_SEARCHER_KEYS} keys`)
  }
  const configured = single !== undefined && single !== '' ? true : many !== undefined && many.trim() !== ''
  if (!configured) {
    if (mode === 'fork') problems.push('SEARCHER_PRIVATE_KEY (or SEARCHER_PRIVATE_KEYS): required in fork mode (UPSTREAM_RPC_URL is set)')
    return undefined
  }
  // SEARCHER_PRIVATE_KEY may repeat one of SEARCHER_PRIVATE_KEYS: it is used once
  return [...new Set(keys)]
}

function readRelays(env: Env, mode: 'fork' | 'devnet', problems: string[]): RelayEndpoint[] | undefined {
  const raw = env.RELAYS
  if (raw === undefined || raw === '') {
    if (mode === 'fork') problems.push('RELAYS: required in fork mode (UPSTREAM_RPC_URL is set)')
    return undefined
  }
  const parsed = parseRelayEndpoints(raw)
  problems.push(...parsed.problems.map((p) => `RELAYS: ${p}`))
  return parsed.relays
}
