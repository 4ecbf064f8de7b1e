/**
 * What decodeSignedTransaction returns: one shape per accepted transaction type, the fields in
 * geth's sense beside the ethereumjs transaction the VM executes.
 */
import type { Common } from '@ethereumjs/common'
import type { AccessList2930Tx, EOACode7702Tx, FeeMarket1559Tx, LegacyTx } from '@ethereumjs/tx'

import type { Address, Hex } from '../../chain/types.ts'

export interface DecodeTransactionOptions {
  /** The chain this service runs on; a transaction signed for another chain is refused. */
  chainId: bigint
  /** Accept legacy transactions without EIP-155 replay protection (v = 27/28). Default true. */
  allowUnprotectedLegacy?: boolean
  /** Largest accepted transaction in bytes (decoded, not hex). Default 131072 (geth's pool limit). */
  maxBytes?: number
  /** ethereumjs hardfork name whose rules apply. Default 'prague'. Ignored when `common` is given. */
  hardfork?: string
  /**
   * The Common the VM runs with, to attach to the decoded transaction. Its chain id must equal
   * `chainId`. ethereumjs copies it per transaction, so it is never mutated here.
   */
  common?: Common
  /**
   * Keep the answer in the decode memo for later callers (default true). A remembered answer is
   * found again either way; false only leaves a new one out. The acknowledgement path passes false:
   * the dispatcher takes the facts it needs from the acknowledgement and, with the worker pool (the
   * default), decodes in the workers' own isolates, so on the acknowledging thread remembering each
   * acknowledged transaction (an ethereumjs object, its bytes twice, ~1 KB of hex) mostly kept it
   * alive past two scavenges into the old generation, for the major GC to collect later. Where it
   * is decoded again on that thread (in-process ports with WORKERS=0, the devnet's local builder),
   * that later decode remembers it.
   */
  remember?: boolean
}

export type SupportedTransactionType = 0 | 1 | 2 | 4

export interface AccessListEntry {
  address: Address
  storageKeys: Hex[]
}

export interface AuthorizationEntry {
  /** 0 means "valid on any chain" (EIP-7702). */
  chainId: bigint
  /** The contract whose code the authority delegates to. */
  address: Address
  nonce: bigint
  yParity: number
  r: bigint
  s: bigint
  /**
   * The recovered signer of this authorization, or null when its signature is out of range or
   * unrecoverable. A bad authorization does not invalidate the transaction (EIP-7702: it is
   * skipped at execution), and chain id / nonce validity can only be judged against state.
   */
  authority: Address | null
}

export interface TransactionSignature {
  /** v as encoded: 27/28 or chainId * 2 + 35/36 for legacy, the y parity for typed transactions */
  v: bigint
  yParity: 0 | 1
  r: bigint
  s: bigint
}

export interface DecodedTransactionBase {
  /** keccak256 of `raw`, 0x-prefixed lowercase */
  hash: Hex
  /** recovered signer, lowercase */
  sender: Address
  nonce: bigint
  /** null for contract creation */
  to: Address | null
  value: bigint
  data: Uint8Array
  gasLimit: bigint
  /** Fee cap in geth's sense: gasPrice for legacy and 0x01, maxFeePerGas otherwise. */
  gasFeeCap: bigint
  /** Tip cap in geth's sense: gasPrice for legacy and 0x01, maxPriorityFeePerGas otherwise. */
  gasTipCap: bigint
  signature: TransactionSignature
  /** The exact input bytes, never re-encoded; forward these. */
  raw: Uint8Array
  /** `raw` as 0x-prefixed lowercase hex. */
  rawHex: Hex
}

export interface DecodedLegacyTransaction extends DecodedTransactionBase {
  type: 0
  gasPrice: bigint
  maxFeePerGas?: undefined
  maxPriorityFeePerGas?: undefined
  /** undefined for an unprotected (pre-EIP-155) signature */
  chainId: bigint | undefined
  accessList?: undefined
  authorizationList?: undefined
  tx: LegacyTx
}

export interface DecodedAccessListTransaction extends DecodedTransactionBase {
  type: 1
  gasPrice: bigint
  maxFeePerGas?: undefined
  maxPriorityFeePerGas?: undefined
  chainId: bigint
  accessList: AccessListEntry[]
  authorizationList?: undefined
  tx: AccessList2930Tx
}

export interface DecodedFeeMarketTransaction extends DecodedTransactionBase {
  type: 2
  gasPrice?: undefined
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  chainId: bigint
  accessList: AccessListEntry[]
  authorizationList?: undefined
  tx: FeeMarket1559Tx
}

export interface DecodedSetCodeTransaction extends DecodedTransactionBase {
  type: 4
  gasPrice?: undefined
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  chainId: bigint
  /** EIP-7702 transactions cannot create contracts */
  to: Address
  accessList: AccessListEntry[]
  authorizationList: AuthorizationEntry[]
  tx: EOACode7702Tx
}

export type DecodedTransaction =
  | DecodedLegacyTransaction
  | DecodedAccessListTransaction
  | DecodedFeeMarketTransaction
  | DecodedSetCodeTransaction
