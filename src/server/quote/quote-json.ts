/**
 * The 200 body of POST /v1/quote as a ready JSON string, byte for byte what the route's compiled
 * response serializer (fast-json-stringify over quoteResultSchema) writes for toWireQuote(result):
 * the required properties in the schema's order, then priceImpactBps when present.
 *
 * Why a string: with WORKERS > 0 the worker that computed the quote writes it (worker-entry.ts),
 * so the main thread neither structured-clones the nested answer (bigints, routes, hops) nor
 * converts and serializes it; it writes the string as it came (issue 13: every microsecond the main
 * thread spends per quote is taken from the workers' two cores). test/server/quote/quote-json.test.ts
 * holds it to the route's own serializer.
 */
import type { QuoteHop, QuoteRequest, QuoteResult } from '../../quote/types.ts'
import { toWireQuote } from './quote-response.ts'

/**
 * A service that answers a quote request with the 200 body as JSON (the pool's facade); errors are
 * thrown as by QuoteService.quote.
 */
export interface QuoteJsonSource {
  quoteJson(request: QuoteRequest): Promise<string>
}

export function hasQuoteJson(service: object): service is QuoteJsonSource {
  return typeof (service as Partial<QuoteJsonSource>).quoteJson === 'function'
}

/**
 * The 200 body for `result` (throws, as toWireQuote does, on a gas estimate out of range). The wire
 * object is fresh and already in the serializer's order (the schema's required properties in the
 * schema's order, then priceImpactBps when present), so its few schema conversions are made in
 * place and it is stringified as it is, not copied once more into a reordered object (one copy of
 * every route and hop fewer per quote, on the worker).
 */
export function quoteJson(result: QuoteResult): string {
  const wire = toWireQuote(result)
  for (const route of wire.routes) for (const hop of route.hops) hop.fee = schemaInteger(hop.fee)
  if (wire.priceImpactBps !== undefined) checkSchemaNumber(wire.priceImpactBps)
  return JSON.stringify(wire)
}

/** The domain value of a 200 body quoteJson wrote (for callers of the facade's quote(), not the route). */
export function parseQuoteJson(json: string): QuoteResult {
  // what quoteJson wrote: the domain's strings as they were, its bigints as decimal strings
  const wire = JSON.parse(json) as WrittenQuote
  const result: QuoteResult = {
    amountOut: BigInt(wire.amountOut),
    gas: BigInt(wire.gas),
    calldata: wire.calldata,
    router: wire.router,
    spender: wire.spender,
    blockNumber: BigInt(wire.blockNumber),
    minAmountOut: BigInt(wire.minAmountOut),
    routes: wire.routes.map((r) => ({
      amountIn: BigInt(r.amountIn),
      amountOut: BigInt(r.amountOut),
      hops: r.hops.map((h) => ({ protocol: h.protocol, pool: h.pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.fee })),
    })),
  }
  if (wire.priceImpactBps !== undefined) result.priceImpactBps = wire.priceImpactBps
  return result
}

type Decimal = string
interface WrittenQuote extends Omit<QuoteResult, 'amountOut' | 'gas' | 'blockNumber' | 'minAmountOut' | 'routes'> {
  amountOut: Decimal
  gas: number
  blockNumber: Decimal
  minAmountOut: Decimal
  routes: Array<{ amountIn: Decimal; amountOut: Decimal; hops: QuoteHop[] }>
}

/**
 * fast-json-stringify's `number` refuses NaN (500) and writes +-Infinity as null; JSON.stringify
 * writes all three as null, so only NaN needs a check
 */
function checkSchemaNumber(n: number): void {
  if (Number.isNaN(n)) throw new RangeError(`price impact is not a number: ${n}`)
}

/** fast-json-stringify's `integer`: a fraction is truncated, a non-finite value refused */
function schemaInteger(n: number): number {
  if (!Number.isFinite(n)) throw new RangeError(`not an integer: ${n}`)
  return Number.isInteger(n) ? n : Math.trunc(n)
}
