import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  computeSwapStep,
  computeSwapStepInto,
  getNextSqrtPriceFromInput,
  getNextSqrtPriceFromOutput,
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
} from '../../../src/dex/math/index.ts'
import { encodePriceSqrt, sqrtPriceArb } from './helpers.ts'

const E18 = 10n ** 18n
const PRICE_1 = encodePriceSqrt(1n, 1n)

/** Values from Uniswap/v3-core test/SwapMath.spec.ts */
describe('SwapMath.computeSwapStep known values', () => {
  it('exact amount in that gets capped at price target in one for zero', () => {
    const target = encodePriceSqrt(101n, 100n)
    const step = computeSwapStep(PRICE_1, target, 2n * E18, E18, 600)
    expect(step).toEqual({ sqrtRatioNextX96: target, amountIn: 9975124224178055n, feeAmount: 5988667735148n, amountOut: 9925619580021728n })
    expect(step.amountIn + step.feeAmount < E18).toBe(true)
    expect(step.sqrtRatioNextX96 < getNextSqrtPriceFromInput(PRICE_1, 2n * E18, E18, false)).toBe(true)
  })

  it('exact amount out that gets capped at price target in one for zero', () => {
    const target = encodePriceSqrt(101n, 100n)
    const step = computeSwapStep(PRICE_1, target, 2n * E18, -E18, 600)
    expect(step).toEqual({ sqrtRatioNextX96: target, amountIn: 9975124224178055n, feeAmount: 5988667735148n, amountOut: 9925619580021728n })
    expect(step.sqrtRatioNextX96 < getNextSqrtPriceFromOutput(PRICE_1, 2n * E18, E18, false)).toBe(true)
  })

  it('exact amount in that is fully spent in one for zero', () => {
    const target = encodePriceSqrt(1000n, 100n)
    const step = computeSwapStep(PRICE_1, target, 2n * E18, E18, 600)
    expect(step.amountIn).toBe(999400000000000000n)
    expect(step.feeAmount).toBe(600000000000000n)
    expect(step.amountOut).toBe(666399946655997866n)
    expect(step.amountIn + step.feeAmount).toBe(E18)
    expect(step.sqrtRatioNextX96 < target).toBe(true)
    expect(step.sqrtRatioNextX96).toBe(getNextSqrtPriceFromInput(PRICE_1, 2n * E18, E18 - step.feeAmount, false))
  })

  it('exact amount out that is fully received in one for zero', () => {
    const target = encodePriceSqrt(10000n, 100n)
    const step = computeSwapStep(PRICE_1, target, 2n * E18, -E18, 600)
    expect(step.amountIn).toBe(2000000000000000000n)
    expect(step.feeAmount).toBe(1200720432259356n)
    expect(step.amountOut).toBe(E18)
    expect(step.sqrtRatioNextX96 < target).toBe(true)
    expect(step.sqrtRatioNextX96).toBe(getNextSqrtPriceFromOutput(PRICE_1, 2n * E18, E18, false))
  })

  it('amount out is capped at the desired amount out', () => {
    const step = computeSwapStep(417332158212080721273783715441582n, 1452870262520218020823638996n, 159344665391607089467575320103n, -1n, 1)
    expect(step).toEqual({ sqrtRatioNextX96: 417332158212080721273783715441581n, amountIn: 1n, feeAmount: 1n, amountOut: 1n })
  })

  it('target price of 1 uses partial input amount', () => {
    const step = computeSwapStep(2n, 1n, 1n, 3915081100057732413702495386755767n, 1)
    expect(step).toEqual({ sqrtRatioNextX96: 1n, amountIn: 39614081257132168796771975168n, feeAmount: 39614120871253040049813n, amountOut: 0n })
  })

  it('entire input amount taken as fee', () => {
    const step = computeSwapStep(2413n, 79887613182836312n, 1985041575832132834610021537970n, 10n, 1872)
    expect(step).toEqual({ sqrtRatioNextX96: 2413n, amountIn: 0n, feeAmount: 10n, amountOut: 0n })
  })

  it('handles intermediate insufficient liquidity in the exact output cases', () => {
    const sqrtP = 20282409603651670423947251286016n
    expect(computeSwapStep(sqrtP, (sqrtP * 11n) / 10n, 1024n, -4n, 3000)).toEqual({
      sqrtRatioNextX96: (sqrtP * 11n) / 10n,
      amountIn: 26215n,
      feeAmount: 79n,
      amountOut: 0n,
    })
    expect(computeSwapStep(sqrtP, (sqrtP * 9n) / 10n, 1024n, -263000n, 3000)).toEqual({
      sqrtRatioNextX96: (sqrtP * 9n) / 10n,
      amountIn: 1n,
      feeAmount: 1n,
      amountOut: 26214n,
    })
  })

  it('rejects a fee outside [0, 1e6)', () => {
    expect(() => computeSwapStep(PRICE_1, PRICE_1, 1n, 1n, 1_000_000)).toThrow(/fee/)
    expect(() => computeSwapStep(PRICE_1, PRICE_1, 1n, 1n, -1)).toThrow(/fee/)
  })
})

