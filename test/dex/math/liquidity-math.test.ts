import { describe, expect, it } from 'vitest'

import { addDelta, AmmMathError } from '../../../src/dex/math/index.ts'

function revertOf(f: () => unknown): string | undefined {
  try {
    f()
  } catch (error) {
    if (error instanceof AmmMathError) return error.revert
    throw error
  }
  return undefined
}

describe('LiquidityMath.addDelta (v3-core LiquidityMath.spec)', () => {
  it('adds and subtracts', () => {
    expect(addDelta(1n, 0n)).toBe(1n)
    expect(addDelta(1n, -1n)).toBe(0n)
    expect(addDelta(1n, 1n)).toBe(2n)
  })

  it("reverts 'LA' above uint128 and 'LS' below zero", () => {
    expect(revertOf(() => addDelta((1n << 128n) - 15n, 15n))).toBe('LA')
    expect(addDelta((1n << 128n) - 15n, 14n)).toBe((1n << 128n) - 1n)
    expect(revertOf(() => addDelta(0n, -1n))).toBe('LS')
    expect(revertOf(() => addDelta(3n, -4n))).toBe('LS')
  })
})
