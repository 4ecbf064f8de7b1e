/**
 * PoolTicksCounter.countInitializedTicksCrossed (v3-periphery), the figure QuoterV2 returns as
 * `initializedTicksCrossed` for gas estimation. It is not the number of ticks the swap loop
 * crossed: it counts set bitmap bits between the tick before (inclusive) and the tick after,
 * excluding the tick after only when it is itself an initialized tick. It also compresses
 * ticks with Solidity's truncating division (towards zero), unlike TickBitmap. Ported as is so
 * the quote can be compared field by field with QuoterV2.
 */
import { MAX_UINT256 } from './constants.ts'
import type { TickBitmap } from './tick-bitmap.ts'

function popCount(x: bigint): number {
  let bits = 0
  while (x !== 0n) {
    x &= x - 1n
    bits++
  }
  return bits
}

export function countInitializedTicksCrossed(bitmap: TickBitmap, tickSpacing: number, tickBefore: number, tickAfter: number): number {
  // int24 / int24 truncates towards zero; Math.trunc of an exact small quotient does the same
  const compressedBefore = Math.trunc(tickBefore / tickSpacing)
  const compressedAfter = Math.trunc(tickAfter / tickSpacing)
  const wordPos = compressedBefore >> 8
  const bitPos = compressedBefore & 0xff
  const wordPosAfter = compressedAfter >> 8
  const bitPosAfter = compressedAfter & 0xff

  const wordAfter = bitmap.get(wordPosAfter) ?? 0n
  const tickAfterInitialized = ((wordAfter >> BigInt(bitPosAfter)) & 1n) === 1n && tickAfter % tickSpacing === 0

  let wordPosLower: number
  let bitPosLower: number
  let wordPosHigher: number
  let bitPosHigher: number
  if (wordPos < wordPosAfter || (wordPos === wordPosAfter && bitPos <= bitPosAfter)) {
    wordPosLower = wordPos
    bitPosLower = bitPos
    wordPosHigher = wordPosAfter
    bitPosHigher = bitPosAfter
  } else {
    wordPosLower = wordPosAfter
    bitPosLower = bitPosAfter
    wordPosHigher = wordPos
    bitPosHigher = bitPos
  }

  let count = 0
  // first word: the lower bit and everything left of it
  let mask = (MAX_UINT256 << BigInt(bitPosLower)) & MAX_UINT256
  while (wordPosLower <= wordPosHigher) {
    // last word: only up to the higher bit
    if (wordPosLower === wordPosHigher) mask &= MAX_UINT256 >> BigInt(255 - bitPosHigher)
    const word = bitmap.get(wordPosLower)
    if (word !== undefined) count += popCount(word & mask)
    wordPosLower++
    mask = MAX_UINT256
  }
  return tickAfterInitialized ? count - 1 : count
}
