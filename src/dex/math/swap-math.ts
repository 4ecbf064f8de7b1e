/**
 * SwapMath.computeSwapStep (v3-core): one step of a swap within a single liquidity range, from
 * the current price towards a target (the next initialized tick or the price limit), for an
 * exact input (amountRemaining > 0) or exact output (amountRemaining < 0).
 */
import { FEE_PIPS_DENOMINATOR } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { mulDivRoundingUp } from './full-math.ts'
import {
  getAmount0Delta,
  getAmount1Delta,
  getNextSqrtPriceFromInput,
  getNextSqrtPriceFromOutput,
} from './sqrt-price-math.ts'

export interface SwapStep {
  /** price after the step; equals the target when the step reached it */
  sqrtRatioNextX96: bigint
  /** input taken by the step, fee excluded */
  amountIn: bigint
  /** output given by the step */
  amountOut: bigint
  /** fee taken on top of amountIn, in the input token */
  feeAmount: bigint
}

/**
 * The swap loop calls this once per step; writing into a caller-owned record keeps the loop free
 * of per-step allocations (beyond the bigints themselves).
 *
 * sqrt prices uint160, liquidity uint128, amountRemaining int256, feePips in [0, 1e6).
 * `amountInToTarget`: for an exact input, the step's first figure (the input to reach the target,
 * rounded up) when the caller already has it for these prices and liquidity (v3-exact-input.ts).
 * `splitSpent` false: the caller reads only amountIn + feeAmount (the swap loop does), so an
 * exact-input step that stops inside its range, which spends the whole remainder (its fee is what
 * its input leaves), gives amountIn = amountRemaining and feeAmount = 0 without computing the
 * input the new price takes: for zeroForOne that is two of the step's four wide divisions
 * (getAmount0Delta rounded up), and the step most route-search quotes end with.
 */
export function computeSwapStepInto(
  out: SwapStep,
  sqrtRatioCurrentX96: bigint,
  sqrtRatioTargetX96: bigint,
  liquidity: bigint,
  amountRemaining: bigint,
  feePips: bigint,
  amountInToTarget?: bigint,
  splitSpent = true,
): SwapStep {
  const zeroForOne = sqrtRatioCurrentX96 >= sqrtRatioTargetX96
  const exactIn = amountRemaining >= 0n
  const feeComplement = FEE_PIPS_DENOMINATOR - feePips

  let sqrtRatioNextX96: bigint
  let amountIn = 0n
  let amountOut = 0n

  if (exactIn) {
    // mulDiv(amountRemaining, 1e6 - fee, 1e6): an int256 times < 2^20 cannot overflow, so plain floor division
    const amountRemainingLessFee = (amountRemaining * feeComplement) / FEE_PIPS_DENOMINATOR
    amountIn = amountInToTarget ?? v3AmountInToTarget(sqrtRatioCurrentX96, sqrtRatioTargetX96, liquidity)
    sqrtRatioNextX96 =
      amountRemainingLessFee >= amountIn
        ? sqrtRatioTargetX96
        : getNextSqrtPriceFromInput(sqrtRatioCurrentX96, liquidity, amountRemainingLessFee, zeroForOne)
  } else {
    amountOut = zeroForOne
      ? getAmount1Delta(sqrtRatioTargetX96, sqrtRatioCurrentX96, liquidity, false)
      : getAmount0Delta(sqrtRatioCurrentX96, sqrtRatioTargetX96, liquidity, false)
    sqrtRatioNextX96 =
      -amountRemaining >= amountOut
        ? sqrtRatioTargetX96
        : getNextSqrtPriceFromOutput(sqrtRatioCurrentX96, liquidity, -amountRemaining, zeroForOne)
  }

  const max = sqrtRatioTargetX96 === sqrtRatioNextX96

  if (exactIn && !max && !splitSpent) {
    out.sqrtRatioNextX96 = sqrtRatioNextX96
    out.amountIn = amountRemaining
    out.amountOut = zeroForOne
      ? getAmount1Delta(sqrtRatioNextX96, sqrtRatioCurrentX96, liquidity, false)
      : getAmount0Delta(sqrtRatioCurrentX96, sqrtRatioNextX96, liquidity, false)
    out.feeAmount = 0n
    return out
  }

  // amounts for the price actually reached; reuse the full-range figure only when it is still exact
  if (zeroForOne) {
    if (!(max && exactIn)) amountIn = getAmount0Delta(sqrtRatioNextX96, sqrtRatioCurrentX96, liquidity, true)
    if (!(max && !exactIn)) amountOut = getAmount1Delta(sqrtRatioNextX96, sqrtRatioCurrentX96, liquidity, false)
  } else {
    if (!(max && exactIn)) amountIn = getAmount1Delta(sqrtRatioCurrentX96, sqrtRatioNextX96, liquidity, true)
    if (!(max && !exactIn)) amountOut = getAmount0Delta(sqrtRatioCurrentX96, sqrtRatioNextX96, liquidity, false)
  }

  // the rounded-up price of an exact output step can release one wei more than asked: cap it
  if (!exactIn && amountOut > -amountRemaining) amountOut = -amountRemaining

  // when the target was not reached the whole remainder is spent: what amountIn does not use is fee
  // (unchecked in the contract; amountIn <= amountRemainingLessFee here, so it cannot wrap)
  const feeAmount =
    exactIn && sqrtRatioNextX96 !== sqrtRatioTargetX96
      ? amountRemaining - amountIn
      : mulDivRoundingUp(amountIn, feePips, feeComplement)

  out.sqrtRatioNextX96 = sqrtRatioNextX96
  out.amountIn = amountIn
  out.amountOut = amountOut
  out.feeAmount = feeAmount
  return out
}

/** an exact-input step's input (fee excluded) to move the price from current to target, rounded up */
export function v3AmountInToTarget(sqrtRatioCurrentX96: bigint, sqrtRatioTargetX96: bigint, liquidity: bigint): bigint {
  return sqrtRatioCurrentX96 >= sqrtRatioTargetX96
    ? getAmount0Delta(sqrtRatioTargetX96, sqrtRatioCurrentX96, liquidity, true)
    : getAmount1Delta(sqrtRatioCurrentX96, sqrtRatioTargetX96, liquidity, true)
}

/** computeSwapStep with a fresh result record; `feePips` as the pool's fee number (500 = 0.05%) */
export function computeSwapStep(
  sqrtRatioCurrentX96: bigint,
  sqrtRatioTargetX96: bigint,
  liquidity: bigint,
  amountRemaining: bigint,
  feePips: number,
): SwapStep {
  assertFeePips(feePips)
  const out: SwapStep = { sqrtRatioNextX96: 0n, amountIn: 0n, amountOut: 0n, feeAmount: 0n }
  return computeSwapStepInto(out, sqrtRatioCurrentX96, sqrtRatioTargetX96, liquidity, amountRemaining, BigInt(feePips))
}

/** a V3 fee is a uint24 below 1e6 (the factory enforces it; 1e6 - fee would wrap otherwise) */
export function assertFeePips(feePips: number): void {
  if (!Number.isInteger(feePips) || feePips < 0 || feePips >= 1_000_000) {
    throw new AmmMathError('INVALID_INPUT', `fee ${feePips} is not an integer in [0, 1e6)`)
  }
}
