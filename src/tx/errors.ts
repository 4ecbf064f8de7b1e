/**
 * The one error type raised for a raw signed transaction the service refuses. The JSON-RPC layer
 * maps every reason to -32000 (spec 7.2: "malformed transaction"); `reason` lets it log and count
 * refusals by kind, and `message` is written for the partner who sent the transaction.
 */
import { BaseError } from '../primitives/base-error.ts'

export type TxDecodeErrorReason =
  /** not a 0x-prefixed, even-length string of hex digits */
  | 'malformed_hex'
  /** no bytes at all */
  | 'empty'
  /** more bytes than the configured limit */
  | 'too_large'
  /** the bytes are not one canonical RLP transaction (bad prefix, trailing bytes, wrong shape, leading zeros) */
  | 'rlp'
  /** v / yParity, r or s out of range (including EIP-2 high s), or no sender recoverable */
  | 'signature'
  /** signed for another chain, or not replay-protected where that is required */
  | 'chain_id'
  /** a transaction type this service does not accept (unknown type byte, blob transactions, not active at the hardfork) */
  | 'unsupported_type'
  /** well-formed, but a field breaks a protocol rule (fee cap below tip, gas limit below intrinsic gas, bad address length, ...) */
  | 'invalid_fields'

/** A raw transaction refused (a member of the BaseError family); `reason` says which rule it broke. */
export class TxDecodeError extends BaseError {
  override readonly name = 'TxDecodeError'

  constructor(
    readonly reason: TxDecodeErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause })
  }
}

export function isTxDecodeError(value: unknown): value is TxDecodeError {
  return value instanceof TxDecodeError
}
