/**
 * Plans through V4 pools whose hook may change the swap: which plans carry an estimate, and how the
 * quote picks between such a plan's execution and the exact pools' best plan's.
 */
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { EstimateRecord, estimatedExecutionBeatsExactPlan, exactExecutionIsBetter, MAX_RECORDED_HOOKED_HOPS, planHasEstimatedHops } from '../../src/quote/estimated-hops.ts'
import type { RoutedPlan } from '../../src/routing/route-search.ts'
import type { PlanHop } from '../../src/routing/swap-plan.ts'

const A = '0x1000000000000000000000000000000000000001' as Address
const B = '0x2000000000000000000000000000000000000002' as Address
const PM = '0x3000000000000000000000000000000000000003' as Address

function plan(hops: PlanHop[], tokenOutPerEth?: { num: bigint; den: bigint }): RoutedPlan {
  const leg = { amountIn: 10n, expectedAmountOut: 9n, hops }
  return { tokenIn: A, tokenOut: B, amountIn: 10n, legs: [leg], expectedAmountOut: 9n, estimatedGas: 0n, gasCostInTokenOut: 0n, netAmountOut: 9n, ...(tokenOutPerEth ? { tokenOutPerEth } : {}) }
}
const v4Hop = (v4: PlanHop['v4']): PlanHop => ({ protocol: 'uniswap-v4', pool: `0x${'ab'.repeat(32)}` as Address, tokenIn: A, tokenOut: B, fee: 0x800000, zeroForOne: true, v4 })

describe('estimated hops', () => {
  it('marks a plan through a V4 hop whose hook alters the swap, and no other', () => {
    expect(planHasEstimatedHops(plan([v4Hop({ poolManager: PM, tickSpacing: 10, hooks: A, hookAltersSwap: true })]))).toBe(true)
    // a modelled hook, native ETH, a plain V4 or V3 hop: exact
    expect(planHasEstimatedHops(plan([v4Hop({ poolManager: PM, tickSpacing: 10, hooks: A })]))).toBe(false)
    expect(planHasEstimatedHops(plan([v4Hop({ poolManager: PM, tickSpacing: 10, nativeEth: true })]))).toBe(false)
    expect(planHasEstimatedHops(plan([{ protocol: 'uniswap-v3', pool: A, tokenIn: A, tokenOut: B, fee: 500, zeroForOne: true }]))).toBe(false)
  })

  it('prefers the exact execution when it is worth as much or more net of gas at the plan rate, output alone without a rate', () => {
    const rate = { num: 2n, den: 1n }
    // 1,000 out for 200 gas against 1,100 out for 100 gas at 1 wei/gas and 2 tokenOut/wei: 600 vs 900 net
    expect(exactExecutionIsBetter({ amountOut: 1_000n, gasUsed: 200n }, { amountOut: 1_100n, gasUsed: 100n }, plan([], rate), 1n)).toBe(true)
    expect(exactExecutionIsBetter({ amountOut: 1_100n, gasUsed: 100n }, { amountOut: 1_000n, gasUsed: 100n }, plan([], rate), 1n)).toBe(false)
    expect(exactExecutionIsBetter({ amountOut: 1_000n, gasUsed: 100n }, { amountOut: 1_000n, gasUsed: 100n }, plan([], rate), 1n)).toBe(true)
    // the exact plan pays more gas than its extra output is worth
    expect(exactExecutionIsBetter({ amountOut: 1_000n, gasUsed: 100n }, { amountOut: 1_050n, gasUsed: 200n }, plan([], rate), 1n)).toBe(false)
    expect(exactExecutionIsBetter({ amountOut: 1_000n, gasUsed: 100n }, { amountOut: 1_050n, gasUsed: 200n }, plan([]), 1n)).toBe(true)
  })

  it("skips the exact plan's execution only when the hooked execution nets strictly more than the exact plan's whole expected output", () => {
    const rate = { num: 2n, den: 1n }
    const exact = (expectedAmountOut: bigint) => ({ ...plan([]), expectedAmountOut })
    // 1,000 out for 100 gas at 1 wei/gas and 2 tokenOut/wei: 800 net
    expect(estimatedExecutionBeatsExactPlan({ amountOut: 1_000n, gasUsed: 100n }, exact(799n), plan([], rate), 1n)).toBe(true)
    // a tie, or an exact plan that might net more once its own gas is known: it is executed
    expect(estimatedExecutionBeatsExactPlan({ amountOut: 1_000n, gasUsed: 100n }, exact(800n), plan([], rate), 1n)).toBe(false)
    expect(estimatedExecutionBeatsExactPlan({ amountOut: 1_000n, gasUsed: 100n }, exact(950n), plan([], rate), 1n)).toBe(false)
    // without a rate, output alone
    expect(estimatedExecutionBeatsExactPlan({ amountOut: 1_000n, gasUsed: 100n }, exact(999n), plan([]), 1n)).toBe(true)
    expect(estimatedExecutionBeatsExactPlan({ amountOut: 1_000n, gasUsed: 100n }, exact(1_000n), plan([]), 1n)).toBe(false)
  })
})

