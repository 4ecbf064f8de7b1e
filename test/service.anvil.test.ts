/**
 * POST /v1/quote end to end: the service composed as `npm start` composes it (openDomainServices +
 * buildApp), on a real socket, on the embedded devnet and on a fork of anvil. Every quote's
 * calldata is then sent as a real transaction to anvil (an independent EVM) loaded with the same
 * genesis: the sender receives exactly `amountOut` and the receipt's gasUsed equals `gas`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilReceipt, anvilRpc, anvilTokenBalance, startAnvil, type AnvilInstance } from './support/anvil.ts'
import type { ServiceConfig } from '../src/config.ts'
import { loadConfig } from '../src/node/config.ts'
import { resolveAccess } from '../src/node/access.ts'
import { DEV_API_KEY } from '../src/server/auth/api-keys.ts'
import { buildApp } from '../src/server/app.ts'
import { openDomainServices, type DomainServices } from '../src/node/domain.ts'
import { devnetForkEnv, GENESIS_PATH, loadRegistry, lower, tokenAddress } from './support/devnet.ts'
import { withWorkersFromEnv } from './support/env.ts'

const registry = loadRegistry()
const ROUTER = lower(registry.extensions['swap-plan-router'])
const SENDER = lower(registry.devAccounts.accounts[1].address)
const E18 = 10n ** 18n

interface Running {
  services: DomainServices
  app: FastifyInstance
  url: string
}

async function startService(config: ServiceConfig): Promise<Running> {
  const services = await openDomainServices(config, { log: { warn: () => {} } })
  const app = await buildApp(config, { ...services, ...resolveAccess(config, { warn: () => {} }) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address !== 'object') throw new Error('no address')
  return { services, app, url: `http://127.0.0.1:${address.port}` }
}

async function stopService(r: Running | undefined) {
  await r?.app.close()
  await r?.services.close()
}

async function postQuote(url: string, body: unknown, key = DEV_API_KEY) {
  const res = await fetch(`${url}/v1/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

interface WireQuote {
  amountOut: string
  gas: number
  calldata: `0x${string}`
  router: string
  spender: string
  blockNumber: string
  minAmountOut: string
  routes: Array<{ amountIn: string; amountOut: string; hops: Array<{ protocol: string; pool: string; tokenIn: string; tokenOut: string; fee: number }> }>
}


async function revertReasonOf(anvilUrl: string, hash: string): Promise<string> {
  const trace = await anvilRpc<{ error?: string; revertReason?: string; output?: string }>(anvilUrl, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }])
  return `${trace.error ?? ''} ${trace.revertReason ?? ''} ${trace.output ?? ''}`
}

/** Sends the quote's calldata from SENDER as a transaction in block 1 (our next-block context) and reverts. */
async function executeOnAnvil(anvilUrl: string, tokenOut: string, quote: WireQuote): Promise<{ received: bigint; gasUsed: bigint; status: string }> {
  const snapshot = await anvilRpc<string>(anvilUrl, 'evm_snapshot')
  try {
    const before = await anvilTokenBalance(anvilUrl, tokenOut, SENDER)
    await anvilRpc(anvilUrl, 'evm_setNextBlockTimestamp', [Number(registry.genesisTimestamp) + 12])
    const hash = await anvilRpc<string>(anvilUrl, 'eth_sendTransaction', [{ from: SENDER, to: quote.router, data: quote.calldata, gas: '0x1e8480' }])
    const receipt = await anvilReceipt(anvilUrl, hash)
    expect(BigInt(receipt.blockNumber)).toBe(1n)
    if (receipt.status !== '0x1') {
      const block = await anvilRpc<{ timestamp: string }>(anvilUrl, 'eth_getBlockByNumber', [receipt.blockNumber, false])
      throw new Error(`reverted on anvil in a block of timestamp ${BigInt(block.timestamp)}: ${await revertReasonOf(anvilUrl, hash)}`)
    }
    const after = await anvilTokenBalance(anvilUrl, tokenOut, SENDER)
    return { received: after - before, gasUsed: BigInt(receipt.gasUsed), status: receipt.status }
  } finally {
    await anvilRpc(anvilUrl, 'evm_revert', [snapshot])
  }
}

const amountOf = (symbol: string, units: number): bigint => {
  const decimals = registry.tokens.find((t) => t.symbol === symbol)!.decimals
  return (BigInt(Math.round(units * 1e6)) * 10n ** BigInt(decimals)) / 1_000_000n
}

