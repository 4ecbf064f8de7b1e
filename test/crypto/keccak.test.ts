/**
 * keccak.ts: the WebAssembly keccak256 gives noble's digest for every length around the sponge's rate
 * (136 bytes) and for views into larger buffers, returns plain Uint8Arrays that later hashes do not
 * overwrite.
 */
import { describe, expect, it } from 'vitest'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { keccak256, wasmKeccak256 } from '../../src/crypto/keccak.ts'

/** deterministic bytes, so a failure names a reproducible input */
function bytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length)
  let x = seed * 2654435761
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')

describe('keccak256', () => {
  it('runs in WebAssembly (which every Node 20 has without --jitless)', () => {
    expect(wasmKeccak256).toBeDefined()
    expect(keccak256).toBe(wasmKeccak256 ?? keccak256)
  })

  it("gives noble's digest for every length from 0 to 300 bytes and for long inputs", () => {
    const lengths = [...Array.from({ length: 301 }, (_, i) => i), 1087, 1088, 1089, 24_576, 100_000]
    for (const length of lengths) {
      const data = bytes(length, length + 1)
      expect(hex(keccak256(data)), `length ${length}`).toBe(hex(keccak_256(data)))
    }
  })

  it('hashes a view as the bytes it shows, not its whole buffer', () => {
    const whole = bytes(500, 7)
    for (const [offset, length] of [[1, 64], [33, 0], [100, 136], [499, 1]]) {
      const view = whole.subarray(offset, offset + length)
      expect(hex(keccak256(view))).toBe(hex(keccak_256(view)))
    }
  })

  it('returns a plain 32-byte Uint8Array that the next hash leaves alone', () => {
    const first = keccak256(bytes(64, 1))
    const copy = hex(first)
    keccak256(bytes(64, 2))
    expect(hex(first)).toBe(copy)
    expect(first.length).toBe(32)
    expect(Buffer.isBuffer(first)).toBe(false)
    // a Uint8Array's slice copies (a Buffer's would share memory)
    const sliced = first.slice(0, 4)
    sliced[0] ^= 0xff
    expect(hex(first)).toBe(copy)
  })
})
