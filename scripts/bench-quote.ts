/**
 * npm run bench:quote
 *
 * POST /v1/quote on the embedded devnet, served by the real app on loopback, against the naive peer
 * in the same run: a quoter that, like a QuoterV2-based service, executes a quote in the EVM for
 * every candidate path (QuoterV2.quoteExactInputSingle for V3 hops, Router02.getAmountsOut for V2
 * hops, hop by hop) and answers the best single path. Both run in this process on the same state
 * and the same pool discovery; both are served by Fastify on 127.0.0.1 so the HTTP cost is equal.
 *
 * Every request carries a distinct amount (the mix's amount plus a counter, in wei), so no answer
 * comes from the service's per-block answer cache: these are the figures of the full path (route
 * search + calldata executed in the EVM). The same mix repeated (cache hits: a wallet polling a
 * quote within one block) is measured separately and reported as `repeat`.
 *
 * 1. Warm latency: sequential requests over the mix (one at a time), p50/p99.
 * 2. Sustained throughput: autocannon, BENCH_CONNECTIONS connections for BENCH_SECONDS seconds.
 * 3. RSS of the process after the run.
 * Prints one JSON object on its last line.
 *
 * Options (environment): BENCH_ITERATIONS (default 300), BENCH_SECONDS (default 10),
 * BENCH_CONNECTIONS (default 8).
 */
import autocannon from 'autocannon'
import Fastify, { type FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { summarize } from './lib/stats.ts'
import { bytesToHexString } from '../src/chain/quantity.ts'
import type { Address } from '../src/chain/types.ts'
import { loadConfig } from '../src/config.ts'
import { buildPoolGraph, enumeratePaths, VIEW_CALLER, type PathHop } from '../src/routing/index.ts'
import { DEV_API_KEY, resolveApiKeys } from '../src/server/auth/api-keys.ts'
import { buildApp } from '../src/server/app.ts'
import { openDomainServices, type DomainServices } from '../src/service.ts'

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)

interface Registry {
  tokens: Array<{ symbol: string; decimals: number; address: string }>
  v2: { router02: string }
  v3: { quoterV2: string }
}
const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as Registry
const token = (symbol: string) => registry.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase() as Address
const units = (symbol: string, n: number) => (BigInt(Math.round(n * 1e6)) * 10n ** BigInt(registry.tokens.find((t) => t.symbol === symbol)!.decimals)) / 1_000_000n

/** the request mix: direct pairs, two and three hops, splits; small and large */
const MIX: Array<{ tokenIn: Address; tokenOut: Address; amountIn: bigint }> = [
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 1) },
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 66) },
  { tokenIn: token('USDC'), tokenOut: token('UNI'), amountIn: units('USDC', 10_000) },
  { tokenIn: token('LINK'), tokenOut: token('DAI'), amountIn: units('LINK', 666.67) },
  { tokenIn: token('WBTC'), tokenOut: token('DAI'), amountIn: units('WBTC', 0.5) },
  { tokenIn: token('DAI'), tokenOut: token('WETH'), amountIn: units('DAI', 5_000) },
  { tokenIn: token('UNI'), tokenOut: token('LINK'), amountIn: units('UNI', 1_000) },
  { tokenIn: token('USDT'), tokenOut: token('WBTC'), amountIn: units('USDT', 20_000) },
]

const QUOTER_V2_ABI = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
])
const ROUTER02_ABI = parseAbi(['function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)'])

/** The peer: every candidate path quoted in the EVM hop by hop; the best single path wins. */
class NaiveEvmQuoter {
  constructor(private readonly services: DomainServices) {}

  async quote(tokenIn: Address, tokenOut: Address, amountIn: bigint): Promise<{ amountOut: bigint; paths: number; evmCalls: number }> {
    const { simulator, routing, chain } = this.services
    const reader = chain.latest()
    // discovery and the candidate paths are shared (and cached) so that only the quoting differs;
    // the naive quoter uses the snapshots only for which pools exist and hold liquidity
    const { pools } = await routing.loadPools(reader, tokenIn, tokenOut)
    const graph = buildPoolGraph(pools)
    const paths = enumeratePaths(graph, tokenIn, tokenOut, 3)
    const state = simulator.openState(reader)
    let best = 0n
    let evmCalls = 0
    for (const path of paths) {
      let amount: bigint | undefined = amountIn
      for (const hop of path) {
        evmCalls++
        amount = await this.quoteHop(state, hop, amount)
        if (amount === undefined) break
      }
      if (amount !== undefined && amount > best) best = amount
    }
    return { amountOut: best, paths: paths.length, evmCalls }
  }

