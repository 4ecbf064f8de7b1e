/**
 * Public-key recovery for ethereumjs (`Common.customCrypto.ecrecover`) with libsecp256k1, from the
 * `secp256k1` npm package's prebuilt native binding: ~0.08 ms per recovery against ~1.3 ms for
 * the JavaScript implementation ethereumjs uses by default (measured on this machine). Every
 * submitted transaction is recovered before it is acknowledged, so this bounds submission
 * throughput. The semantics are ethereumjs' own `ecrecover` (@ethereumjs/util signature.ts): the
 * recovery id from v (0/1, 27/28, or EIP-155 with the chain id), r and s left-padded to 32 bytes,
 * the 64-byte uncompressed key without its prefix. When the binding cannot be loaded, undefined:
 * ethereumjs then uses its JavaScript implementation.
 */
import { nativeSecp256k1 } from './native-secp256k1.ts'

const native = nativeSecp256k1

type Ecrecover = (msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint) => Uint8Array

function recoveryId(v: bigint, chainId: bigint | undefined): bigint {
  if (v === 0n || v === 1n) return v
  return chainId === undefined ? v - 27n : v - (2n * chainId + 35n)
}

// Recovery failures stay plain Errors with ethereumjs' own messages: this replaces its ecrecover,
// and its callers (transaction decoding, the precompile) catch any error of recovery alike.
/** `bytes` left-padded to 32 bytes at `offset` of the (zeroed) signature: no copy of its own (each acknowledgement recovers one) */
function setPadded32(signature: Uint8Array, bytes: Uint8Array, offset: number): void {
  if (bytes.length > 32) throw new Error('Invalid signature: r or s is longer than 32 bytes')
  signature.set(bytes, offset + 32 - bytes.length)
}

export const nativeEcrecover: Ecrecover | undefined =
  native === undefined
    ? undefined
    : (msgHash, v, r, s, chainId) => {
        const recid = recoveryId(v, chainId)
        if (recid !== 0n && recid !== 1n) throw new Error('Invalid signature v value')
        const signature = new Uint8Array(64)
        setPadded32(signature, r, 0)
        setPadded32(signature, s, 32)
        // throws for r or s of 0 or >= n, and for a signature no key recovers from
        return native.ecdsaRecover(signature, Number(recid), msgHash, false).slice(1)
      }

/** the customCrypto entry to give every Common: native recovery when available */
export const CUSTOM_CRYPTO: { ecrecover?: Ecrecover } = nativeEcrecover === undefined ? {} : { ecrecover: nativeEcrecover }
