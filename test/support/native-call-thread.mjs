/**
 * A worker thread for test/crypto/thread-termination.e2e.test.ts (through terminate-native-threads.mjs):
 * hashes or recovers in a tight loop until it is terminated. Plain JavaScript that registers tsx's
 * ESM hooks for this thread first (as src/workers/worker-bootstrap.mjs does) when it imports the
 * modules under test. workerData.mode:
 * - 'keccak': src/crypto/keccak.ts' keccak256 of a KiB;
 * - 'secp256k1-gated': src/crypto/native-secp256k1.ts' recovery, with this thread's native-call
 *   gate installed (its memory is posted to the main thread with 'looping');
 * - 'secp256k1-ungated': the `secp256k1` binding itself, as the service called it before the gate.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import { register } from 'tsx/esm/api'

const { mode } = workerData
// the TypeScript modules need tsx's hooks (~0.2 s a thread); the bare binding does not
if (mode !== 'secp256k1-ungated') register()
const message = new Uint8Array(32).fill(7)

if (mode === 'keccak') {
  const { keccak256, wasmKeccak256 } = await import('../../src/crypto/keccak.ts')
  const data = new Uint8Array(1024)
  if (wasmKeccak256 === undefined) throw new Error('keccak256 is not in WebAssembly here')
  parentPort.postMessage({ looping: true })
  for (;;) keccak256(data)
} else {
  const gate = mode === 'secp256k1-gated' ? (await import('../../src/crypto/native-call-gate.ts')).installNativeCallGate() : undefined
  const secp = mode === 'secp256k1-gated' ? (await import('../../src/crypto/native-secp256k1.ts')).nativeSecp256k1 : createRequire(import.meta.url)('secp256k1/bindings.js')
  const { signature, recid } = secp.ecdsaSign(message, new Uint8Array(32).fill(1))
  parentPort.postMessage({ looping: true, gate })
  for (;;) secp.ecdsaRecover(signature, recid, message, false)
}
