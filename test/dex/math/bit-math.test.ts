import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { AmmMathError, leastSignificantBit, mostSignificantBit } from '../../../src/dex/math/index.ts'
import { MAX_UINT256 } from './helpers.ts'

describe('BitMath', () => {
  it('msb and lsb of the edges (v3-core BitMath.spec)', () => {
    expect(mostSignificantBit(1n)).toBe(0)
    expect(mostSignificantBit(2n)).toBe(1)
    expect(mostSignificantBit(MAX_UINT256)).toBe(255)
    expect(leastSignificantBit(1n)).toBe(0)
    expect(leastSignificantBit(2n)).toBe(1)
    expect(leastSignificantBit(MAX_UINT256)).toBe(0)
    for (let i = 0; i < 256; i++) {
      expect(mostSignificantBit(1n << BigInt(i))).toBe(i)
      expect(leastSignificantBit(1n << BigInt(i))).toBe(i)
    }
    expect(() => mostSignificantBit(0n)).toThrow(AmmMathError)
    expect(() => leastSignificantBit(0n)).toThrow(AmmMathError)
  })

  it('agree with the binary representation', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_UINT256 }), (x) => {
        const bits = x.toString(2)
        expect(mostSignificantBit(x)).toBe(bits.length - 1)
        expect(leastSignificantBit(x)).toBe(bits.length - 1 - bits.lastIndexOf('1'))
      }),
      { numRuns: 2000 },
    )
  })
})
