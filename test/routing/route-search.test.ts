/**
 * The route search on the devnet's real pools and on synthetic graphs: direct, two-hop and
 * three-hop routes, splits that beat every single route, and an exhaustive comparison with brute
 * force (independent path enumeration and quoting in helpers.ts): the plan is never below the best
 * single pool nor the best single path, gross and net of modelled gas.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { gasCostInToken, type PoolSnapshot, type Rational } from '../../src/pools/index.ts'
import { buildPoolGraph, enumeratePaths } from '../../src/pools/paths.ts'
import { pathMaxRate, quoteHop, quotePath, type HopQuoter } from '../../src/pools/pool-quote.ts'
import { DEFAULT_GAS_MODEL, findBestPlan, legGas, planGas, RouteSearchError, RoutingEngine, splitNetBound, type RoutedPlan } from '../../src/routing/index.ts'
import { DEX, E18, lower, referencePathQuote, referencePaths, referenceQuote, registry, sim, source, syntheticToken, tok, v2Pool, v3Pool, type ReferencePath } from './helpers.ts'

const engine = new RoutingEngine(sim, { dex: DEX })
const poolsFor = async (a: Address, b: Address): Promise<PoolSnapshot[]> => (await engine.loadPools(source.latest(), a, b)).pools
const GWEI = 10n ** 9n

/** the plan is well formed and every expected amount is what independent math computes */
function checkPlan(plan: RoutedPlan, pools: readonly PoolSnapshot[], maxSplits = 4): void {
  expect(plan.legs.length).toBeGreaterThan(0)
  expect(plan.legs.length).toBeLessThanOrEqual(maxSplits)
  expect(plan.legs.reduce((s, l) => s + l.amountIn, 0n)).toBe(plan.amountIn)
  expect(plan.legs.reduce((s, l) => s + l.expectedAmountOut, 0n)).toBe(plan.expectedAmountOut)
  const used = new Set<string>()
  for (const leg of plan.legs) {
    expect(leg.amountIn).toBeGreaterThan(0n)
    expect(leg.hops.length).toBeGreaterThan(0)
    expect(leg.hops.length).toBeLessThanOrEqual(3)
    let at = plan.tokenIn
    const path: ReferencePath = { pools: [], tokens: [plan.tokenIn] }
    for (const hop of leg.hops) {
      const pool = pools.find((p) => p.address === hop.pool)
      if (pool === undefined) throw new Error(`plan uses unknown pool ${hop.pool}`)
      expect(hop.tokenIn).toBe(at)
      expect(hop.zeroForOne).toBe(hop.tokenIn === pool.token0)
      expect([pool.token0, pool.token1]).toContain(hop.tokenOut)
      expect(hop.protocol).toBe(pool.protocol)
      expect(hop.fee).toBe(pool.fee)
      // legs never share a pool
      expect(used.has(hop.pool)).toBe(false)
      used.add(hop.pool)
      path.pools.push(pool)
      path.tokens.push(hop.tokenOut)
      at = hop.tokenOut
    }
    expect(at).toBe(plan.tokenOut)
    // no token visited twice
    expect(new Set(path.tokens).size).toBe(path.tokens.length)
    expect(referencePathQuote(path, leg.amountIn)?.amountOut).toBe(leg.expectedAmountOut)
  }
  expect(plan.netAmountOut).toBe(plan.expectedAmountOut - plan.gasCostInTokenOut)
  if (plan.bestSinglePathNetAmountOut !== undefined) expect(plan.netAmountOut).toBeGreaterThanOrEqual(plan.bestSinglePathNetAmountOut)
}

/** modelled gas of one path with the whole amount, written out from the model's documented formula */
function referencePathGas(path: ReferencePath, ticksCrossed: number): bigint {
  const m = DEFAULT_GAS_MODEL
  // a V4 hop's hook calls (beforeSwap is bit 7 of the hook's address, afterSwap bit 6) and native ETH wrapping
  const v4Extra = (p: PoolSnapshot) =>
    p.protocol !== 'uniswap-v4' ? 0n : m.perV4HookCall * (((BigInt(p.key.hooks) >> 7n) & 1n) + ((BigInt(p.key.hooks) >> 6n) & 1n)) + (BigInt(p.key.currency0) === 0n ? m.perV4NativeHop : 0n)
  return m.base + m.perLeg + path.pools.reduce((s, p) => s + m.perHop[p.protocol] + v4Extra(p), 0n) + m.perV3TickCrossed * BigInt(ticksCrossed)
}

