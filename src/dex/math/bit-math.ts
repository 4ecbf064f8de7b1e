/**
 * BitMath (v3-core): index of the most / least significant set bit of a uint256. Used to find the
 * next initialized tick inside a 256-bit bitmap word and by TickMath's logarithm.
 */
import { AmmMathError } from './errors.ts'

const U128 = 1n << 128n
const U64 = 1n << 64n
const U32 = 1n << 32n

/**
 * floor(log2(x)) for 0 < x < 2^256: the Solidity's halving search for the wide steps, then
 * Math.clz32 once the rest fits in 32 bits (fewer bigint allocations, same answer).
 */
export function mostSignificantBit(x: bigint): number {
  if (x <= 0n) throw new AmmMathError('ZERO_BITS', 'mostSignificantBit: x must be positive')
  let r = 0
  if (x >= U128) {
    x >>= 128n
    r += 128
  }
  if (x >= U64) {
    x >>= 64n
    r += 64
  }
  if (x >= U32) {
    x >>= 32n
    r += 32
  }
  return r + 31 - Math.clz32(Number(x))
}

/** index of the lowest set bit of 0 < x < 2^256 */
export function leastSignificantBit(x: bigint): number {
  if (x <= 0n) throw new AmmMathError('ZERO_BITS', 'leastSignificantBit: x must be positive')
  // x & -x isolates the lowest set bit (two's complement of an unbounded bigint)
  return mostSignificantBit(x & -x)
}

