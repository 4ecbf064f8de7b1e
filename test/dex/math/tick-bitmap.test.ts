import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  AmmMathError,
  buildTickState,
  countInitializedTicksCrossed,
  flipTick,
  isTickInitialized,
  nextInitializedTickWithinOneWord,
  position,
  type TickBitmap,
} from '../../../src/dex/math/index.ts'

function bitmapOf(ticks: readonly number[], tickSpacing = 1): Map<number, bigint> {
  const bitmap = new Map<number, bigint>()
  for (const t of ticks) flipTick(bitmap, t, tickSpacing)
  return bitmap
}

describe('TickBitmap.position and flipTick (v3-core TickBitmap.spec)', () => {
  it('splits a compressed tick into word and bit, rounding negative ticks down', () => {
    expect(position(0)).toEqual({ wordPos: 0, bitPos: 0 })
    expect(position(255)).toEqual({ wordPos: 0, bitPos: 255 })
    expect(position(256)).toEqual({ wordPos: 1, bitPos: 0 })
    expect(position(-1)).toEqual({ wordPos: -1, bitPos: 255 })
    expect(position(-256)).toEqual({ wordPos: -1, bitPos: 0 })
    expect(position(-257)).toEqual({ wordPos: -2, bitPos: 255 })
  })

  it('flips only the specified tick, and back', () => {
    const bitmap = bitmapOf([-230])
    expect(isTickInitialized(bitmap, -230, 1)).toBe(true)
    for (const t of [-231, -229, -230 + 256, -230 - 256]) expect(isTickInitialized(bitmap, t, 1)).toBe(false)
    flipTick(bitmap, -230, 1)
    expect(isTickInitialized(bitmap, -230, 1)).toBe(false)
    expect(bitmap.size).toBe(0)
  })

  it('reverts only itself', () => {
    const bitmap = bitmapOf([-230, -259, -229, 500, -259, -229, -259])
    expect(isTickInitialized(bitmap, -259, 1)).toBe(true)
    expect(isTickInitialized(bitmap, -229, 1)).toBe(false)
  })

  it('refuses a tick off the spacing', () => {
    expect(() => flipTick(new Map(), 5, 10)).toThrow(AmmMathError)
  })
})

describe('TickBitmap.nextInitializedTickWithinOneWord (v3-core TickBitmap.spec)', () => {
  const ticks = [-200, -55, -4, 70, 78, 84, 139, 240, 535]
  const next = (bitmap: TickBitmap, tick: number, lte: boolean) => nextInitializedTickWithinOneWord(bitmap, tick, 1, lte)

  it('lte = false', () => {
    const bitmap = bitmapOf(ticks)
    expect(next(bitmap, 78, false)).toEqual({ tick: 84, initialized: true })
    expect(next(bitmap, -55, false)).toEqual({ tick: -4, initialized: true })
    expect(next(bitmap, 77, false)).toEqual({ tick: 78, initialized: true })
    expect(next(bitmap, -56, false)).toEqual({ tick: -55, initialized: true })
    expect(next(bitmap, 255, false)).toEqual({ tick: 511, initialized: false })
    expect(next(bitmap, -257, false)).toEqual({ tick: -200, initialized: true })
    expect(next(bitmap, 508, false)).toEqual({ tick: 511, initialized: false })
    expect(next(bitmap, 383, false)).toEqual({ tick: 511, initialized: false })
    flipTick(bitmap, 340, 1)
    expect(next(bitmap, 328, false)).toEqual({ tick: 340, initialized: true })
  })

  it('lte = true', () => {
    const bitmap = bitmapOf(ticks)
    expect(next(bitmap, 78, true)).toEqual({ tick: 78, initialized: true })
    expect(next(bitmap, 79, true)).toEqual({ tick: 78, initialized: true })
    expect(next(bitmap, 258, true)).toEqual({ tick: 256, initialized: false })
    expect(next(bitmap, 256, true)).toEqual({ tick: 256, initialized: false })
    expect(next(bitmap, 72, true)).toEqual({ tick: 70, initialized: true })
    expect(next(bitmap, -257, true)).toEqual({ tick: -512, initialized: false })
    expect(next(bitmap, 1023, true)).toEqual({ tick: 768, initialized: false })
    expect(next(bitmap, 900, true)).toEqual({ tick: 768, initialized: false })
    flipTick(bitmap, 329, 1)
    expect(next(bitmap, 456, true)).toEqual({ tick: 329, initialized: true })
  })

  it('equals a tick-by-tick scan of the word, for any spacing and any starting tick', () => {
    const spacingArb = fc.constantFrom(1, 10, 60, 200)
    fc.assert(
      fc.property(
        spacingArb,
        fc.array(fc.integer({ min: -1200, max: 1200 }), { maxLength: 40 }),
        fc.integer({ min: -1300 * 200, max: 1300 * 200 }),
        fc.boolean(),
        (spacing, compressedTicks, tick, lte) => {
          const initialized = new Set(compressedTicks)
          const { bitmap } = buildTickState([...initialized].map((c) => ({ tick: c * spacing, liquidityNet: 0n })), spacing)
          const compressed = Math.floor(tick / spacing)
          let expected: { tick: number; initialized: boolean }
          if (lte) {
            const wordStart = Math.floor(compressed / 256) * 256
            let c = compressed
            while (c > wordStart && !initialized.has(c)) c--
            expected = { tick: c * spacing, initialized: initialized.has(c) }
          } else {
            const wordEnd = Math.floor((compressed + 1) / 256) * 256 + 255
            let c = compressed + 1
            while (c < wordEnd && !initialized.has(c)) c++
            expected = { tick: c * spacing, initialized: initialized.has(c) }
          }
          expect(nextInitializedTickWithinOneWord(bitmap, tick, spacing, lte)).toEqual(expected)
        },
      ),
      { numRuns: 3000 },
    )
  })
})

describe("PoolTicksCounter.countInitializedTicksCrossed (QuoterV2's figure)", () => {
  const { bitmap } = buildTickState(
    [-400, -200, -100, 0, 100, 200, 2560, 2570].map((tick) => ({ tick, liquidityNet: 0n })),
    10,
  )
  const count = (before: number, after: number) => countInitializedTicksCrossed(bitmap, 10, before, after)

  it('counts initialized ticks from the tick before to the tick after, in either direction', () => {
    expect(count(150, -150)).toBe(3) // 100, 0, -100
    expect(count(-150, 150)).toBe(3)
    expect(count(105, 5)).toBe(2) // compressed 10 and 0: both bits set
    expect(count(50, 60)).toBe(0)
  })

  it('does not count the tick after when it is an initialized tick', () => {
    expect(count(150, 100)).toBe(0)
    expect(count(150, 0)).toBe(1)
  })

  it('does count the tick before when initialized, even when moving up from it', () => {
    expect(count(100, 150)).toBe(1)
  })

  it('crosses bitmap words', () => {
    expect(count(0, 2575)).toBe(5) // 0, 100, 200 in word 0; 2560, 2570 in word 1
    expect(count(-1000, 2575)).toBe(8)
  })

  it('compresses with truncation towards zero, unlike TickBitmap', () => {
    // -5 / 10 truncates to 0, so the initialized tick 0 is in the counted range although the price never reached it
    expect(count(-5, -150)).toBe(2)
  })
})
