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
  }
  if (config.upstreamRpcUrl !== undefined) {
    for (const [name, value] of [['ROUTER_ADDRESS', config.routerAddress], ['WETH_ADDRESS', config.wethAddress], ['V2_FACTORY', config.v2Factory], ['V3_FACTORY', config.v3Factory]] as const) {
      if (value === undefined) problems.push(`${name}: required in fork mode (UPSTREAM_RPC_URL is set)`)
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}