/** Cases found on the devnet: the shape each gives is asserted, so a fixture change that moves them shows. */
const CASES = [
  { name: 'direct pair (one pool)', tokenIn: 'WETH', tokenOut: 'USDC', amountIn: E18, legs: 1, hops: [1] },
  // 3,000 USDC: at 10,000 a second route beside the V4 WETH/UNI 0.05% pool pays for its gas
  { name: 'two hops (UNI has no USDC pool)', tokenIn: 'USDC', tokenOut: 'UNI', amountIn: amountOf('USDC', 3_000), legs: 1, hops: [2] },
  { name: 'three hops, one route', tokenIn: 'LINK', tokenOut: 'DAI', amountIn: amountOf('LINK', 666.67), legs: 1, hops: [3] },
  { name: 'a split over several routes', tokenIn: 'WETH', tokenOut: 'USDC', amountIn: 66n * E18, legs: 4, hops: undefined },
  // UNI -> WETH in the second V3 factory's pool, WETH -> USDT in Uniswap's: one route, two venues
  { name: 'a route across two venues', tokenIn: 'UNI', tokenOut: 'USDT', amountIn: amountOf('UNI', 1000), legs: 2, hops: [2, 2] },
] as const

/** the venue of every pool of the devnet, by lowercase address */
const VENUE_OF = new Map<string, string>([
  ...registry.v2.pairs.map((p) => [lower(p.address), 'uniswap-v2'] as const),
  ...registry.v3.pools.map((p) => [lower(p.address), 'uniswap-v3'] as const),
  ...registry.venues.flatMap((v) => [...(v.pairs ?? []), ...(v.pools ?? [])].map((p) => [lower(p.address), v.name] as const)),
])

