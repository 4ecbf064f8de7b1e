import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../src/node/config.ts'
import { parseGenesis } from '../../src/chain/memory/genesis.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { buildApp } from '../../src/server/app.ts'
import { ApiKeyRegistry } from '../../src/server/auth/api-keys.ts'
import { createPartnerRegistry } from '../../src/server/jsonrpc/index.ts'

describe('health routes', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    const chain = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: {} }))
    // health routes never reach the quote engine
    const quote = { quote: () => Promise.reject(new Error('not used by health routes')) }
    const backrun = { backrun: () => Promise.reject(new Error('not used by health routes')) }
    const partners = createPartnerRegistry([{ partnerId: 'p', token: 'partner-token-0123456789' }])
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), { chain, quote, backrun, partners, apiKeys: ApiKeyRegistry.fromKeys(['k']) })
    await app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(() => app.close())

  it('GET /healthz answers ok over a real socket', async () => {
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const res = await fetch(`http://127.0.0.1:${port}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })

  it('GET /readyz reports mode, chain id and head', async () => {
    const res = await app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ready', mode: 'devnet', chainId: '31337', blockNumber: '0' })
  })
})
