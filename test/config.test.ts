import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.ts'

const FORK_CONTRACTS = {
  ROUTER_ADDRESS: '0x00000000000000000000000000000000000000AA',
  WETH_ADDRESS: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  V2_FACTORY: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f',
  V3_FACTORY: '0x1F98431c8aD98523631AE4a59f267346ea31F984',
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
      for (const name of ['ROUTER_ADDRESS', 'WETH_ADDRESS', 'V2_FACTORY', 'V3_FACTORY']) expect(problems).toContain(name)
    }
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
