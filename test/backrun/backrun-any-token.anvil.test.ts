/**
 * Issue 15: backrun cycles through any token, on the devnet, checked against anvil.
 *
 * Two user swaps through our router (split over the USDC/WETH pools and the base-token routes, as
 * the quote plans them) leave profitable triangles through WBTC, which is not a base token:
 * - 400,000 USDC -> WETH: before, eth_backrun answered null (WBTC's pools were never loaded, since
 *   the swap moved no WBTC pool); now the WBTC triangle is found;
 * - 100 WETH -> USDC: before, a DAI triangle; now the WBTC triangle, which nets more.
 * Each backrun, sent on anvil right after the user's own transaction, pays the beneficiary exactly
 * the reported gross profit.
 *
 * The engines see Uniswap's two venues only (a copy of the registry without the venues the devnet
 * added for issue 15's venue part, through DEVNET_REGISTRY): the devnet these cases were found on.
 * On the grown devnet a two-pool cycle across venues (the 25-bps fork pair against a V3 pool) nets
 * more than either triangle, which the venue tests cover.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilFees, anvilRpc, anvilTokenBalance, mineTogether, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import type { BackrunFound } from '../../src/backrun/types.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import type { QuoteResult } from '../../src/quote/types.ts'
import { GENESIS_PATH, loadRegistry, lower, REGISTRY_PATH, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const BENEFICIARY = lower(registry.backrun.beneficiary)
const BLOCK_1_TIMESTAMP = Number(registry.genesisTimestamp) + 12
const USER = lower(registry.devAccounts.accounts[3].address)
const BACKRUNNER = lower(registry.devAccounts.accounts[9].address)
const [WETH, USDC, WBTC] = ['WETH', 'USDC', 'WBTC'].map((s) => tokenAddress(registry, s))
const BASE_TOKENS = registry.baseTokens.map((t) => lower(t.address))

interface Case {
  name: string
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  quote?: QuoteResult
  found?: BackrunFound | null
  /** the same request to an engine whose triangles pass only through the base tokens (before issue 15) */
  baseOnly?: BackrunFound | null
}

const cases: Case[] = [
  { name: '400,000 USDC -> WETH', tokenIn: USDC, tokenOut: WETH, amountIn: 400_000n * 10n ** 6n },
  { name: '100 WETH -> USDC', tokenIn: WETH, tokenOut: USDC, amountIn: 100n * 10n ** 18n },
]

let services: DomainServices
let baseOnly: DomainServices

let registryDir: string | undefined

beforeAll(async () => {
  const silent = { log: { warn: () => {} } }
  // the registry with Uniswap's venues only
  const uniswapOnly = JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as { venues: Array<{ name: string }> }
  uniswapOnly.venues = uniswapOnly.venues.filter((v) => v.name === 'uniswap-v2' || v.name === 'uniswap-v3')
  registryDir = mkdtempSync(join(tmpdir(), 'uniswap-only-registry-'))
  const DEVNET_REGISTRY = join(registryDir, 'registry.json')
  writeFileSync(DEVNET_REGISTRY, JSON.stringify(uniswapOnly))
  services = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', DEVNET_REGISTRY }), silent)
  // cycle tokens = the base tokens: no third-token discovery beyond them, as before issue 15
  baseOnly = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', DEVNET_REGISTRY, BACKRUN_CYCLE_TOKENS: BASE_TOKENS.join(',') }), silent)
  for (const c of cases) {
    c.quote = await services.quote.quote({ tokenIn: c.tokenIn, tokenOut: c.tokenOut, amountIn: c.amountIn, sender: USER })
    const request = { to: c.quote.router, calldata: c.quote.calldata, value: 0n, tokenIn: c.tokenIn, amountIn: c.amountIn }
    c.found = await services.backrun.backrun(request)
    c.baseOnly = await baseOnly.backrun.backrun(request)
  }
}, 120_000)
afterAll(async () => {
  await services?.close()
  await baseOnly?.close()
  if (registryDir !== undefined) rmSync(registryDir, { recursive: true, force: true })
})

