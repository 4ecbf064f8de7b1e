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
 */
import { Common, Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import {
  type AccessList2930Tx,
  type EOACode7702Tx,
  type FeeMarket1559Tx,
  type LegacyTx,
  type TypedTransaction,
  createTxFromRLP,
  isAccessList2930Tx,
  isEOACode7702Tx,
  isFeeMarket1559Tx,
  isLegacyTx,
} from '@ethereumjs/tx'
import { eoaCode7702RecoverAuthority } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { LRUCache } from 'lru-cache'

import type { Address, Hex } from '../chain/types.ts'
import { CUSTOM_CRYPTO } from '../crypto/ecrecover.ts'
import { TxDecodeError, type TxDecodeErrorReason } from './errors.ts'

/** geth's txpool limit for non-blob transactions (4 slots of 32 KiB). */
export const DEFAULT_MAX_TX_BYTES = 128 * 1024
export const DEFAULT_TX_HARDFORK = 'prague'

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const SECP256K1_N_HALF = SECP256K1_N / 2n
const MAX_UINT64 = (1n << 64n) - 1n
const MAX_UINT256 = (1n << 256n) - 1n

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

interface DecodedTransactionBase {
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
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError(`decodeSignedTransaction: maxBytes must be a positive integer, got ${maxBytes}`)
  }
  const common = resolveCommon(options)
  const bytes = inputBytes(raw, maxBytes)
  // Sender recovery (secp256k1 in JavaScript) costs ~1 ms; one transaction is decoded at its
  // acknowledgement, again by the dispatcher, the planner and a builder. The result is a pure
  // function of the bytes, the chain id, the Common and the legacy rule, so it is remembered.
  let cache = decodedCache.get(common)
  if (cache === undefined) {
    cache = new LRUCache({ max: DECODED_CACHE_ENTRIES })
    decodedCache.set(common, cache)
  }
  const cacheKey = `${options.chainId}:${options.allowUnprotectedLegacy ?? true}:${toHex(bytes)}`
  const cached = cache.get(cacheKey)
  if (cached !== undefined) return cached
  const decoded = decodeUncached(bytes, common, options)
  cache.set(cacheKey, decoded)
  return decoded
}

/**
 * decoded transactions remembered per Common. An entry that went through the EVM holds ~17 KB (the
 * ethereumjs tx keeps its own copy of the Common with a filled parameter cache), so the memo is
 * kept to what it is for: a burst of acknowledgements decoded again by the dispatcher moments
 * later. Beyond it a decode costs one native sender recovery (~50 us).
 */
const DECODED_CACHE_ENTRIES = 512
const decodedCache = new WeakMap<Common, LRUCache<string, DecodedTransaction>>()

