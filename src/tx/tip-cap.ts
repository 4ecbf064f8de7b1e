/**
 * A signed transaction's tip cap (maxPriorityFeePerGas, or gasPrice for legacy and EIP-2930),
 * read from its RLP fields alone: no signature check, no sender recovery, no Common. The
 * dispatcher reads it for every submission it takes on, as it takes it on: a backrun bids over the
 * tips of the other submissions of its block (see Replanning.tipFloor), so each one's tip must be
 * known before any of them is simulated, and a full decode costs a sender recovery (~1 ms) each.
 */
import { RLP } from '@ethereumjs/rlp'

import { bytesToBigInt } from './decode/bytes.ts'
import { inputBytes } from './decode/envelope.ts'

/** The field index of the tip cap per EIP-2718 type (legacy: gasPrice at 1). */
const TIP_FIELD: Record<number, number> = { 1: 2, 2: 2, 3: 2, 4: 2 }

/**
 * The tip cap of the raw signed transaction `raw` (0x-hex), or undefined when its envelope or
 * that field does not parse (the full decode says why, where it matters).
 */
export function transactionTipCap(raw: string): bigint | undefined {
  let bytes: Uint8Array
  try {
    // its size was bounded where it was accepted (MAX_RAW_TX_BYTES): no second bound here
    bytes = inputBytes(raw, Number.POSITIVE_INFINITY)
  } catch {
    return undefined
  }
  const first = bytes[0]
  const typed = first < 0x80
  const index = first >= 0xc0 ? 1 : typed ? TIP_FIELD[first] : undefined
  if (index === undefined) return undefined
  let fields: unknown
  try {
    fields = RLP.decode(typed ? bytes.subarray(1) : bytes)
  } catch {
    return undefined
  }
  if (!Array.isArray(fields)) return undefined
  const field: unknown = fields[index]
  if (!(field instanceof Uint8Array) || field.length > 32) return undefined
  return bytesToBigInt(field)
}
