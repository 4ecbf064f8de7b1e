/**
 * Domain values to wire values. Amounts are bigint in the domain and decimal strings on the
 * wire; they are converted here, explicitly, so no bigint ever reaches a JSON serializer
 * (JSON.stringify throws on bigint, and a Number conversion would silently lose wei).
 */
import type { QuoteResult } from '../../quote/types.ts'

export interface WireQuoteHop {
  protocol: string
  pool: string
  tokenIn: string
  tokenOut: string
  fee: number
}

export interface WireQuoteRoute {
  amountIn: string
  amountOut: string
  hops: WireQuoteHop[]
}

/** The 200 body: the five spec fields (2.2) and the additive ones. */
export interface WireQuote {
  amountOut: string
  gas: number
  calldata: string
  router: string
  spender: string
  blockNumber: string
  minAmountOut: string
  priceImpactBps?: number
  routes: WireQuoteRoute[]
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

export function toWireQuote(result: QuoteResult): WireQuote {
  // The spec types gas as an integer (a JSON number). Real gas estimates are far below 2^53;
  // one above it is a bug upstream, refused rather than rounded.
  if (typeof result.gas !== 'bigint' || result.gas < 0n || result.gas > MAX_SAFE) {
    throw new RangeError(`gas estimate out of range: ${String(result.gas)}`)
  }
  const wire: WireQuote = {
    amountOut: result.amountOut.toString(),
    gas: Number(result.gas),
    calldata: result.calldata,
    router: result.router,
    spender: result.spender,
    blockNumber: result.blockNumber.toString(),
    minAmountOut: result.minAmountOut.toString(),
    routes: result.routes.map(toWireRoute),
  }
  if (result.priceImpactBps !== undefined) wire.priceImpactBps = result.priceImpactBps
  return wire
}

// module-level, not arrow functions inside toWireQuote: an arrow function is a new closure per call,
// and TurboFan compiled these again and again after warm-up (scripts/probe/recompile-trace.ts, session 21)
function toWireRoute(r: QuoteResult['routes'][number]): WireQuote['routes'][number] {
  return { amountIn: r.amountIn.toString(), amountOut: r.amountOut.toString(), hops: r.hops.map(toWireHop) }
}

function toWireHop(h: QuoteResult['routes'][number]['hops'][number]): WireQuote['routes'][number]['hops'][number] {
  return { protocol: h.protocol, pool: h.pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.fee }
}

const MAX_DEPTH = 8

/**
 * A JSON-safe copy of free-form error details (QuoteFailedError.details is Record<string,
 * unknown>): bigint becomes a decimal string, bytes become 0x hex, non-finite numbers null,
 * functions/symbols/undefined and class instances other than Date/bytes are dropped, and nesting is cut at MAX_DEPTH (which also stops cycles).
 */
export function toWireJson(value: unknown, depth = 0): unknown {
  switch (typeof value) {
    case 'bigint':
      return value.toString()
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) ? value : null
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
  }
  if (value === null) return null
  if (depth >= MAX_DEPTH) return '[truncated]'
  if (value instanceof Uint8Array) return `0x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (Array.isArray(value)) return value.map((v) => toWireJson(v, depth + 1) ?? null)
  const proto: unknown = Object.getPrototypeOf(value)
  // other class instances (an Error, a Map) have no agreed JSON form and may carry internals
  if (proto !== Object.prototype && proto !== null) return undefined
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const converted = toWireJson(v, depth + 1)
    if (converted !== undefined) out[k] = converted
  }
  return out
}