function decodeUncached(bytes: Uint8Array, common: Common, options: DecodeTransactionOptions): DecodedTransaction {

  const first = bytes[0]
  let type: SupportedTransactionType
  let payload: Uint8Array
  if (first >= 0xc0) {
    type = 0
    payload = bytes
  } else if (first >= 0x80) {
    throw new TxDecodeError(
      'rlp',
      `transaction starts with byte 0x${hexByte(first)}, which is neither an RLP list (legacy transaction) nor an EIP-2718 type byte (0x00-0x7f)`,
    )
  } else {
    type = typedEnvelopeType(first, common)
    payload = bytes.subarray(1)
  }

  const fields = decodeFields(type, payload)
  checkChainId(fields, options)
  checkSignatureRange(fields.signature)
  checkFieldRules(fields)

  const tx = buildEjsTransaction(bytes, common)
  if (!equalBytes(tx.serialize(), bytes)) {
    // Unreachable after the checks above, kept as the guarantee that hash == network hash.
    throw new TxDecodeError('rlp', 'transaction is not canonically encoded (its re-encoding differs from the bytes sent)')
  }
  const minimumGas = tx.getMinimumGasLimit()
  if (fields.gasLimit < minimumGas) {
    throw new TxDecodeError(
      'invalid_fields',
      `gas limit ${fields.gasLimit} is below the ${minimumGas} gas this transaction needs before execution (intrinsic gas${common.isActivatedEIP(7623) ? ' or EIP-7623 calldata floor' : ''})`,
    )
  }

  let sender: Address
  try {
    sender = tx.getSenderAddress().toString().toLowerCase() as Address
  } catch (cause) {
    throw new TxDecodeError('signature', 'signature is invalid: no public key can be recovered from it', { cause })
  }

  const base: DecodedTransactionBase = {
    hash: toHex(keccak_256(bytes)),
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
    rawHex: toHex(bytes),
  }

  if (isLegacyTx(tx)) {
    return { ...base, type: 0, gasPrice: fields.maxFeePerGas, chainId: fields.chainId, tx }
  }
  const chainId = fields.chainId ?? options.chainId
  const accessList = fields.accessList.map(([address, keys]) => ({ address: toHex(address), storageKeys: keys.map(toHex) }))
  if (isAccessList2930Tx(tx)) {
    return { ...base, type: 1, gasPrice: fields.maxFeePerGas, chainId, accessList, tx }
  }
  if (isFeeMarket1559Tx(tx)) {
    return {
      ...base,
      type: 2,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      chainId,
      accessList,
      tx,
    }
  }
  if (isEOACode7702Tx(tx) && base.to !== null) {
    return {
      ...base,
      type: 4,
      to: base.to,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      chainId,
      accessList,
      authorizationList: fields.authorizationList.map(decodeAuthorization),
      tx,
    }
  }
  throw new TxDecodeError('unsupported_type', `transaction type ${tx.type} is not supported`)
}

// ---------------------------------------------------------------------------------------------
// Input and envelope

function inputBytes(raw: unknown, maxBytes: number): Uint8Array {
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
  const bad = /[^0-9a-fA-F]/.exec(raw.slice(2))
  if (bad !== null) {
    throw new TxDecodeError(
      'malformed_hex',
      `transaction hex contains a non-hex character ${JSON.stringify(bad[0])} at position ${bad.index + 2}`,
    )
  }
  return new Uint8Array(Buffer.from(raw.slice(2), 'hex'))
}

