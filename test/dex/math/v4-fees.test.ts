import { describe, expect, it } from 'vitest'
import { isAmmMathError, v4ProtocolFee, v4SwapFee } from '../../../src/dex/math/index.ts'

describe('Uniswap V4 swap fee (ProtocolFeeLibrary.calculateSwapFee)', () => {
  it('is the LP fee without a protocol fee, and protocol + LP - protocol*LP/1e6 with one', () => {
    expect(v4SwapFee(0, 3000, true)).toBe(3000)
    // 500 zeroForOne, 1000 oneForZero packed as slot0 holds them
    const packed = 500 | (1000 << 12)
    expect([v4ProtocolFee(packed, true), v4ProtocolFee(packed, false)]).toEqual([500, 1000])
    expect(v4SwapFee(packed, 3000, true)).toBe(500 + 3000 - 1) // 1.5 rounds down in the product, so the total rounds up
    expect(v4SwapFee(packed, 3000, false)).toBe(1000 + 3000 - 3)
    expect(v4SwapFee(packed, 0, false)).toBe(1000)
    expect(v4SwapFee(packed, 1_000_000, true)).toBe(1_000_000)
  })

  it('refuses fees the PoolManager cannot hold', () => {
    for (const [protocolFee, lpFee] of [[1001, 3000], [0, 1_000_001], [0, -1], [0, 0.5]] as const) {
      let thrown: unknown
      try {
        v4SwapFee(protocolFee, lpFee, true)
      } catch (err) {
        thrown = err
      }
      expect(isAmmMathError(thrown), `${protocolFee} ${lpFee}`).toBe(true)
    }
  })
})
