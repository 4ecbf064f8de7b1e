/**
 * FullMath (v3-core): a*b/denominator with a 512-bit intermediate. bigint products never
 * overflow, so the Chinese-remainder dance of the Solidity collapses to one division; what must
 * survive is its observable behaviour: floor rounding, a revert for a zero denominator and a
 * revert when the quotient does not fit in uint256.
 *
 * Operands are assumed to be uint256 values (0 <= x <= MAX_UINT256); callers at the edge of the
 * module validate their inputs once instead of on every call in the swap loop.
 */
import { MAX_UINT256 } from './constants.ts'
import { AmmMathError } from './errors.ts'

/** floor(a * b / denominator); throws where FullMath.mulDiv reverts */
export function mulDiv(a: bigint, b: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new AmmMathError('DIVISION_BY_ZERO', 'mulDiv: denominator is zero')
  const result = (a * b) / denominator
  if (result > MAX_UINT256) throw new AmmMathError('OVERFLOW', 'mulDiv: result does not fit in uint256')
  return result
}

/**
 * ceil(a * b / denominator); throws where FullMath.mulDivRoundingUp reverts. The Solidity reverts
 * when the floor overflows, or when it is type(uint256).max with a remainder: exactly when the
 * ceiling exceeds uint256, so one check on the ceiling covers both.
 */
export function mulDivRoundingUp(a: bigint, b: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new AmmMathError('DIVISION_BY_ZERO', 'mulDivRoundingUp: denominator is zero')
  const product = a * b
  let result = product / denominator
  // a multiplication back is cheaper than a second (remainder) division on wide bigints
  if (result * denominator !== product) result += 1n
  if (result > MAX_UINT256) throw new AmmMathError('OVERFLOW', 'mulDivRoundingUp: result does not fit in uint256')
  return result
}