  private async quoteHop(state: ReturnType<DomainServices['simulator']['openState']>, hop: PathHop, amountIn: bigint): Promise<bigint | undefined> {
    const { simulator } = this.services
    if (hop.pool.protocol === 'uniswap-v3') {
      const data = encodeFunctionData({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', args: [{ tokenIn: hop.tokenIn, tokenOut: hop.tokenOut, amountIn, fee: hop.pool.fee, sqrtPriceLimitX96: 0n }] })
      const r = await simulator.call(state, { from: VIEW_CALLER, to: registry.v3.quoterV2.toLowerCase() as Address, data })
      if (r.status !== 'success') return undefined
      return decodeFunctionResult({ abi: QUOTER_V2_ABI, functionName: 'quoteExactInputSingle', data: bytesToHexString(r.returnData) })[0]
    }
    const data = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', args: [amountIn, [hop.tokenIn, hop.tokenOut]] })
    const r = await simulator.call(state, { from: VIEW_CALLER, to: registry.v2.router02.toLowerCase() as Address, data })
    if (r.status !== 'success') return undefined
    return decodeFunctionResult({ abi: ROUTER02_ABI, functionName: 'getAmountsOut', data: bytesToHexString(r.returnData) })[1]
  }
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address !== 'object') throw new Error('no address')
  return `http://127.0.0.1:${address.port}`
}

async function post(url: string, body: unknown): Promise<number> {
  const t = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY }, body: JSON.stringify(body) })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`)
  return performance.now() - t
}

/** distinct amounts across the whole run, so no two requests are the same */
let counter = 0
function body(i: number, distinct: boolean) {
  const m = MIX[i % MIX.length]
  return JSON.stringify({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: (m.amountIn + (distinct ? BigInt(++counter) : 0n)).toString() })
}

async function sequential(url: string, distinct = true): Promise<ReturnType<typeof summarize>> {
  for (let i = 0; i < 3 * MIX.length; i++) await post(url, JSON.parse(body(i, distinct)))
  const samples: number[] = []
  for (let i = 0; i < ITERATIONS; i++) samples.push(await post(url, JSON.parse(body(i, distinct))))
  return summarize(samples)
}

async function sustained(url: string, distinct = true) {
  let i = 0
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY },
      setupRequest: (req) => ({ ...req, body: body(i++, distinct) }),
    },
  ]
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests })
  return {
    requests_per_s: result.requests.average,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }
}

async function main() {
  // the rate limit is raised so the benchmark measures the quote path, not 429s
  const config = { ...loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000' }), port: 0 }
  const services = await openDomainServices(config, { log: { warn: (o, m) => console.warn(m, o) } })
  const app = await buildApp(config, { chain: services.chain, quote: services.quote, apiKeys: resolveApiKeys({ mode: 'devnet', log: { warn: () => {} } }) })
  const ours = `${await listen(app)}/v1/quote`

  const naive = new NaiveEvmQuoter(services)
  const peerApp = Fastify({ logger: false })
  peerApp.post<{ Body: { tokenIn: Address; tokenOut: Address; amountIn: string } }>('/v1/quote', async (req) => {
    const q = await naive.quote(req.body.tokenIn.toLowerCase() as Address, req.body.tokenOut.toLowerCase() as Address, BigInt(req.body.amountIn))
    return { amountOut: q.amountOut.toString() }
  })
  const peer = `${await listen(peerApp)}/v1/quote`

  // both answer, and ours is never worse than the best single path
  const comparison = []
  for (const m of MIX) {
    const a = await services.quote.quote(m)
    const b = await naive.quote(m.tokenIn, m.tokenOut, m.amountIn)
    comparison.push({ pair: `${m.tokenIn.slice(0, 6)}>${m.tokenOut.slice(0, 6)}`, ours: a.amountOut.toString(), naive: b.amountOut.toString(), naivePaths: b.paths, naiveEvmCalls: b.evmCalls, legs: a.routes.length })
    if (a.amountOut < b.amountOut) throw new Error(`our quote ${a.amountOut} is below the naive best path ${b.amountOut}`)
  }
  console.table(comparison)

  const oursSeq = await sequential(ours)
  const peerSeq = await sequential(peer)
  console.log(`sequential  ours p50 ${oursSeq.p50.toFixed(2)} ms p99 ${oursSeq.p99.toFixed(2)} ms | naive p50 ${peerSeq.p50.toFixed(2)} ms p99 ${peerSeq.p99.toFixed(2)} ms`)
  const oursLoad = await sustained(ours)
  const peerLoad = await sustained(peer)
  console.log(`autocannon  ours ${oursLoad.requests_per_s} req/s (p50 ${oursLoad.p50_ms} ms, p99 ${oursLoad.p99_ms} ms, non-2xx ${oursLoad.non2xx}) | naive ${peerLoad.requests_per_s} req/s`)
  const repeatSeq = await sequential(ours, false)
  const repeatLoad = await sustained(ours, false)
  console.log(`repeat      ours p50 ${repeatSeq.p50.toFixed(2)} ms p99 ${repeatSeq.p99.toFixed(2)} ms, ${repeatLoad.requests_per_s} req/s under load`)
  const rssMb = process.memoryUsage().rss / 2 ** 20

  await app.close()
  await peerApp.close()
  await services.close()
  const result = {
    name: 'bench:quote',
    p50_ms: round(oursSeq.p50),
    p99_ms: round(oursSeq.p99),
    requests_per_s: oursLoad.requests_per_s,
    load_p50_ms: oursLoad.p50_ms,
    load_p99_ms: oursLoad.p99_ms,
    load_non2xx: oursLoad.non2xx + oursLoad.errors + oursLoad.timeouts,
    peer: { name: 'naive EVM quoter (QuoterV2 / getAmountsOut per path, best single path)', p50_ms: round(peerSeq.p50), p99_ms: round(peerSeq.p99), requests_per_s: peerLoad.requests_per_s },
    repeat: { p50_ms: round(repeatSeq.p50), p99_ms: round(repeatSeq.p99), requests_per_s: repeatLoad.requests_per_s, load_p99_ms: repeatLoad.p99_ms },
    ratio_p50: round(peerSeq.p50 / oursSeq.p50),
    ratio_rps: round(oursLoad.requests_per_s / peerLoad.requests_per_s),
    rss_mb_after: Math.round(rssMb),
    iterations: ITERATIONS,
    connections: CONNECTIONS,
    seconds: SECONDS,
  }
  console.log(JSON.stringify(result))
}

const round = (x: number) => Math.round(x * 100) / 100

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