const tokensOf = (r: BackrunFound) => new Set(r.hops.flatMap((h) => [h.tokenIn, h.tokenOut]))

describe('eth_backrun through a token that is not a base token (issue 15)', () => {
  it('400,000 USDC -> WETH: a WBTC triangle where the base tokens alone give null', () => {
    const c = cases[0]
    expect(c.baseOnly).toBeNull()
    const r = c.found
    if (!r) throw new Error('no backrun')
    expect(r.hops).toHaveLength(3)
    expect(tokensOf(r).has(WBTC)).toBe(true)
    expect(r.grossProfit).toBeGreaterThan(0n)
    expect(r.netProfitWei).toBeGreaterThan(0n)
    expect(r.netProfitUsd).toBeGreaterThan(0n)
    // through a pool the user's swap moved
    const moved = new Set(c.quote!.routes.flatMap((route) => route.hops.map((h) => h.pool.toLowerCase())))
    expect(r.hops.some((h) => moved.has(h.pool))).toBe(true)
  })

  it('100 WETH -> USDC: the WBTC triangle, which nets more than the best cycle through the base tokens', () => {
    const c = cases[1]
    const r = c.found
    if (!r || !c.baseOnly) throw new Error('no backrun')
    expect(tokensOf(r).has(WBTC)).toBe(true)
    expect(tokensOf(c.baseOnly).has(WBTC)).toBe(false)
    expect(r.netProfitWei).toBeGreaterThan(c.baseOnly.netProfitWei)
  })

  it('values a profit in any start token: netProfitUsd is netProfitWei at the feed, and the profit token is one of the cycle', () => {
    for (const c of cases) {
      const r = c.found!
      expect(tokensOf(r).has(r.profitToken)).toBe(true)
      expect(r.hops[0].tokenIn).toBe(r.profitToken)
      expect(r.hops[r.hops.length - 1].tokenOut).toBe(r.profitToken)
    }
  })
})

describe('the WBTC backruns executed on anvil', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    // blocks are mined by the test: the user's swap and its backrun share one block, as a bundle does
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
  })
  afterAll(() => anvil?.stop())



  it.each(cases.map((c) => [c.name, c] as const))('%s: sent right after the user\'s own swap, the backrun pays exactly grossProfit', async (_name, c) => {
    const r = c.found
    if (!r || !c.quote) throw new Error('no backrun')
    const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
    try {
      const before = await anvilTokenBalance(anvil.url, r.profitToken, BENEFICIARY)
      // the user's swap and the backrun right behind it, together in block 1 (the block the engine
      // simulated). In separate blocks a V3 pool the backrun crosses would write a new oracle
      // observation (a later timestamp), which the engine, simulating the same block, rightly leaves out.
      // The user pays the higher tip, so anvil orders the user's swap first.
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [BLOCK_1_TIMESTAMP])
      const userHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: USER, to: c.quote.router, data: c.quote.calldata, gas: '0x2dc6c0', ...anvilFees(2n) }])
      const backrunHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: BACKRUNNER, to: r.contract, data: r.calldata, gas: '0x1e8480', ...anvilFees(1n) }])
      const [u, b] = await mineTogether(anvil.url, [userHash, backrunHash])
      expect(`user ${u.status} backrun ${b.status}`).toBe('user 0x1 backrun 0x1')
      expect([u.blockNumber, u.transactionIndex, b.blockNumber, b.transactionIndex].map(Number)).toEqual([1, 0, 1, 1])
      expect((await anvilTokenBalance(anvil.url, r.profitToken, BENEFICIARY)) - before).toBe(r.grossProfit)
      // the backrun's gas on anvil, less the 21,000 of its own transaction, is the reported gas
      expect(BigInt(b.gasUsed) - 21_000n).toBe(r.gas)
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  })
})
