/**
 * Errors crossing a thread come back as the same class with the same message and fields (the
 * structured clone in between is the one a MessagePort applies), so the server maps them exactly as
 * it maps the originals: same status, same body, same JSON-RPC error.
 */
import { describe, expect, it } from 'vitest'
import { UpstreamError } from '../../src/chain/types.ts'
import { ExecutionBudgetError } from '../../src/evm/execution-budget.ts'
import { BaseError } from '../../src/primitives/base-error.ts'
import { QuoteFailedError } from '../../src/quote/types.ts'
import { mapQuoteError } from '../../src/server/quote/quote-errors.ts'
import { TransportError } from '../../src/transport/transport-error.ts'
import { domainErrors, ErrorRegistry } from '../../src/workers/error-registry.ts'

/** what another thread receives */
function across(error: unknown): Error {
  return domainErrors.rebuild(structuredClone(domainErrors.serialize(error)))
}

describe('errors across threads', () => {
  it('QuoteFailedError: same class, reason, message, details; the same 422 body', () => {
    const original = new QuoteFailedError('INSUFFICIENT_LIQUIDITY', 'the pools on every route are too shallow for this amount', { amountIn: '1000' })
    const rebuilt = across(original)
    expect(rebuilt).toBeInstanceOf(QuoteFailedError)
    expect(rebuilt).toBeInstanceOf(BaseError)
    expect(rebuilt).toMatchObject({ name: 'QuoteFailedError', reason: 'INSUFFICIENT_LIQUIDITY', message: original.message, details: { amountIn: '1000' } })
    expect(rebuilt.stack).toBe(original.stack)
    expect(mapQuoteError(rebuilt)).toEqual(mapQuoteError(original))
    expect(mapQuoteError(rebuilt).status).toBe(422)
  })

  it('UpstreamError with its transport cause: the same 502, and walk() finds the cause by class', () => {
    const cause = new TransportError('HTTP 503: unavailable', { reason: 'http', retryable: true, attempts: 3, method: 'eth_getStorageAt', status: 503 })
    const original = new UpstreamError('HTTP 503', 'http', { method: 'eth_getStorageAt', status: 503 }, { cause })
    const rebuilt = across(original) as UpstreamError
    expect(rebuilt).toBeInstanceOf(UpstreamError)
    expect(rebuilt.reason).toBe('http')
    expect(rebuilt.message).toBe(original.message)
    expect(rebuilt.cause).toBeInstanceOf(TransportError)
    expect((rebuilt.cause as TransportError).status).toBe(503)
    expect((rebuilt.cause as TransportError).params()).toEqual(cause.params())
    expect(rebuilt.walk(TransportError)).toBe(rebuilt.cause)
    expect(mapQuoteError(rebuilt)).toEqual(mapQuoteError(original))
    expect(mapQuoteError(rebuilt).status).toBe(502)
  })

  it('ExecutionBudgetError keeps its methods (toDetails, within) and its bigint limit', () => {
    const original = new ExecutionBudgetError('gas', 50_000_000n, 'the call needs more than the gas budget')
    const rebuilt = across(original) as ExecutionBudgetError
    expect(rebuilt).toBeInstanceOf(ExecutionBudgetError)
    expect(rebuilt.toDetails()).toEqual({ budget: 'gas', limit: '50000000' })
    expect(rebuilt.within('transaction 1: ').message).toBe('transaction 1: the call needs more than the gas budget')
  })

  it('a class the registry does not know: the nearest built-in, with the name and message', () => {
    class LocalOnlyError extends TypeError {
      override readonly name = 'LocalOnlyError'
    }
    const rebuilt = across(new LocalOnlyError('something local'))
    expect(rebuilt.constructor).toBe(Error)
    expect(rebuilt.name).toBe('LocalOnlyError')
    expect(rebuilt.message).toBe('something local')
    expect(mapQuoteError(rebuilt).status).toBe(500)
    const builtIn = across(new RangeError('out of range'))
    expect(builtIn).toBeInstanceOf(RangeError)
  })

  it('what is thrown without being an Error, and fields structured clone refuses', () => {
    expect(across('a string')).toMatchObject({ message: 'a string', thrown: 'a string' })
    const odd = new QuoteFailedError('NO_ROUTE', 'no route', { callback: () => 1, nested: new Error('inner'), amount: 5n })
    const rebuilt = across(odd) as QuoteFailedError
    expect(rebuilt.details).toEqual({ callback: undefined, nested: { name: 'Error', message: 'inner' }, amount: 5n })
  })

  it('refuses two classes of one name', () => {
    class QuoteFailedError extends Error {}
    expect(() => new ErrorRegistry([QuoteFailedError, QuoteFailedError])).not.toThrow()
    expect(() => new ErrorRegistry([UpstreamError, class UpstreamError extends Error {}])).toThrow(/two error classes are named UpstreamError/)
  })
})
