/**
 * The canonical-encoding check and the sender recovery of a decoded transaction, from the RLP list
 * decodeFields read rather than from the ethereumjs object.
 *
 * Why: ethereumjs' `serialize()` and `getSenderAddress()` each rebuild the fields from the object
 * (`raw()`: every integer back to bytes) and RLP-encode them again; under bench:submit the two
 * were ~27 KB of garbage per decoded swap on the thread that acknowledges (a sampling heap
 * profile, 2026-11-27). The list read from the input already holds each field's canonical bytes
 * (decodeFields refuses non-canonical integers, and @ethereumjs/rlp non-canonical lengths), so
 * encoding it again gives the input back exactly when ethereumjs' serialize() would, and the
 * signing payload is that list without the signature (EIP-155 legacy: with chainId, 0, 0), as
 * ethereumjs' getMessageToSign() builds it. The recovery is the Common's own ecrecover (the native
 * one, src/crypto/ecrecover.ts), the same call ethereumjs makes; the public key is left in the
 * transaction's cache, where ethereumjs' getSenderAddress() looks first.
 * test/tx/decode/transaction-common.test.ts compares hash, sender and refusals with ethereumjs'
 * own path on every fixture and on every one-byte corruption of them.
 */
import type { TypedTransaction } from '@ethereumjs/tx'
import { RLP } from '@ethereumjs/rlp'
import { bigIntToUnpaddedBytes, ecrecover } from '@ethereumjs/util'

import type { Address } from '../../chain/types.ts'
import { keccak256 } from '../../crypto/keccak.ts'
import { TxDecodeError } from '../errors.ts'
import { equalBytes, toHex } from './bytes.ts'
import type { RawFields } from './fields.ts'

/** the signature's three items end every transaction type's list */
const SIGNATURE_ITEMS = 3
const EMPTY = new Uint8Array(0)

/** Whether the RLP list re-encodes to exactly `payload` (the input without its type byte). */
export function isCanonicalEncoding(fields: RawFields, payload: Uint8Array): boolean {
  return equalBytes(RLP.encode(fields.items as Uint8Array[]), payload)
}

/**
 * The sender of the transaction `fields` were decoded from, recovered as ethereumjs recovers it
 * (`tx` built from the same list); its public key is cached in `tx` (frozen, as ethereumjs caches).
 * @throws TxDecodeError('signature') when no public key can be recovered
 */
export function recoverSender(fields: RawFields, tx: TypedTransaction): Address {
  const items = fields.items as Uint8Array[]
  const unsigned = items.slice(0, items.length - SIGNATURE_ITEMS)
  let message: Uint8Array
  if (fields.type === 0) {
    if (fields.chainId !== undefined) unsigned.push(bigIntToUnpaddedBytes(fields.chainId), EMPTY, EMPTY)
    message = RLP.encode(unsigned)
  } else {
    const body = RLP.encode(unsigned)
    message = new Uint8Array(body.length + 1)
    message[0] = fields.type
    message.set(body, 1)
  }
  const [r, s] = items.slice(items.length - 2)
  const recover = tx.common.customCrypto.ecrecover ?? ecrecover
  let publicKey: Uint8Array
  try {
    publicKey = recover(keccak256(message), fields.signature.v, r, s, fields.type === 0 ? fields.chainId : undefined)
  } catch (cause) {
    throw new TxDecodeError('signature', 'signature is invalid: no public key can be recovered from it', { cause })
  }
  if (Object.isFrozen(tx)) tx.cache.senderPubKey = publicKey
  return addressOf(publicKey)
}

/**
 * ethereumjs' publicToAddress (the last 20 bytes of keccak256 of the 64-byte key) with the native
 * keccak (src/crypto/keccak.ts): publicToAddress hashes with noble's JavaScript keccak, ~4% of an
 * acknowledgement's decode in a CPU profile (2026-11-27).
 */
function addressOf(publicKey: Uint8Array): Address {
  if (publicKey.length !== 64) throw new Error('Expected pubKey to be of length 64')
  return toHex(keccak256(publicKey).subarray(12)) as Address
}
