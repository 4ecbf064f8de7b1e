/**
 * A real HTTP server on 127.0.0.1 (port 0) that plays a misbehaving upstream: each request is
 * answered by a scripted handler (JSON-RPC errors, HTTP 500, garbage, silence) or forwarded to a
 * real node. Every request body is recorded so tests can count attempts and inspect params.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RpcRequestItem {
  jsonrpc: string
  id: number | string | null
  method: string
  params: unknown[]
}

export interface RecordedRequest {
  /** the parsed body: one item or a batch */
  body: RpcRequestItem | RpcRequestItem[]
  /** the items, whether batched or not */
  items: RpcRequestItem[]
}

export type Reply =
  | { kind: 'json'; status?: number; body: unknown }
  | { kind: 'raw'; status?: number; body: string; contentType?: string }
  | { kind: 'hang' }
  | { kind: 'forward' }

export type Handler = (request: RecordedRequest, index: number) => Reply | Promise<Reply>

export interface FakeUpstream {
  readonly url: string
  readonly requests: RecordedRequest[]
  /** replaces the handler */
  setHandler(handler: Handler): void
  /** all JSON-RPC items received, in order */
  items(): RpcRequestItem[]
  reset(): void
  close(): Promise<void>
}

/** Answers each item with `result(item)` (or an error object when it returns `{ error }`). */
export function answerEach(
  result: (item: RpcRequestItem) => unknown | { error: { code: number; message: string } },
): Handler {
  return ({ body }) => {
    const one = (item: RpcRequestItem) => {
      const value = result(item)
      if (typeof value === 'object' && value !== null && 'error' in value) {
        return { jsonrpc: '2.0', id: item.id, error: (value as { error: unknown }).error }
      }
      return { jsonrpc: '2.0', id: item.id, result: value }
    }
    return { kind: 'json', body: Array.isArray(body) ? body.map(one) : one(body) }
  }
}

export async function startFakeUpstream(handler: Handler, forwardTo?: string): Promise<FakeUpstream> {
  let current = handler
  const requests: RecordedRequest[] = []
  const hanging = new Set<ServerResponse>()

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      let data = ''
      req.setEncoding('utf8')
      req.on('data', (chunk: string) => (data += chunk))
      req.on('end', () => resolve(data))
      req.on('error', reject)
    })

  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req)
      const body = JSON.parse(text) as RpcRequestItem | RpcRequestItem[]
      const recorded: RecordedRequest = { body, items: Array.isArray(body) ? body : [body] }
      const index = requests.push(recorded) - 1
      const reply = await current(recorded, index)
      switch (reply.kind) {
        case 'hang':
          hanging.add(res)
          res.on('close', () => hanging.delete(res))
          return
        case 'forward': {
          if (forwardTo === undefined) throw new Error('no forward target')
          const upstream = await fetch(forwardTo, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })
          res.writeHead(upstream.status, { 'content-type': 'application/json' })
          res.end(await upstream.text())
          return
        }
        case 'json':
          res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' })
          res.end(JSON.stringify(reply.body))
          return
        case 'raw':
          res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'text/plain' })
          res.end(reply.body)
          return
      }
    })().catch((error: unknown) => {
      res.writeHead(599)
      res.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler(next) {
      current = next
    },
    items: () => requests.flatMap((r) => r.items),
    reset() {
      requests.length = 0
    },
    close() {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A loopback URL nothing listens on (a port bound and released). */
export async function deadUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}
