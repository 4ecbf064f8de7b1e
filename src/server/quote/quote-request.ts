/**
 * Validation of the quote request body (spec 2.1, 8.2, 8.3) into the domain's QuoteRequest.
 *
 * Hand-written rather than Ajv-compiled because:
 * - the spec's uint256 bound (amountIn <= 2^256-1) is not expressible as a JSON-schema pattern;
 * - the 400 body must list ONE detail per violation, in a stable order, with our field names;
 * - it yields the typed domain value (bigint amount, lowercase addresses) in the same pass.
 * The JSON schema in quote-schemas.ts documents the same rules for OpenAPI; both take their
 * patterns and bounds from the constants below so they cannot drift apart.
 *
 * Unknown fields are REJECTED (one detail each). A misspelt optional field (e.g. `slipageBps`)
 * would otherwise be silently ignored and the quote computed with the default slippage: a
 * silent loss of price protection for the client. Spec-conforming clients send only the
 * documented fields, so rejecting costs them nothing.
 */
import type { Address } from '../../chain/types.ts'
import type { QuoteRequest } from '../../quote/types.ts'

export const ADDRESS_PATTERN = /^0x[a-fA-F0-9]{40}$/
export const AMOUNT_PATTERN = /^[1-9]\d*$/
export const MAX_UINT256 = (1n << 256n) - 1n
/** decimal digits of 2^256-1: a longer string is out of range without parsing it */
const MAX_UINT256_DIGITS = MAX_UINT256.toString().length
export const SLIPPAGE_BPS_MIN = 0
export const SLIPPAGE_BPS_MAX = 5000

export const REQUIRED_FIELDS = ['tokenIn', 'tokenOut', 'amountIn'] as const
export const OPTIONAL_FIELDS = ['slippageBps', 'recipient', 'sender'] as const
const KNOWN_FIELDS: ReadonlySet<string> = new Set<string>([...REQUIRED_FIELDS, ...OPTIONAL_FIELDS])

/**
 * Unknown fields beyond this many are summarised in one extra detail: the body limit would
 * otherwise let one request ask for a response with thousands of entries.
 */
export const MAX_UNKNOWN_FIELD_DETAILS = 10
/** long client-chosen field names are cut when echoed back */
const MAX_ECHOED_FIELD_NAME = 64

export interface ValidationDetail {
  /** the body field concerned, `body` for the body as a whole, `Content-Type` for the header */
  field: string
  message: string
}

export type QuoteRequestParse = { ok: true; value: QuoteRequest } | { ok: false; details: ValidationDetail[] }

const ADDRESS_MESSAGE = 'must be a string matching ^0x[a-fA-F0-9]{40}$ (0x followed by 40 hex characters)'

/**
 * One address field: lowercased when valid; a detail pushed to `details` when it is missing (and
 * required) or invalid. A module function rather than a closure per request: under tsx (npm start)
 * every closure is named by a call when it is created.
 */
function addressField(fields: Record<string, unknown>, name: 'tokenIn' | 'tokenOut' | 'recipient' | 'sender', required: boolean, details: ValidationDetail[]): Address | undefined {
  // own properties only: nothing reached through a prototype counts as sent
  if (!Object.hasOwn(fields, name)) {
    if (required) details.push({ field: name, message: 'is required' })
    return undefined
  }
  const v = fields[name]
  if (typeof v !== 'string' || !ADDRESS_PATTERN.test(v)) {
    details.push({ field: name, message: ADDRESS_MESSAGE })
    return undefined
  }
  // the domain's Address is lowercase; the spec pattern accepts either case (no EIP-55 check)
  return v.toLowerCase() as Address
}

export function parseQuoteRequest(body: unknown): QuoteRequestParse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, details: [{ field: 'body', message: 'must be a JSON object' }] }
  }
  const fields = body as Record<string, unknown>
  const details: ValidationDetail[] = []

  const tokenIn = addressField(fields, 'tokenIn', true, details)
  const tokenOut = addressField(fields, 'tokenOut', true, details)

  let amountIn: bigint | undefined
  if (!Object.hasOwn(fields, 'amountIn')) details.push({ field: 'amountIn', message: 'is required' })
  else {
    const v = fields.amountIn
    if (typeof v !== 'string' || !AMOUNT_PATTERN.test(v)) {
      details.push({ field: 'amountIn', message: 'must be a decimal string matching ^[1-9]\\d*$ (an integer above 0, no leading zeros)' })
    } else if (v.length > MAX_UINT256_DIGITS || BigInt(v) > MAX_UINT256) {
      // the length test first: BigInt() of a megabyte of digits is avoidable work
      details.push({ field: 'amountIn', message: 'must not exceed 2^256-1 (uint256)' })
    } else amountIn = BigInt(v)
  }

  let slippageBps: number | undefined
  if (Object.hasOwn(fields, 'slippageBps')) {
    const v = fields.slippageBps
    if (typeof v !== 'number' || !Number.isInteger(v) || v < SLIPPAGE_BPS_MIN || v > SLIPPAGE_BPS_MAX) {
      details.push({ field: 'slippageBps', message: `must be an integer from ${SLIPPAGE_BPS_MIN} to ${SLIPPAGE_BPS_MAX} (basis points)` })
    } else slippageBps = v
  }

  const recipient = addressField(fields, 'recipient', false, details)
  const sender = addressField(fields, 'sender', false, details)

  let unknown = 0
  for (const name of Object.keys(fields)) {
    if (KNOWN_FIELDS.has(name)) continue
    unknown++
    if (unknown <= MAX_UNKNOWN_FIELD_DETAILS) {
      const shown = name.length > MAX_ECHOED_FIELD_NAME ? `${name.slice(0, MAX_ECHOED_FIELD_NAME)}...` : name
      details.push({ field: shown, message: 'is not a recognised field' })
    }
  }
  if (unknown > MAX_UNKNOWN_FIELD_DETAILS) {
    details.push({ field: 'body', message: `${unknown - MAX_UNKNOWN_FIELD_DETAILS} more unrecognised fields` })
  }

  if (details.length > 0 || tokenIn === undefined || tokenOut === undefined || amountIn === undefined) {
    return { ok: false, details }
  }
  const value: QuoteRequest = { tokenIn, tokenOut, amountIn }
  if (slippageBps !== undefined) value.slippageBps = slippageBps
  if (recipient !== undefined) value.recipient = recipient
  if (sender !== undefined) value.sender = sender
  return { ok: true, value }
}
