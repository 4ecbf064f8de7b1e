/**
 * LiquidityMath (v3-core): add a signed int128 delta to a uint128 liquidity, reverting ('LS' /
 * 'LA') instead of wrapping. Crossing a tick applies its liquidityNet through this.
 */
import { MAX_UINT128 } from './constants.ts'
import { AmmMathError } from './errors.ts'

export function addDelta(x: bigint, y: bigint): bigint {
  const z = x + y
  if (y < 0n) {
    if (z < 0n) throw new AmmMathError('LIQUIDITY_OUT_OF_RANGE', `addDelta: liquidity ${x} minus ${-y} is negative`, 'LS')
  } else if (z > MAX_UINT128) {
    throw new AmmMathError('LIQUIDITY_OUT_OF_RANGE', `addDelta: liquidity ${x} plus ${y} exceeds uint128`, 'LA')
  }
  return z
}
