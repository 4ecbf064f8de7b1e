/**
 * The `secp256k1` npm package's prebuilt native binding (libsecp256k1), or undefined when it cannot
 * be loaded on this machine: its users (ecrecover.ts, sign.ts) then fall back to JavaScript. Each
 * call goes through the thread's native-call gate (native-call-gate.ts): a worker thread terminated
 * inside one of the binding's calls would abort the process.
 */
import { createRequire } from 'node:module'
import { enterNativeCall, leaveNativeCall } from './native-call-gate.ts'

export interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array
  /** @throws Error for a key the library cannot sign with */
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number }
}

/** the binding's calls, each inside the gate */
function gated(binding: NativeSecp256k1): NativeSecp256k1 {
  return {
    ecdsaRecover(signature, recid, message, compressed) {
      enterNativeCall()
      try {
        return binding.ecdsaRecover(signature, recid, message, compressed)
      } finally {
        leaveNativeCall()
      }
    },
    ecdsaSign(msg32, seckey) {
      enterNativeCall()
      try {
        return binding.ecdsaSign(msg32, seckey)
      } finally {
        leaveNativeCall()
      }
    },
  }
}

function load(): NativeSecp256k1 | undefined {
  try {
    // the binding itself, not the package's fallback to the pure-JS `elliptic`
    return gated(createRequire(import.meta.url)('secp256k1/bindings.js') as NativeSecp256k1)
  } catch {
    return undefined
  }
}

export const nativeSecp256k1: NativeSecp256k1 | undefined = load()
