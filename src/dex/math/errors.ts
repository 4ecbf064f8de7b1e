/**
 * The one error type the AMM math raises. Each `require` of the ported Solidity becomes a throw
 * with a `reason` the router can branch on (an impossible input is not a bug, it is a route to
 * drop) and, where the contract has one, the exact `revert` string, so a native failure can be
 * compared with the EVM's revert when the route is verified.
 */

import { BaseError } from '../../primitives/base-error.ts'

export type AmmMathErrorReason =
  /** UniswapV2Library: amountIn is zero */
  | 'INSUFFICIENT_INPUT_AMOUNT'
  /** UniswapV2Library: amountOut is zero */
  | 'INSUFFICIENT_OUTPUT_AMOUNT'
  /** UniswapV2Library: a reserve is zero, or more output asked than the reserve holds; QuoterV2: exact output not fully filled */
  | 'INSUFFICIENT_LIQUIDITY'
  /** a checked uint256 / int256 / uint160 bound the contract enforces (SafeMath, FullMath, SafeCast) */
  | 'OVERFLOW'
  /** a checked division by zero (FullMath denominator, Solidity `/`) */
  | 'DIVISION_BY_ZERO'
  /** TickMath 'T': |tick| > MAX_TICK */
  | 'TICK_OUT_OF_RANGE'
  /** TickMath 'R': sqrtPriceX96 outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO) */
  | 'SQRT_PRICE_OUT_OF_RANGE'
  /** SqrtPriceMath: the next price would leave (0, 2^160), i.e. the amount exceeds what the liquidity can give */
  | 'NEXT_PRICE_OUT_OF_RANGE'
  /** SqrtPriceMath: zero price or zero liquidity where the contract requires them positive */
  | 'ZERO_PRICE_OR_LIQUIDITY'
  /** LiquidityMath 'LS' / 'LA': liquidity would go below zero or above 2^128 - 1 */
  | 'LIQUIDITY_OUT_OF_RANGE'
  /** UniswapV3Pool 'AS': amountSpecified is zero */
  | 'ZERO_AMOUNT'
  /** UniswapV3Pool 'SPL': sqrtPriceLimitX96 on the wrong side of the price or outside (MIN, MAX) */
  | 'PRICE_LIMIT'
  /** QuoterV2's callback: the swap moved no tokens (it ran entirely through zero liquidity) */
  | 'ZERO_SWAP'
  /** BitMath: msb / lsb of zero */
  | 'ZERO_BITS'
  /** an argument outside its Solidity type (negative uint, non-integer tick, fee >= 1e6, ...) */
  | 'INVALID_INPUT'
  /** a pool description that cannot exist on chain (tick not on spacing, duplicate tick, bitmap bit with no tick) */
  | 'INVALID_POOL_STATE'

export class AmmMathError extends BaseError {
  override readonly name = 'AmmMathError'

  constructor(
    readonly reason: AmmMathErrorReason,
    message: string,
    /** the contract's revert string for this require, when it has one */
    readonly revert?: string,
  ) {
    super(message)
  }
}

export function isAmmMathError(value: unknown): value is AmmMathError {
  return value instanceof AmmMathError
}
