import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { AmmMathError, getAmountIn, getAmountOut } from '../../../src/dex/math/index.ts'
import { MAX_UINT256 } from './helpers.ts'

function errorOf(f: () => unknown): AmmMathError | undefined {
  try {
    f()
  } catch (error) {
    if (error instanceof AmmMathError) return error
    throw error
  }
  return undefined
}

const reserveArb = fc.oneof(fc.bigInt({ min: 1n, max: (1n << 112n) - 1n }), fc.bigInt({ min: 1n, max: 10n ** 9n }))
const amountArb = fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10_000n }))
const feeBpsArb = fc.oneof(fc.constantFrom(0, 25, 30, 100), fc.integer({ min: 0, max: 9999 }))

describe('UniswapV2Library.getAmountOut', () => {
  it('is the library formula with 997/1000 by default', () => {
    fc.assert(
      fc.property(amountArb, reserveArb, reserveArb, (amountIn, reserveIn, reserveOut) => {
        const withFee = amountIn * 997n
        expect(getAmountOut(amountIn, reserveIn, reserveOut)).toBe((withFee * reserveOut) / (reserveIn * 1000n + withFee))
      }),
    )
  })

  it('takes other fees in basis points (PancakeSwap: 25 -> 9975/10000)', () => {
    fc.assert(
      fc.property(amountArb, reserveArb, reserveArb, feeBpsArb, (amountIn, reserveIn, reserveOut, feeBps) => {
        const withFee = amountIn * BigInt(10_000 - feeBps)
        expect(getAmountOut(amountIn, reserveIn, reserveOut, feeBps)).toBe((withFee * reserveOut) / (reserveIn * 10_000n + withFee))
      }),
    )
  })

  it('throws the library requires as typed errors', () => {
    expect(errorOf(() => getAmountOut(0n, 1n, 1n))).toMatchObject({ reason: 'INSUFFICIENT_INPUT_AMOUNT', revert: 'UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT' })
    expect(errorOf(() => getAmountOut(1n, 0n, 1n))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY', revert: 'UniswapV2Library: INSUFFICIENT_LIQUIDITY' })
    expect(errorOf(() => getAmountOut(1n, 1n, 0n))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY' })
    // SafeMath: amountIn * 997 overflows
    expect(errorOf(() => getAmountOut(MAX_UINT256 / 997n + 1n, 1n, 1n))).toMatchObject({ reason: 'OVERFLOW', revert: 'ds-math-mul-overflow' })
    expect(errorOf(() => getAmountOut(MAX_UINT256 / 997n, 1n, 1n))).toMatchObject({ reason: 'OVERFLOW', revert: 'ds-math-add-overflow' })
    expect(getAmountOut(MAX_UINT256 / 997n - 1000n, 1n, 1n)).toBe(0n)
    expect(errorOf(() => getAmountOut(-1n, 1n, 1n))).toMatchObject({ reason: 'INVALID_INPUT' })
    expect(errorOf(() => getAmountOut(1n, 1n, 1n, 10_000))).toMatchObject({ reason: 'INVALID_INPUT' })
    expect(errorOf(() => getAmountOut(1n, 1n, 1n, 2.5))).toMatchObject({ reason: 'INVALID_INPUT' })
  })
})

describe('UniswapV2Library.getAmountIn', () => {
  it('is the library formula, +1', () => {
    fc.assert(
      fc.property(amountArb, reserveArb, reserveArb, (amountOut, reserveIn, reserveOut) => {
        fc.pre(amountOut < reserveOut)
        expect(getAmountIn(amountOut, reserveIn, reserveOut)).toBe((reserveIn * amountOut * 1000n) / ((reserveOut - amountOut) * 997n) + 1n)
      }),
    )
  })

  it('buys at least the output, and overpays by at most the library one wei', () => {
    fc.assert(
      fc.property(amountArb, reserveArb, reserveArb, feeBpsArb, (amountOut, reserveIn, reserveOut, feeBps) => {
        fc.pre(amountOut < reserveOut)
        const amountIn = getAmountIn(amountOut, reserveIn, reserveOut, feeBps)
        expect(getAmountOut(amountIn, reserveIn, reserveOut, feeBps) >= amountOut).toBe(true)
        if (amountIn > 1n && getAmountOut(amountIn - 1n, reserveIn, reserveOut, feeBps) >= amountOut) {
          // only when the division was exact does the +1 buy nothing
          const numerator = reserveIn * amountOut * 10_000n
          const denominator = (reserveOut - amountOut) * BigInt(10_000 - feeBps)
          expect(numerator % denominator).toBe(0n)
        }
        if (amountIn > 2n) expect(getAmountOut(amountIn - 2n, reserveIn, reserveOut, feeBps) < amountOut).toBe(true)
      }),
    )
  })

  it('throws the library requires as typed errors', () => {
    expect(errorOf(() => getAmountIn(0n, 1n, 1n))).toMatchObject({ reason: 'INSUFFICIENT_OUTPUT_AMOUNT', revert: 'UniswapV2Library: INSUFFICIENT_OUTPUT_AMOUNT' })
    expect(errorOf(() => getAmountIn(1n, 0n, 1n))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY', revert: 'UniswapV2Library: INSUFFICIENT_LIQUIDITY' })
    expect(errorOf(() => getAmountIn(100n, 1000n, 100n))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY' })
    expect(errorOf(() => getAmountIn(101n, 1000n, 100n))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY', revert: 'ds-math-sub-underflow' })
  })
})
