/**
 * SqrtPriceMath (v3-core): next price from an amount, and amounts between two prices, for a
 * constant liquidity. Each function rounds the way the contract does (always against the
 * trader), and keeps the contract's branch structure even where two branches are
 * mathematically equal, because some are not: getNextSqrtPriceFromAmount0RoundingUp's fallback
 * formula rounds differently from its main one.
 *
 * Arguments are assumed to be in their Solidity types: sqrt prices uint160, liquidity uint128,
 * amounts uint256.
 */
import { MAX_UINT160, MAX_UINT256, Q96, RESOLUTION_96 } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { mulDiv, mulDivRoundingUp } from './full-math.ts'
import { divRoundingUp } from './unsafe-math.ts'

const LOW_96_BITS = Q96 - 1n

/**
 * Price after adding (`add`) or removing `amount` of token0: liquidity * sqrtP / (liquidity ± amount * sqrtP),
 * rounded up so a zeroForOne input never moves the price too far.
 */
export function getNextSqrtPriceFromAmount0RoundingUp(sqrtPX96: bigint, liquidity: bigint, amount: bigint, add: boolean): bigint {
  // short-circuit: otherwise the rounding does not guarantee the input price comes back
  if (amount === 0n) return sqrtPX96
  const numerator1 = liquidity << RESOLUTION_96
  const product = amount * sqrtPX96

  if (add) {
    // main formula only when amount * sqrtP and the sum both fit in 256 bits (the contract tests for wrap-around)
    if (product <= MAX_UINT256) {
      const denominator = numerator1 + product
      if (denominator <= MAX_UINT256) return mulDivRoundingUp(numerator1, sqrtPX96, denominator)
    }
    // fallback: liquidity / (liquidity / sqrtP + amount), with the contract's checked add
    const denominator = numerator1 / sqrtPX96 + amount
    if (denominator > MAX_UINT256) throw new AmmMathError('OVERFLOW', 'getNextSqrtPriceFromAmount0RoundingUp: denominator overflows uint256')
    return divRoundingUp(numerator1, denominator)
  }

  // removing token0: the product must fit and stay below liquidity << 96, or the price would be infinite
  if (product > MAX_UINT256 || numerator1 <= product) {
    throw new AmmMathError('NEXT_PRICE_OUT_OF_RANGE', 'getNextSqrtPriceFromAmount0RoundingUp: amount exceeds the token0 the liquidity holds')
  }
  const result = mulDivRoundingUp(numerator1, sqrtPX96, numerator1 - product)
  if (result > MAX_UINT160) throw new AmmMathError('NEXT_PRICE_OUT_OF_RANGE', 'getNextSqrtPriceFromAmount0RoundingUp: price does not fit in uint160')
  return result
}

/**
 * Price after adding (`add`) or removing `amount` of token1: sqrtP ± amount / liquidity, rounded
 * down so a oneForZero input never moves the price too far.
 */
export function getNextSqrtPriceFromAmount1RoundingDown(sqrtPX96: bigint, liquidity: bigint, amount: bigint, add: boolean): bigint {
  if (add) {
    // the contract's `amount <= uint160 max` shortcut and its mulDiv give the same floor; only the
    // mulDiv can revert (quotient >= 2^256), and a zero liquidity reverts in both
    if (liquidity === 0n) throw new AmmMathError('DIVISION_BY_ZERO', 'getNextSqrtPriceFromAmount1RoundingDown: zero liquidity')
    const quotient = amount <= MAX_UINT160 ? (amount << RESOLUTION_96) / liquidity : mulDiv(amount, Q96, liquidity)
    const result = sqrtPX96 + quotient
    if (result > MAX_UINT160) throw new AmmMathError('NEXT_PRICE_OUT_OF_RANGE', 'getNextSqrtPriceFromAmount1RoundingDown: price does not fit in uint160')
    return result
  }
  // divRoundingUp by zero liquidity is 0 in the contract's assembly; mirrored by divRoundingUp
  const quotient = amount <= MAX_UINT160 ? divRoundingUp(amount << RESOLUTION_96, liquidity) : mulDivRoundingUp(amount, Q96, liquidity)
  if (sqrtPX96 <= quotient) {
    throw new AmmMathError('NEXT_PRICE_OUT_OF_RANGE', 'getNextSqrtPriceFromAmount1RoundingDown: amount exceeds the token1 the liquidity holds')
  }
  return sqrtPX96 - quotient
}

