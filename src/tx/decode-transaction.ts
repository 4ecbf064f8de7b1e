/**
 * Decoding and verification of a raw signed transaction as a partner submits it
 * (`eth_sendPrivateRawTransaction`, `eth_sendBundle`, `eth_notifyRawTransaction`, spec 2.8).
 *
 * The service forwards the payload byte-for-byte (spec 4.2), so the hash we acknowledge is the
 * keccak256 of the exact input bytes, and we only accept input whose canonical re-encoding is
 * those same bytes: then our hash is the hash every node and builder computes.
 *
 * Checks run cheapest first and each failure names one reason (see `TxDecodeErrorReason`):
 * input format and size, envelope type, RLP structure and canonical integers, chain id,
 * signature ranges (EIP-2 low s), field rules (fee cap vs tip, address lengths, intrinsic gas),
 * then sender recovery. The ethereumjs transaction object is built with the chain's Common, so
 * the VM can execute it as is.
 *
 * Accepted types: legacy (EIP-155 protected, and unprotected unless disabled), 0x01 (EIP-2930),
 * 0x02 (EIP-1559) and 0x04 (EIP-7702). Blob transactions (0x03, EIP-4844) are refused: a
 * forwardable blob transaction is the network form `0x03 || rlp([tx, blobs, commitments, proofs])`,
 * whose hash is not keccak256 of the bytes sent, and whose sidecar must be verified against KZG
 * commitments (a trusted-setup dependency we do not carry). The bare form without the sidecar is
 * decodable but useless to forward: no builder can include a blob transaction without its blobs.
 *
 * The steps live in decode/: the input and envelope (envelope.ts), the RLP fields (fields.ts),
 * the semantic checks (rules.ts), the Common (common.ts) and the result's types (types.ts). This
 * file runs them in order, remembers answers, and builds the result per type.
 */
import type { Common } from '@ethereumjs/common'
import {
  type TypedTransaction,
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
  isAccessList2930Tx,
  isEOACode7702Tx,
  isFeeMarket1559Tx,
  isLegacyTx,
} from '@ethereumjs/tx'
import { eoaCode7702RecoverAuthority } from '@ethereumjs/util'
import { LRUCache } from 'lru-cache'

import type { Address, Hex } from '../chain/types.ts'
import { keccak256 } from '../crypto/keccak.ts'
import { positiveInt } from '../primitives/numbers.ts'
import { bytesToBigInt, toHex } from './decode/bytes.ts'
import { resolveCommon } from './decode/common.ts'
import { envelope, inputBytes, tooLarge } from './decode/envelope.ts'
import { decodeFields, type AuthorizationBytes, type RawFields } from './decode/fields.ts'
import { minimumGasLimit } from './decode/minimum-gas.ts'
import { isCanonicalEncoding, recoverSender } from './decode/sender.ts'
import { transactionCommonHandle } from './decode/transaction-common.ts'
import { SECP256K1_N, SECP256K1_N_HALF, checkChainId, checkFieldRules, checkSignatureRange } from './decode/rules.ts'
import type {
  AuthorizationEntry,
  DecodeTransactionOptions,
  DecodedTransaction,
  DecodedTransactionBase,
} from './decode/types.ts'
import { TxDecodeError } from './errors.ts'

export { DEFAULT_TX_HARDFORK } from './decode/common.ts'
export type {
  AccessListEntry,
  AuthorizationEntry,
  DecodeTransactionOptions,
  DecodedAccessListTransaction,
  DecodedFeeMarketTransaction,
  DecodedLegacyTransaction,
  DecodedSetCodeTransaction,
  DecodedTransaction,
  SupportedTransactionType,
  TransactionSignature,
} from './decode/types.ts'

/** geth's txpool limit for non-blob transactions (4 slots of 32 KiB). */
export const DEFAULT_MAX_TX_BYTES = 128 * 1024

/**
 * Decode, validate and recover the sender of one raw signed transaction. Answers are remembered
 * (bounded), so the result may be shared with other callers: treat it as immutable.
 *
 * @throws TxDecodeError for every input the service must refuse (reason says why)
 * @throws RangeError for invalid options (programming errors, not partner input)
 */
