/**
 * A request that reaches the server while it closes (written on a keep-alive connection that still
 * has a request in flight, so the server keeps it open) is answered in the documented shape, not
 * with Fastify's default 503 body.
 */
import { connect } from 'node:net'

import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'

import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { parseGenesis } from '../../src/chain/memory/genesis.ts'
import { loadConfig } from '../../src/node/config.ts'
import { buildApp } from '../../src/server/app.ts'
import { ApiKeyRegistry } from '../../src/server/auth/api-keys.ts'
import { createPartnerRegistry, SHUTTING_DOWN_MESSAGE } from '../../src/server/jsonrpc/index.ts'

const TOKEN = 'partner-token-0123456789'
let app: FastifyInstance | undefined
afterEach(async () => {
  await app?.close()
  app = undefined
})

/** an app whose quotes take `ms` (then fail), listening on a free port */
async function slowQuoteApp(ms: number): Promise<{ app: FastifyInstance; port: number }> {
  const chain = new DevnetStateSource(parseGenesis({ config: { chainId: 31337 }, alloc: {} }))
  const quote = { quote: () => new Promise<never>((_, reject) => setTimeout(() => reject(new Error('slow and failing')), ms)) }
  const backrun = { backrun: () => Promise.reject(new Error('not used')) }
  const partners = createPartnerRegistry([{ partnerId: 'p', token: TOKEN }])
  const built = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), { chain, quote, backrun, partners, apiKeys: ApiKeyRegistry.fromKeys(['k-0123456789abcdef']) })
  await built.listen({ host: '127.0.0.1', port: 0 })
  const address = built.server.address()
  return { app: built, port: typeof address === 'object' && address !== null ? address.port : 0 }
}

/**
 * writes `first` on one connection, calls `whileOpen` 100 ms later (the first still in flight),
 * then writes `second` on the same connection; everything read until it closes
 */
function exchange(port: number, first: string, second: string, whileOpen: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(first)
      setTimeout(() => {
        whileOpen()
        setTimeout(() => socket.write(second), 50)
      }, 100)
    })
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('end', () => resolve(text))
    socket.on('close', () => resolve(text))
    socket.on('error', reject)
    socket.setTimeout(5_000, () => reject(new Error(`no answer after: ${text}`)))
  })
}

const quoteRequest = (body: string) =>
  `POST /v1/quote HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nx-api-key: k-0123456789abcdef\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

describe('while the server closes', () => {
  it('a REST request behind one in flight gets 503 SERVICE_UNAVAILABLE in the documented shape, with Connection: close', async () => {
    const started = await slowQuoteApp(400)
    app = started.app
    const body = JSON.stringify({ tokenIn: `0x${'11'.repeat(20)}`, tokenOut: `0x${'22'.repeat(20)}`, amountIn: '1000' })
    const closing = { done: undefined as Promise<void> | undefined }
    const text = await exchange(started.port, quoteRequest(body), 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', () => {
      closing.done = started.app.close()
    })
    await closing.done
    app = undefined
    const answers = text.split(/(?=HTTP\/1\.1 )/)
    expect(answers).toHaveLength(2)
    const second = answers[1]
    expect(second).toMatch(/^HTTP\/1\.1 503/)
    expect(second.toLowerCase()).toContain('connection: close')
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toEqual({ code: 'SERVICE_UNAVAILABLE', message: SHUTTING_DOWN_MESSAGE })
  })

  it('a JSON-RPC request behind one in flight gets 503 with a JSON-RPC error, id null', async () => {
    const started = await slowQuoteApp(400)
    app = started.app
    const body = JSON.stringify({ tokenIn: `0x${'11'.repeat(20)}`, tokenOut: `0x${'22'.repeat(20)}`, amountIn: '1000' })
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_backrun', params: [] })
    const second = `POST /rpc/${TOKEN}/backrun HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${rpc.length}\r\n\r\n${rpc}`
    const closing = { done: undefined as Promise<void> | undefined }
    const text = await exchange(started.port, quoteRequest(body), second, () => {
      closing.done = started.app.close()
    })
    await closing.done
    app = undefined
    const answer = text.split(/(?=HTTP\/1\.1 )/)[1]
    expect(answer).toMatch(/^HTTP\/1\.1 503/)
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: SHUTTING_DOWN_MESSAGE } })
  })
})
