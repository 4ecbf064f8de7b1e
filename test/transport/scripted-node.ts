/**
 * A real HTTP server on 127.0.0.1 for the transport's tests: each request is answered by the next
 * scripted reply (or the default: echo every call's method as its result), after an optional
 * delay, or never. It records the raw body, the parsed calls and the headers of every request, and
 * how many requests it held at once.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SeenCall {
  id: number | string
  method: string
  params: unknown
}

export interface SeenRequest {
  /** the body exactly as received */
  text: string
  /** the calls in it, batched or not */
  calls: SeenCall[]
  batched: boolean
  headers: IncomingHttpHeaders
  path: string
}

export type Reply =
  /** status (default 200) and a body: a string is sent as is, anything else as JSON */
  | { status?: number; body: unknown; delayMs?: number }
  | { hang: true }
  /** answers each call with the function's value: `{ error }` objects become error members */
  | { each: (call: SeenCall) => unknown; reverse?: boolean; delayMs?: number }

export interface ScriptedNode {
  url: string
  requests: SeenRequest[]
  /** replies for the next requests, in order; then every call is echoed */
  script: Reply[]
  /** most requests held at the same time */
  maxConcurrent: number
  close(): Promise<void>
}

const echo: Reply = { each: (call) => call.method }

export async function startScriptedNode(): Promise<ScriptedNode> {
  const hanging = new Set<ServerResponse>()
  let active = 0
  const node: ScriptedNode = {
    url: '',
    requests: [],
    script: [],
    maxConcurrent: 0,
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const parsed = JSON.parse(text) as SeenCall | SeenCall[]
      const calls = Array.isArray(parsed) ? parsed : [parsed]
      node.requests.push({ text, calls, batched: Array.isArray(parsed), headers: req.headers, path: req.url ?? '' })
      active++
      node.maxConcurrent = Math.max(node.maxConcurrent, active)
      res.on('close', () => {
        active--
        hanging.delete(res)
      })
      const reply = node.script.shift() ?? echo
      if ('hang' in reply) {
        hanging.add(res)
        return
      }
      const answer = (): void => {
        let status = 200
        let body: unknown
        if ('each' in reply) {
          const items = calls.map((call) => {
            const value = reply.each(call)
            const isError = typeof value === 'object' && value !== null && 'error' in value
            return isError ? { jsonrpc: '2.0', id: call.id, error: (value as { error: unknown }).error } : { jsonrpc: '2.0', id: call.id, result: value }
          })
          if (reply.reverse === true) items.reverse()
          body = Array.isArray(parsed) ? items : items[0]
        } else {
          status = reply.status ?? 200
          body = reply.body
        }
        const payload = typeof body === 'string' ? body : JSON.stringify(body)
        res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' }).end(payload)
      }
      if (reply.delayMs === undefined) answer()
      else setTimeout(answer, reply.delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return node
}