/** price after `amountIn` goes into the pool (token0 if zeroForOne), rounded so the target is not passed */
export function getNextSqrtPriceFromInput(sqrtPX96: bigint, liquidity: bigint, amountIn: bigint, zeroForOne: boolean): bigint {
  if (sqrtPX96 === 0n || liquidity === 0n) throw new AmmMathError('ZERO_PRICE_OR_LIQUIDITY', 'getNextSqrtPriceFromInput: zero price or liquidity')
  return zeroForOne
    ? getNextSqrtPriceFromAmount0RoundingUp(sqrtPX96, liquidity, amountIn, true)
    : getNextSqrtPriceFromAmount1RoundingDown(sqrtPX96, liquidity, amountIn, true)
}

/** price after `amountOut` leaves the pool (token1 if zeroForOne), rounded so the target is passed */
export function getNextSqrtPriceFromOutput(sqrtPX96: bigint, liquidity: bigint, amountOut: bigint, zeroForOne: boolean): bigint {
  if (sqrtPX96 === 0n || liquidity === 0n) throw new AmmMathError('ZERO_PRICE_OR_LIQUIDITY', 'getNextSqrtPriceFromOutput: zero price or liquidity')
  return zeroForOne
    ? getNextSqrtPriceFromAmount1RoundingDown(sqrtPX96, liquidity, amountOut, false)
    : getNextSqrtPriceFromAmount0RoundingUp(sqrtPX96, liquidity, amountOut, false)
}

/**
 * token0 between two prices: liquidity * (sqrtB - sqrtA) / (sqrtA * sqrtB), as the contract
 * computes it (two roundings: a mulDiv by sqrtB, then a division by sqrtA).
 */
export function getAmount0Delta(sqrtRatioAX96: bigint, sqrtRatioBX96: bigint, liquidity: bigint, roundUp: boolean): bigint {
  if (sqrtRatioAX96 > sqrtRatioBX96) {
    const t = sqrtRatioAX96
    sqrtRatioAX96 = sqrtRatioBX96
    sqrtRatioBX96 = t
  }
  if (sqrtRatioAX96 === 0n) throw new AmmMathError('ZERO_PRICE_OR_LIQUIDITY', 'getAmount0Delta: zero price')
  const numerator1 = liquidity << RESOLUTION_96
  const numerator2 = sqrtRatioBX96 - sqrtRatioAX96
  return roundUp
    ? divRoundingUp(mulDivRoundingUp(numerator1, numerator2, sqrtRatioBX96), sqrtRatioAX96)
    : mulDiv(numerator1, numerator2, sqrtRatioBX96) / sqrtRatioAX96
}

/** token1 between two prices: liquidity * (sqrtB - sqrtA) / 2^96 */
export function getAmount1Delta(sqrtRatioAX96: bigint, sqrtRatioBX96: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const diff = sqrtRatioAX96 > sqrtRatioBX96 ? sqrtRatioAX96 - sqrtRatioBX96 : sqrtRatioBX96 - sqrtRatioAX96
  // dividing by 2^96 is a shift; uint128 * uint160 >> 96 always fits, so mulDiv's overflow check cannot fire
  const product = liquidity * diff
  const floor = product >> RESOLUTION_96
  return roundUp && (product & LOW_96_BITS) !== 0n ? floor + 1n : floor
}
