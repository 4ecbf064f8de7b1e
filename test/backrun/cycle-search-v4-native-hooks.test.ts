/**
 * The backrun search's handling of the V4 pools issue 15 brought into cycles (synthetic pools):
 * - a native-ETH key is a WETH pool for cycle purposes, and its state is the key's: when WETH sorts
 *   above the other currency, the key's currency0 (ETH) is the ref's token1, and the spot rate,
 *   the virtual reserves and the fee direction must follow the key (the marginal-rate filter drops
 *   a cycle on them);
 * - the cycle's hops name what the executor needs: nativeEth (it unwraps and wraps around the hop),
 *   the hooks address, and hookAltersSwap where the math is only an estimate (beforeSwap, return
 *   deltas), which the engine executes before it counts any profit;
 * - executorCanSwap takes them all.
 */
import { decodeFunctionData, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { BACKRUN_EXECUTOR_ABI, encodeBackrunCall } from '../../src/backrun/backrun-calldata.ts'
import { executorCanSwap } from '../../src/backrun/backrun-engine.ts'
import { cycleHasEstimatedHops, searchBackrun, spotRate } from '../../src/backrun/cycle-search.ts'
import { ProfitValuer, valuationGraph } from '../../src/backrun/profit-valuation.ts'
import type { Address } from '../../src/chain/types.ts'
import { quotePath, type PathHop, type PoolSnapshot, type V4PoolSnapshot } from '../../src/pools/index.ts'
import { quoteV4, v4PoolRef } from '../../src/pools/uniswap-v4.ts'
import { V4_HOOK_FLAGS } from '../../src/pools/uniswap-v4-hooks.ts'
import { syntheticToken, v2Pool, v3Pool } from '../routing/helpers.ts'

const ZERO: Address = '0x0000000000000000000000000000000000000000'
const POOL_MANAGER: Address = '0x00000000000000000000000000000000000f0000'
const WETH = syntheticToken(1)
/** sorts below WETH: in the native key (ETH, OTHER) ETH is currency0, in the ref OTHER is token0 */
const OTHER: Address = '0x0000000000000000000000000000000000001000'
/** sorts above WETH */
const HIGH: Address = '0x0000000000000000000000000000000000ff0000'
/** hook addresses whose low bits are their permissions */
const AFTER_SWAP_HOOK = `0x00000000000000000000000000000000000a${V4_HOOK_FLAGS.afterSwap.toString(16).padStart(4, '0')}` as Address
const BEFORE_SWAP_HOOK = `0x00000000000000000000000000000000000b${V4_HOOK_FLAGS.beforeSwap.toString(16).padStart(4, '0')}` as Address
const E18 = 10n ** 18n

/**
 * A V4 pool of `currency0`/`currency1` (the key's order) at `tick` (currency1 per currency0), one
 * wide position; `weth` stands for a native currency0 in the ref's tokens.
 */
function v4Pool(currency0: Address, currency1: Address, tick: number, hooks: Address = ZERO): V4PoolSnapshot {
  // the V3 state in the key's orientation: a stand-in for currency0 that sorts below currency1
  const v3 = v3Pool('0x0000000000000000000000000000000000000001', currency1, 3000, 60, tick, [[tick - 60 * 200, tick + 60 * 200, 10n ** 24n]])
  const ref = v4PoolRef(POOL_MANAGER, { currency0, currency1, fee: 3000, tickSpacing: 60, hooks }, 'uniswap-v4', WETH)
  return { ...ref, slot0: { sqrtPriceX96: v3.state.sqrtPriceX96, tick: v3.state.tick, protocolFee: 0, lpFee: 3000 }, state: v3.state, coverage: v3.coverage }
}

const hopOf = (pool: PoolSnapshot, tokenIn: Address): PathHop => ({ pool, tokenIn, tokenOut: tokenIn === pool.token0 ? pool.token1 : pool.token0, zeroForOne: tokenIn === pool.token0 })

describe('native-ETH V4 pools in the backrun search', () => {
  // ETH at ~2,000 OTHER (tick ln(2000)/ln(1.0001) = 76,012, on the spacing)
  const native = v4Pool(ZERO, OTHER, 76_020)

  it('is a WETH pool whose key direction is the ref\'s reversed when WETH sorts above the other currency', () => {
    expect([native.token0, native.token1]).toEqual([OTHER, WETH])
    expect(native.key.currency0).toBe(ZERO)
    expect(executorCanSwap(native)).toBe(true)
  })

  it('rates each hop by the key\'s price: the spot rate bounds a small swap\'s rate from above, and is within 1e-6 of it', () => {
    for (const tokenIn of [OTHER, WETH]) {
      const hop = hopOf(native, tokenIn)
      const amountIn = tokenIn === WETH ? 10n ** 12n : 10n ** 15n
      const out = quoteV4(native, hop.zeroForOne, amountIn)!.amountOut
      const rate = spotRate(hop)
      // out / amountIn <= num / den, and >= (num / den) (1 - 1e-6)
      expect(out * rate.den <= amountIn * rate.num, tokenIn).toBe(true)
      expect(out * rate.den * 1_000_000n >= amountIn * rate.num * 999_999n, tokenIn).toBe(true)
    }
  })

  it('finds the cycle through it against a WETH pair priced apart, in the profitable direction, at the exact math\'s profit', () => {
    // the pair sells ETH at 2,100 OTHER: buy WETH from the native pool at ~2,000, sell it to the pair
    const pair = v2Pool(WETH, OTHER, 1_000n * E18, 2_100_000n * E18)
    const r = searchBackrun({ pools: [native, pair], movedPools: [native.address], weth: WETH, baseTokens: [WETH], budgetMs: 600_000 })
    expect(r.candidates.length).toBeGreaterThan(0)
    const best = r.candidates[0]!
    expect(best.startToken).toBe(WETH)
    expect(best.hops.map((h) => h.pool)).toEqual([pair.address, native.address])
    expect(best.hops[1]!.tokenIn).toBe(OTHER)
    expect(best.hops[1]!.v4).toEqual({ poolManager: POOL_MANAGER, tickSpacing: 60, nativeEth: true })
    expect(cycleHasEstimatedHops(best.hops)).toBe(false)
    const hops = [hopOf(pair, WETH), hopOf(native, OTHER)]
    expect(quotePath(hops, best.amountIn)?.amountOut).toBe(best.expectedOut)
    // no input in a grid around it does better
    for (const permille of [500n, 900n, 990n, 1010n, 1100n, 2000n]) {
      const x = (best.amountIn * permille) / 1000n
      expect((quotePath(hops, x)?.amountOut ?? 0n) - x <= best.expectedProfit, `${permille}`).toBe(true)
    }
    // the other direction loses
    expect(r.candidates.every((c) => c.hops[0]!.pool === pair.address || c.hops[0]!.tokenIn === OTHER)).toBe(true)
  })

  it('is encoded as protocol 3 with WETH in the cycle (the executor settles ETH in its place)', () => {
    const pair = v2Pool(WETH, OTHER, 1_000n * E18, 2_100_000n * E18)
    const best = searchBackrun({ pools: [native, pair], movedPools: [native.address], weth: WETH, baseTokens: [WETH], budgetMs: 600_000 }).candidates[0]!
    const data = encodeBackrunCall({ startToken: WETH, amountIn: best.amountIn, hops: best.hops, minProfit: 1n, refundBps: 0 })
    const [, , hops] = decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data: data as Hex }).args as readonly [Address, bigint, ReadonlyArray<{ protocol: number; pool: Address; tokenOut: Address; hooks: Address }>]
    expect(hops.map((h) => h.protocol)).toEqual([0, 3])
    expect(hops[1]!.pool.toLowerCase()).toBe(POOL_MANAGER)
    expect(hops[1]!.tokenOut.toLowerCase()).toBe(WETH)
    expect(hops.map((h) => h.hooks)).toEqual([ZERO, ZERO])
  })
})

