/**
 * Uniswap V4's swap fee (v4-core ProtocolFeeLibrary and Pool.swap): a pool's slot0 holds an LP fee
 * and two 12-bit protocol fees, one per direction (zeroForOne in the low 12 bits, oneForZero in the
 * high 12), all in pips (1,000,000 = 100%). A swap charges the protocol fee on the input first and
 * the LP fee on the rest: swapFee = protocolFee + lpFee - protocolFee * lpFee / 1e6 (rounded down,
 * so the total rounds up). The protocol's share is carved out of the fee the swap takes, so the
 * amounts a swap moves depend on swapFee alone: the V3 swap loop with fee = swapFee is V4's.
 */
import { AmmMathError } from './errors.ts'

export const V4_MAX_PROTOCOL_FEE = 1000
/** MAX_LP_FEE and SwapMath.MAX_SWAP_FEE: 100% */
export const V4_MAX_FEE_PIPS = 1_000_000
/** the LP-fee value that marks a dynamic-fee pool in its PoolKey (LPFeeLibrary.DYNAMIC_FEE_FLAG) */
export const V4_DYNAMIC_FEE_FLAG = 0x800000

/** the protocol fee of one direction from slot0's packed pair */
export function v4ProtocolFee(packed: number, zeroForOne: boolean): number {
  return zeroForOne ? packed & 0xfff : (packed >> 12) & 0xfff
}

/** the total fee in pips a swap in this direction pays; throws when the slot0 fees are out of range */
export function v4SwapFee(packedProtocolFee: number, lpFee: number, zeroForOne: boolean): number {
  const protocolFee = v4ProtocolFee(packedProtocolFee, zeroForOne)
  if (protocolFee > V4_MAX_PROTOCOL_FEE) throw new AmmMathError('INVALID_INPUT', `protocol fee ${protocolFee} above ${V4_MAX_PROTOCOL_FEE} pips`)
  if (!Number.isInteger(lpFee) || lpFee < 0 || lpFee > V4_MAX_FEE_PIPS) throw new AmmMathError('INVALID_INPUT', `LP fee ${lpFee} outside [0, 1e6]`)
  if (protocolFee === 0) return lpFee
  return protocolFee + lpFee - Math.floor((protocolFee * lpFee) / V4_MAX_FEE_PIPS)
}
