import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.ts'

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

describe('loadConfig', () => {
  it('defaults: devnet mode, loopback, port 8080', () => {
    const c = loadConfig({})
    expect(c.host).toBe('127.0.0.1')
    expect(c.port).toBe(8080)
    expect(c.upstreamRpcUrl).toBeUndefined()
    expect(c.forkBlock).toBe('latest')
    expect(c.blockTimeSeconds).toBe(12n)
  })

  it('UPSTREAM_RPC_URL switches to fork mode; FORK_BLOCK pins a block', () => {
    const c = loadConfig({ UPSTREAM_RPC_URL: 'http://127.0.0.1:8545', FORK_BLOCK: '123', ...FORK_CONTRACTS })
    expect(c.upstreamRpcUrl).toBe('http://127.0.0.1:8545')
    expect(c.forkBlock).toBe(123n)
    expect(c.routerAddress).toBe(FORK_CONTRACTS.ROUTER_ADDRESS.toLowerCase())
  })

  it('fork mode names every missing chain contract', () => {
    try {
      loadConfig({ UPSTREAM_RPC_URL: 'http://127.0.0.1:8545' })
      expect.unreachable()
    } catch (err) {
      const problems = (err as ConfigError).problems.join('\n')
      for (const name of ['ROUTER_ADDRESS', 'WETH_ADDRESS', 'V2_FACTORY', 'V3_FACTORY', 'BACKRUN_CONTRACT', 'ETH_USD_FEED', 'SEARCHER_PRIVATE_KEY', 'RELAYS']) expect(problems).toContain(name)
    }
  })

  it('backrun settings: wei amounts as uint256 decimal strings, refund in basis points', () => {
    const c = loadConfig({ BACKRUN_MIN_NET_PROFIT_WEI: '1000', BACKRUN_PRIORITY_FEE_WEI: '0', BACKRUN_REFUND_BPS: '9000', RPC_MAX_BATCH_SIZE: '10' })
    expect(c.backrunMinNetProfitWei).toBe(1000n)
    expect(c.backrunPriorityFeeWei).toBe(0n)
    expect(c.backrunRefundBps).toBe(9000)
    expect(c.rpcMaxBatchSize).toBe(10)
    expect(loadConfig({}).backrunPriorityFeeWei).toBe(10n ** 9n)
    for (const [name, value] of [
      ['BACKRUN_MIN_NET_PROFIT_WEI', '-1'],
      ['BACKRUN_MIN_NET_PROFIT_WEI', (1n << 256n).toString()],
      ['BACKRUN_PRIORITY_FEE_WEI', '1e9'],
      ['BACKRUN_REFUND_BPS', '10001'],
      ['RPC_MAX_BATCH_SIZE', '0'],
      ['QUOTE_CACHE_MAX_ENTRIES', '-3'],
      ['SEARCHER_PRIVATE_KEY', '0x1234'],
      ['MAX_BUNDLE_TXS', '0'],
      ['SUBMISSION_EXPIRY_BLOCKS', '0'],
    ]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(name))
    }
  })

  it('never echoes the searcher key, and keeps the body limit above two bundles of hex', () => {
    const secret = `0x${'ab'.repeat(31)}`
    expect(() => loadConfig({ SEARCHER_PRIVATE_KEY: secret })).toThrow(/SEARCHER_PRIVATE_KEY/)
    try {
      loadConfig({ SEARCHER_PRIVATE_KEY: secret })
    } catch (err) {
      expect((err as Error).message).not.toContain('abab')
    }
    expect(() => loadConfig({ BODY_LIMIT_BYTES: '100000' })).toThrow(/BODY_LIMIT_BYTES/)
  })

  it('rejects malformed addresses and base tokens', () => {
    expect(() => loadConfig({ ROUTER_ADDRESS: '0x123', BASE_TOKENS: '0xabc,nope' })).toThrow(/ROUTER_ADDRESS[\s\S]*BASE_TOKENS|BASE_TOKENS[\s\S]*ROUTER_ADDRESS/)
  })

  it('reports every bad value at once, naming the variable', () => {
    try {
      loadConfig({ PORT: 'eighty', UPSTREAM_RPC_URL: 'ftp://x', LOG_LEVEL: 'loud', FORK_BLOCK: '-1', UPSTREAM_TIMEOUT_MS: '5' })
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      const problems = (err as ConfigError).problems.join('\n')
      for (const name of ['PORT', 'UPSTREAM_RPC_URL', 'LOG_LEVEL', 'FORK_BLOCK', 'UPSTREAM_TIMEOUT_MS']) expect(problems).toContain(name)
    }
  })
})