describe('hooked V4 pools in the backrun search', () => {
  const cycleThrough = (hooks: Address) => {
    const hooked = v4Pool(WETH, HIGH, 0, hooks)
    // the pair pays 1.1 HIGH per WETH, the hooked pool 1: WETH -> HIGH in the pair, back in the pool
    const pair = v2Pool(WETH, HIGH, 1_000n * E18, 1_100n * E18)
    const r = searchBackrun({ pools: [hooked, pair], movedPools: [hooked.address], weth: WETH, baseTokens: [WETH], budgetMs: 600_000 })
    return { hooked, best: r.candidates[0] }
  }

  it('searches a pool whose hook runs afterSwap only like a plain pool: exact, its hooks address in the hop', () => {
    const { hooked, best } = cycleThrough(AFTER_SWAP_HOOK)
    expect(hooked.hookAltersSwap).toBe(false)
    expect(executorCanSwap(hooked)).toBe(true)
    expect(best).toBeDefined()
    const hop = best!.hops.find((h) => h.pool === hooked.address)!
    expect(hop.v4).toEqual({ poolManager: POOL_MANAGER, tickSpacing: 60, hooks: AFTER_SWAP_HOOK })
    expect(cycleHasEstimatedHops(best!.hops)).toBe(false)
  })

  it('marks a cycle through a beforeSwap hook as an estimate (the engine counts only its execution), and encodes the hooks', () => {
    const { hooked, best } = cycleThrough(BEFORE_SWAP_HOOK)
    expect(hooked.hookAltersSwap).toBe(true)
    expect(executorCanSwap(hooked)).toBe(true)
    expect(best).toBeDefined()
    const hop = best!.hops.find((h) => h.pool === hooked.address)!
    expect(hop.v4).toEqual({ poolManager: POOL_MANAGER, tickSpacing: 60, hooks: BEFORE_SWAP_HOOK, hookAltersSwap: true })
    expect(cycleHasEstimatedHops(best!.hops)).toBe(true)
    const data = encodeBackrunCall({ startToken: best!.startToken, amountIn: best!.amountIn, hops: best!.hops, minProfit: 1n, refundBps: 0 })
    const [, , hops] = decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data: data as Hex }).args as readonly [Address, bigint, ReadonlyArray<{ protocol: number; hooks: Address }>]
    const i = best!.hops.indexOf(hop)
    expect(hops[i]!.protocol).toBe(2)
    expect(hops[i]!.hooks.toLowerCase()).toBe(BEFORE_SWAP_HOOK)
  })

  it('values a profit only through pools whose math is exact: not through a hook that may change the swap', () => {
    const sell = (hooks: Address) => new ProfitValuer(valuationGraph([v4Pool(WETH, HIGH, 0, hooks)]), WETH).toWei(HIGH, E18)
    // ~1 WETH less the 0.3% fee through the afterSwap hook's pool; no exact path through the other
    expect(sell(AFTER_SWAP_HOOK)).toBeGreaterThan((E18 * 996n) / 1000n)
    expect(sell(BEFORE_SWAP_HOOK)).toBeUndefined()
  })
})
