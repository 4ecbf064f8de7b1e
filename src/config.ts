/**
 * Service configuration from environment variables, validated at start: every bad value is
 * reported with the variable's name and what is expected, all at once.
 */
export interface ServiceConfig {
  host: string
  port: number
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** maximum request body, bytes */
  bodyLimitBytes: number
  /** devnet mode when undefined */
  upstreamRpcUrl?: string
  /** fork mode: block to pin at start ('latest' follows the chain) */
  forkBlock: bigint | 'latest'
  upstreamTimeoutMs: number
  upstreamRetries: number
  upstreamBatchSize: number
  forkCacheMaxEntries: number
  headPollIntervalMs: number
  /** seconds added to the head's timestamp for the next-block simulation context */
  blockTimeSeconds: bigint
  hardfork: string
  devnetGenesisPath: string
  devnetRegistryPath: string
  /** raw API keys (comma-separated API_KEYS); never logged */
  apiKeys?: string
  /** file of SHA-256 hex digests of API keys */
  apiKeysFile?: string
  /** quote requests per key per window */
  rateLimitMax: number
  rateLimitWindowMs: number
  /** default slippage tolerance of a quote's minAmountOut, basis points */
  defaultSlippageBps: number
  /** quote answers cached per (block, request); 0 disables the cache */
  quoteCacheMaxEntries: number
  /** fork mode: contracts of the forked chain (devnet mode reads them from the registry) */
  routerAddress?: string
  wethAddress?: string
  v2Factory?: string
  v3Factory?: string
  baseTokens?: string[]
  /** partner tokens of the JSON-RPC endpoints: `partnerId:token` pairs, comma-separated; never logged */
  partnerTokens?: string
  /** file of `partnerId:token` lines */
  partnerTokensFile?: string
  /** most entries in one JSON-RPC batch */
  rpcMaxBatchSize: number
  /** fork mode: the deployed backrun contract (devnet mode reads it from the registry) */
  backrunContract?: string
  /** fork mode: Chainlink-style ETH/USD feed (devnet mode reads it from the registry) */
  ethUsdFeed?: string
  /** a backrun is answered only when its net profit exceeds this, wei */
  backrunMinNetProfitWei: bigint
  /** priority fee assumed for the backrun's gas on top of the next base fee, wei per gas */
  backrunPriorityFeeWei: bigint
  /** share of a backrun's gross profit paid back to the user (tx.origin), basis points */
  backrunRefundBps: number
  /** directory of the durable submission outbox (LevelDB) */
  dataDir: string
  /** signs relay requests (X-Flashbots-Signature) and backrun transactions; never logged */
  searcherPrivateKey?: string
  /** SEARCHER_PRIVATE_KEYS: the pool of backrun signing keys, one backrun per key per block; never logged */
  searcherPrivateKeys?: string[]
  /** undelivered submissions held at most; beyond it a submission is refused (-32603, nothing accepted) */
  maxPendingSubmissions: number
  /** backrun plans per target block at most (CPU bound of re-planning every open submission) */
  maxBackrunPlansPerBlock: number
  /** RELAYS: JSON array of relay endpoints; devnet default: the local builder */
  relaysJson?: string
  /** blocks a submission is re-sent for before it expires */
  submissionExpiryBlocks: number
  maxBundleTxs: number
  maxRawTxBytes: number
  maxBundleBytes: number
  /** devnet mode: port of the local block builder (0 = any free port) */
  localBuilderPort: number
  /** devnet mode: the local builder seals a block this often, ms */
  localBuilderBlockTimeMs: number
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const HARDFORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague'] as const

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
  HEAD_POLL_INTERVAL_MS: 1_000,
  BLOCK_TIME_SECONDS: 12,
  HARDFORK: 'prague',
  DEVNET_GENESIS: 'fixtures/devnet/genesis.json',
  DEVNET_REGISTRY: 'fixtures/devnet/registry.json',
  RATE_LIMIT_MAX: 100,
  RATE_LIMIT_WINDOW_MS: 1_000,
  DEFAULT_SLIPPAGE_BPS: 50,
  QUOTE_CACHE_MAX_ENTRIES: 10_000,
  RPC_MAX_BATCH_SIZE: 100,
  BACKRUN_MIN_NET_PROFIT_WEI: '0',
  BACKRUN_PRIORITY_FEE_WEI: '1000000000',
  BACKRUN_REFUND_BPS: 0,
  DATA_DIR: 'data',
  SUBMISSION_EXPIRY_BLOCKS: 25,
  MAX_PENDING_SUBMISSIONS: 20_000,
  MAX_BACKRUN_PLANS_PER_BLOCK: 32,
  MAX_BUNDLE_TXS: 16,
  MAX_RAW_TX_BYTES: 131_072,
  MAX_BUNDLE_BYTES: 300_000,
  LOCAL_BUILDER_PORT: 8546,
  LOCAL_BUILDER_BLOCK_TIME_MS: 12_000,
} as const