interface BruteForce {
  bestSinglePool: bigint | undefined
  bestPathGross: bigint | undefined
  bestPathNet: bigint | undefined
  paths: number
}

function bruteForce(pools: readonly PoolSnapshot[], tokenIn: Address, tokenOut: Address, amountIn: bigint, gasPriceWei: bigint, rate: Rational | undefined): BruteForce {
  const paths = referencePaths(pools, tokenIn, tokenOut, 3)
  const r: BruteForce = { bestSinglePool: undefined, bestPathGross: undefined, bestPathNet: undefined, paths: paths.length }
  const max = (a: bigint | undefined, b: bigint) => (a === undefined || b > a ? b : a)
  for (const path of paths) {
    const q = referencePathQuote(path, amountIn)
    if (q === undefined) continue
    if (path.pools.length === 1) r.bestSinglePool = max(r.bestSinglePool, q.amountOut)
    r.bestPathGross = max(r.bestPathGross, q.amountOut)
    const gasCost = rate === undefined ? 0n : gasCostInToken(referencePathGas(path, q.ticksCrossed), gasPriceWei, rate)
    r.bestPathNet = max(r.bestPathNet, q.amountOut - gasCost)
  }
  return r
}

describe('findBestPlan on the devnet', () => {
  it('takes the best direct pool for a small WETH -> USDC swap', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const plan = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: E18, pools, gasPriceWei: 10n * GWEI, weth: DEX.weth })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs).toHaveLength(1)
    expect(plan.legs[0].hops).toHaveLength(1)
    const direct = pools.filter((p) => [p.token0, p.token1].includes(tok('WETH')) && [p.token0, p.token1].includes(tok('USDC')))
    // Uniswap V2 and the 25-bps fork pair, Uniswap's 0.05% and 0.3% pools, the second factory's 0.3%, and V4's 0.3% (WETH and native ETH)
    expect(direct).toHaveLength(7)
    const bestDirect = direct.map((p) => referenceQuote(p, tok('WETH'), E18)?.amountOut ?? 0n).reduce((a, b) => (a > b ? a : b))
    expect(plan.expectedAmountOut).toBe(bestDirect)
    expect(plan.tokenOutPerEth).toBeDefined()
  })

  it('routes UNI -> LINK, which share no pool, through WETH in two hops', async () => {
    const pools = await poolsFor(tok('UNI'), tok('LINK'))
    const related = (a: string, b: string) => (p: { token0: string; token1: string }) => [lower(p.token0), lower(p.token1)].sort().join() === [tok(a), tok(b)].sort().join()
    expect(registry.v2.pairs.some(related('UNI', 'LINK')) || registry.v3.pools.some(related('UNI', 'LINK'))).toBe(false)
    for (const amountIn of [E18, 1000n * E18]) {
      const plan = findBestPlan({ tokenIn: tok('UNI'), tokenOut: tok('LINK'), amountIn, pools, gasPriceWei: 0n })
      if (!plan) throw new Error('no plan')
      checkPlan(plan, pools)
      for (const leg of plan.legs) expect(leg.hops.map((h) => h.tokenOut)).toEqual([tok('WETH'), tok('LINK')])
      const best = bruteForce(pools, tok('UNI'), tok('LINK'), amountIn, 0n, undefined).bestPathGross
      // one path when small; a large amount may split over disjoint UNI/WETH and WETH/LINK pools
      if (plan.legs.length === 1) expect(plan.expectedAmountOut).toBe(best)
      else expect(plan.expectedAmountOut).toBeGreaterThan(best ?? 0n)
    }
  })

  it('splits a large WETH -> USDC swap over several pools, beating every single route gross and net', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const amountIn = 300n * E18
    const plan = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: 10n * GWEI, weth: DEX.weth })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs.length).toBeGreaterThanOrEqual(2)
    const brute = bruteForce(pools, tok('WETH'), tok('USDC'), amountIn, 10n * GWEI, plan.tokenOutPerEth)
    expect(brute.paths).toBeGreaterThan(5)
    expect(plan.expectedAmountOut).toBeGreaterThan(brute.bestPathGross ?? 0n)
    expect(plan.netAmountOut).toBeGreaterThan(brute.bestPathNet ?? 0n)
    expect(plan.bestSinglePathNetAmountOut).toBe(brute.bestPathNet)
    // the gain is real money: more than 0.5% over the best single route
    expect((plan.netAmountOut - (brute.bestPathNet ?? 0n)) * 200n).toBeGreaterThan(brute.bestPathNet ?? 0n)
  })

  it('values gas in tokenOut: a gas price too high to pay for extra legs and hops gives fewer of them', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const amountIn = 300n * E18
    const cheap = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: 0n, weth: DEX.weth })
    const dear = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: 200_000n * GWEI, weth: DEX.weth })
    if (!cheap || !dear) throw new Error('no plan')
    checkPlan(cheap, pools)
    checkPlan(dear, pools)
    const hops = (p: RoutedPlan) => p.legs.reduce((s, l) => s + l.hops.length, 0)
    expect(hops(dear)).toBeLessThan(hops(cheap))
    expect(cheap.gasCostInTokenOut).toBe(0n)
    expect(cheap.expectedAmountOut).toBeGreaterThanOrEqual(dear.expectedAmountOut)
    expect(dear.netAmountOut).toBeGreaterThanOrEqual(cheap.expectedAmountOut - gasCostInToken(cheap.estimatedGas, 200_000n * GWEI, dear.tokenOutPerEth ?? { num: 0n, den: 1n }))
  })

  it('derives the price of gas in tokenOut from the pools: 1 for WETH, the feed price for USDC', async () => {
    const toWeth = findBestPlan({ tokenIn: tok('USDC'), tokenOut: tok('WETH'), amountIn: 10n ** 9n, pools: await poolsFor(tok('USDC'), tok('WETH')), gasPriceWei: GWEI, weth: DEX.weth })
    expect(toWeth?.tokenOutPerEth).toEqual({ num: 1n, den: 1n })
    const toUsdc = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: E18, pools: await poolsFor(tok('WETH'), tok('USDC')), gasPriceWei: GWEI, weth: DEX.weth })
    const rate = toUsdc?.tokenOutPerEth
    if (!rate) throw new Error('no rate')
    // ETH/USD 3000 on the devnet: 3000e6 USDC base units per 1e18 wei, within the pools' fee and skew
    const usdcPerEth = (rate.num * E18) / rate.den
    expect(usdcPerEth).toBeGreaterThan(2_950n * 10n ** 6n)
    expect(usdcPerEth).toBeLessThan(3_050n * 10n ** 6n)
    // and the plan's gas cost is the model's gas at that rate
    expect(toUsdc?.gasCostInTokenOut).toBe(gasCostInToken(toUsdc?.estimatedGas ?? 0n, GWEI, rate))
  })

  it('is never below the best single pool or the best single path, gross and net, for several pairs and amounts (exhaustive)', async () => {
    const cases: Array<[string, string, bigint[]]> = [
      ['WETH', 'USDC', [10n ** 15n, E18, 30n * E18, 200n * E18]],
      ['USDC', 'WETH', [10n ** 6n, 3000n * 10n ** 6n, 10n ** 11n, 6n * 10n ** 11n]],
      ['UNI', 'LINK', [E18, 500n * E18, 20_000n * E18]],
      ['LINK', 'UNI', [E18, 5_000n * E18]],
      ['WBTC', 'DAI', [10n ** 5n, 10n ** 8n, 5n * 10n ** 8n]],
      ['DAI', 'WBTC', [100n * E18, 100_000n * E18]],
      ['USDC', 'USDT', [10n ** 6n, 10n ** 11n, 10n ** 12n]],
      ['WETH', 'UNI', [E18, 50n * E18]],
      ['USDT', 'DAI', [10n ** 9n, 10n ** 11n]],
    ]
    let checked = 0
    let splits = 0
    for (const [a, b, amounts] of cases) {
      const pools = await poolsFor(tok(a), tok(b))
      for (const amountIn of amounts) {
        for (const gasPriceWei of [0n, 20n * GWEI]) {
          const plan = findBestPlan({ tokenIn: tok(a), tokenOut: tok(b), amountIn, pools, gasPriceWei, weth: DEX.weth })
          const brute = bruteForce(pools, tok(a), tok(b), amountIn, gasPriceWei, plan?.tokenOutPerEth)
          const where = `${a}->${b} ${amountIn} at ${gasPriceWei}`
          if (plan === undefined) {
            expect(brute.bestPathGross, where).toBeUndefined()
            continue
          }
          checkPlan(plan, pools)
          if (brute.bestSinglePool !== undefined && gasPriceWei === 0n) expect(plan.expectedAmountOut, where).toBeGreaterThanOrEqual(brute.bestSinglePool)
          if (gasPriceWei === 0n) expect(plan.expectedAmountOut, where).toBeGreaterThanOrEqual(brute.bestPathGross ?? 0n)
          expect(plan.netAmountOut, where).toBeGreaterThanOrEqual(brute.bestPathNet ?? 0n)
          expect(plan.bestSinglePathNetAmountOut, where).toBe(brute.bestPathNet)
          if (plan.legs.length > 1) splits++
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(40)
    expect(splits).toBeGreaterThan(3)
  })

  it('quotes only the paths an upper bound of their output leaves a chance, where a pair has many pools (five venues)', async () => {
    for (const [a, b, amountIn] of [['USDT', 'WBTC', 20_000n * 10n ** 6n], ['USDC', 'UNI', 10_000n * 10n ** 6n], ['WBTC', 'DAI', 5n * 10n ** 7n]] as const) {
      const pools = await poolsFor(tok(a), tok(b))
      const paths = enumeratePaths(buildPoolGraph(pools), tok(a), tok(b), 3)
      expect(paths.length).toBeGreaterThan(100)
      // what ranking every path, with the whole amount and at one split part's (splitParts 30), asks
      // before any split is allocated
      const everyPath = new Set<string>()
      const noting = (set: Set<string>): HopQuoter => (pool, zeroForOne, amount) => (set.add(`${pool.address}:${zeroForOne}:${amount}`), quoteHop(pool, zeroForOne, amount))
      for (const path of paths) for (const amount of [amountIn, amountIn / 30n]) quotePath(path, amount, noting(everyPath))
      const asked = new Set<string>()
      const plan = findBestPlan({ tokenIn: tok(a), tokenOut: tok(b), amountIn, pools, gasPriceWei: 20n * GWEI, weth: DEX.weth, hopQuoter: noting(asked) })
      // the whole search, splits included, asks fewer
      expect(asked.size, `${a}->${b}`).toBeLessThan(everyPath.size)
      // and nothing it skipped was the best single path
      const brute = bruteForce(pools, tok(a), tok(b), amountIn, 20n * GWEI, plan?.tokenOutPerEth)
      expect(plan?.bestSinglePathNetAmountOut).toBe(brute.bestPathNet)
      expect(plan!.netAmountOut).toBeGreaterThanOrEqual(brute.bestPathNet!)
    }
  })

  it('asks a given hop quoter every hop, last hops included (a second search reads what the first asked it)', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const asked = new Set<string>()
    const hopQuoter: HopQuoter = (pool, zeroForOne, amount) => (asked.add(`${pool.address}:${zeroForOne}:${amount}`), quoteHop(pool, zeroForOne, amount))
    const amountIn = E18
    const own = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: GWEI, weth: DEX.weth })
    const given = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: GWEI, weth: DEX.weth, hopQuoter })
    // the same plan whichever quotes the hops
    expect(given).toEqual(own)
    // every leg's last hop, asked at its leg's amount when the leg is one hop
    for (const leg of given!.legs) {
      const last = leg.hops[leg.hops.length - 1]
      expect([...asked].some((k) => k.startsWith(`${last.pool}:${last.zeroForOne}:`)), last.pool).toBe(true)
      if (leg.hops.length === 1) expect(asked.has(`${last.pool}:${last.zeroForOne}:${leg.amountIn}`)).toBe(true)
    }
    // the direct pools (single-hop paths: their only hop is their last) with the whole amount
    const direct = pools.filter((p) => [p.token0, p.token1].includes(lower(tok('WETH'))) && [p.token0, p.token1].includes(lower(tok('USDC'))))
    expect(direct.length).toBeGreaterThan(0)
    expect(direct.some((p) => asked.has(`${p.address}:${p.token0 === lower(tok('WETH'))}:${amountIn}`))).toBe(true)
  })

  it('leaves the split allocator out where no plan of two legs could net more than the best single path', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const amountIn = E18
    const part = amountIn / 30n // splitParts' default: the allocator asks the paths for multiples of it
    const asked = (gasPriceWei: bigint) => {
      const amounts = new Set<bigint>()
      const hopQuoter: HopQuoter = (pool, zeroForOne, amount) => (amounts.add(amount), quoteHop(pool, zeroForOne, amount))
      const plan = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei, weth: DEX.weth, hopQuoter })
      return { plan, amounts }
    }
    // gas at 20 gwei: a second leg's gas costs more than splitting 1 WETH could gain over the
    // deepest pool, by the pools' prices alone: nothing is asked at a part's amount
    const dear = asked(20n * GWEI)
    expect(dear.plan?.legs).toHaveLength(1)
    expect(dear.amounts.has(part)).toBe(false)
    expect(dear.plan).toEqual(findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn, pools, gasPriceWei: 20n * GWEI, weth: DEX.weth, maxSplits: 1 }))
    // with free gas the bound leaves the split a chance: the allocator runs (the detector above works)
    expect(asked(0n).amounts.has(part)).toBe(true)
  })

  it('has no plan when there is no path, and refuses nonsense', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const nowhere = '0x00000000000000000000000000000000000fee11' as Address
    expect(findBestPlan({ tokenIn: nowhere, tokenOut: tok('USDC'), amountIn: 1n, pools, gasPriceWei: 0n })).toBeUndefined()
    expect(findBestPlan({ tokenIn: tok('USDC'), tokenOut: tok('USDC'), amountIn: 1n, pools, gasPriceWei: 0n })).toBeUndefined()
    // more than all V3 liquidity holds (a V2 pair takes any amount, for ever less)
    const v3Only = pools.filter((p) => p.protocol === 'uniswap-v3')
    expect(findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: 10n ** 40n, pools: v3Only, gasPriceWei: 0n })).toBeUndefined()
    expect(() => findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: 0n, pools, gasPriceWei: 0n })).toThrow(RouteSearchError)
    expect(() => findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: 1n, pools, gasPriceWei: 0n, maxHops: 4 })).toThrow(RouteSearchError)
  })

  it('takes addresses in any case', async () => {
    const pools = await poolsFor(tok('WETH'), tok('USDC'))
    const upper = (a: Address) => `0x${a.slice(2).toUpperCase()}` as Address
    const a = findBestPlan({ tokenIn: upper(tok('WETH')), tokenOut: upper(tok('USDC')), amountIn: E18, pools, gasPriceWei: 0n })
    const b = findBestPlan({ tokenIn: tok('WETH'), tokenOut: tok('USDC'), amountIn: E18, pools, gasPriceWei: 0n })
    expect(a).toEqual(b)
  })
})

