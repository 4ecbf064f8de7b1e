/**
 * Quotes over Uniswap V4 pools beside the V2 and V3 venues: the service on the devnet, whose
 * registry's venues list the V4 venue (every V4 pool key of the devnet: ERC-20, native ETH and
 * hooked dynamic-fee pools), against the same service without it (a registry copy through
 * DEVNET_REGISTRY), and against one that routes over the native ETH and hooked pools alone (another
 * copy), so that each new pool kind is crossed. Every quote's calldata is sent as a real
 * transaction to anvil loaded with the same genesis: the sender receives exactly `amountOut` and
 * the receipt's gasUsed equals `gas`. Where a V4 pool prices better, the best route takes it,
 * across venues in one route, and the same request without the V4 venue gives less. A pool whose
 * hook may change the swap (the directional-fee hook's beforeSwap) is ranked with an estimate: the
 * answer is the EVM's, and never below the best route without such pools.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeFunctionResult, encodeFunctionData, parseAbi, zeroAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address, Hex } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import type { QuoteResult } from '../../src/quote/types.ts'
import { anvilReceipt, anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { GENESIS_PATH, loadRegistry, lower, REGISTRY_PATH, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const USER = lower(registry.devAccounts.accounts[4]!.address)
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const units = (symbol: string, whole: bigint) => whole * 10n ** BigInt(registry.tokens.find((t) => t.symbol === symbol)!.decimals)


const CASES = [
  // found on the devnet: the three middle cases send 6-36% of their input through V4 routes; the two
  // WBTC cases none (the direct pools win after gas), which the search must not spoil
  { name: 'WBTC -> USDC', tokenIn: 'WBTC', tokenOut: 'USDC', amountIn: units('WBTC', 1n) / 10n },
  { name: 'USDT -> WETH', tokenIn: 'USDT', tokenOut: 'WETH', amountIn: units('USDT', 250_000n) },
  { name: 'WETH -> USDC, large', tokenIn: 'WETH', tokenOut: 'USDC', amountIn: units('WETH', 60n) },
  { name: 'USDC -> USDT', tokenIn: 'USDC', tokenOut: 'USDT', amountIn: units('USDC', 700_000n) },
  { name: 'WBTC -> DAI', tokenIn: 'WBTC', tokenOut: 'DAI', amountIn: units('WBTC', 2n) },
] as const

const poolIdOf = (suffix: string) => lower(registry.v4.pools.find((p) => p.name.endsWith(suffix))!.poolId)
const COUNTER_HOOK = lower(registry.v4.hooks.find((h) => h.name === 'DevnetSwapCounterHook')!.address)
const COUNTER_ABI = parseAbi(['function swapCount(bytes32) view returns (uint256)'])

/**
 * Beside every venue: WETH -> UNI takes the afterSwap counter hook's dynamic-fee pool (0.05%, exact);
 * WETH -> LINK the directional-fee hook's pool zeroForOne (0.05%, the fee slot0 shows: the estimate
 * is exact); LINK -> WETH would pay that hook 1%, which the estimate does not see: the exact routes win
 */
const HOOKED_CASES = [
  { name: 'WETH -> UNI, hooked counter pool', tokenIn: 'WETH', tokenOut: 'UNI', amountIn: units('WETH', 5n), crosses: poolIdOf(' swap-counter'), expectCrossing: true },
  { name: 'WETH -> LINK, hooked directional pool zeroForOne', tokenIn: 'WETH', tokenOut: 'LINK', amountIn: units('WETH', 3n), crosses: poolIdOf(' directional-fee'), expectCrossing: true },
  { name: 'LINK -> WETH, hooked directional pool oneForZero', tokenIn: 'LINK', tokenOut: 'WETH', amountIn: units('LINK', 2_000n), crosses: poolIdOf(' directional-fee'), expectCrossing: false },
] as const

/** over the native ETH and hooked V4 pools alone: WETH in and out of the native pool, and through both kinds in one route */
const NEW_KIND_CASES = [
  { name: 'WETH -> USDC through native ETH', tokenIn: 'WETH', tokenOut: 'USDC', amountIn: units('WETH', 2n), pools: [poolIdOf('ETH/USDC 0.3% ts60')] },
  { name: 'USDC -> WETH through native ETH', tokenIn: 'USDC', tokenOut: 'WETH', amountIn: units('USDC', 6_000n), pools: [poolIdOf('ETH/USDC 0.3% ts60')] },
  { name: 'UNI -> USDC: counter hook pool, then native ETH', tokenIn: 'UNI', tokenOut: 'USDC', amountIn: units('UNI', 3_000n), pools: [poolIdOf(' swap-counter'), poolIdOf('ETH/USDC 0.3% ts60')] },
  { name: 'USDC -> LINK: native ETH, then the directional hook zeroForOne', tokenIn: 'USDC', tokenOut: 'LINK', amountIn: units('USDC', 4_000n), pools: [poolIdOf('ETH/USDC 0.3% ts60'), poolIdOf(' directional-fee')] },
  { name: 'LINK -> WETH: the directional hook oneForZero, executed', tokenIn: 'LINK', tokenOut: 'WETH', amountIn: units('LINK', 500n), pools: [poolIdOf(' directional-fee')] },
] as const

