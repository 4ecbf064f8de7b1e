/**
 * keccak256 of bytes: the XKCP sponge of the `keccak` npm package's prebuilt N-API binding when it
 * loads, else noble's JavaScript `keccak_256`. Measured on this machine for 32 to 200 bytes:
 * ~1.5-3 us a hash native against ~6-13 us in noble, and the gap grows with the input (a relay
 * request body, hashed for its X-Flashbots-Signature every block for every open submission, is
 * ~0.5-2 KB). Both give the same digest (test/crypto/keccak.test.ts). The EVM takes it through
 * src/evm/keccak.ts.
 *
 * The binding is loaded directly (`node-gyp-build` over the package's directory), not through the
 * package's entry, which wraps each hash in a readable-stream Transform and falls back to its own
 * JavaScript silently. One sponge is reused: a hash runs start to end synchronously, so two never
 * interleave in one thread, and each worker thread loads its own instance of the addon.
 */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { keccak_256 } from '@noble/hashes/sha3.js'

export type Keccak256 = (data: Uint8Array) => Uint8Array

/** the addon's sponge (keccak/src/addon.cc): Keccak-f[1600] with the given rate and capacity in bits */
interface NativeSponge {
  initialize(rate: number, capacity: number): void
  absorb(data: Uint8Array): void
  absorbLastFewBits(bits: number): void
  squeeze(length: number): Uint8Array
}

/** keccak256: rate 1088 bits, capacity 512, the original Keccak padding (delimiter 0x01, not SHA-3's 0x06) */
const RATE = 1088
const CAPACITY = 512
const KECCAK_DELIMITER = 0x01

function loadNative(): Keccak256 | undefined {
  try {
    const require = createRequire(import.meta.url)
    const build = require('node-gyp-build') as (dir: string) => new () => NativeSponge
    const Sponge = build(dirname(require.resolve('keccak/package.json')))
    if (typeof Sponge !== 'function') return undefined
    const sponge = new Sponge()
    const hash: Keccak256 = (data) => {
      sponge.initialize(RATE, CAPACITY)
      sponge.absorb(data)
      sponge.absorbLastFewBits(KECCAK_DELIMITER)
      const out = sponge.squeeze(32)
      // a plain Uint8Array view, not a Buffer: Buffer's `slice` shares memory where a Uint8Array's copies
      return new Uint8Array(out.buffer, out.byteOffset, 32)
    }
    // a binding that loads but hashes wrongly is not used: keccak256('') is a known constant
    const empty = Buffer.from(hash(new Uint8Array(0))).toString('hex')
    return empty === 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470' ? hash : undefined
  } catch {
    return undefined
  }
}

/** the native keccak256, or undefined where its binding does not load */
export const nativeKeccak256: Keccak256 | undefined = loadNative()

/** keccak256 of the bytes: native when available, noble's otherwise */
export const keccak256: Keccak256 = nativeKeccak256 ?? ((data) => keccak_256(data))
