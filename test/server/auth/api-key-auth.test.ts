import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { apiKeyAuthHook, getApiKeyId } from '../../../src/server/auth/api-key-auth.ts'
import { ApiKeyRegistry, DEV_API_KEY, resolveApiKeys } from '../../../src/server/auth/api-keys.ts'

describe('apiKeyAuthHook', () => {
  it('records the key id for later stages; rejects before the handler runs', async () => {
    const app = Fastify({ logger: false })
    const registry = ApiKeyRegistry.fromKeys(['alpha-key-000000'])
    let handled = 0
    app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => reply.code(err.statusCode ?? 500).send({ name: err.name, message: err.message }))
    app.post('/p', { onRequest: apiKeyAuthHook(registry) }, async (request) => {
      handled++
      return { keyId: getApiKeyId(request) }
    })
    const ok = await app.inject({ method: 'POST', url: '/p', headers: { 'x-api-key': 'alpha-key-000000' } })
    expect(ok.json()).toEqual({ keyId: registry.lookup('alpha-key-000000') })
    const missing = await app.inject({ method: 'POST', url: '/p' })
    expect(missing.statusCode).toBe(401)
    expect(missing.json()).toEqual({ name: 'UnauthorizedError', message: 'missing X-API-Key header' })
    const wrong = await app.inject({ method: 'POST', url: '/p', headers: { 'X-Api-Key': 'beta' } })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json()).toEqual({ name: 'UnauthorizedError', message: 'invalid API key' })
    expect(handled).toBe(1)
    await app.close()
  })

  it('resolveApiKeys takes the Fastify logger; the devnet warning is a WARN line without the key', async () => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const app = Fastify({ logger: { level: 'info', stream } })
    resolveApiKeys({ mode: 'devnet', log: app.log })
    expect(lines).toHaveLength(1)
    const entry = JSON.parse(lines[0]) as { level: number; msg: string }
    expect(entry.level).toBe(40)
    expect(entry.msg).toContain('development key')
    expect(lines[0]).not.toContain(DEV_API_KEY)
    await app.close()
  })
})