describe('POST /v1/quote on the embedded devnet, checked on anvil', () => {
  let anvil: AnvilInstance
  let svc: Running
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    svc = await startService(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })))
  })
  afterAll(async () => {
    await stopService(svc)
    await anvil?.stop()
  })

  it.each(CASES.map((c) => [c.name, c] as const))('%s: amountOut and gas are what the calldata does on anvil', async (_name, c) => {
    const tokenIn = tokenAddress(registry, c.tokenIn)
    const tokenOut = tokenAddress(registry, c.tokenOut)
    const { status, body } = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: c.amountIn.toString(), sender: SENDER })
    expect(status, JSON.stringify(body)).toBe(200)
    const quote = body as unknown as WireQuote
    expect(quote.router).toBe(ROUTER)
    expect(quote.spender).toBe(ROUTER)
    expect(quote.calldata).toMatch(/^0x[0-9a-f]+$/)
    expect(Number.isSafeInteger(quote.gas)).toBe(true)
    expect(quote.blockNumber).toBe('0')
    expect(quote.routes).toHaveLength(c.legs)
    if (c.hops) expect(quote.routes.map((r) => r.hops.length)).toEqual(c.hops)
    const legsIn = quote.routes.reduce((sum, r) => sum + BigInt(r.amountIn), 0n)
    expect(legsIn).toBe(c.amountIn)
    // the default slippage of 50 bps
    expect(BigInt(quote.minAmountOut)).toBe((BigInt(quote.amountOut) * 9950n) / 10_000n)

    const onAnvil = await executeOnAnvil(anvil.url, tokenOut, quote)
    expect(onAnvil.status).toBe('0x1')
    expect(onAnvil.received).toBe(BigInt(quote.amountOut))
    expect(onAnvil.gasUsed).toBe(BigInt(quote.gas))
  })

  it('takes a route whose hops cross two venues when it is the best, and its calldata gives exactly amountOut on anvil', async () => {
    const c = CASES[4]
    const tokenOut = tokenAddress(registry, c.tokenOut)
    const { body } = await postQuote(svc.url, { tokenIn: tokenAddress(registry, c.tokenIn), tokenOut, amountIn: c.amountIn.toString(), sender: SENDER })
    const quote = body as unknown as WireQuote
    const venuesPerLeg = quote.routes.map((r) => new Set(r.hops.map((h) => VENUE_OF.get(lower(h.pool)))))
    expect(venuesPerLeg.some((v) => v.size === 2)).toBe(true)
    expect(venuesPerLeg.flatMap((v) => [...v])).toContain('devnet-fork-v3')
    const onAnvil = await executeOnAnvil(anvil.url, tokenOut, quote)
    expect(onAnvil.received).toBe(BigInt(quote.amountOut))
    expect(onAnvil.gasUsed).toBe(BigInt(quote.gas))
  })

  it('the split beats every single route the search could take', async () => {
    const c = CASES[3]
    const tokenIn = tokenAddress(registry, c.tokenIn)
    const tokenOut = tokenAddress(registry, c.tokenOut)
    const { body } = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: c.amountIn.toString(), sender: SENDER })
    const reader = svc.services.chain.latest()
    const { pools } = await svc.services.routing.loadPools(reader, tokenIn, tokenOut)
    const { findBestPlan } = await import('../src/routing/route-search.ts')
    const single = findBestPlan({ tokenIn, tokenOut, amountIn: c.amountIn, pools, gasPriceWei: 0n, maxSplits: 1 })
    expect(single).toBeDefined()
    expect(BigInt((body as unknown as WireQuote).amountOut)).toBeGreaterThan(single!.expectedAmountOut)
  })

  it('pays the named recipient, and quotes the same amount for a fresh sender', async () => {
    const tokenIn = tokenAddress(registry, 'WETH')
    const tokenOut = tokenAddress(registry, 'DAI')
    const recipient = '0x000000000000000000000000000000000000beef'
    const withSender = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: E18.toString(), sender: SENDER, recipient })
    const fresh = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: E18.toString() })
    expect(withSender.status).toBe(200)
    expect(fresh.status).toBe(200)
    expect(fresh.body.amountOut).toBe(withSender.body.amountOut)
    expect((fresh.body.calldata as string).includes(recipient.slice(2))).toBe(false)
    const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
    try {
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(registry.genesisTimestamp) + 12])
      const q = withSender.body as unknown as WireQuote
      const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: SENDER, to: q.router, data: q.calldata, gas: '0x1e8480' }])
      const receipt = await anvilReceipt(anvil.url, hash)
      expect(receipt.status).toBe('0x1')
      expect(await anvilTokenBalance(anvil.url, tokenOut, recipient)).toBe(BigInt(q.amountOut))
      expect(BigInt(receipt.gasUsed)).toBe(BigInt(q.gas))
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  })

  it('answers a repeated request on the same block from the answer cache, identically', async () => {
    const body = { tokenIn: tokenAddress(registry, 'DAI'), tokenOut: tokenAddress(registry, 'USDT'), amountIn: '123456789000000000000' }
    const hitsBefore = svc.services.quote.stats().cacheHits
    const first = await postQuote(svc.url, body)
    const second = await postQuote(svc.url, body)
    expect(first.status).toBe(200)
    expect(second.body).toEqual(first.body)
    expect(svc.services.quote.stats().cacheHits).toBe(hitsBefore + 1)
    // another amount is another question
    await postQuote(svc.url, { ...body, amountIn: '123456789000000000001' })
    expect(svc.services.quote.stats().cacheHits).toBe(hitsBefore + 1)
  })

  it('answers 422 QUOTE_ERROR with the reason: same token, not a token, too small to fill', async () => {
    const weth = tokenAddress(registry, 'WETH')
    const same = await postQuote(svc.url, { tokenIn: weth, tokenOut: weth, amountIn: '1000' })
    expect(same.status).toBe(422)
    expect(same.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'SAME_TOKEN' } })

    const eoa = await postQuote(svc.url, { tokenIn: weth, tokenOut: SENDER, amountIn: '1000' })
    expect(eoa.status).toBe(422)
    expect(eoa.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'NOT_A_TOKEN', field: 'tokenOut' } })

    const feed = registry.ethUsdFeed.address
    const notErc20 = await postQuote(svc.url, { tokenIn: feed, tokenOut: weth, amountIn: '1000' })
    expect(notErc20.status).toBe(422)
    expect(notErc20.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'NOT_A_TOKEN', field: 'tokenIn' } })

    // one wei of WETH buys no unit of USDC anywhere: every path exists, the output rounds to zero
    const dust = await postQuote(svc.url, { tokenIn: weth, tokenOut: tokenAddress(registry, 'USDC'), amountIn: '1' })
    expect(dust.status).toBe(422)
    expect(dust.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'AMOUNT_TOO_SMALL' } })
  })

  it('answers 401 before 400, and 400 with one detail per violation', async () => {
    const unauth = await postQuote(svc.url, { tokenIn: 'nope' }, 'wrong-key')
    expect(unauth.status).toBe(401)
    expect(unauth.body).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String) })
    const invalid = await postQuote(svc.url, { tokenIn: 'nope', amountIn: '01' })
    expect(invalid.status).toBe(400)
    expect(invalid.body.code).toBe('VALIDATION_ERROR')
    expect((invalid.body.details as Array<{ field: string }>).map((d) => d.field).sort()).toEqual(['amountIn', 'tokenIn', 'tokenOut'])
  })

  it('serves /readyz, /metrics with quote and state series, and the OpenAPI document', async () => {
    const ready = await fetch(`${svc.url}/readyz`)
    expect(ready.status).toBe(200)
    const metrics = await (await fetch(`${svc.url}/metrics`)).text()
    expect(metrics).toMatch(/http_requests_total\{method="POST",route="\/v1\/quote",status_code="200"\} \d+/)
    expect(metrics).toMatch(/quote_executions_total [1-9]\d*/)
    expect(metrics).toContain('quote_math_evm_disagreements_total 0')
    expect(metrics).toContain('state_source_info{mode="devnet"} 1')
    const openapi = (await (await fetch(`${svc.url}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(openapi.paths)).toContain('/quote')
  })
})

async function rpc(url: string, token: string, endpoint: 'backrun' | 'submit', body: unknown) {
  const res = await fetch(`${url}/rpc/${token}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
  return { status: res.status, body: (await res.json()) as { id: unknown; result?: Record<string, unknown> | null; error?: { code: number; message: string } } }
}

describe('eth_backrun over JSON-RPC on the embedded devnet', () => {
  let svc: Running
  const TOKEN = 'dev-partner-token-insecure'
  beforeAll(async () => {
    svc = await startService(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })))
  })
  afterAll(() => stopService(svc))

  it('answers a backrun for a swap that leaves arbitrage, null for one that does not', async () => {
    const weth = tokenAddress(registry, 'WETH')
    const usdc = tokenAddress(registry, 'USDC')
    const big = (await postQuote(svc.url, { tokenIn: weth, tokenOut: usdc, amountIn: (66n * E18).toString() })).body as unknown as WireQuote
    const r = await rpc(svc.url, TOKEN, 'backrun', { jsonrpc: '2.0', id: 7, method: 'eth_backrun', params: [{ to: big.router, calldata: big.calldata, tokenIn: weth, amountIn: (66n * E18).toString() }] })
    expect(r.status).toBe(200)
    expect(r.body.id).toBe(7)
    const result = r.body.result!
    expect(result).toMatchObject({ contract: lower(registry.backrun.executor), profitToken: expect.stringMatching(/^0x[0-9a-f]{40}$/) })
    expect(result.calldata).toMatch(/^0x[0-9a-f]+$/)
    expect(Number.isSafeInteger(result.gas)).toBe(true)
    expect(result.grossProfit).toMatch(/^[1-9]\d*$/)
    expect(result.netProfitEth).toMatch(/^\d+(\.\d{1,18})?$/)
    expect(result.netProfitUsd).toMatch(/^\d+(\.\d{1,6})?$/)

    const small = (await postQuote(svc.url, { tokenIn: weth, tokenOut: usdc, amountIn: E18.toString() })).body as unknown as WireQuote
    const none = await rpc(svc.url, TOKEN, 'backrun', { jsonrpc: '2.0', id: 'x', method: 'eth_backrun', params: [{ to: small.router, calldata: small.calldata, tokenIn: weth, amountIn: E18.toString(), value: '0' }] })
    expect(none.body).toEqual({ jsonrpc: '2.0', id: 'x', result: null })
  })

  it('gives -32000 naming a malformed field, -32601 on the wrong endpoint, 401 for an unknown token', async () => {
    const bad = await rpc(svc.url, TOKEN, 'backrun', { jsonrpc: '2.0', id: 1, method: 'eth_backrun', params: [{ to: ROUTER, calldata: '0x12', tokenIn: ROUTER, amountIn: '-5' }] })
    expect(bad.body.error).toMatchObject({ code: -32000, message: expect.stringContaining('amountIn') })
    const missing = await rpc(svc.url, TOKEN, 'backrun', { jsonrpc: '2.0', id: 2, method: 'eth_backrun', params: [{ calldata: '0x12', tokenIn: ROUTER, amountIn: '5' }] })
    expect(missing.body.error).toMatchObject({ code: -32000, message: expect.stringContaining('to') })
    const wrong = await rpc(svc.url, TOKEN, 'submit', { jsonrpc: '2.0', id: 3, method: 'eth_backrun', params: [{}] })
    expect(wrong.body.error?.code).toBe(-32601)
    const wrong2 = await rpc(svc.url, TOKEN, 'backrun', { jsonrpc: '2.0', id: 4, method: 'eth_sendBundle', params: [{ txs: [] }] })
    expect(wrong2.body.error?.code).toBe(-32601)
    const unknown = await rpc(svc.url, 'nobody-token-0123456789', 'backrun', { jsonrpc: '2.0', id: 5, method: 'eth_backrun', params: [{}] })
    expect(unknown.status).toBe(401)
    expect(unknown.body.error?.code).toBe(-32001)
  })
})

describe('POST /v1/quote with a pool-less token', () => {
  let svc: Running
  let dir: string
  const LONELY = '0x00000000000000000000000000000000000c0ffe'
  beforeAll(async () => {
    // a copy of the devnet with LINK's code at a new address: a working ERC-20 that no pool holds
    const genesis = JSON.parse(readFileSync(GENESIS_PATH, 'utf8')) as { alloc: Record<string, { code?: string; balance: string }> }
    const link = Object.entries(genesis.alloc).find(([a]) => lower(a) === tokenAddress(registry, 'LINK'))![1]
    genesis.alloc[LONELY.slice(2)] = { code: link.code, balance: '0x0' }
    dir = mkdtempSync(join(tmpdir(), 'lonely-'))
    writeFileSync(join(dir, 'genesis.json'), JSON.stringify(genesis))
    svc = await startService(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent', DEVNET_GENESIS: join(dir, 'genesis.json') })))
  })
  afterAll(async () => {
    await stopService(svc)
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers 422 QUOTE_ERROR NO_ROUTE', async () => {
    const r = await postQuote(svc.url, { tokenIn: LONELY, tokenOut: tokenAddress(registry, 'WETH'), amountIn: '1000000' })
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ code: 'QUOTE_ERROR', details: { reason: 'NO_ROUTE' } })
  })
})

