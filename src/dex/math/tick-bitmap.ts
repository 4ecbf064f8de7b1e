/**
 * TickBitmap (v3-core): which ticks are initialized, one bit per tick/tickSpacing in 256-bit
 * words keyed by int16 word position. The swap loop asks it for the next initialized tick, but
 * never looks further than the current word: the contract stops at each word boundary (an extra
 * swap step with its own rounding), so an exact port must do the same instead of jumping
 * straight to the next initialized tick.
 */
import { MAX_UINT256 } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { leastSignificantBit, mostSignificantBit } from './bit-math.ts'

/** word position (int16) -> 256-bit word; an absent key is an all-zero word */
export type TickBitmap = ReadonlyMap<number, bigint>

export interface BitmapPosition {
  wordPos: number
  bitPos: number
}

export interface NextInitializedTick {
  /** the next initialized tick, or the last tick of the word when `initialized` is false */
  tick: number
  initialized: boolean
}

/** bitmap coordinates of a compressed tick (tick / tickSpacing) */
export function position(compressedTick: number): BitmapPosition {
  // int24 >> 8 and uint8(tick % 256): an arithmetic shift and the low 8 bits of two's complement
  return { wordPos: compressedTick >> 8, bitPos: compressedTick & 0xff }
}

/** masks[bitPos]: all bits at or right of bitPos (lte search) */
const AT_OR_BELOW_MASKS: readonly bigint[] = Array.from({ length: 256 }, (_, i) => (2n << BigInt(i)) - 1n)
/** masks[bitPos]: all bits at or left of bitPos (search upwards) */
const AT_OR_ABOVE_MASKS: readonly bigint[] = Array.from({ length: 256 }, (_, i) => MAX_UINT256 ^ ((1n << BigInt(i)) - 1n))

/** floor(tick / tickSpacing): the contract rounds negative ticks towards negative infinity */
function compress(tick: number, tickSpacing: number): number {
  return Math.floor(tick / tickSpacing)
}

/**
 * nextInitializedTickWithinOneWord writing into `out`. lte = search at or below `tick` (the
 * zeroForOne direction), otherwise strictly above.
 */
export function nextInitializedTickWithinOneWordInto(
  out: NextInitializedTick,
  bitmap: TickBitmap,
  tick: number,
  tickSpacing: number,
  lte: boolean,
): NextInitializedTick {
  const compressed = compress(tick, tickSpacing)
  if (lte) {
    const wordPos = compressed >> 8
    const bitPos = compressed & 0xff
    const word = bitmap.get(wordPos)
    const masked = word === undefined ? 0n : word & AT_OR_BELOW_MASKS[bitPos]
    out.initialized = masked !== 0n
    // none at or below in this word: stop at the word's rightmost tick
    out.tick = (out.initialized ? compressed - (bitPos - mostSignificantBit(masked)) : compressed - bitPos) * tickSpacing
  } else {
    // start from the next tick's word: the current tick's own state does not matter going up
    const next = compressed + 1
    const wordPos = next >> 8
    const bitPos = next & 0xff
    const word = bitmap.get(wordPos)
    const masked = word === undefined ? 0n : word & AT_OR_ABOVE_MASKS[bitPos]
    out.initialized = masked !== 0n
    // none above in this word: stop at the word's leftmost tick
    out.tick = (out.initialized ? next + (leastSignificantBit(masked) - bitPos) : next + (255 - bitPos)) * tickSpacing
  }
  return out
}

export function nextInitializedTickWithinOneWord(bitmap: TickBitmap, tick: number, tickSpacing: number, lte: boolean): NextInitializedTick {
  return nextInitializedTickWithinOneWordInto({ tick: 0, initialized: false }, bitmap, tick, tickSpacing, lte)
}

/** TickBitmap.flipTick on a mutable bitmap: toggles the bit of an initialized-tick boundary */
export function flipTick(bitmap: Map<number, bigint>, tick: number, tickSpacing: number): void {
  if (tick % tickSpacing !== 0) throw new AmmMathError('INVALID_POOL_STATE', `flipTick: tick ${tick} is not a multiple of tickSpacing ${tickSpacing}`)
  const { wordPos, bitPos } = position(tick / tickSpacing)
  const word = (bitmap.get(wordPos) ?? 0n) ^ (1n << BigInt(bitPos))
  // keep the map sparse: an all-zero word reads the same as an absent one
  if (word === 0n) bitmap.delete(wordPos)
  else bitmap.set(wordPos, word)
}

/** whether `tick` has its bit set (a tick off the spacing never has one) */
export function isTickInitialized(bitmap: TickBitmap, tick: number, tickSpacing: number): boolean {
  if (tick % tickSpacing !== 0) return false
  const { wordPos, bitPos } = position(tick / tickSpacing)
  const word = bitmap.get(wordPos)
  return word !== undefined && ((word >> BigInt(bitPos)) & 1n) === 1n
}
