/** Values from Uniswap/v3-core test/SqrtPriceMath.spec.ts, checked against the v1.0 Solidity requires. */
import { describe, expect, it } from 'vitest'

import {
  AmmMathError,
  getAmount0Delta,
  getAmount1Delta,
  getNextSqrtPriceFromInput,
  getNextSqrtPriceFromOutput,
} from '../../../src/dex/math/index.ts'
import { encodePriceSqrt, MAX_UINT256 } from './helpers.ts'

const E18 = 10n ** 18n
const PRICE_1 = encodePriceSqrt(1n, 1n)

describe('SqrtPriceMath.getNextSqrtPriceFromInput', () => {
  it('rejects a zero price or zero liquidity', () => {
    expect(() => getNextSqrtPriceFromInput(0n, 0n, E18 / 10n, false)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromInput(1n, 0n, E18 / 10n, true)).toThrow(AmmMathError)
  })

  it('rejects an input that overflows the price', () => {
    expect(() => getNextSqrtPriceFromInput((1n << 160n) - 1n, 1024n, 1024n, false)).toThrow(AmmMathError)
  })

  it('any input amount cannot underflow the price', () => {
    expect(getNextSqrtPriceFromInput(1n, 1n, 1n << 255n, true)).toBe(1n)
  })

  it('returns the input price for a zero amount', () => {
    expect(getNextSqrtPriceFromInput(PRICE_1, E18 / 10n, 0n, true)).toBe(PRICE_1)
    expect(getNextSqrtPriceFromInput(PRICE_1, E18 / 10n, 0n, false)).toBe(PRICE_1)
  })

  it('0.1 token1 and 0.1 token0 in', () => {
    expect(getNextSqrtPriceFromInput(PRICE_1, E18, E18 / 10n, false)).toBe(87150978765690771352898345369n)
    expect(getNextSqrtPriceFromInput(PRICE_1, E18, E18 / 10n, true)).toBe(72025602285694852357767227579n)
  })

  it('amountIn > type(uint96).max, zeroForOne', () => {
    expect(getNextSqrtPriceFromInput(PRICE_1, 10n * E18, 1n << 100n, true)).toBe(624999999995069620n)
  })

  it('can return 1 with enough amountIn (the fallback formula)', () => {
    expect(getNextSqrtPriceFromInput(PRICE_1, 1n, MAX_UINT256 / 2n, true)).toBe(1n)
  })

  it('sqrtP * sqrtQ overflows (echidna case)', () => {
    const sqrtP = 1025574284609383690408304870162715216695788925244n
    const liquidity = 50015962439936049619261659728067971248n
    const sqrtQ = getNextSqrtPriceFromInput(sqrtP, liquidity, 406n, true)
    expect(sqrtQ).toBe(1025574284609383582644711336373707553698163132913n)
    expect(getAmount0Delta(sqrtP, sqrtQ, liquidity, true)).toBe(406n)
  })
})

describe('SqrtPriceMath.getNextSqrtPriceFromOutput', () => {
  const price = 20282409603651670423947251286016n // 2^104

  it('rejects a zero price or zero liquidity', () => {
    expect(() => getNextSqrtPriceFromOutput(0n, 0n, E18 / 10n, false)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromOutput(1n, 0n, E18 / 10n, true)).toThrow(AmmMathError)
  })

  it('rejects an output of (more than) the virtual reserves', () => {
    expect(() => getNextSqrtPriceFromOutput(price, 1024n, 4n, false)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromOutput(price, 1024n, 5n, false)).toThrow(AmmMathError)
    // exactly the token1 reserves: require(sqrtPX96 > quotient) fails in v1.0
    expect(() => getNextSqrtPriceFromOutput(price, 1024n, 262144n, true)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromOutput(price, 1024n, 262145n, true)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromOutput(PRICE_1, 1n, MAX_UINT256, true)).toThrow(AmmMathError)
    expect(() => getNextSqrtPriceFromOutput(PRICE_1, 1n, MAX_UINT256, false)).toThrow(AmmMathError)
  })

  it('returns the input price for a zero amount', () => {
    expect(getNextSqrtPriceFromOutput(PRICE_1, E18 / 10n, 0n, true)).toBe(PRICE_1)
    expect(getNextSqrtPriceFromOutput(PRICE_1, E18 / 10n, 0n, false)).toBe(PRICE_1)
  })

  it('0.1 token1 and 0.1 token0 out', () => {
    expect(getNextSqrtPriceFromOutput(PRICE_1, E18, E18 / 10n, false)).toBe(88031291682515930659493278152n)
    expect(getNextSqrtPriceFromOutput(PRICE_1, E18, E18 / 10n, true)).toBe(71305346262837903834189555302n)
  })
})

describe('SqrtPriceMath amount deltas', () => {
  it('are zero for zero liquidity or equal prices', () => {
    expect(getAmount0Delta(encodePriceSqrt(2n, 1n), PRICE_1, 0n, true)).toBe(0n)
    expect(getAmount0Delta(PRICE_1, PRICE_1, 0n, true)).toBe(0n)
    expect(getAmount1Delta(PRICE_1, encodePriceSqrt(2n, 1n), 0n, true)).toBe(0n)
    expect(getAmount1Delta(PRICE_1, PRICE_1, E18, true)).toBe(0n)
  })

  it('0.1 token1 / 0.0909 token0 for price 1 to 1.21, rounded up and down', () => {
    const p121 = encodePriceSqrt(121n, 100n)
    expect(getAmount0Delta(p121, PRICE_1, E18, true)).toBe(90909090909090910n)
    expect(getAmount0Delta(p121, PRICE_1, E18, false)).toBe(90909090909090909n)
    expect(getAmount1Delta(PRICE_1, p121, E18, true)).toBe(100000000000000000n)
    expect(getAmount1Delta(PRICE_1, p121, E18, false)).toBe(99999999999999999n)
    // argument order does not matter
    expect(getAmount0Delta(PRICE_1, p121, E18, true)).toBe(90909090909090910n)
    expect(getAmount1Delta(p121, PRICE_1, E18, true)).toBe(100000000000000000n)
  })

  it('works for prices whose product overflows', () => {
    const a = encodePriceSqrt(1n << 96n, 1n)
    const b = encodePriceSqrt(1n << 90n, 1n)
    expect(getAmount0Delta(a, b, E18, true)).toBe(getAmount0Delta(a, b, E18, false) + 1n)
  })

  it('rejects a zero price', () => {
    expect(() => getAmount0Delta(0n, PRICE_1, E18, true)).toThrow(AmmMathError)
  })
})