export function loadConfig(env: NodeJS.ProcessEnv): ServiceConfig {
  const problems: string[] = []
  const str = (name: keyof typeof DEFAULTS): string => {
    const v = env[name]
    return v === undefined || v === '' ? String(DEFAULTS[name]) : v
  }
  const int = (name: keyof typeof DEFAULTS, min: number, max: number): number => {
    const raw = str(name)
    if (!/^\d+$/.test(raw)) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number from ${min} to ${max}`)
      return Number(DEFAULTS[name])
    }
    const n = Number(raw)
    if (n < min || n > max) problems.push(`${name}=${raw}: expected a whole number from ${min} to ${max}`)
    return n
  }
  const oneOf = <T extends string>(name: keyof typeof DEFAULTS, allowed: readonly T[]): T => {
    const raw = str(name)
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`)
      return DEFAULTS[name] as T
    }
    return raw as T
  }

  const host = str('HOST')
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) problems.push(`HOST=${JSON.stringify(host)}: expected an IP address or host name`)

  let upstreamRpcUrl: string | undefined
  const rawUrl = env.UPSTREAM_RPC_URL
  if (rawUrl !== undefined && rawUrl !== '') {
    try {
      const url = new URL(rawUrl)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol')
      upstreamRpcUrl = rawUrl
    } catch {
      problems.push('UPSTREAM_RPC_URL: expected an http(s) URL of a JSON-RPC node')
    }
  }

  let forkBlock: bigint | 'latest' = 'latest'
  const rawBlock = str('FORK_BLOCK')
  if (rawBlock !== 'latest') {
    if (/^\d+$/.test(rawBlock)) forkBlock = BigInt(rawBlock)
    else problems.push(`FORK_BLOCK=${JSON.stringify(rawBlock)}: expected 'latest' or a block number`)
  }

  const optionalAddress = (name: string): string | undefined => {
    const raw = env[name]
    if (raw === undefined || raw === '') return undefined
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) problems.push(`${name}: expected a 0x-prefixed 20-byte address`)
    return raw.toLowerCase()
  }
  let baseTokens: string[] | undefined
  if (env.BASE_TOKENS !== undefined && env.BASE_TOKENS !== '') {
    baseTokens = env.BASE_TOKENS.split(',').map((t) => t.trim().toLowerCase())
    if (baseTokens.some((t) => !/^0x[0-9a-f]{40}$/.test(t))) problems.push('BASE_TOKENS: expected comma-separated 0x-prefixed 20-byte addresses')
  }

  const wei = (name: keyof typeof DEFAULTS): bigint => {
    const raw = str(name)
    if (!/^\d{1,78}$/.test(raw) || BigInt(raw) >= 1n << 256n) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a whole number of wei (uint256, decimal)`)
      return BigInt(DEFAULTS[name])
    }
    return BigInt(raw)
  }

  const config: ServiceConfig = {
    host,
    port: int('PORT', 0, 65_535),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1_024, 64 * 1_048_576),
    upstreamRpcUrl,
    forkBlock,
    upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', 100, 120_000),
    upstreamRetries: int('UPSTREAM_RETRIES', 0, 10),
    upstreamBatchSize: int('UPSTREAM_BATCH_SIZE', 1, 1_000),
    forkCacheMaxEntries: int('FORK_CACHE_MAX_ENTRIES', 1_000, 5_000_000),
    headPollIntervalMs: int('HEAD_POLL_INTERVAL_MS', 50, 600_000),
    blockTimeSeconds: BigInt(int('BLOCK_TIME_SECONDS', 1, 3_600)),
    hardfork: oneOf('HARDFORK', HARDFORKS),
    devnetGenesisPath: str('DEVNET_GENESIS'),
    devnetRegistryPath: str('DEVNET_REGISTRY'),
    apiKeys: env.API_KEYS === '' ? undefined : env.API_KEYS,
    apiKeysFile: env.API_KEYS_FILE === '' ? undefined : env.API_KEYS_FILE,
    rateLimitMax: int('RATE_LIMIT_MAX', 1, 1_000_000),
    rateLimitWindowMs: int('RATE_LIMIT_WINDOW_MS', 100, 3_600_000),
    defaultSlippageBps: int('DEFAULT_SLIPPAGE_BPS', 0, 5_000),
    quoteCacheMaxEntries: int('QUOTE_CACHE_MAX_ENTRIES', 0, 1_000_000),
    routerAddress: optionalAddress('ROUTER_ADDRESS'),
    wethAddress: optionalAddress('WETH_ADDRESS'),
    v2Factory: optionalAddress('V2_FACTORY'),
    v3Factory: optionalAddress('V3_FACTORY'),
    baseTokens,
    partnerTokens: env.PARTNER_TOKENS === '' ? undefined : env.PARTNER_TOKENS,
    partnerTokensFile: env.PARTNER_TOKENS_FILE === '' ? undefined : env.PARTNER_TOKENS_FILE,
    rpcMaxBatchSize: int('RPC_MAX_BATCH_SIZE', 1, 10_000),
    backrunContract: optionalAddress('BACKRUN_CONTRACT'),
    ethUsdFeed: optionalAddress('ETH_USD_FEED'),
    backrunMinNetProfitWei: wei('BACKRUN_MIN_NET_PROFIT_WEI'),
    backrunPriorityFeeWei: wei('BACKRUN_PRIORITY_FEE_WEI'),
    backrunRefundBps: int('BACKRUN_REFUND_BPS', 0, 10_000),
    dataDir: str('DATA_DIR'),
    searcherPrivateKey: env.SEARCHER_PRIVATE_KEY === '' ? undefined : env.SEARCHER_PRIVATE_KEY,
    searcherPrivateKeys:
      env.SEARCHER_PRIVATE_KEYS === undefined || env.SEARCHER_PRIVATE_KEYS.trim() === ''
        ? undefined
        : env.SEARCHER_PRIVATE_KEYS.split(',').map((k) => k.trim()),
    maxPendingSubmissions: int('MAX_PENDING_SUBMISSIONS', 1, 10_000_000),
    maxBackrunPlansPerBlock: int('MAX_BACKRUN_PLANS_PER_BLOCK', 1, 100_000),
    relaysJson: env.RELAYS === '' ? undefined : env.RELAYS,
    submissionExpiryBlocks: int('SUBMISSION_EXPIRY_BLOCKS', 1, 10_000),
    maxBundleTxs: int('MAX_BUNDLE_TXS', 1, 1_000),
    maxRawTxBytes: int('MAX_RAW_TX_BYTES', 100, 1_048_576),
    maxBundleBytes: int('MAX_BUNDLE_BYTES', 100, 16_777_216),
    localBuilderPort: int('LOCAL_BUILDER_PORT', 0, 65_535),
    localBuilderBlockTimeMs: int('LOCAL_BUILDER_BLOCK_TIME_MS', 50, 600_000),
  }
  if (config.searcherPrivateKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(config.searcherPrivateKey)) {
    // the value itself is never echoed
    problems.push('SEARCHER_PRIVATE_KEY: expected a 0x-prefixed 32-byte hex private key')
  }
  if (config.searcherPrivateKeys !== undefined) {
    const keys = config.searcherPrivateKeys
    keys.forEach((key, i) => {
      // the value itself is never echoed
      if (!/^0x[0-9a-fA-F]{64}$/.test(key)) problems.push(`SEARCHER_PRIVATE_KEYS: entry ${i + 1} is not a 0x-prefixed 32-byte hex private key`)
    })
    if (new Set(keys.map((k) => k.toLowerCase())).size !== keys.length) problems.push('SEARCHER_PRIVATE_KEYS: a key appears twice')
    if (keys.length > 256) problems.push('SEARCHER_PRIVATE_KEYS: at most 256 keys')
  }
  if (config.maxBundleBytes < config.maxRawTxBytes) problems.push('MAX_BUNDLE_BYTES: must be at least MAX_RAW_TX_BYTES')
  if (config.bodyLimitBytes < 2 * config.maxBundleBytes + 1_024) {
    problems.push(`BODY_LIMIT_BYTES: must exceed 2 x MAX_BUNDLE_BYTES + 1024 (hex doubles the bytes), ${2 * config.maxBundleBytes + 1_024}`)
  }
  if (config.upstreamRpcUrl !== undefined) {
    for (const [name, value] of [
      ['ROUTER_ADDRESS', config.routerAddress],
      ['WETH_ADDRESS', config.wethAddress],
      ['V2_FACTORY', config.v2Factory],
      ['V3_FACTORY', config.v3Factory],
      ['BACKRUN_CONTRACT', config.backrunContract],
      ['ETH_USD_FEED', config.ethUsdFeed],
      ['SEARCHER_PRIVATE_KEY (or SEARCHER_PRIVATE_KEYS)', config.searcherPrivateKey ?? config.searcherPrivateKeys?.[0]],
      ['RELAYS', config.relaysJson],
    ] as const) {
      if (value === undefined) problems.push(`${name}: required in fork mode (UPSTREAM_RPC_URL is set)`)
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}