describe('POST /v1/quote in fork mode (anvil as the upstream)', () => {
  let anvil: AnvilInstance
  let svc: Running
  const API_KEY = 'fork-test-key-0123456789'
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    const config = loadConfig(withWorkersFromEnv({
      LOG_LEVEL: 'silent',
      UPSTREAM_RPC_URL: anvil.url,
      FORK_BLOCK: '0',
      UPSTREAM_TIMEOUT_MS: '1000',
      UPSTREAM_RETRIES: '1',
      API_KEYS: API_KEY,
      ...devnetForkEnv(registry),
      PARTNER_TOKENS: 'fork-partner:fork-partner-token-0123456789',
      RELAYS: '[{"name":"unused","url":"http://127.0.0.1:9"}]',
    }))
    svc = await startService(config)
  })
  afterAll(async () => {
    await stopService(svc)
    await anvil?.stop()
  })

  it('quotes what the calldata does on the upstream, then answers 502 once the upstream is gone', async () => {
    const tokenIn = tokenAddress(registry, 'USDC')
    const tokenOut = tokenAddress(registry, 'UNI')
    const amountIn = amountOf('USDC', 10_000)
    const devKey = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: amountIn.toString() })
    expect(devKey.status).toBe(401)
    const ok = await postQuote(svc.url, { tokenIn, tokenOut, amountIn: amountIn.toString(), sender: SENDER }, API_KEY)
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    const quote = ok.body as unknown as WireQuote
    const onAnvil = await executeOnAnvil(anvil.url, tokenOut, quote)
    expect(onAnvil.received).toBe(BigInt(quote.amountOut))
    expect(onAnvil.gasUsed).toBe(BigInt(quote.gas))
    const metrics = await (await fetch(`${svc.url}/metrics`)).text()
    expect(metrics).toMatch(/upstream_rpc_calls_total\{method="eth_getStorageAt"\} [1-9]\d*/)
    expect(metrics).toMatch(/state_cache_hit_ratio 0\.\d+/)

    await anvil.stop()
    // a pair whose pools were never read needs the upstream
    const gone = await postQuote(svc.url, { tokenIn: tokenAddress(registry, 'WBTC'), tokenOut: tokenAddress(registry, 'LINK'), amountIn: '100000' }, API_KEY)
    expect(gone.status).toBe(502)
    expect(gone.body).toEqual({ code: 'UPSTREAM_ERROR', message: expect.stringMatching(/^upstream node failed/) })
    expect(JSON.stringify(gone.body)).not.toContain('127.0.0.1')
    const ready = await fetch(`${svc.url}/readyz`)
    expect(ready.status).toBe(503)
  })
})
