/**
 * Human-readable revert reasons: Error(string), Panic(uint256) and, for anything else, the
 * custom error selector with its raw data, so a partner can still look it up.
 */
import { decodeAbiParameters } from 'viem'
import { bytesToHexString } from '../chain/quantity.ts'

const ERROR_SELECTOR = '08c379a0'
const PANIC_SELECTOR = '4e487b71'

const PANIC_CODES: Record<number, string> = {
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array encoding',
  0x31: 'pop on empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to an uninitialized function',
}

export function decodeRevertReason(returnData: Uint8Array): string | undefined {
  if (returnData.length < 4) return returnData.length === 0 ? undefined : `revert data ${bytesToHexString(returnData)}`
  const hex = Buffer.from(returnData).toString('hex')
  const selector = hex.slice(0, 8)
  try {
    if (selector === ERROR_SELECTOR) {
      const [reason] = decodeAbiParameters([{ type: 'string' }], `0x${hex.slice(8)}`)
      return reason
    }
    if (selector === PANIC_SELECTOR) {
      const [code] = decodeAbiParameters([{ type: 'uint256' }], `0x${hex.slice(8)}`)
      const text = PANIC_CODES[Number(code)]
      return `panic 0x${code.toString(16)}${text ? ` (${text})` : ''}`
    }
  } catch {
    // malformed encoding: fall through to the raw form
  }
  return `custom error 0x${selector}${hex.length > 8 ? ` with data 0x${hex.slice(8)}` : ''}`
}
