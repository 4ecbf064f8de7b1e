/**
 * Parsing of the numeric forms found in genesis files and JSON-RPC answers: go-ethereum writes
 * numbers as decimal strings, hex strings or JSON numbers depending on the field and the tool.
 */
import type { Address, Hex } from './types.ts'

export function parseQuantity(value: unknown, field = 'value'): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${field}: ${value} is not a safe non-negative integer`)
    return BigInt(value)
  }
  if (typeof value === 'string') {
    const s = value.trim()
    if (/^0x[0-9a-fA-F]*$/.test(s)) return s.length === 2 ? 0n : BigInt(s)
    if (/^\d+$/.test(s)) return BigInt(s)
  }
  throw new Error(`${field}: ${JSON.stringify(value)} is not a quantity (decimal or 0x-hex)`)
}

export function parseOptionalQuantity(value: unknown, field: string): bigint | undefined {
  return value === undefined || value === null ? undefined : parseQuantity(value, field)
}

export function normalizeAddress(value: string, field = 'address'): Address {
  const s = value.startsWith('0x') || value.startsWith('0X') ? value.slice(2) : value
  if (!/^[0-9a-fA-F]{40}$/.test(s)) throw new Error(`${field}: ${JSON.stringify(value)} is not a 20-byte address`)
  return `0x${s.toLowerCase()}`
}

export function hexToBytesStrict(value: string, field = 'hex'): Uint8Array {
  const s = value.startsWith('0x') ? value.slice(2) : value
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new Error(`${field}: not an even-length hex string`)
  return Uint8Array.from(Buffer.from(s, 'hex'))
}

export function toHex(value: bigint): Hex {
  return `0x${value.toString(16)}`
}

export function bytesToHexString(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}
