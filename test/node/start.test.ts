/**
 * The composition root: configuration first (a wrong one opens nothing and logs nothing), then one
 * logger that the domain and the HTTP server share, its redaction as the app's.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.ts'
import { startNode, type ServiceNode } from '../../src/node/start.ts'
import { DEV_PARTNER_TOKEN } from '../../src/server/jsonrpc/partner-tokens-config.ts'
import { withWorkersFromEnv } from '../support/env.ts'

function memoryLog() {
  const lines: Array<Record<string, unknown>> = []
  return { lines, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } }
}

describe('startNode', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-start-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('a wrong configuration: one ConfigError naming every variable, nothing opened, nothing logged', async () => {
    const log = memoryLog()
    const dataDir = join(dir, 'never')
    const err = await startNode({ PORT: 'abc', RELAYS: 'not-json', BODY_LIMIT_BYTES: '1', SEARCHER_PRIVATE_KEY: '0x12', DATA_DIR: dataDir }, { logDestination: log.destination }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ConfigError)
    const message = (err as ConfigError).message
    for (const name of ['PORT', 'RELAYS', 'BODY_LIMIT_BYTES', 'SEARCHER_PRIVATE_KEY']) expect(message).toContain(name)
    expect(existsSync(dataDir)).toBe(false)
    expect(log.lines).toEqual([])
  })

  describe('on the devnet', () => {
    const log = memoryLog()
    let node: ServiceNode
    beforeAll(async () => {
      node = await startNode(withWorkersFromEnv({ PORT: '0', LOCAL_BUILDER_PORT: '0', LOG_LEVEL: 'info', DATA_DIR: join(dir, 'outbox'), LOCAL_BUILDER_BLOCK_TIME_MS: '600000' }), { logDestination: log.destination })
    })
    afterAll(async () => {
      await node?.close()
    })

    it('serves, and the domain, the start-up and the HTTP server log to the same logger', async () => {
      expect((await fetch(`${node.url}/healthz`)).status).toBe(200)
      const messages = log.lines.map((l) => l.msg)
      // start-up: the development key and token, the devnet's searcher keys (logged before the server existed)
      expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/API_KEYS and API_KEYS_FILE are not set/), expect.stringMatching(/no partner tokens configured/), expect.stringMatching(/no SEARCHER_PRIVATE_KEY/), 'state source ready']))
      expect(log.lines.find((l) => l.msg === 'state source ready')).toMatchObject({ mode: 'devnet', localBuilder: node.builder?.url })
      // the server's request log, in the same stream
      expect(log.lines.some((l) => l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/healthz')).toBe(true)
    })

    it('keeps the partner token out of the request log, as the app does', async () => {
      const res = await fetch(`${node.url}/rpc/${DEV_PARTNER_TOKEN}/backrun`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_nothing', params: [] }),
      })
      expect(res.status).toBeLessThan(500)
      await fetch(`${node.url}/rpc/${DEV_PARTNER_TOKEN}/nowhere`)
      // (the start-up warning names the public development token on purpose; requests never do)
      const requestLines = JSON.stringify(log.lines.filter((l) => l.reqId !== undefined))
      expect(requestLines).toContain('/rpc/[redacted]/backrun')
      expect(requestLines).toContain('/rpc/[redacted]/[redacted]')
      expect(requestLines).not.toContain(DEV_PARTNER_TOKEN)
    })
  })
})
