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

  it('GET /readyz is 503 while the submission store cannot be written, and says so', async () => {
    const chain = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: {} }))
    const unused = () => Promise.reject(new Error('not used by health routes'))
    const partners = createPartnerRegistry([{ partnerId: 'p', token: 'partner-token-0123456789' }])
    let storeUp = false
    const submission = {
      acceptor: { accept: unused },
      // the store's readiness is all /readyz reads of it
      store: { findForPartner: () => Promise.resolve([]), ready: () => (storeUp ? Promise.resolve(true) : Promise.reject(new Error('connection refused'))) },
      decode: { chainId: 31337n },
      limits: {},
    }
    const withStore = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), {
      chain,
      quote: { quote: unused },
      backrun: { backrun: unused },
      partners,
      apiKeys: ApiKeyRegistry.fromKeys(['k']),
      submission: submission as unknown as NonNullable<Parameters<typeof buildApp>[1]['submission']>,
    })
    try {
      const down = await withStore.inject({ method: 'GET', url: '/readyz' })
      expect(down.statusCode).toBe(503)
      expect(down.json()).toEqual({ status: 'unavailable', mode: 'devnet', chainId: '31337', blockNumber: '0', submissionStore: 'unavailable' })
      storeUp = true
      const up = await withStore.inject({ method: 'GET', url: '/readyz' })
      expect(up.statusCode).toBe(200)
      expect(up.json()).toEqual({ status: 'ready', mode: 'devnet', chainId: '31337', blockNumber: '0', submissionStore: 'ready' })
    } finally {
      await withStore.close()
    }
  })
})
