/**
 * Structural decoding: the RLP list of one transaction type, its field count, and each field as
 * a canonical integer of its width, a byte string, an access list or an authorization list. A
 * fault names the field and the rule it breaks.
 */
import { RLP } from '@ethereumjs/rlp'

import { TxDecodeError, type TxDecodeErrorReason } from '../errors.ts'
import { hexByte, toHex } from './bytes.ts'
import type { SupportedTransactionType, TransactionSignature } from './types.ts'

export type RlpItem = Uint8Array | RlpItem[]

export interface RawFields {
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
  /**
   * The RLP list the fields were read from, as decoded: the ethereumjs object is built from it
   * (its FromBytesArray constructors) rather than from the bytes, which it would decode again.
   */
  items: readonly RlpItem[]
}

/** [chainId, address, nonce, yParity, r, s] */
export type AuthorizationBytes = [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array]

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

export function decodeFields(type: SupportedTransactionType, payload: Uint8Array): RawFields {
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
    items: decoded,
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

function rlpProblem(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : ''
  if (/remainder/i.test(message)) return 'extra bytes follow the transaction'
  if (/out-of-bounds|not enough bytes|larger than the data/i.test(message)) return 'it is truncated (a length prefix points past the end)'
  if (/single byte < 0x80|greater than 55|too short|extra zeros|leading zero/i.test(message)) {
    return 'it uses a non-canonical length encoding'
  }
  return 'it cannot be decoded'
}