export function decodeSignedTransaction(
  raw: string | Uint8Array,
  options: DecodeTransactionOptions,
): DecodedTransaction {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_TX_BYTES
  positiveInt('maxBytes', maxBytes, 'decodeSignedTransaction')
  const common = resolveCommon(options)
  // Sender recovery (secp256k1 in JavaScript) costs ~1 ms; one transaction is decoded at its
  // acknowledgement, again by the dispatcher, the planner and a builder. The result is a pure
  // function of the bytes, the chain id, the Common and the legacy rule, so it is remembered,
  // keyed by the lowercase hex of the bytes (the result's own rawHex: the key is not another
  // string). A hex string is looked up before it is read: only input that decoded is ever stored,
  // so a hit is input that passed every check but the size limit, which is the caller's own.
  const cache = decodedCacheFor(common, options)
  // a string that decodes is its bytes' hex in lowercase (0X read as 0x); one over the size limit
  // is not lowercased first, inputBytes refuses it by its length alone
  const given = typeof raw === 'string' && raw.length <= 2 + 2 * maxBytes ? (raw.toLowerCase() as Hex) : undefined
  if (given !== undefined) {
    const cached = cache.get(given)
    if (cached !== undefined) {
      if (cached.raw.length > maxBytes) throw tooLarge(cached.raw.length, maxBytes)
      return cached
    }
  }
  const bytes = inputBytes(raw, maxBytes)
  const rawHex = given ?? toHex(bytes)
  if (given === undefined) {
    const cached = cache.get(rawHex)
    if (cached !== undefined) return cached
  }
  const decoded = decodeUncached(bytes, rawHex, common, options)
  if (options.remember !== false) cache.set(rawHex, decoded)
  return decoded
}

/**
 * decoded transactions remembered per Common, and within it per chain id and legacy rule. An entry
 * that went through the EVM holds ~17 KB (the ethereumjs tx keeps its own copy of the Common with a
 * filled parameter cache), so the memo is kept to what it is for: a burst of acknowledgements
 * decoded again by the dispatcher moments later. Beyond it a decode costs one native sender
 * recovery (~50 us).
 */
const DECODED_CACHE_ENTRIES = 512
const decodedCache = new WeakMap<Common, Map<string, LRUCache<string, DecodedTransaction>>>()

function decodedCacheFor(common: Common, options: DecodeTransactionOptions): LRUCache<string, DecodedTransaction> {
  let byRules = decodedCache.get(common)
  if (byRules === undefined) {
    byRules = new Map()
    decodedCache.set(common, byRules)
  }
  // a Common has one chain id (resolveCommon checks options.chainId against it), so at most two entries
  const rules = `${options.chainId}:${options.allowUnprotectedLegacy ?? true}`
  let cache = byRules.get(rules)
  if (cache === undefined) {
    cache = new LRUCache({ max: DECODED_CACHE_ENTRIES })
    byRules.set(rules, cache)
  }
  return cache
}

