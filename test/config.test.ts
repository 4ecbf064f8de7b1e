import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.ts'

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
    const c = loadConfig({ UPSTREAM_RPC_URL: 'http://127.0.0.1:8545', FORK_BLOCK: '123' })
    expect(c.upstreamRpcUrl).toBe('http://127.0.0.1:8545')
    expect(c.forkBlock).toBe(123n)
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