const feeArb = fc.oneof(fc.constantFrom(0, 100, 500, 3000, 10000), fc.integer({ min: 0, max: 999_999 }))
const liquidityArb = fc.oneof(
  fc.bigInt({ min: 1n, max: (1n << 128n) - 1n }),
  fc.bigInt({ min: 1n, max: 10n ** 24n }),
  fc.bigInt({ min: 1n, max: 10_000n }),
)
const amountArb = fc
  .oneof(fc.bigInt({ min: -(1n << 255n) + 1n, max: (1n << 255n) - 1n }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: -1000n, max: 1000n }))
  .filter((a) => a !== 0n)

describe('SwapMath.computeSwapStep properties (the v3-core echidna invariants)', () => {
  it('never spends more than remains, never passes the target, moves the price the right way', () => {
    fc.assert(
      fc.property(sqrtPriceArb, sqrtPriceArb, liquidityArb, amountArb, feeArb, (current, target, liquidity, amountRemaining, fee) => {
        const step = computeSwapStep(current, target, liquidity, amountRemaining, fee)
        const zeroForOne = current >= target
        const next = step.sqrtRatioNextX96

        if (amountRemaining > 0n) {
          expect(step.amountIn + step.feeAmount <= amountRemaining).toBe(true)
          // a step that stops short of the target used the whole remainder
          if (next !== target) expect(step.amountIn + step.feeAmount).toBe(amountRemaining)
        } else {
          expect(step.amountOut <= -amountRemaining).toBe(true)
        }

        // between current and target, inclusive: the price moves towards the target and never beyond it
        if (zeroForOne) expect(target <= next && next <= current).toBe(true)
        else expect(current <= next && next <= target).toBe(true)

        if (current === target) expect(step).toEqual({ sqrtRatioNextX96: target, amountIn: 0n, amountOut: 0n, feeAmount: 0n })
        expect(next >= MIN_SQRT_RATIO && next <= MAX_SQRT_RATIO).toBe(true)
      }),
      { numRuns: 3000 },
    )
  })
})

describe('SwapMath.computeSwapStepInto without the input/fee split (the swap loop reads only their sum)', () => {
  const fresh = () => ({ sqrtRatioNextX96: 0n, amountIn: 0n, amountOut: 0n, feeAmount: 0n })
  it('gives the same price, output and amountIn + feeAmount as the split step, for any step', () => {
    fc.assert(
      fc.property(sqrtPriceArb, sqrtPriceArb, liquidityArb, amountArb, feeArb, (current, target, liquidity, amountRemaining, fee) => {
        const split = computeSwapStepInto(fresh(), current, target, liquidity, amountRemaining, BigInt(fee))
        const unsplit = computeSwapStepInto(fresh(), current, target, liquidity, amountRemaining, BigInt(fee), undefined, false)
        expect(unsplit.sqrtRatioNextX96).toBe(split.sqrtRatioNextX96)
        expect(unsplit.amountOut).toBe(split.amountOut)
        expect(unsplit.amountIn + unsplit.feeAmount).toBe(split.amountIn + split.feeAmount)
      }),
      { numRuns: 3000 },
    )
  })

  it('spends the whole remainder of an exact input that stops inside its range, in either direction', () => {
    for (const [current, target] of [
      [PRICE_1, encodePriceSqrt(101n, 100n)],
      [PRICE_1, encodePriceSqrt(100n, 101n)],
    ]) {
      const split = computeSwapStepInto(fresh(), current, target, 2n * E18, 10n ** 15n, 600n)
      const unsplit = computeSwapStepInto(fresh(), current, target, 2n * E18, 10n ** 15n, 600n, undefined, false)
      expect(split.sqrtRatioNextX96).not.toBe(target)
      expect(unsplit).toEqual({ sqrtRatioNextX96: split.sqrtRatioNextX96, amountIn: 10n ** 15n, amountOut: split.amountOut, feeAmount: 0n })
    }
  })
})
