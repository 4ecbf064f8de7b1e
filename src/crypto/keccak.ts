/**
 * keccak256 of bytes: hash-wasm's WebAssembly Keccak when WebAssembly runs here, else noble's
 * JavaScript `keccak_256`. Measured on this machine (2026-11-28, 200,000 hashes after 20,000 warm):
 * 32 bytes 0.85 us in WebAssembly against 2.1 us in the `keccak` package's native N-API binding
 * (used here until then) and 6.7 us in noble; 128 bytes 1.1 / 2.7 / 8.6 us; 1 KiB 5.5 / 6.5 /
 * 57 us. Both give the same digest (test/crypto/keccak.test.ts). The EVM takes it through
 * src/evm/keccak.ts.
 *
 * Why not the native binding, although it is a compiled sponge too: its methods are node-addon-api
 * callbacks, and a worker thread terminated while inside one (the pool stops a hung worker, and
 * all of them when it closes) cannot create the addon's error object as its environment goes
 * away: node aborts the whole process ("FATAL ERROR: Error::Error napi_create_reference"). It did,
 * in a test whose looping contract hashed memory. WebAssembly is plain V8 code, which a terminate
 * stops anywhere without harm (test/crypto/thread-termination.e2e.test.ts), and it is faster: a native
 * call's own cost is more than the hash of a word.
 *
 * One hasher is reused: a hash runs start to end synchronously, so two never interleave in one
 * thread, and each worker thread instantiates its own module (the top-level await below).
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { createKeccak } from 'hash-wasm'

export type Keccak256 = (data: Uint8Array) => Uint8Array

async function loadWasm(): Promise<Keccak256 | undefined> {
  try {
    const hasher = await createKeccak(256)
    const hash: Keccak256 = (data) => {
      hasher.init()
      hasher.update(data)
      // a fresh Uint8Array of its own (hash-wasm copies the digest out of the module's memory)
      return hasher.digest('binary')
    }
    // a module that loads but hashes wrongly is not used: keccak256('') is a known constant
    const empty = Buffer.from(hash(new Uint8Array(0))).toString('hex')
    return empty === 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470' ? hash : undefined
  } catch {
    // no WebAssembly (node --jitless) or no memory for the module: noble's
    return undefined
  }
}

/** the WebAssembly keccak256, or undefined where WebAssembly does not run */
export const wasmKeccak256: Keccak256 | undefined = await loadWasm()

/** keccak256 of the bytes: WebAssembly when available, noble's otherwise */
export const keccak256: Keccak256 = wasmKeccak256 ?? ((data) => keccak_256(data))