describe('findBestPlan on synthetic pool graphs', () => {
  const [A, B, C, D] = [1, 2, 3, 4].map(syntheticToken)

  it('finds a three-hop route where no shorter one exists, and not with maxHops 2', () => {
    const pools = [v2Pool(A, B, 10n ** 24n, 2n * 10n ** 24n), v3Pool(B, C, 3000, 60, 6000, [[-60_000, 60_000, 10n ** 24n]]), v2Pool(C, D, 10n ** 24n, 10n ** 24n)]
    const plan = findBestPlan({ tokenIn: A, tokenOut: D, amountIn: 10n ** 20n, pools, gasPriceWei: 0n })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs).toHaveLength(1)
    expect(plan.legs[0].hops.map((h) => h.tokenOut)).toEqual([B, C, D])
    expect(plan.legs[0].hops.map((h) => h.protocol)).toEqual(['uniswap-v2', 'uniswap-v3', 'uniswap-v2'])
    expect(findBestPlan({ tokenIn: A, tokenOut: D, amountIn: 10n ** 20n, pools, gasPriceWei: 0n, maxHops: 2 })).toBeUndefined()
  })

  it('prefers a three-hop route to a poor direct pool, unless gas makes the extra hops too dear', () => {
    const pools = [
      v2Pool(A, B, 10n ** 24n, 10n ** 24n),
      v2Pool(B, C, 10n ** 24n, 10n ** 24n),
      v2Pool(C, D, 10n ** 24n, 10n ** 24n),
      // direct, but 2% worse
      v2Pool(A, D, 10n ** 24n, 98n * 10n ** 22n),
    ]
    const amountIn = 10n ** 18n
    const free = findBestPlan({ tokenIn: A, tokenOut: D, amountIn, pools, gasPriceWei: 0n })
    expect(free?.legs.map((l) => l.hops.length)).toEqual([3])
    // D worth 1 wei of ETH per unit; at 100 gwei the two extra hops (180k gas) cost 0.018 D, more than the 2% gain (0.0107 D)
    const dear = findBestPlan({ tokenIn: A, tokenOut: D, amountIn, pools, gasPriceWei: 100n * GWEI, tokenOutPerEth: { num: 1n, den: 1n } })
    expect(dear?.legs.map((l) => l.hops.length)).toEqual([1])
    if (!free || !dear) throw new Error('no plan')
    checkPlan(free, pools)
    checkPlan(dear, pools)
  })

  it('splits across a V2 pair and V3 pools of one pair when the amount is large', () => {
    const pools = [v2Pool(A, B, 10n ** 22n, 10n ** 22n), v3Pool(A, B, 500, 10, 0, [[-1000, 1000, 10n ** 23n]]), v3Pool(A, B, 3000, 60, 0, [[-6000, 6000, 10n ** 22n]])]
    const plan = findBestPlan({ tokenIn: A, tokenOut: B, amountIn: 10n ** 21n, pools, gasPriceWei: 0n })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs).toHaveLength(3)
    const brute = bruteForce(pools, A, B, 10n ** 21n, 0n, undefined)
    expect(plan.expectedAmountOut).toBeGreaterThan(brute.bestPathGross ?? 0n)
  })

  it('splits an amount no single pool can fill alone', () => {
    // two V3 pools with liquidity only within ±600 ticks: each runs dry at some input
    const pools = [v3Pool(A, B, 500, 10, 0, [[-600, 600, 10n ** 21n]]), v3Pool(A, B, 3000, 60, 0, [[-600, 600, 10n ** 21n]])]
    const dry = (p: PoolSnapshot) => {
      let lo = 1n
      let hi = 10n ** 24n
      while (lo < hi) {
        const mid = (lo + hi + 1n) / 2n
        if (referenceQuote(p, A, mid) === undefined) hi = mid - 1n
        else lo = mid
      }
      return lo
    }
    const amountIn = ((dry(pools[0]) + dry(pools[1])) * 9n) / 10n
    expect(amountIn).toBeGreaterThan(dry(pools[0]))
    expect(amountIn).toBeGreaterThan(dry(pools[1]))
    const plan = findBestPlan({ tokenIn: A, tokenOut: B, amountIn, pools, gasPriceWei: 0n })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs).toHaveLength(2)
    expect(plan.bestSinglePathNetAmountOut).toBeUndefined()
  })

  it('gives the allocator the path best with the whole amount even when every other path has a better marginal price', () => {
    // twenty paths A -> C -> B through shallow A/C pools 3% cheaper and one C/B pool they share
    // (so at most one of them is a leg), and one deep A/B pool: the paths best at one part's amount
    // are the shallow ones; the deep pool is the best single path and the best split's largest leg
    const shared = v2Pool(C, B, 10n ** 26n, 10n ** 26n)
    const shallow = Array.from({ length: 20 }, () => v2Pool(A, C, 10n ** 22n, 103n * 10n ** 20n))
    const deep = v2Pool(A, B, 10n ** 26n, 10n ** 26n)
    const pools = [...shallow, shared, deep]
    const plan = findBestPlan({ tokenIn: A, tokenOut: B, amountIn: 3n * 10n ** 21n, pools, gasPriceWei: 0n })
    if (!plan) throw new Error('no plan')
    checkPlan(plan, pools)
    expect(plan.legs).toHaveLength(2)
    expect(plan.legs.map((l) => l.hops[0].pool)).toContain(deep.address)
  })

  it('property: no plan of two pool-disjoint paths nets more than splitNetBound', () => {
    const tokens = [A, B, C, D]
    const poolArb = fc.record({
      a: fc.integer({ min: 0, max: 3 }),
      b: fc.integer({ min: 0, max: 3 }),
      reserveA: fc.bigInt({ min: 10n ** 6n, max: 10n ** 27n }),
      reserveB: fc.bigInt({ min: 10n ** 6n, max: 10n ** 27n }),
    })
    const model = DEFAULT_GAS_MODEL
    fc.assert(
      fc.property(
        fc.array(poolArb, { minLength: 2, maxLength: 7 }),
        fc.bigInt({ min: 2n, max: 10n ** 26n }),
        fc.constantFrom(0n, GWEI, 1000n * GWEI),
        fc.array(fc.integer({ min: 1, max: 999 }), { minLength: 1, maxLength: 4 }),
        (specs, amountIn, gasPriceWei, shares) => {
          const pools = specs.filter((s) => s.a !== s.b).map((s) => v2Pool(tokens[s.a], tokens[s.b], s.reserveA, s.reserveB))
          const paths = enumeratePaths(buildPoolGraph(pools), A, D, 3)
          if (paths.length < 2) return
          const value = (gas: bigint) => gasCostInToken(gas, gasPriceWei, { num: 1n, den: 1000n })
          const legOf = (path: (typeof paths)[number]) => ({ protocols: path.map((h) => h.pool.protocol), ticksCrossed: 0 })
          const bound = splitNetBound(paths.map((p) => ({ maxRate: pathMaxRate(p), fixedGas: legGas(model, legOf(p).protocols, 0) })), Number(amountIn), model, { value })
          for (let i = 0; i < paths.length; i++) {
            for (let j = i + 1; j < paths.length; j++) {
              if (paths[i].some((h) => paths[j].some((k) => k.pool.address === h.pool.address))) continue
              for (const share of shares) {
                const first = (amountIn * BigInt(share)) / 1000n
                if (first === 0n || first === amountIn) continue
                const q1 = quotePath(paths[i], first)
                const q2 = quotePath(paths[j], amountIn - first)
                if (q1 === undefined || q2 === undefined) continue
                const net = q1.amountOut + q2.amountOut - value(planGas(model, [legOf(paths[i]), legOf(paths[j])]))
                expect(Number(net)).toBeLessThanOrEqual(bound)
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('property: on random V2 graphs the plan conserves the input, is exact, and beats brute force over single paths', () => {
    const tokens = [A, B, C, D, syntheticToken(5)]
    const poolArb = fc.record({
      a: fc.integer({ min: 0, max: 4 }),
      b: fc.integer({ min: 0, max: 4 }),
      reserveA: fc.bigInt({ min: 10n ** 6n, max: 10n ** 27n }),
      reserveB: fc.bigInt({ min: 10n ** 6n, max: 10n ** 27n }),
    })
    fc.assert(
      fc.property(
        fc.array(poolArb, { minLength: 1, maxLength: 9 }),
        fc.bigInt({ min: 1n, max: 10n ** 26n }),
        fc.constantFrom(0n, GWEI, 1000n * GWEI),
        fc.integer({ min: 1, max: 4 }),
        (specs, amountIn, gasPriceWei, maxSplits) => {
          const pools = specs.filter((s) => s.a !== s.b).map((s) => v2Pool(tokens[s.a], tokens[s.b], s.reserveA, s.reserveB))
          const rate = { num: 1n, den: 1000n }
          const plan = findBestPlan({ tokenIn: A, tokenOut: D, amountIn, pools, gasPriceWei, tokenOutPerEth: rate, maxSplits })
          const brute = bruteForce(pools, A, D, amountIn, gasPriceWei, rate)
          if (plan === undefined) {
            // no single path could take it either; a split might, but none was found: allowed only without paths that fill
            expect(brute.bestPathNet).toBeUndefined()
            return
          }
          checkPlan(plan, pools, maxSplits)
          expect(plan.netAmountOut).toBeGreaterThanOrEqual(brute.bestPathNet ?? plan.netAmountOut)
          if (gasPriceWei === 0n) expect(plan.expectedAmountOut).toBeGreaterThanOrEqual(brute.bestPathGross ?? 0n)
        },
      ),
      { numRuns: 300 },
    )
  })
})
