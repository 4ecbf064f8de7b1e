export { bundleHash } from './bundle-hash.ts'
export {
  DEFAULT_MAX_TX_BYTES,
  DEFAULT_TX_HARDFORK,
  decodeSignedTransaction,
  type AccessListEntry,
  type AuthorizationEntry,
  type DecodeTransactionOptions,
  type DecodedAccessListTransaction,
  type DecodedFeeMarketTransaction,
  type DecodedLegacyTransaction,
  type DecodedSetCodeTransaction,
  type DecodedTransaction,
  type SupportedTransactionType,
  type TransactionSignature,
} from './decode-transaction.ts'
export { TxDecodeError, isTxDecodeError, type TxDecodeErrorReason } from './errors.ts'
export { transactionTipCap } from './tip-cap.ts'