function decodeUncached(bytes: Uint8Array, rawHex: Hex, common: Common, options: DecodeTransactionOptions): DecodedTransaction {
  const { type, payload } = envelope(bytes, common)
  const fields = decodeFields(type, payload)
  checkChainId(fields, options)
  checkSignatureRange(fields.signature)
  checkFieldRules(fields)

  const tx = buildEjsTransaction(fields, common)
  if (!isCanonicalEncoding(fields, payload)) {
    // Unreachable after the checks above, kept as the guarantee that hash == network hash.
    throw new TxDecodeError('rlp', 'transaction is not canonically encoded (its re-encoding differs from the bytes sent)')
  }
  // ethereumjs' value, without its BigInt per calldata byte (see decode/minimum-gas.ts)
  const minimumGas = minimumGasLimit(fields, tx)
  if (fields.gasLimit < minimumGas) {
    throw new TxDecodeError(
      'invalid_fields',
      `gas limit ${fields.gasLimit} is below the ${minimumGas} gas this transaction needs before execution (intrinsic gas${common.isActivatedEIP(7623) ? ' or EIP-7623 calldata floor' : ''})`,
    )
  }
  // from the list already read, not from the object (see decode/sender.ts)
  const sender = recoverSender(fields, tx)

  // The type's fields are added to this object (Object.assign), not spread into a new one with
  // them: in Node 20's V8 an object made by a spread followed by more properties can get a hidden
  // class of its own (a map and descriptor array in old space, ~0.5 KB), and a decoded transaction
  // is held for as long as its submission is open (eighteenth session, BENCHMARKS h18-heap: 2,950
  // -> 2,427 B per decoded transaction held).
  const base: DecodedTransactionBase = {
    hash: toHex(keccak256(bytes)),
    sender,
    nonce: fields.nonce,
    to: fields.to === null ? null : toHex(fields.to),
    value: fields.value,
    data: new Uint8Array(fields.data),
    gasLimit: fields.gasLimit,
    gasFeeCap: fields.maxFeePerGas,
    gasTipCap: fields.maxPriorityFeePerGas,
    signature: fields.signature,
    raw: bytes,
    rawHex,
  }

  if (isLegacyTx(tx)) {
    return Object.assign(base, { type: 0 as const, gasPrice: fields.maxFeePerGas, chainId: fields.chainId, tx })
  }
  const chainId = fields.chainId ?? options.chainId
  const accessList = fields.accessList.map(([address, keys]) => ({ address: toHex(address), storageKeys: keys.map(toHex) }))
  if (isAccessList2930Tx(tx)) {
    return Object.assign(base, { type: 1 as const, gasPrice: fields.maxFeePerGas, chainId, accessList, tx })
  }
  if (isFeeMarket1559Tx(tx)) {
    return Object.assign(base, {
      type: 2 as const,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      chainId,
      accessList,
      tx,
    })
  }
  if (isEOACode7702Tx(tx) && base.to !== null) {
    return Object.assign(base, {
      type: 4 as const,
      to: base.to,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      chainId,
      accessList,
      authorizationList: fields.authorizationList.map(decodeAuthorization),
      tx,
    })
  }
  throw new TxDecodeError('unsupported_type', `transaction type ${tx.type} is not supported`)
}

function buildEjsTransaction(fields: RawFields, common: Common): TypedTransaction {
  // every transaction of `common` holds one shared copy of it (see decode/transaction-common.ts)
  const options = { common: transactionCommonHandle(common) }
  // built from the RLP list decodeFields read (what createTxFromRLP does after decoding the bytes
  // again): the types' FromBytesArray constructors check the field count and shapes themselves
  const values = fields.items as never
  try {
    switch (fields.type) {
      case 0:
        return createLegacyTxFromBytesArray(values, options)
      case 1:
        return createAccessList2930TxFromBytesArray(values, options)
      case 2:
        return create1559FeeMarketTxFromBytesArray(values, options)
      case 4:
        return createEOACode7702TxFromBytesArray(values, options)
    }
  } catch (cause) {
    // What reaches here passed our own structural and range checks; ethereumjs' remaining rules
    // (for instance the EIP-3860 init code size limit) have readable messages once the tx dump
    // it appends is cut off.
    const message = cause instanceof Error ? cause.message.replace(/\s*\(tx type=[\s\S]*\)$/, '') : String(cause)
    throw new TxDecodeError('invalid_fields', `transaction is invalid: ${message}`, { cause })
  }
}

function decodeAuthorization(item: AuthorizationBytes): AuthorizationEntry {
  const [chainId, address, nonce, yParity, r, s] = item
  const entry = {
    chainId: bytesToBigInt(chainId),
    address: toHex(address),
    nonce: bytesToBigInt(nonce),
    yParity: Number(bytesToBigInt(yParity)),
    r: bytesToBigInt(r),
    s: bytesToBigInt(s),
  }
  let authority: Address | null = null
  const inRange =
    entry.yParity <= 1 && entry.r > 0n && entry.r < SECP256K1_N && entry.s > 0n && entry.s <= SECP256K1_N_HALF
  if (inRange) {
    try {
      authority = eoaCode7702RecoverAuthority(item).toString().toLowerCase() as Address
    } catch {
      authority = null
    }
  }
  return { ...entry, authority }
}
