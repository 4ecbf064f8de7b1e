/**
 * The recording relay of bench:submit, bench:soak's pending-memory phase and their probes: a real HTTP server on 127.0.0.1 that answers
 * every eth_sendBundle as accepted, lands nothing, and counts the bundles it got (and those with a
 * backrun: more than one tx). A GET answers those two counts (for a caller in another process;
 * not counted as a bundle).
 */
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { fileURLToPath } from 'node:url'

import { freePort } from '../../test/support/net.ts'

export interface RelayCounts {
  received: number
  withBackrun: number
}

/** a relay that answers every eth_sendBundle and counts what it got */
export async function recordingRelay(): Promise<{ url: string; server: Server; received: () => number; withBackrun: () => number }> {
  let received = 0
  let withBackrun = 0
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ received, withBackrun } satisfies RelayCounts))
      return
    }
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      received++
      let id: unknown = null
      try {
        const request = JSON.parse(body) as { id?: unknown; params?: Array<{ txs?: unknown[] }> }
        id = request.id ?? null
        if ((request.params?.[0]?.txs?.length ?? 0) > 1) withBackrun++
      } catch {
        // a body that is not JSON is answered anyway (counted, id null), never thrown in the server
      }
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { bundleHash: `0x${'00'.repeat(32)}` } }))
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${port}`, server, received: () => received, withBackrun: () => withBackrun }
}


/**
 * recordingRelay in a process of its own (recording-relay-child.ts), so that its HTTP server's CPU
 * is not counted in the caller's threads; its counts are read over GET.
 */
export async function recordingRelayProcess(): Promise<{ url: string; counts: () => Promise<RelayCounts>; stop: () => void }> {
  const entry = fileURLToPath(new URL('./recording-relay-child.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))
    child.once('exit', (code) => reject(new Error(`the recording relay exited ${code}`)))
  })
  return {
    url,
    counts: async () => (await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).json()) as RelayCounts,
    stop: () => child.kill(),
  }
}
