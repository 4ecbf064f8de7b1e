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

/** a hex digit's value by its char code; -1 for any other character below 128 */
const HEX_DIGIT = new Int8Array(128).fill(-1)
for (let c = 0; c < 10; c++) HEX_DIGIT[48 + c] = c
for (let c = 0; c < 6; c++) HEX_DIGIT[65 + c] = HEX_DIGIT[97 + c] = 10 + c
/** at most this many bytes are decoded digit by digit; longer strings by Buffer's native hex writer (a Buffer view costs more than a 32-byte loop) */
const DIGIT_LOOP_MAX_BYTES = 64

/**
 * The bytes of an even-length hex string (`0x` optional), as a plain Uint8Array (not a Buffer: the
 * EVM and ethereumjs take them as they are). Why not a regex and `Uint8Array.from(Buffer)`: the
 * regex scans the whole string and the copy goes element by element, ~2.5x the CPU of this on 1 KiB
 * of calldata (h17-quote). Short strings (hashes, words) are decoded digit by digit; longer ones by
 * Buffer's hex writer into the array's own memory, which stops at the first pair that is not two
 * hex digits, so a count short of the length is the strict check.
 */
export function hexToBytesStrict(value: string, field = 'hex'): Uint8Array {
  const start = value.startsWith('0x') ? 2 : 0
  const digits = value.length - start
  if (digits % 2 !== 0) throw notHex(field)
  const bytes = new Uint8Array(digits / 2)
  if (bytes.length <= DIGIT_LOOP_MAX_BYTES) {
    if (!decodeHexInto(value, start, bytes, 0, bytes.length)) throw notHex(field)
    return bytes
  }
  const s = start === 0 ? value : value.slice(start)
  if (Buffer.from(bytes.buffer, 0, bytes.length).write(s, 'hex') !== bytes.length) throw notHex(field)
  return bytes
}

/**
 * Decodes the `count` bytes whose hex digits start at character `at` of `value` into `out` from
 * `offset`, digit by digit (either case); false at the first character that is not a hex digit
 * (the bytes before it are written). For short strings (hashes, words, addresses), where a Buffer
 * view over the target costs more than the loop.
 */
export function decodeHexInto(value: string, at: number, out: Uint8Array, offset: number, count: number): boolean {
  for (let i = 0; i < count; i++, at += 2) {
    const hi = HEX_DIGIT[value.charCodeAt(at)] ?? -1
    const lo = HEX_DIGIT[value.charCodeAt(at + 1)] ?? -1
    if ((hi | lo) < 0) return false
    out[offset + i] = (hi << 4) | lo
  }
  return true
}

function notHex(field: string): Error {
  return new Error(`${field}: not an even-length hex string`)
}

export function toHex(value: bigint): Hex {
  return `0x${value.toString(16)}`
}

export function bytesToHexString(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}
