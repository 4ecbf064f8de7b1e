/**
 * Probe (issue 10, sixteenth session): what one eth_getTransactionReceipt costs the main thread
 * through the service's JSON-RPC transport, over globalThis.fetch (what RpcInclusionChecker uses
 * today) and over node:http with a keep-alive agent (src/submission/relay-http.ts, what the relays
 * use). At each head the dispatcher asks a receipt for every submission the block index found
 * there (~150-300 at bench:soak's 50/s), 16 at a time, in the same turns as the relays' re-sends,
 * the re-plans and the local builder's block: garbage made in that burst lives across its
 * scavenges and is promoted (scripts/probe/promoted-allocations.ts found fetch's objects among
 * what the main isolate's mark-compacts collect), and every byte allocated brings the next
 * scavenge closer for everything else in flight.
 *
 * A JSON-RPC server in a child process answers each receipt with a ~2.5 KB receipt (a swap's, six
 * logs). For each variant, in its own process (`node --expose-gc`, a 128 MB semi-space so that no
 * scavenge runs inside a burst): PROBE_BURSTS bursts (default 8) of PROBE_REQUESTS receipts
 * (default 300), PROBE_CONCURRENCY at once (default 16); per request, the heap bytes allocated
 * (used heap after the burst minus after a full GC before it) and the process's CPU time. Variants
 * alternate, PROBE_ROUNDS times (default 3). Run: `npx tsx scripts/probe/receipt-fetch-cost.ts`.
 * The last line is one JSON object.
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getHeapStatistics } from 'node:v8'
import { fileURLToPath } from 'node:url'
import { keepAliveHttp } from '../../src/submission/relay-http.ts'
import { JsonRpcTransport } from '../../src/transport/json-rpc-transport.ts'

const BURSTS = Number(process.env.PROBE_BURSTS ?? 8)
const REQUESTS = Number(process.env.PROBE_REQUESTS ?? 300)
const CONCURRENCY = Number(process.env.PROBE_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3)
const VARIANTS = ['fetch', 'keepalive'] as const
type Variant = (typeof VARIANTS)[number]

interface BurstCost {
  heapBytesPerRequest: number
  cpuUsPerRequest: number
}

const hex = (n: number, bytes: number): string => `0x${n.toString(16).padStart(bytes * 2, '0')}`

/** A swap's receipt as a node answers it: six logs of three topics and 64 bytes of data each. */
function receiptJson(id: unknown, hash: string): string {
  const logs = Array.from({ length: 6 }, (_, i) => ({
    address: hex(0x1000 + i, 20),
    topics: [hex(0xabc + i, 32), hex(i, 32), hex(i + 1, 32)],
    data: hex(i * 7, 64),
    logIndex: hex(i, 1),
    transactionHash: hash,
  }))
  return JSON.stringify({ jsonrpc: '2.0', id, result: { transactionHash: hash, blockNumber: '0x10', blockHash: hex(16, 32), status: '0x1', gasUsed: '0x1d4c0', logs } })
}

function serve(): void {
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const call = JSON.parse(body) as { id: unknown; params: [string] }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(receiptJson(call.id, call.params[0]))
    })
  })
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`))
}

async function measure(variant: Variant, url: string): Promise<BurstCost[]> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run the measuring process with --expose-gc')
  const http = variant === 'keepalive' ? keepAliveHttp(url, { maxSockets: CONCURRENCY, maxAnswerBytes: 1024 * 1024 }) : undefined
  const transport = new JsonRpcTransport({ url, timeoutMs: 2_000, maxAttempts: 3, ...(http === undefined ? {} : { fetch: http.fetch }) })
  const burst = async (): Promise<void> => {
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < REQUESTS) {
        const i = next++
        await transport.request('eth_getTransactionReceipt', [hex(i, 32)])
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  }
  await burst() // warm-up: connections, compiled code
  const costs: BurstCost[] = []
  for (let b = 0; b < BURSTS; b++) {
    gc()
    const heapBefore = getHeapStatistics().used_heap_size
    const cpuBefore = process.cpuUsage()
    await burst()
    const cpu = process.cpuUsage(cpuBefore)
    costs.push({ heapBytesPerRequest: (getHeapStatistics().used_heap_size - heapBefore) / REQUESTS, cpuUsPerRequest: (cpu.user + cpu.system) / REQUESTS })
  }
  http?.close()
  return costs
}

function child(args: string[], execArgv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...execArgv, '--import', 'tsx', fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    p.stdout.setEncoding('utf8')
    p.stdout.on('data', (c: string) => (out += c))
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child ${args.join(' ')} exited with ${code}`))))
  })
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const [role, arg] = process.argv.slice(2)
if (role === 'serve') serve()
else if (role === 'measure') {
  const [variant, url] = arg!.split('@') as [Variant, string]
  console.log(JSON.stringify(await measure(variant, url)))
} else {
  const server = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<string>((resolve) => server.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())))
  const url = `http://127.0.0.1:${port}/`
  const results: Record<Variant, BurstCost[]> = { fetch: [], keepalive: [] }
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const variant of r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const out = await child(['measure', `${variant}@${url}`], ['--expose-gc', '--max-semi-space-size=128', '--min-semi-space-size=128'])
        const costs = JSON.parse(out.trim().split('\n').at(-1)!) as BurstCost[]
        results[variant].push(...costs)
        console.log(`round ${r + 1} ${variant}: heap KB per request ${costs.map((c) => (c.heapBytesPerRequest / 1024).toFixed(1)).join(' ')}; CPU µs per request ${costs.map((c) => c.cpuUsPerRequest.toFixed(0)).join(' ')}`)
      }
    }
  } finally {
    server.kill()
  }
  const summary = Object.fromEntries(
    VARIANTS.map((v) => [v, { bursts: results[v].length, heap_kb_per_request_median: Math.round(median(results[v].map((c) => c.heapBytesPerRequest)) / 102.4) / 10, cpu_us_per_request_median: Math.round(median(results[v].map((c) => c.cpuUsPerRequest))), cpu_us_per_request_min: Math.round(Math.min(...results[v].map((c) => c.cpuUsPerRequest))) }]),
  )
  console.log(JSON.stringify({ probe: 'receipt-fetch-cost', requests_per_burst: REQUESTS, concurrency: CONCURRENCY, ...summary }))
}
