/**
 * The HTTP server's connection bounds: at most SERVER_MAX_CONNECTIONS open at once (one more is
 * closed as it arrives, the ones already open keep working), and an idle keep-alive connection is
 * closed after SERVER_KEEP_ALIVE_TIMEOUT_MS.
 */
import { connect, type Socket } from 'node:net'

import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'

import { buildFullApp } from './full-app.ts'

let app: FastifyInstance | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await app?.close()
  app = undefined
})

async function listening(env: Record<string, string>): Promise<number> {
  app = await buildFullApp({ env })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no port')
  return address.port
}

interface Conversation {
  socket: Socket
  /** everything read so far */
  text: () => string
  /** resolves with the ms from connecting until the server closed the connection */
  closed: Promise<number>
}

function open(port: number): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let text = ''
    let markClosed: (ms: number) => void = () => {}
    const closed = new Promise<number>((r) => (markClosed = r))
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, text: () => text, closed }))
    sockets.push(socket)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('close', () => markClosed(performance.now() - started))
    socket.on('error', () => {})
    socket.setTimeout(10_000, () => reject(new Error('the socket neither connected nor closed')))
  })
}

const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'

const answers = (c: Conversation): number => c.text().split('{"status":"ok"}').length - 1

/** one more 200 answer on `c` (answers accumulate in its text) */
async function answered(c: Conversation): Promise<void> {
  const before = answers(c)
  c.socket.write(HEALTHZ)
  for (let i = 0; i < 200 && answers(c) === before; i++) await new Promise((r) => setTimeout(r, 10))
  expect(answers(c)).toBe(before + 1)
}

describe('HTTP connection bounds', () => {
  it('one connection past SERVER_MAX_CONNECTIONS is closed as it arrives; the open ones keep answering', async () => {
    const port = await listening({ SERVER_MAX_CONNECTIONS: '2' })
    const [a, b] = [await open(port), await open(port)]
    await answered(a)
    await answered(b)
    const third = await open(port)
    // closed by the server without a byte, long before any timeout
    expect(await third.closed).toBeLessThan(2_000)
    expect(third.text()).toBe('')
    await answered(a)
    await answered(b)
    // a place frees when one closes
    a.socket.destroy()
    await a.closed
    await new Promise((r) => setTimeout(r, 50))
    await answered(await open(port))
  })

  it('an idle keep-alive connection is closed after SERVER_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const port = await listening({ SERVER_KEEP_ALIVE_TIMEOUT_MS: '1000' })
    const c = await open(port)
    const sent = performance.now()
    await answered(c)
    await c.closed
    const idle = performance.now() - sent
    expect(idle).toBeGreaterThanOrEqual(900)
    expect(idle).toBeLessThan(5_000)
  })
})
