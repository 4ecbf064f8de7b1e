import { describe, expect, it } from 'vitest'
import { ConfigError, type ServiceConfig } from '../src/config.ts'
import { DEFAULTS, loadConfig } from '../src/node/config.ts'
import { DEV_API_KEY } from '../src/server/auth/api-keys.ts'
import { BLOCK_TX_INDEX_DEFAULTS } from '../src/submission/block-tx-index.ts'
import { DEV_PARTNER_TOKEN } from '../src/server/jsonrpc/partner-tokens-config.ts'
import type { Address } from '../src/chain/types.ts'
import { MAINNET_VENUES, uniswapV2Venue, uniswapV3Venue, venueJson } from '../src/pools/index.ts'

const FORK_CONTRACTS = {
  ROUTER_ADDRESS: '0x00000000000000000000000000000000000000AA',
  WETH_ADDRESS: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  V2_FACTORY: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f',
  V3_FACTORY: '0x1F98431c8aD98523631AE4a59f267346ea31F984',
  BACKRUN_CONTRACT: '0x00000000000000000000000000000000000000BB',
  ETH_USD_FEED: '0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419',
  SEARCHER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
  RELAYS: '[{"name":"relay","url":"http://127.0.0.1:1"}]',
}
const FORK_ACCESS = { API_KEYS: 'fork-key-0123456789', PARTNER_TOKENS: 'p1:partner-token-0123456789' }
const FORK = { UPSTREAM_RPC_URL: 'http://127.0.0.1:8545', ...FORK_CONTRACTS, ...FORK_ACCESS }

