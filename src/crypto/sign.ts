/**
 * secp256k1 signing of a 32-byte hash with libsecp256k1 (the `secp256k1` package's prebuilt
 * native binding), falling back to viem's JavaScript `sign` when the binding cannot be loaded.
 *
 * Why: every block the dispatcher signs each open submission's relay requests
 * (X-Flashbots-Signature) and each planned backrun transaction; with the JavaScript signer those
 * signatures were about a tenth of the service's CPU under the soak's load. Both signers follow
 * RFC 6979 (deterministic nonces, no extra entropy) and return low-s signatures, so the bytes are
 * the same either way (test/crypto/sign.test.ts compares them).
 */
import { getAddress, hexToBytes, keccak256, recoverAddress as viemRecoverAddress } from 'viem'
import { sign as viemSign } from 'viem/accounts'

import type { Address, Hex } from '../chain/types.ts'
import { nativeEcrecover } from './ecrecover.ts'
import { nativeSecp256k1 as native } from './native-secp256k1.ts'

export interface Signature {
  r: Hex
  s: Hex
  yParity: 0 | 1
}

const hex = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`

/** true when signatures are made by libsecp256k1 (otherwise by viem's JavaScript signer) */
export const nativeSigning = native !== undefined

/**
 * Signs `hash` (32 bytes) with `privateKey` (32 bytes).
 * @throws Error for a key that is zero or not below the curve order
 */
export async function signHash(hash: Uint8Array, privateKey: Uint8Array): Promise<Signature> {
  if (hash.length !== 32 || privateKey.length !== 32) throw new TypeError('signHash: the hash and the private key must be 32 bytes')
  if (native === undefined) {
    const { r, s, yParity } = await viemSign({ hash: hex(hash), privateKey: hex(privateKey) })
    return { r, s, yParity: yParity === 1 ? 1 : 0 }
  }
  let out: { signature: Uint8Array; recid: number }
  try {
    out = native.ecdsaSign(hash, privateKey)
  } catch (cause) {
    // the library's message never quotes the key
    throw new Error('signHash: the private key cannot sign', { cause })
  }
  return { r: hex(out.signature.subarray(0, 32)), s: hex(out.signature.subarray(32)), yParity: out.recid === 1 ? 1 : 0 }
}

/**
 * The address that signed `hash` with the 65-byte `signature` (r, s, v with v 27/28 or 0/1),
 * checksummed, as viem's recoverAddress answers; libsecp256k1 when loaded (the devnet builder
 * verifies every relay request's X-Flashbots-Signature with it).
 * @throws Error for a signature that is malformed or that no key recovers from
 */
export async function recoverHashAddress(hash: Uint8Array, signature: Hex): Promise<Address> {
  const bytes = hexToBytes(signature)
  if (hash.length !== 32 || bytes.length !== 65) throw new TypeError('recoverHashAddress: a 32-byte hash and a 65-byte signature are needed')
  if (nativeEcrecover === undefined) return viemRecoverAddress({ hash: hex(hash), signature })
  const v = bytes[64]
  if (v !== 0 && v !== 1 && v !== 27 && v !== 28) throw new Error('recoverHashAddress: invalid v')
  // the same recovery ethereumjs gets for every transaction (ecrecover.ts): the 64-byte public key
  const publicKey = nativeEcrecover(hash, BigInt(v), bytes.subarray(0, 32), bytes.subarray(32, 64))
  return getAddress(`0x${keccak256(publicKey).slice(-40)}`)
}
