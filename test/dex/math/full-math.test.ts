import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { AmmMathError, divRoundingUp, mulDiv, mulDivRoundingUp } from '../../../src/dex/math/index.ts'
import { MAX_UINT256 } from './helpers.ts'

const u = (x: bigint): bigint => BigInt.asUintN(256, x)

/**
 * FullMath.mulDiv exactly as the Solidity computes it, in wrapping uint256 arithmetic: 512-bit
 * product by mulmod, remainder subtraction, factoring out twos, Newton inverse mod 2^256.
 * Returns undefined where the contract reverts. An independent reference for the bigint shortcut.
 */
function solidityMulDiv(a: bigint, b: bigint, denominator: bigint): bigint | undefined {
  const mm = (a * b) % MAX_UINT256 // mulmod(a, b, not(0))
  let prod0 = u(a * b)
  let prod1 = u(u(mm - prod0) - (mm < prod0 ? 1n : 0n))
  if (prod1 === 0n) return denominator > 0n ? prod0 / denominator : undefined
  if (!(denominator > prod1)) return undefined
  const remainder = (a * b) % denominator
  prod1 = u(prod1 - (remainder > prod0 ? 1n : 0n))
  prod0 = u(prod0 - remainder)
  let twos = u(-denominator) & denominator
  denominator = denominator / twos
  prod0 = prod0 / twos
  twos = u(u(0n - twos) / twos + 1n)
  prod0 |= u(prod1 * twos)
  let inv = u(3n * denominator) ^ 2n
  for (let i = 0; i < 6; i++) inv = u(inv * u(2n - u(denominator * inv)))
  return u(prod0 * inv)
}

/** operands spread over magnitudes, with the edges the 512-bit code branches on */
const uint256 = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX_UINT256 }),
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  fc.bigInt({ min: 0n, max: 1000n }),
  fc.integer({ min: 0, max: 256 }).map((k) => (1n << BigInt(k)) - 1n),
  fc.integer({ min: 0, max: 255 }).map((k) => 1n << BigInt(k)),
  fc.constant(MAX_UINT256),
)

function outcome(f: () => bigint): bigint | 'revert' {
  try {
    return f()
  } catch (error) {
    if (error instanceof AmmMathError) return 'revert'
    throw error
  }
}

describe('FullMath', () => {
  it('mulDiv equals the Solidity 512-bit algorithm and floor(a*b/d), reverting where it reverts', () => {
    fc.assert(
      fc.property(uint256, uint256, uint256, (a, b, d) => {
        const reference = solidityMulDiv(a, b, d)
        const expected = d !== 0n && (a * b) / d <= MAX_UINT256 ? (a * b) / d : undefined
        expect(reference).toBe(expected)
        expect(outcome(() => mulDiv(a, b, d))).toBe(expected ?? 'revert')
      }),
      { numRuns: 3000 },
    )
  })

  it('mulDivRoundingUp is the ceiling, and reverts when the ceiling passes uint256', () => {
    fc.assert(
      fc.property(uint256, uint256, uint256, (a, b, d) => {
        const ceil = d === 0n ? undefined : (a * b + d - 1n) / d
        const expected = ceil !== undefined && ceil <= MAX_UINT256 ? ceil : 'revert'
        expect(outcome(() => mulDivRoundingUp(a, b, d))).toBe(expected)
      }),
      { numRuns: 3000 },
    )
  })

  it('known edge values', () => {
    const q128 = 1n << 128n
    expect(mulDiv(q128, q128, q128 + 1n)).toBe(q128 - 1n) // v3-core FullMath.spec
    expect(mulDiv(MAX_UINT256, MAX_UINT256, MAX_UINT256)).toBe(MAX_UINT256)
    expect(() => mulDiv(q128, q128, 1n)).toThrow(AmmMathError) // 2^256 overflows
    expect(() => mulDiv(1n, 1n, 0n)).toThrow(/denominator/)
    // v3-core FullMath.spec: the floor is type(uint256).max and rounding up would overflow
    expect(mulDiv(535006138814359n, 432862656469423142931042426214547535783388063929571229938474969n, 2n)).toBe(MAX_UINT256)
    expect(() => mulDivRoundingUp(535006138814359n, 432862656469423142931042426214547535783388063929571229938474969n, 2n)).toThrow(AmmMathError)
    expect(() => mulDivRoundingUp(MAX_UINT256, MAX_UINT256, MAX_UINT256 - 1n)).toThrow(AmmMathError)
  })

  it('divRoundingUp is the ceiling, and 0 for a zero divisor like the EVM', () => {
    expect(divRoundingUp(7n, 2n)).toBe(4n)
    expect(divRoundingUp(8n, 2n)).toBe(4n)
    expect(divRoundingUp(0n, 5n)).toBe(0n)
    expect(divRoundingUp(5n, 0n)).toBe(0n)
  })
})
