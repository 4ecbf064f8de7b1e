/**
 * The input and its envelope: a 0x-prefixed hex string (or bytes) within the size limit, then the
 * first byte: an RLP list is a legacy transaction, a byte below 0x80 an EIP-2718 type, accepted
 * when this service takes that type and the hardfork has activated it.
 */
import type { Common } from '@ethereumjs/common'

import { TxDecodeError } from '../errors.ts'
import { hexByte } from './bytes.ts'
import type { SupportedTransactionType } from './types.ts'

/** The input as bytes (our own copy) when it is a non-empty 0x-hex string or byte array within `maxBytes`. */
export function inputBytes(raw: unknown, maxBytes: number): Uint8Array {
  if (raw instanceof Uint8Array) {
    if (raw.length === 0) throw new TxDecodeError('empty', 'transaction is empty')
    if (raw.length > maxBytes) throw tooLarge(raw.length, maxBytes)
    return new Uint8Array(raw) // our own copy: the caller may reuse its buffer
  }
  if (typeof raw !== 'string') {
    throw new TxDecodeError('malformed_hex', 'transaction must be a 0x-prefixed hex string')
  }
  if (raw.length === 0) throw new TxDecodeError('empty', 'transaction is empty')
  // 0X is tolerated as geth's hexutil does; digits may be upper or lower case (rawHex is lowercase).
  if (!raw.startsWith('0x') && !raw.startsWith('0X')) {
    throw new TxDecodeError('malformed_hex', 'transaction hex must start with 0x')
  }
  const digits = raw.length - 2
  if (digits === 0) throw new TxDecodeError('empty', 'transaction is empty (0x)')
  if (Math.ceil(digits / 2) > maxBytes) throw tooLarge(Math.ceil(digits / 2), maxBytes)
  if (digits % 2 !== 0) {
    throw new TxDecodeError('malformed_hex', `transaction hex has an odd number of digits (${digits}); each byte needs two`)
  }
  // One pass, into memory of our own: Node's hex decoder stops at the first pair with a non-hex
  // digit, so fewer bytes written than digits / 2 means there is one; only then is it looked for
  // (for the message). Until 2026-11-27 a regular expression scanned every input first and the
  // bytes were decoded into Buffer's pool and copied out again, on the thread that acknowledges.
  const bytes = new Uint8Array(digits / 2)
  const written = Buffer.from(bytes.buffer, 0, bytes.length).write(raw.slice(2), 'hex')
  if (written !== bytes.length) {
    const bad = /[^0-9a-fA-F]/.exec(raw.slice(2))
    const at = bad === null ? written * 2 : bad.index
    throw new TxDecodeError(
      'malformed_hex',
      `transaction hex contains a non-hex character ${JSON.stringify(raw[at + 2])} at position ${at + 2}`,
    )
  }
  return bytes
}

/**
 * The transaction type and the bytes its fields are encoded in: the whole input for a legacy
 * transaction (an RLP list), the bytes after the type byte for an EIP-2718 one.
 */
export function envelope(bytes: Uint8Array, common: Common): { type: SupportedTransactionType; payload: Uint8Array } {
  const first = bytes[0]
  if (first >= 0xc0) return { type: 0, payload: bytes }
  if (first >= 0x80) {
    throw new TxDecodeError(
      'rlp',
      `transaction starts with byte 0x${hexByte(first)}, which is neither an RLP list (legacy transaction) nor an EIP-2718 type byte (0x00-0x7f)`,
    )
  }
  return { type: typedEnvelopeType(first, common), payload: bytes.subarray(1) }
}

/** the refusal of an input over the size limit */
export function tooLarge(size: number, maxBytes: number): TxDecodeError {
  return new TxDecodeError('too_large', `transaction is ${size} bytes; the limit is ${maxBytes} bytes`)
}

const TYPED_TX_EIP: Record<number, { eip: number; label: string }> = {
  1: { eip: 2930, label: 'EIP-2930 access-list' },
  2: { eip: 1559, label: 'EIP-1559 fee-market' },
  4: { eip: 7702, label: 'EIP-7702 set-code' },
}

function typedEnvelopeType(typeByte: number, common: Common): SupportedTransactionType {
  if (typeByte === 3) {
    throw new TxDecodeError(
      'unsupported_type',
      'blob transactions (type 0x03, EIP-4844) are not accepted: forwarding one privately needs its blob sidecar ' +
        '(blobs, KZG commitments and proofs), which this service does not take or verify',
    )
  }
  const known = TYPED_TX_EIP[typeByte]
  if (known === undefined) {
    throw new TxDecodeError(
      'unsupported_type',
      `unsupported transaction type 0x${hexByte(typeByte)}; accepted are legacy, 0x01 (EIP-2930), 0x02 (EIP-1559) and 0x04 (EIP-7702)`,
    )
  }
  if (!common.isActivatedEIP(known.eip)) {
    throw new TxDecodeError(
      'unsupported_type',
      `transaction type 0x${hexByte(typeByte)} (${known.label}) is not active at hardfork ${common.hardfork()}`,
    )
  }
  return typeByte as SupportedTransactionType
}