function problemsOf(load: () => unknown): string[] {
  try {
    load()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig', () => {
  it('defaults: devnet mode, loopback, port 8080, the README table', () => {
    const c = loadConfig({})
    expect(c.server).toEqual({ host: '127.0.0.1', port: 8080, logLevel: 'info', bodyLimitBytes: 1_048_576, rateLimitMax: 100, rateLimitWindowMs: 1_000, rateLimitDbTimeoutMs: 250, rpcMaxBatchSize: 100, maxConnections: 4_096, keepAliveTimeoutMs: 72_000 })
    expect(c.chain).toEqual({ mode: 'devnet', hardfork: 'prague', blockTimeSeconds: 12n })
    expect(c.quote).toEqual({ defaultSlippageBps: 50, cacheMaxEntries: 10_000 })
    expect(c.backrun).toEqual({ minNetProfitWei: 0n, priorityFeeWei: 10n ** 9n, refundBps: 0, maxThirdTokens: 16, maxPoolsPerPair: 5, searchBudgetMs: 20 })
    expect(c.submission).toEqual({
      dataDir: 'data',
      searcherKeys: undefined,
      relays: undefined,
      maxPendingSubmissions: 5_000,
      maxBackrunPlansPerBlock: 32,
      maxResendsPerBlock: 512,
      inclusionIndexMaxHashes: 16_384,
      queueWaitMs: 500,
      expiryBlocks: 25,
      maxBundleTxs: 16,
      maxRawTxBytes: 131_072,
      maxBundleBytes: 300_000,
      leaseMs: 30_000,
      postgres: { poolSize: 10, maxInsertGroup: 256, insertsInFlight: 2, lifecycleCommit: 'async' },
      outboxLevelDb: { cacheBytes: 8_388_608, writeBufferBytes: 4_194_304, maxOpenFiles: 500, maxGroupOps: 64 },
    })
    expect(c.devnet).toEqual({ genesisPath: 'fixtures/devnet/genesis.json', registryPath: 'fixtures/devnet/registry.json', localBuilderPort: 8546, localBuilderBlockTimeMs: 12_000, localBuilderHistoryBlocks: 8, localBuilderSliceMs: 10, stateLayerDepth: 8 })
    expect(DEFAULTS.PORT).toBe(8080)
  })

  it('devnet without keys or tokens: only the development key and token, with a warning each', () => {
    const { access } = loadConfig({})
    expect(access.apiKeys.lookup(DEV_API_KEY)).toBeDefined()
    expect(access.partners.resolve(DEV_PARTNER_TOKEN)).toBe('dev')
    expect(access.warnings).toHaveLength(2)
  })

  it('RATE_LIMIT_DB_TIMEOUT_MS: 10 ms to 10 s', () => {
    expect(loadConfig({ RATE_LIMIT_DB_TIMEOUT_MS: '100' }).server.rateLimitDbTimeoutMs).toBe(100)
    for (const bad of ['9', '10001', '-1']) expect(problemsOf(() => loadConfig({ RATE_LIMIT_DB_TIMEOUT_MS: bad })).join('\n')).toMatch(/^RATE_LIMIT_DB_TIMEOUT_MS/m)
  })

  it('INCLUSION_INDEX_MAX_HASHES: 256 to 10,000,000, by default the index\'s own bound', () => {
    expect(DEFAULTS.INCLUSION_INDEX_MAX_HASHES).toBe(BLOCK_TX_INDEX_DEFAULTS.maxHashes)
    expect(loadConfig({ INCLUSION_INDEX_MAX_HASHES: '256' }).submission.inclusionIndexMaxHashes).toBe(256)
    for (const bad of ['255', '10000001', '1.5', 'x']) expect(problemsOf(() => loadConfig({ INCLUSION_INDEX_MAX_HASHES: bad })).join('\n')).toMatch(/^INCLUSION_INDEX_MAX_HASHES/m)
  })

  it('SUBMISSION_LEASE_MS: 1 s to 10 min', () => {
    expect(loadConfig({ SUBMISSION_LEASE_MS: '5000' }).submission.leaseMs).toBe(5_000)
    for (const bad of ['999', '600001', 'x']) expect(problemsOf(() => loadConfig({ SUBMISSION_LEASE_MS: bad })).join('\n')).toMatch(/^SUBMISSION_LEASE_MS/m)
  })

  it('OUTBOX_CACHE_BYTES, OUTBOX_WRITE_BUFFER_BYTES, OUTBOX_MAX_OPEN_FILES: within LevelDB\'s own ranges', () => {
    expect(loadConfig({ OUTBOX_CACHE_BYTES: '0', OUTBOX_WRITE_BUFFER_BYTES: '65536', OUTBOX_MAX_OPEN_FILES: '74' }).submission.outboxLevelDb).toEqual({ cacheBytes: 0, writeBufferBytes: 65_536, maxOpenFiles: 74, maxGroupOps: 64 })
    for (const bad of ['-1', '1073741825', 'x']) expect(problemsOf(() => loadConfig({ OUTBOX_CACHE_BYTES: bad })).join('\n')).toMatch(/^OUTBOX_CACHE_BYTES/m)
    for (const bad of ['65535', '1073741825', 'x']) expect(problemsOf(() => loadConfig({ OUTBOX_WRITE_BUFFER_BYTES: bad })).join('\n')).toMatch(/^OUTBOX_WRITE_BUFFER_BYTES/m)
    for (const bad of ['73', '50001', 'x']) expect(problemsOf(() => loadConfig({ OUTBOX_MAX_OPEN_FILES: bad })).join('\n')).toMatch(/^OUTBOX_MAX_OPEN_FILES/m)
  })

  it('OUTBOX_MAX_GROUP_OPS: 1 to 100,000 operations per group commit', () => {
    expect(loadConfig({ OUTBOX_MAX_GROUP_OPS: '1' }).submission.outboxLevelDb.maxGroupOps).toBe(1)
    expect(loadConfig({ OUTBOX_MAX_GROUP_OPS: '100000' }).submission.outboxLevelDb.maxGroupOps).toBe(100_000)
    for (const bad of ['0', '100001', '2.5', 'x']) expect(problemsOf(() => loadConfig({ OUTBOX_MAX_GROUP_OPS: bad })).join('\n')).toMatch(/^OUTBOX_MAX_GROUP_OPS/m)
  })

  it('SUBMISSION_DB_POOL_SIZE 2 to 1,000, SUBMISSION_DB_MAX_INSERT_GROUP 1 to 10,000, SUBMISSION_DB_INSERTS_IN_FLIGHT 1 to 999 and fewer than the pool', () => {
    expect(loadConfig({}).submission.postgres).toEqual({ poolSize: 10, maxInsertGroup: 256, insertsInFlight: 2, lifecycleCommit: 'async' })
    expect(loadConfig({ SUBMISSION_DB_POOL_SIZE: '2', SUBMISSION_DB_MAX_INSERT_GROUP: '1', SUBMISSION_DB_INSERTS_IN_FLIGHT: '1' }).submission.postgres).toEqual({
      poolSize: 2,
      maxInsertGroup: 1,
      insertsInFlight: 1,
      lifecycleCommit: 'async',
    })
    expect(loadConfig({ SUBMISSION_DB_POOL_SIZE: '1000', SUBMISSION_DB_MAX_INSERT_GROUP: '10000', SUBMISSION_DB_INSERTS_IN_FLIGHT: '999' }).submission.postgres).toEqual({
      poolSize: 1_000,
      maxInsertGroup: 10_000,
      insertsInFlight: 999,
      lifecycleCommit: 'async',
    })
    for (const bad of ['1', '1001', '2.5', 'x']) expect(problemsOf(() => loadConfig({ SUBMISSION_DB_POOL_SIZE: bad })).join('\n')).toMatch(/^SUBMISSION_DB_POOL_SIZE=.*from 2 to 1000/m)
    for (const bad of ['0', '10001', 'x']) expect(problemsOf(() => loadConfig({ SUBMISSION_DB_MAX_INSERT_GROUP: bad })).join('\n')).toMatch(/^SUBMISSION_DB_MAX_INSERT_GROUP=.*from 1 to 10000/m)
    for (const bad of ['0', '1000', 'x']) expect(problemsOf(() => loadConfig({ SUBMISSION_DB_INSERTS_IN_FLIGHT: bad })).join('\n')).toMatch(/^SUBMISSION_DB_INSERTS_IN_FLIGHT=.*from 1 to 999/m)
    expect(problemsOf(() => loadConfig({ SUBMISSION_DB_POOL_SIZE: '4', SUBMISSION_DB_INSERTS_IN_FLIGHT: '4' }))).toEqual([
      'SUBMISSION_DB_INSERTS_IN_FLIGHT: must be less than SUBMISSION_DB_POOL_SIZE',
    ])
  })

  it('SUBMISSION_DB_LIFECYCLE_COMMIT: async (default) or sync, nothing else', () => {
    expect(loadConfig({ SUBMISSION_DB_LIFECYCLE_COMMIT: 'sync' }).submission.postgres.lifecycleCommit).toBe('sync')
    expect(loadConfig({ SUBMISSION_DB_LIFECYCLE_COMMIT: 'async' }).submission.postgres.lifecycleCommit).toBe('async')
    for (const bad of ['off', 'SYNC', '1']) expect(problemsOf(() => loadConfig({ SUBMISSION_DB_LIFECYCLE_COMMIT: bad })).join('\n')).toMatch(/^SUBMISSION_DB_LIFECYCLE_COMMIT=.*expected one of async, sync/m)
  })

  it('DISPATCHER_QUEUE_WAIT_MS: 1 ms to 60 s', () => {
    expect(loadConfig({ DISPATCHER_QUEUE_WAIT_MS: '250' }).submission.queueWaitMs).toBe(250)
    for (const bad of ['0', '60001', 'x']) expect(problemsOf(() => loadConfig({ DISPATCHER_QUEUE_WAIT_MS: bad })).join('\n')).toMatch(/^DISPATCHER_QUEUE_WAIT_MS/m)
  })

  it('API_KEYS and PARTNER_TOKENS become registries of digests', () => {
    const { access } = loadConfig({ API_KEYS: 'key-one,key-two', PARTNER_TOKENS: 'alpha:alpha-token-0123456789,beta:beta-token-0123456789' })
    expect(access.apiKeys.lookup('key-two')).toBeDefined()
    expect(access.apiKeys.lookup(DEV_API_KEY)).toBeUndefined()
    expect(access.partners.resolve('beta-token-0123456789')).toBe('beta')
    expect(access.warnings).toEqual([])
  })

  it('the key files are read through options.readFile, their problems reported with the rest', () => {
    const files: Record<string, string> = { '/keys': `# ops\n${'ab'.repeat(32)}\n`, '/partners': 'alpha:alpha-token-0123456789\n' }
    const readFile = (path: string) => {
      const text = files[path]
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' })
      return text
    }
    const c = loadConfig({ API_KEYS_FILE: '/keys', PARTNER_TOKENS_FILE: '/partners' }, { readFile })
    expect(c.access.apiKeys.size).toBe(1)
    expect(c.access.partners.resolve('alpha-token-0123456789')).toBe('alpha')
    const problems = problemsOf(() => loadConfig({ API_KEYS_FILE: '/missing', PARTNER_TOKENS_FILE: '/partners', PORT: 'x' }, { readFile })).join('\n')
    expect(problems).toContain('API_KEYS_FILE="/missing": cannot read the file (ENOENT)')
    expect(problems).toContain('PORT')
  })

  it('UPSTREAM_RPC_URL switches to fork mode: upstream, pinned block and the chain contracts, parsed', () => {
    const c = loadConfig({ ...FORK, FORK_BLOCK: '123', UPSTREAM_TIMEOUT_MS: '1000' })
    if (c.chain.mode !== 'fork') throw new Error('fork mode expected')
    expect(c.chain.upstream).toEqual({ url: 'http://127.0.0.1:8545', forkBlock: 123n, timeoutMs: 1_000, retries: 2, batchSize: 100, cacheMaxEntries: 250_000, cacheMaxBlocks: 64, headPollIntervalMs: 1_000 })
    expect(c.chain.contracts.router).toBe(FORK_CONTRACTS.ROUTER_ADDRESS.toLowerCase())
    // BASE_TOKENS defaults to WETH in fork mode
    expect(c.chain.contracts.baseTokens).toEqual([FORK_CONTRACTS.WETH_ADDRESS.toLowerCase()])
    expect(c.submission.relays).toEqual([{ name: 'relay', url: 'http://127.0.0.1:1' }])
    expect(c.submission.searcherKeys).toEqual([FORK_CONTRACTS.SEARCHER_PRIVATE_KEY])
  })

  it('fork mode names every missing contract, key, relay list and access setting', () => {
    const problems = problemsOf(() => loadConfig({ UPSTREAM_RPC_URL: 'http://127.0.0.1:8545' })).join('\n')
    for (const name of ['ROUTER_ADDRESS', 'WETH_ADDRESS', 'V2_FACTORY', 'V3_FACTORY', 'BACKRUN_CONTRACT', 'ETH_USD_FEED', 'SEARCHER_PRIVATE_KEY', 'RELAYS', 'API_KEYS', 'PARTNER_TOKENS']) {
      expect(problems).toContain(name)
    }
  })

  it('fork mode: V2_FACTORY / V3_FACTORY are the shorthand for Uniswap\'s venues; VENUES lists any, mainnet names the defaults', () => {
    const short = loadConfig(FORK)
    if (short.chain.mode !== 'fork') throw new Error('fork mode expected')
    expect(short.chain.contracts.venues).toEqual([uniswapV2Venue(FORK_CONTRACTS.V2_FACTORY.toLowerCase() as Address), uniswapV3Venue(FORK_CONTRACTS.V3_FACTORY.toLowerCase() as Address)])
    const { V2_FACTORY: _v2, V3_FACTORY: _v3, ...withoutFactories } = FORK
    const all = loadConfig({ ...withoutFactories, VENUES: 'mainnet' })
    if (all.chain.mode !== 'fork') throw new Error('fork mode expected')
    expect(all.chain.contracts.venues).toEqual(MAINNET_VENUES)
    const json = loadConfig({ ...withoutFactories, VENUES: JSON.stringify([venueJson(MAINNET_VENUES[2])]) })
    expect(json.chain.mode === 'fork' && json.chain.contracts.venues).toEqual([MAINNET_VENUES[2]])
  })

  it('VENUES: every problem named, not beside its shorthand', () => {
    const { V2_FACTORY: _v2, V3_FACTORY: _v3, ...withoutFactories } = FORK
    expect(problemsOf(() => loadConfig({ ...withoutFactories, VENUES: '[{"kind":"v2","name":"x","factory":"0x1","initCodeHash":"0x2","feeBps":30}]' }))).toEqual([
      'VENUES[0].factory: expected a 0x-prefixed 20-byte address',
      'VENUES[0].initCodeHash: expected a 0x-prefixed 32-byte hash',
    ])
    expect(problemsOf(() => loadConfig({ ...withoutFactories, VENUES: 'uniswap' }))).toEqual(['VENUES: expected "mainnet" or a JSON array of venues'])
    // a V4 venue's keys: a native ETH pool with a dynamic fee set by an afterSwap-only hook is taken,
    // a dynamic fee without a hook and a return-delta flag without its action are not
    const key = { currency0: '0x0000000000000000000000000000000000000000', currency1: `0x${'22'.repeat(20)}`, fee: 0x800000, tickSpacing: 60 }
    const v4 = (poolKeys: object[]) => JSON.stringify([venueJson(MAINNET_VENUES[0]), { kind: 'v4', name: 'uniswap-v4', poolManager: `0x${'44'.repeat(20)}`, poolKeys }])
    const taken = loadConfig({ ...withoutFactories, VENUES: v4([{ ...key, hooks: `0x${'33'.repeat(18)}0040` }]) })
    expect(taken.chain.mode === 'fork' && taken.chain.contracts.venues[1]).toMatchObject({ protocol: 'uniswap-v4', pools: [{ ...key, hooks: `0x${'33'.repeat(18)}0040` }] })
    expect(problemsOf(() => loadConfig({ ...withoutFactories, VENUES: v4([key, { ...key, hooks: `0x${'33'.repeat(18)}0008` }]) }))).toEqual([
      'VENUES[1].poolKeys[0].hooks: a dynamic fee needs a hook contract',
      "VENUES[1].poolKeys[1].hooks: the beforeSwapReturnDelta permission needs beforeSwap (the address's low bits)",
    ])
    expect(problemsOf(() => loadConfig({ ...FORK, VENUES: 'mainnet' }))).toEqual(['VENUES: V2_FACTORY and V3_FACTORY are its one-venue shorthand; set VENUES alone'])
    expect(problemsOf(() => loadConfig({ ...withoutFactories }))).toEqual(['VENUES (or its shorthand V2_FACTORY / V3_FACTORY): required in fork mode (UPSTREAM_RPC_URL is set)'])
  })

  it('fork mode refuses the public development key and token', () => {
    const problems = problemsOf(() => loadConfig({ ...FORK, API_KEYS: DEV_API_KEY, PARTNER_TOKENS: `p:${DEV_PARTNER_TOKEN}` })).join('\n')
    expect(problems).toMatch(/API_KEYS: the documented development key is not accepted in fork mode/)
    expect(problems).toMatch(/development partner token is not accepted in fork mode/)
  })

  it('backrun settings: wei amounts as uint256 decimal strings, refund in basis points', () => {
    const c = loadConfig({
      BACKRUN_MIN_NET_PROFIT_WEI: '1000',
      BACKRUN_PRIORITY_FEE_WEI: '0',
      BACKRUN_REFUND_BPS: '9000',
      RPC_MAX_BATCH_SIZE: '10',
      BACKRUN_CYCLE_TOKENS: '0x0F6B8bdffF297d7F24E0e0C170AfC14938094593, 0xf4E06283020182E14ea6138E17545449eF2Fe018',
      BACKRUN_MAX_THIRD_TOKENS: '0',
      BACKRUN_MAX_POOLS_PER_PAIR: '2',
      BACKRUN_SEARCH_BUDGET_MS: '50',
    })
    expect(c.backrun).toEqual({
      minNetProfitWei: 1000n,
      priorityFeeWei: 0n,
      refundBps: 9000,
      cycleTokens: ['0x0f6b8bdfff297d7f24e0e0c170afc14938094593', '0xf4e06283020182e14ea6138e17545449ef2fe018'],
      maxThirdTokens: 0,
      maxPoolsPerPair: 2,
      searchBudgetMs: 50,
    })
    expect(c.server.rpcMaxBatchSize).toBe(10)
    for (const [name, value] of [
      ['BACKRUN_MIN_NET_PROFIT_WEI', '-1'],
      ['BACKRUN_MIN_NET_PROFIT_WEI', (1n << 256n).toString()],
      ['BACKRUN_PRIORITY_FEE_WEI', '1e9'],
      ['BACKRUN_REFUND_BPS', '10001'],
      ['BACKRUN_CYCLE_TOKENS', '0x1234,WBTC'],
      ['BACKRUN_MAX_THIRD_TOKENS', '257'],
      ['BACKRUN_MAX_POOLS_PER_PAIR', '0'],
      ['BACKRUN_SEARCH_BUDGET_MS', '0'],
      ['RPC_MAX_BATCH_SIZE', '0'],
      ['SERVER_MAX_CONNECTIONS', '0'],
      ['SERVER_KEEP_ALIVE_TIMEOUT_MS', '999'],
      ['QUOTE_CACHE_MAX_ENTRIES', '-3'],
      ['SEARCHER_PRIVATE_KEY', '0x1234'],
      ['MAX_BUNDLE_TXS', '0'],
      ['SUBMISSION_EXPIRY_BLOCKS', '0'],
    ]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name))
    }
  })

  it('searcher keys: SEARCHER_PRIVATE_KEY first, then SEARCHER_PRIVATE_KEYS, each once; a key outside secp256k1 is refused', () => {
    const [a, b] = [`0x${'11'.repeat(32)}`, `0x${'ab'.repeat(32)}`]
    expect(loadConfig({ SEARCHER_PRIVATE_KEY: b, SEARCHER_PRIVATE_KEYS: `${a}, 0x${'AB'.repeat(32)}` }).submission.searcherKeys).toEqual([b, a])
    // 32 bytes of hex, but zero and the group order are not private keys
    const zero = `0x${'00'.repeat(32)}`
    const order = '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'
    const problems = problemsOf(() => loadConfig({ SEARCHER_PRIVATE_KEY: zero, SEARCHER_PRIVATE_KEYS: `${a},${order},${a}` }))
    expect(problems).toContain('SEARCHER_PRIVATE_KEY: the value is not a valid secp256k1 private key')
    expect(problems).toContain('SEARCHER_PRIVATE_KEYS: entry 2 is not a valid secp256k1 private key')
    expect(problems).toContain('SEARCHER_PRIVATE_KEYS: a key appears twice')
    expect(problems.join('\n')).not.toContain('ffffffff')
  })

  it('RELAYS is parsed at load: every problem of every entry, prefixed with the variable', () => {
    const problems = problemsOf(() => loadConfig({ RELAYS: '[{"name":"ok","url":"http://127.0.0.1:1"},{"name":"bad name","url":"ftp://x","timeoutMs":-1}]' }))
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^RELAYS: relay 1: name/), expect.stringMatching(/^RELAYS: relay 1: url/), expect.stringMatching(/^RELAYS: relay 1: timeoutMs/)]))
    expect(problemsOf(() => loadConfig({ RELAYS: 'not-json' }))).toEqual([expect.stringMatching(/^RELAYS: expected a JSON array/)])
    // devnet: the local builder is the relay unless RELAYS says otherwise
    expect(loadConfig({ RELAYS: '[{"name":"r","url":"https://relay.example","bundleStats":true}]' }).submission.relays).toEqual([{ name: 'r', url: 'https://relay.example', bundleStats: true }])
  })

  it('never echoes a secret: searcher keys, API keys, partner tokens', () => {
    const secret = `0x${'ab'.repeat(31)}`
    const message = (() => {
      try {
        loadConfig({ SEARCHER_PRIVATE_KEY: secret, SEARCHER_PRIVATE_KEYS: `${secret}zz,0xnothex`, PARTNER_TOKENS: 'p:short-secret', API_KEYS: ' , ' })
      } catch (err) {
        return (err as Error).message
      }
      throw new Error('expected a ConfigError')
    })()
    for (const name of ['SEARCHER_PRIVATE_KEY:', 'SEARCHER_PRIVATE_KEYS: entry 1', 'SEARCHER_PRIVATE_KEYS: entry 2', 'PARTNER_TOKENS: partner entry 0 (p): token must be', 'API_KEYS']) expect(message).toContain(name)
    for (const leak of ['abab', 'short-secret', 'nothex']) expect(message).not.toContain(leak)
  })

  it('keeps the body limit above two bundles of hex', () => {
    expect(() => loadConfig({ BODY_LIMIT_BYTES: '100000' })).toThrow(/BODY_LIMIT_BYTES/)
    expect(() => loadConfig({ MAX_RAW_TX_BYTES: '200000', MAX_BUNDLE_BYTES: '150000' })).toThrow(/MAX_BUNDLE_BYTES: must be at least MAX_RAW_TX_BYTES/)
  })

  it('rejects malformed addresses and base tokens', () => {
    const problems = problemsOf(() => loadConfig({ ROUTER_ADDRESS: '0x123', BASE_TOKENS: '0xabc,nope' })).join('\n')
    expect(problems).toContain('ROUTER_ADDRESS')
    expect(problems).toContain('BASE_TOKENS')
  })

  it('reports every bad value at once, naming each variable, in one error', () => {
    const problems = problemsOf(() =>
      loadConfig({
        PORT: 'abc',
        RELAYS: 'not-json',
        BODY_LIMIT_BYTES: 'lots',
        SEARCHER_PRIVATE_KEY: '0x1234',
        SEARCHER_PRIVATE_KEYS: `0x${'00'.repeat(32)}`,
        UPSTREAM_RPC_URL: 'ftp://x',
        LOG_LEVEL: 'loud',
        FORK_BLOCK: '-1',
        UPSTREAM_TIMEOUT_MS: '5',
        API_KEYS: DEV_API_KEY,
        PARTNER_TOKENS: 'no-colon',
        HARDFORK: 'frontier',
        LOCAL_BUILDER_PORT: '70000',
        LOCAL_BUILDER_HISTORY_BLOCKS: '0',
        FORK_CACHE_MAX_BLOCKS: '-1',
        LOCAL_BUILDER_SLICE_MS: '0',
        DEVNET_STATE_LAYER_DEPTH: 'deep',
        ETH_USD_FEED: 'feed',
      }),
    )
    const all = problems.join('\n')
    for (const name of [
      'PORT=',
      'RELAYS:',
      'BODY_LIMIT_BYTES=',
      'SEARCHER_PRIVATE_KEY:',
      'SEARCHER_PRIVATE_KEYS: entry 1',
      'UPSTREAM_RPC_URL',
      'LOG_LEVEL',
      'FORK_BLOCK',
      'UPSTREAM_TIMEOUT_MS',
      'API_KEYS:',
      'PARTNER_TOKENS:',
      'HARDFORK',
      'LOCAL_BUILDER_PORT',
      'LOCAL_BUILDER_HISTORY_BLOCKS',
      'FORK_CACHE_MAX_BLOCKS',
      'LOCAL_BUILDER_SLICE_MS',
      'DEVNET_STATE_LAYER_DEPTH',
      'ETH_USD_FEED',
      'ROUTER_ADDRESS: required in fork mode',
    ]) {
      expect(all).toContain(name)
    }
    // one line per problem in the message the service prints before it exits with status 1
    const error = new ConfigError(problems)
    expect(error.message.split('\n')).toHaveLength(problems.length + 1)
    expect(error.message).toBe(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    // a member of the error family: the problems are its meta messages
    expect(error).toMatchObject({ name: 'ConfigError', shortMessage: 'invalid configuration', metaMessages: problems })
  })

  it('is typed by section', () => {
    const c: ServiceConfig = loadConfig({ PORT: '0', LOCAL_BUILDER_PORT: '0', DATA_DIR: '/tmp/x' })
    expect([c.server.port, c.devnet.localBuilderPort, c.submission.dataDir]).toEqual([0, 0, '/tmp/x'])
  })
})