describe('EstimateRecord', () => {
  const hooked = (pool: string, zeroForOne: boolean): PlanHop => ({ ...v4Hop({ poolManager: PM, tickSpacing: 10, hooks: A, hookAltersSwap: true }), pool: pool as Address, zeroForOne })

  it('calls a plan likely exact only when each of its hooked hops held its estimate last time, per pool and direction', () => {
    const record = new EstimateRecord()
    const p1 = plan([hooked('0x01', true)])
    const p2 = plan([hooked('0x01', true), hooked('0x02', false)])
    expect(record.likelyExact(p1)).toBe(false)
    record.record(p1, true)
    expect(record.likelyExact(p1)).toBe(true)
    // one hop never executed
    expect(record.likelyExact(p2)).toBe(false)
    expect(record.likelyExact(plan([hooked('0x01', false)]))).toBe(false)
    record.record(p2, false)
    expect(record.likelyExact(p1)).toBe(false)
    // a plan without hooked hops is never executed this way
    expect(record.likelyExact(plan([]))).toBe(false)
  })

  it('keys only the hooked hops, of every leg', () => {
    const record = new EstimateRecord()
    const plain: PlanHop = { protocol: 'uniswap-v2', pool: '0x05' as Address, tokenIn: A, tokenOut: B, fee: 3000, zeroForOne: true }
    const unhooked = { ...v4Hop({ poolManager: PM, tickSpacing: 10, hooks: A, hookAltersSwap: false }), pool: '0x06' as Address }
    const twoLegs = { ...plan([plain, hooked('0x01', true)]), legs: [{ amountIn: 5n, expectedAmountOut: 4n, hops: [plain, hooked('0x01', true)] }, { amountIn: 5n, expectedAmountOut: 4n, hops: [unhooked, hooked('0x02', false)] }] }
    record.record(twoLegs, true)
    expect(record.size).toBe(2)
    expect(record.likelyExact(twoLegs)).toBe(true)
    // the plain and unhooked hops were not recorded: a plan through them alone has no hooked hop
    expect(record.likelyExact(plan([plain, unhooked]))).toBe(false)
    expect(record.likelyExact(plan([hooked('0x02', false)]))).toBe(true)
  })

  it(`keeps at most ${MAX_RECORDED_HOOKED_HOPS} hops, then starts over`, () => {
    const record = new EstimateRecord()
    for (let i = 0; i < MAX_RECORDED_HOOKED_HOPS; i++) record.record(plan([hooked(`0x${i.toString(16)}`, true)]), true)
    expect(record.size).toBe(MAX_RECORDED_HOOKED_HOPS)
    record.record(plan([hooked('0x0', true)]), true)
    expect(record.size).toBe(MAX_RECORDED_HOOKED_HOPS)
    record.record(plan([hooked('0xnew', true)]), true)
    expect(record.size).toBe(1)
    expect(record.likelyExact(plan([hooked('0xnew', true)]))).toBe(true)
  })
})