describe('quotes over Uniswap V4 and the V2/V3 venues, executed on anvil', () => {
  let anvil: AnvilInstance
  let withV4: DomainServices
  let withoutV4: DomainServices
  let newKinds: DomainServices
  let dir: string
  const quotes = new Map<string, { withV4: QuoteResult; withoutV4: QuoteResult }>()
  const newKindQuotes = new Map<string, QuoteResult>()
  const warnings: string[] = []

  beforeAll(async () => {
    // the registry's V4 venue lists every V4 pool: ERC-20, native ETH and hooked ones
    const v4Venue = registry.venues.find((v) => v.kind === 'v4') as { poolKeys: Array<{ currency0: string; hooks: string }> } | undefined
    expect(v4Venue?.poolKeys.length).toBe(registry.v4.pools.length)
    expect(v4Venue?.poolKeys.filter((k) => k.currency0 === zeroAddress || k.hooks !== zeroAddress)).toHaveLength(3)
    dir = mkdtempSync(join(tmpdir(), 'v4-registries-'))
    const registryCopy = (name: string, edit: (venues: Array<{ kind: string; poolKeys?: Array<{ currency0: string; hooks: string }> }>) => unknown[]) => {
      const copy = JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as { venues: Array<{ kind: string; poolKeys?: Array<{ currency0: string; hooks: string }> }> }
      copy.venues = edit(copy.venues) as typeof copy.venues
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(copy))
      return path
    }
    const withoutV4Registry = registryCopy('no-v4.json', (venues) => venues.filter((v) => v.kind !== 'v4'))
    // V4 alone, with only its native ETH and hooked pools: every route crosses one of them
    const newKindsRegistry = registryCopy('new-v4-kinds.json', (venues) =>
      venues.filter((v) => v.kind === 'v4').map((v) => ({ ...v, poolKeys: v.poolKeys!.filter((k) => k.currency0 === zeroAddress || k.hooks !== zeroAddress) })),
    )
    const silent = { log: { warn: () => {} } }
    // a math/EVM disagreement on a plan the math claims exact would be logged: none may be
    const warn = (o: object, msg: string) => warnings.push(`${msg} ${JSON.stringify(o)}`)
    withV4 = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' }), { log: { warn } })
    withoutV4 = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', DEVNET_REGISTRY: withoutV4Registry }), silent)
    newKinds = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0', DEVNET_REGISTRY: newKindsRegistry }), { log: { warn } })
    anvil = await startAnvil({ genesisPath: GENESIS_PATH })
    for (const c of [...CASES, ...HOOKED_CASES]) {
      const request = { tokenIn: tokenAddress(registry, c.tokenIn), tokenOut: tokenAddress(registry, c.tokenOut), amountIn: c.amountIn, sender: USER }
      quotes.set(c.name, { withV4: await withV4.quote.quote(request), withoutV4: await withoutV4.quote.quote(request) })
    }
    for (const c of NEW_KIND_CASES) {
      const request = { tokenIn: tokenAddress(registry, c.tokenIn), tokenOut: tokenAddress(registry, c.tokenOut), amountIn: c.amountIn, sender: USER }
      newKindQuotes.set(c.name, await newKinds.quote.quote(request))
    }
  }, 300_000)
  afterAll(async () => {
    await withV4?.close()
    await withoutV4?.close()
    await newKinds?.close()
    await anvil?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  async function balance(token: Address, holder: Address): Promise<bigint> {
    const out = await anvilRpc<Hex>(anvil.url, 'eth_call', [{ to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) }, 'latest'])
    return decodeFunctionResult({ abi: ERC20, functionName: 'balanceOf', data: out })
  }

  /** the quote's calldata from USER, alone in block 1 (the quote's next-block context), then reverted; `after` reads the state it left */
  async function execute(tokenOut: Address, quote: QuoteResult, after?: () => Promise<void>): Promise<{ received: bigint; gasUsed: bigint }> {
    const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
    try {
      const before = await balance(tokenOut, USER)
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(registry.genesisTimestamp) + 12])
      const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: USER, to: quote.router, data: quote.calldata, gas: '0x2dc6c0' }])
      const receipt = await anvilReceipt(anvil.url, hash)
      expect(receipt.status, 'reverted on anvil').toBe('0x1')
      expect(BigInt(receipt.blockNumber)).toBe(1n)
      await after?.()
      return { received: (await balance(tokenOut, USER)) - before, gasUsed: BigInt(receipt.gasUsed) }
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s: the calldata gives exactly amountOut and gas on anvil', async (name, c) => {
    const { withV4: quote } = quotes.get(name)!
    const { received, gasUsed } = await execute(tokenAddress(registry, c.tokenOut), quote)
    expect([received, gasUsed]).toEqual([quote.amountOut, quote.gas])
    // never worse than without V4: the search sees every pool it saw before
    expect(quote.amountOut).toBeGreaterThanOrEqual(quotes.get(name)!.withoutV4.amountOut)
  })

  it('takes V4 pools where they price better, in routes that cross V4 and another venue, for more than without them', () => {
    const usesV4 = CASES.filter((c) => quotes.get(c.name)!.withV4.routes.some((r) => r.hops.some((h) => h.protocol === 'uniswap-v4')))
    for (const c of CASES) {
      const q = quotes.get(c.name)!
      const viaV4 = q.withV4.routes.filter((r) => r.hops.some((h) => h.protocol === 'uniswap-v4')).reduce((n, r) => n + r.amountIn, 0n)
      const gainPpm = ((q.withV4.amountOut - q.withoutV4.amountOut) * 1_000_000n) / q.withoutV4.amountOut
      console.log(`${c.name}: amountOut ${q.withV4.amountOut} with V4, ${q.withoutV4.amountOut} without (+${gainPpm} ppm); ${(viaV4 * 100n) / c.amountIn}% of the input through V4 routes`)
    }
    expect(usesV4.length).toBeGreaterThanOrEqual(3)
    for (const c of usesV4) expect(quotes.get(c.name)!.withV4.amountOut, c.name).toBeGreaterThan(quotes.get(c.name)!.withoutV4.amountOut)
    // routes that run through a V4 pool and a V2 or V3 pool in one path, each hop's pool one the venue lists
    const crossing = usesV4.flatMap((c) => quotes.get(c.name)!.withV4.routes.filter((r) => r.hops.some((h) => h.protocol === 'uniswap-v4') && r.hops.some((h) => h.protocol !== 'uniswap-v4')))
    expect(crossing.length, JSON.stringify(usesV4.map((c) => c.name))).toBeGreaterThan(0)
    const poolIds = new Set(registry.v4.pools.map((p) => lower(p.poolId)))
    for (const r of crossing) for (const h of r.hops) if (h.protocol === 'uniswap-v4') expect(poolIds.has(h.pool)).toBe(true)
  })
  const show = (v: unknown) => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))
  const COUNTER_POOL = poolIdOf(' swap-counter')
  const DIRECTIONAL_POOL = poolIdOf(' directional-fee')
  const crosses = (q: QuoteResult, pool: string) => q.routes.some((r) => r.hops.some((h) => h.pool === pool))
  /** what the search's math expected (the routes' outputs): for a plan of exactly modelled pools, the EVM's amountOut */
  const expected = (q: QuoteResult) => q.routes.reduce((n, r) => n + r.amountOut, 0n)

  it.each(HOOKED_CASES.map((c) => [c.name, c] as const))('%s (hooked V4 pools beside every venue): exact on anvil, never below the routes without V4', async (name, c) => {
    const { withV4: quote, withoutV4 } = quotes.get(name)!
    const { received, gasUsed } = await execute(tokenAddress(registry, c.tokenOut), quote)
    expect([received, gasUsed]).toEqual([quote.amountOut, quote.gas])
    expect(quote.amountOut).toBeGreaterThanOrEqual(withoutV4.amountOut)
    expect(crosses(quote, c.crosses), show(quote.routes)).toBe(c.expectCrossing)
    // through the modelled pools (or none whose hook alters the swap), the math is the EVM's to the unit
    if (!crosses(quote, DIRECTIONAL_POOL) || c.tokenIn === 'WETH') expect(expected(quote)).toBe(quote.amountOut)
  })

  it.each(NEW_KIND_CASES.map((c) => [c.name, c] as const))('%s (V4 native ETH and hooked pools alone): the route crosses them and gives exactly amountOut and gas on anvil', async (name, c) => {
    const quote = newKindQuotes.get(name)!
    for (const pool of c.pools) expect(crosses(quote, pool), `${name} crosses ${pool}: ${show(quote.routes)}`).toBe(true)
    let countedSwaps = 0n
    const { received, gasUsed } = await execute(tokenAddress(registry, c.tokenOut), quote, async () => {
      // the counter hook ran in the PoolManager's swap: its count of the pool's swaps moved
      countedSwaps = BigInt(await anvilRpc<Hex>(anvil.url, 'eth_call', [{ to: COUNTER_HOOK, data: encodeFunctionData({ abi: COUNTER_ABI, functionName: 'swapCount', args: [COUNTER_POOL as Hex] }) }, 'latest']))
    })
    expect([received, gasUsed]).toEqual([quote.amountOut, quote.gas])
    expect(countedSwaps).toBe(c.pools.includes(COUNTER_POOL) ? BigInt(quote.routes.filter((r) => r.hops.some((h) => h.pool === COUNTER_POOL)).length) : 0n)
    if (c.pools.includes(DIRECTIONAL_POOL) && c.tokenIn === 'LINK') {
      // oneForZero the hook charges 1%, slot0 says 0.05%: the estimate ranked the route, the EVM's figure is answered
      expect(quote.amountOut).toBeLessThan(expected(quote))
    } else expect(quote.amountOut).toBe(expected(quote))
  })

  it('counts no math/EVM disagreement: the only difference was on a pool whose hook alters the swap', () => {
    expect(warnings).toEqual([])
    expect(withV4.quote.stats?.().mathDisagreements).toBe(0)
    expect(newKinds.quote.stats?.().mathDisagreements).toBe(0)
  })
})