function tooLarge(size: number, maxBytes: number): TxDecodeError {
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

// ---------------------------------------------------------------------------------------------
// Structural decoding

type RlpItem = Uint8Array | RlpItem[]

interface RawFields {
  type: SupportedTransactionType
  /** undefined for unprotected legacy */
  chainId: bigint | undefined
  nonce: bigint
  /** gasPrice for types 0 and 1 */
  maxPriorityFeePerGas: bigint
  /** gasPrice for types 0 and 1 */
  maxFeePerGas: bigint
  gasLimit: bigint
  to: Uint8Array | null
  value: bigint
  data: Uint8Array
  accessList: Array<[Uint8Array, Uint8Array[]]>
  authorizationList: AuthorizationBytes[]
  signature: TransactionSignature
}

/** [chainId, address, nonce, yParity, r, s] */
type AuthorizationBytes = [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array]

const FIELD_NAMES: Record<SupportedTransactionType, string[]> = {
  0: ['nonce', 'gasPrice', 'gasLimit', 'to', 'value', 'data', 'v', 'r', 's'],
  1: ['chainId', 'nonce', 'gasPrice', 'gasLimit', 'to', 'value', 'data', 'accessList', 'yParity', 'r', 's'],
  2: [
    'chainId', 'nonce', 'maxPriorityFeePerGas', 'maxFeePerGas', 'gasLimit', 'to', 'value', 'data', 'accessList',
    'yParity', 'r', 's',
  ],
  4: [
    'chainId', 'nonce', 'maxPriorityFeePerGas', 'maxFeePerGas', 'gasLimit', 'to', 'value', 'data', 'accessList',
    'authorizationList', 'yParity', 'r', 's',
  ],
}

function decodeFields(type: SupportedTransactionType, payload: Uint8Array): RawFields {
  const what = type === 0 ? 'legacy transaction' : `type 0x${hexByte(type)} transaction payload`
  let decoded: RlpItem
  try {
    decoded = RLP.decode(payload)
  } catch (cause) {
    throw new TxDecodeError('rlp', `${what} is not valid RLP: ${rlpProblem(cause)}`, { cause })
  }
  if (!Array.isArray(decoded)) {
    throw new TxDecodeError('rlp', `${what} must be an RLP list`)
  }
  const names = FIELD_NAMES[type]
  if (decoded.length === names.length - 3) {
    throw new TxDecodeError('signature', 'transaction is not signed (v, r and s are missing)')
  }
  if (decoded.length !== names.length) {
    throw new TxDecodeError('rlp', `${what} has ${decoded.length} fields; expected ${names.length} (${names.join(', ')})`)
  }
  const f = new Map<string, RlpItem>(names.map((name, i) => [name, decoded[i]]))
  const item = (name: string): RlpItem => f.get(name) as RlpItem

  const nonce = uintField(item('nonce'), 'nonce', 8)
  const gasLimit = uintField(item('gasLimit'), 'gasLimit', 8)
  const value = uintField(item('value'), 'value', 32)
  const data = bytesField(item('data'), 'data')
  const toBytes = bytesField(item('to'), 'to')
  if (toBytes.length !== 0 && toBytes.length !== 20) {
    throw new TxDecodeError('invalid_fields', `'to' must be a 20-byte address or empty (contract creation); got ${toBytes.length} bytes`)
  }
  const to = toBytes.length === 0 ? null : toBytes

  let maxFeePerGas: bigint
  let maxPriorityFeePerGas: bigint
  if (type === 0 || type === 1) {
    maxFeePerGas = maxPriorityFeePerGas = uintField(item('gasPrice'), 'gasPrice', 32)
  } else {
    maxPriorityFeePerGas = uintField(item('maxPriorityFeePerGas'), 'maxPriorityFeePerGas', 32)
    maxFeePerGas = uintField(item('maxFeePerGas'), 'maxFeePerGas', 32)
  }

  let chainId: bigint | undefined
  let signature: TransactionSignature
  const r = uintField(item('r'), 'signature r', 32, 'signature')
  const s = uintField(item('s'), 'signature s', 32, 'signature')
  if (type === 0) {
    const v = uintField(item('v'), 'signature v', 32, 'signature')
    if (v === 27n || v === 28n) {
      chainId = undefined
      signature = { v, yParity: v === 27n ? 0 : 1, r, s }
    } else if (v >= 37n) {
      chainId = (v - 35n) / 2n
      signature = { v, yParity: (v - 35n) % 2n === 0n ? 0 : 1, r, s }
    } else {
      throw new TxDecodeError(
        'signature',
        `legacy signature v = ${v} is invalid; expected 27/28, or chainId * 2 + 35/36 (EIP-155)`,
      )
    }
  } else {
    chainId = uintField(item('chainId'), 'chainId', 32, 'chain_id')
    const yParity = uintField(item('yParity'), 'signature yParity', 32, 'signature')
    if (yParity > 1n) throw new TxDecodeError('signature', `signature yParity must be 0 or 1; got ${yParity}`)
    signature = { v: yParity, yParity: yParity === 0n ? 0 : 1, r, s }
  }

  const accessList = type === 0 ? [] : accessListField(item('accessList'))
  const authorizationList = type === 4 ? authorizationListField(item('authorizationList')) : []

  return {
    type,
    chainId,
    nonce,
    maxPriorityFeePerGas,
    maxFeePerGas,
    gasLimit,
    to,
    value,
    data,
    accessList,
    authorizationList,
    signature,
  }
}

function bytesField(item: RlpItem, name: string): Uint8Array {
  if (Array.isArray(item)) throw new TxDecodeError('rlp', `${name} must be a byte string, not an RLP list`)
  return item
}

/**
 * A canonical RLP integer: no leading zero bytes (zero is the empty string), at most `maxLen`
 * bytes. Leading zeros are an encoding fault ('rlp', as geth reports it); excess length breaks the
 * field's width (`oversize`).
 */
function uintField(
  item: RlpItem,
  name: string,
  maxLen: number,
  oversize: TxDecodeErrorReason = 'invalid_fields',
): bigint {
  const bytes = bytesField(item, name)
  if (bytes.length > 0 && bytes[0] === 0) {
    throw new TxDecodeError('rlp', `${name} has leading zero bytes (non-canonical RLP integer)`)
  }
  if (bytes.length > maxLen) {
    throw new TxDecodeError(oversize, `${name} is ${bytes.length} bytes long; it must fit in ${maxLen * 8} bits`)
  }
  return bytes.length === 0 ? 0n : BigInt(toHex(bytes))
}

function accessListField(item: RlpItem): Array<[Uint8Array, Uint8Array[]]> {
  if (!Array.isArray(item)) throw new TxDecodeError('rlp', 'accessList must be an RLP list')
  return item.map((entry, i) => {
    if (!Array.isArray(entry) || entry.length !== 2 || Array.isArray(entry[0]) || !Array.isArray(entry[1])) {
      throw new TxDecodeError('rlp', `accessList[${i}] must be a list [address, [storageKeys...]]`)
    }
    const [address, keys] = entry as [Uint8Array, RlpItem[]]
    if (address.length !== 20) {
      throw new TxDecodeError('invalid_fields', `accessList[${i}] address must be 20 bytes; got ${address.length}`)
    }
    const storageKeys = keys.map((key, j) => {
      const k = bytesField(key, `accessList[${i}].storageKeys[${j}]`)
      if (k.length !== 32) {
        throw new TxDecodeError('invalid_fields', `accessList[${i}].storageKeys[${j}] must be 32 bytes; got ${k.length}`)
      }
      return k
    })
    return [address, storageKeys]
  })
}

function authorizationListField(item: RlpItem): AuthorizationBytes[] {
  if (!Array.isArray(item)) throw new TxDecodeError('rlp', 'authorizationList must be an RLP list')
  return item.map((entry, i) => {
    const at = `authorizationList[${i}]`
    if (!Array.isArray(entry) || entry.length !== 6 || entry.some((m) => Array.isArray(m))) {
      throw new TxDecodeError('rlp', `${at} must be a list [chainId, address, nonce, yParity, r, s]`)
    }
    const members = entry as AuthorizationBytes
    const [chainId, address, nonce, yParity, r, s] = members
    uintField(chainId, `${at}.chainId`, 32)
    if (address.length !== 20) throw new TxDecodeError('invalid_fields', `${at}.address must be 20 bytes; got ${address.length}`)
    uintField(nonce, `${at}.nonce`, 8)
    uintField(yParity, `${at}.yParity`, 1)
    uintField(r, `${at}.r`, 32)
    uintField(s, `${at}.s`, 32)
    return members
  })
}

// ---------------------------------------------------------------------------------------------
// Semantic checks

function checkChainId(fields: RawFields, options: DecodeTransactionOptions): void {
  if (fields.chainId === undefined) {
    if (options.allowUnprotectedLegacy === false) {
      throw new TxDecodeError(
        'chain_id',
        `transaction is not replay-protected (legacy v = 27/28 carries no chain id); this service only accepts transactions signed for chain id ${options.chainId} (EIP-155)`,
      )
    }
    return
  }
  if (fields.chainId !== options.chainId) {
    throw new TxDecodeError(
      'chain_id',
      `transaction chain id ${fields.chainId} does not match this service's chain id ${options.chainId}`,
    )
  }
}

function checkSignatureRange(sig: TransactionSignature): void {
  if (sig.r === 0n || sig.s === 0n) {
    throw new TxDecodeError('signature', 'signature is invalid: r and s must be non-zero')
  }
  if (sig.r >= SECP256K1_N) {
    throw new TxDecodeError('signature', 'signature is invalid: r is not below the secp256k1 curve order')
  }
  if (sig.s > SECP256K1_N_HALF) {
    throw new TxDecodeError(
      'signature',
      'signature is invalid: s is greater than secp256k1n/2 (high-s signatures are forbidden since EIP-2); re-sign with a signer that produces low-s signatures',
    )
  }
}

function checkFieldRules(fields: RawFields): void {
  if (fields.nonce === MAX_UINT64) {
    throw new TxDecodeError('invalid_fields', 'nonce 2^64-1 is not allowed (EIP-2681)')
  }
  if (fields.maxPriorityFeePerGas > fields.maxFeePerGas) {
    throw new TxDecodeError(
      'invalid_fields',
      `maxPriorityFeePerGas (${fields.maxPriorityFeePerGas}) is greater than maxFeePerGas (${fields.maxFeePerGas}); the tip cannot exceed the fee cap`,
    )
  }
  if (fields.gasLimit * fields.maxFeePerGas > MAX_UINT256) {
    throw new TxDecodeError('invalid_fields', 'gasLimit * fee cap overflows 256 bits')
  }
  if (fields.type === 4) {
    if (fields.to === null) {
      throw new TxDecodeError('invalid_fields', "EIP-7702 transactions cannot create contracts; 'to' is required")
    }
    if (fields.authorizationList.length === 0) {
      throw new TxDecodeError('invalid_fields', 'EIP-7702 transaction has an empty authorization list')
    }
  }
}

function buildEjsTransaction(bytes: Uint8Array, common: Common): TypedTransaction {
  try {
    return createTxFromRLP(bytes, { common })
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

// ---------------------------------------------------------------------------------------------
// Common

const KNOWN_HARDFORKS = new Set<string>(Object.values(Hardfork))
const commonCache = new Map<string, Common>()

function resolveCommon(options: DecodeTransactionOptions): Common {
  if (options.common !== undefined) {
    if (options.common.chainId() !== options.chainId) {
      throw new RangeError(
        `decodeSignedTransaction: options.common is for chain ${options.common.chainId()}, options.chainId is ${options.chainId}`,
      )
    }
    return options.common
  }
  const hardfork = options.hardfork ?? DEFAULT_TX_HARDFORK
  if (!KNOWN_HARDFORKS.has(hardfork)) {
    throw new RangeError(`decodeSignedTransaction: unknown hardfork ${JSON.stringify(hardfork)}`)
  }
  const key = `${options.chainId}:${hardfork}`
  let common = commonCache.get(key)
  if (common === undefined) {
    // ethereumjs copies the Common into every transaction, so one cached instance is never mutated.
    common =
      options.chainId === 1n
        ? new Common({ chain: Mainnet, hardfork, customCrypto: CUSTOM_CRYPTO })
        : createCustomCommon({ chainId: options.chainId.toString(), name: `chain-${options.chainId}` }, Mainnet, { hardfork, customCrypto: CUSTOM_CRYPTO })
    commonCache.set(key, common)
  }
  return common
}

// ---------------------------------------------------------------------------------------------
// Helpers

function rlpProblem(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : ''
  if (/remainder/i.test(message)) return 'extra bytes follow the transaction'
  if (/out-of-bounds|not enough bytes|larger than the data/i.test(message)) return 'it is truncated (a length prefix points past the end)'
  if (/single byte < 0x80|greater than 55|too short|extra zeros|leading zero/i.test(message)) {
    return 'it uses a non-canonical length encoding'
  }
  return 'it cannot be decoded'
}

function hexByte(n: number): string {
  return n.toString(16).padStart(2, '0')
}

function toHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(toHex(bytes))
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0
}
