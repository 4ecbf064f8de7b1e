/** The native recovery gives exactly what ethereumjs' own JavaScript ecrecover gives, and refuses what it refuses. */
import { ecrecover, bigIntToBytes, setLengthLeft } from '@ethereumjs/util'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { nativeEcrecover } from '../../src/crypto/ecrecover.ts'

const N = secp256k1.Point.CURVE().n

function outcome(f: () => Uint8Array): string {
  try {
    return Buffer.from(f()).toString('hex')
  } catch {
    return 'throws'
  }
}

describe('native ecrecover', () => {
  it('is loaded (the prebuilt binding ships with the secp256k1 package)', () => {
    expect(nativeEcrecover).toBeDefined()
  })

  it('property: equals ethereumjs ecrecover for every v form, and for invalid input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.integer({ min: 0, max: 5 }), (keySeed, msg, form) => {
        const key = (BigInt(`0x${Buffer.from(keySeed).toString('hex')}`) % (N - 1n)) + 1n
        const sig = secp256k1.sign(msg, setLengthLeft(bigIntToBytes(key), 32), { prehash: false, format: 'recovered' })
        const recovery = BigInt(sig[0])
        const r = sig.slice(1, 33)
        const s = sig.slice(33, 65)
        const chainId = 31337n
        const [v, chain] = [
          [recovery, undefined],
          [recovery + 27n, undefined],
          [recovery + 2n * chainId + 35n, chainId],
          [recovery + 29n, undefined], // invalid v
          [recovery + 27n, undefined],
          [recovery + 27n, undefined],
        ][form] as [bigint, bigint | undefined]
        const rr = form === 4 ? new Uint8Array(32) : r // r = 0
        const ss = form === 5 ? bigIntToBytes(N) : s // s = n
        expect(outcome(() => nativeEcrecover!(msg, v, rr, ss, chain))).toBe(outcome(() => ecrecover(msg, v, rr, ss, chain)))
      }),
      { numRuns: 300 },
    )
  })
})
