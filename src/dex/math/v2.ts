/**
 * UniswapV2Library.getAmountOut / getAmountIn (v2-periphery) with the fee as a parameter.
 *
 * The fee is in basis points (30 = 0.3%). When it is a whole number of tenths of a percent the
 * library's own scale (1000, and 997 for 0.3%) is used, so every intermediate product, and thus
 * every SafeMath overflow, is the one the Solidity sees; other fees (PancakeSwap's 25) use a
 * 10000 scale as those forks' libraries do.
 */
import { MAX_UINT256 } from './constants.ts'
import { AmmMathError } from './errors.ts'

export const DEFAULT_V2_FEE_BPS = 30

interface FeeScale {
  /** 1000 or 10000 */
  denominator: bigint
  /** denominator minus the fee */
  multiplier: bigint
}

/**
 * each fee's scale, made at its first use: a route search quotes V2 pairs hundreds of times, and a
 * scale object and a BigInt per quote were a measurable share of getAmountOut. Bounded by the
 * fees there are (0..9,999 bps; a venue has one or two).
 */
const feeScales: FeeScale[] = []

function feeScale(feeBps: number): FeeScale {
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps >= 10_000) throw new AmmMathError('INVALID_INPUT', `feeBps ${feeBps} is not an integer in [0, 10000)`)
  return (feeScales[feeBps] ??=
    feeBps % 10 === 0
      ? Object.freeze({ denominator: 1000n, multiplier: BigInt(1000 - feeBps / 10) })
      : Object.freeze({ denominator: 10_000n, multiplier: BigInt(10_000 - feeBps) }))
}

function assertUint256(x: bigint, what: string): void {
  if (x < 0n || x > MAX_UINT256) throw new AmmMathError('INVALID_INPUT', `${what} ${x} is not a uint256`)
}

/** SafeMath: reverts with ds-math-*-overflow instead of wrapping */
function checked(x: bigint, op: 'mul' | 'add'): bigint {
  if (x > MAX_UINT256) throw new AmmMathError('OVERFLOW', `uint256 ${op} overflow`, `ds-math-${op}-overflow`)
  return x
}

function assertReserves(reserveIn: bigint, reserveOut: bigint): void {
  assertUint256(reserveIn, 'reserveIn')
  assertUint256(reserveOut, 'reserveOut')
  if (reserveIn === 0n || reserveOut === 0n) {
    throw new AmmMathError('INSUFFICIENT_LIQUIDITY', 'a reserve is zero', 'UniswapV2Library: INSUFFICIENT_LIQUIDITY')
  }
}

/** output for exactly `amountIn` of input, rounded down */
export function getAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, feeBps: number = DEFAULT_V2_FEE_BPS): bigint {
  const { denominator: scale, multiplier } = feeScale(feeBps)
  assertUint256(amountIn, 'amountIn')
  if (amountIn === 0n) throw new AmmMathError('INSUFFICIENT_INPUT_AMOUNT', 'amountIn is zero', 'UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT')
  assertReserves(reserveIn, reserveOut)
  const amountInWithFee = checked(amountIn * multiplier, 'mul')
  const numerator = checked(amountInWithFee * reserveOut, 'mul')
  const denominator = checked(checked(reserveIn * scale, 'mul') + amountInWithFee, 'add')
  return numerator / denominator
}

/** input needed for at least `amountOut` of output, rounded up (the library's +1) */
export function getAmountIn(amountOut: bigint, reserveIn: bigint, reserveOut: bigint, feeBps: number = DEFAULT_V2_FEE_BPS): bigint {
  const { denominator: scale, multiplier } = feeScale(feeBps)
  assertUint256(amountOut, 'amountOut')
  if (amountOut === 0n) throw new AmmMathError('INSUFFICIENT_OUTPUT_AMOUNT', 'amountOut is zero', 'UniswapV2Library: INSUFFICIENT_OUTPUT_AMOUNT')
  assertReserves(reserveIn, reserveOut)
  // reserveOut.sub(amountOut) reverts past the reserve, and the division by zero at the reserve:
  // either way the pair cannot give that much
  if (amountOut > reserveOut) throw new AmmMathError('INSUFFICIENT_LIQUIDITY', `amountOut ${amountOut} exceeds reserveOut ${reserveOut}`, 'ds-math-sub-underflow')
  if (amountOut === reserveOut) throw new AmmMathError('INSUFFICIENT_LIQUIDITY', `amountOut ${amountOut} equals reserveOut: no price can buy the whole reserve`)
  const numerator = checked(checked(reserveIn * amountOut, 'mul') * scale, 'mul')
  const denominator = checked((reserveOut - amountOut) * multiplier, 'mul')
  return checked(numerator / denominator + 1n, 'add')
}
