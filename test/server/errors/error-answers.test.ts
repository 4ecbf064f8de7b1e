/**
 * The server's one error table: which answer each error class gets on the REST routes and on the
 * JSON-RPC methods. The routes' own tests (quote-routes, routes, submission-methods,
 * execution-budget) prove the answers reach the wire unchanged; this file pins the table itself.
 */
import { describe, expect, it } from 'vitest'
import { UpstreamError } from '../../../src/chain/types.ts'
import { ExecutionBudgetError } from '../../../src/evm/execution-budget.ts'
import { QuoteFailedError } from '../../../src/quote/types.ts'
import { UnauthorizedError } from '../../../src/server/auth/api-key-auth.ts'
import { httpErrorAnswer, rpcErrorAnswer } from '../../../src/server/errors/error-answers.ts'
import { RateLimitedError, SubmissionRefusedError, ValidationFailedError } from '../../../src/server/errors/request-errors.ts'
import { InvalidParamsError, JsonRpcError } from '../../../src/server/jsonrpc/errors.ts'
import { OutboxFullError } from '../../../src/submission/errors.ts'

describe('HTTP answers (spec 7.1)', () => {
  it('maps each error of ours to its status and code', () => {
    expect(httpErrorAnswer(new UnauthorizedError('invalid API key'))).toEqual({ status: 401, body: { code: 'UNAUTHORIZED', message: 'invalid API key' }, level: 'info' })
    expect(httpErrorAnswer(new ValidationFailedError([{ field: 'amountIn', message: 'must be a decimal string' }]))).toEqual({
      status: 400,
      body: { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'amountIn', message: 'must be a decimal string' }] },
      level: 'debug',
    })
    expect(httpErrorAnswer(new RateLimitedError(3))).toEqual({ status: 429, body: { code: 'RATE_LIMIT_EXCEEDED', message: 'rate limit exceeded, retry in 3 s' }, level: 'info' })
  })

  it('QUOTE_ERROR carries the wire form of the details, the reason last', () => {
    const answer = httpErrorAnswer(new QuoteFailedError('AMOUNT_TOO_SMALL', 'amountIn is too small', { amountIn: 1n, reason: 'spoofed' }))
    expect(answer).toEqual({ status: 422, body: { code: 'QUOTE_ERROR', message: 'amountIn is too small', details: { amountIn: '1', reason: 'AMOUNT_TOO_SMALL' } }, level: 'info' })
  })

  it('an upstream failure is a 502 naming only its reason, never the message', () => {
    const answer = httpErrorAnswer(new UpstreamError('eth_call: HTTP 503 from https://mainnet.example/v3/SECRET', 'http', { method: 'eth_call', status: 503 }))
    expect(answer).toEqual({ status: 502, body: { code: 'UPSTREAM_ERROR', message: 'upstream node failed (http)' }, level: 'warn' })
  })

  it('has no answer for what is not in the table (the route answers 500), causes included', () => {
    expect(httpErrorAnswer(new Error('boom'))).toBeUndefined()
    expect(httpErrorAnswer(new Error('wrapped', { cause: new UnauthorizedError('missing X-API-Key header') }))).toBeUndefined()
    expect(httpErrorAnswer(new ExecutionBudgetError('time', 1000, 'the execution ran longer than 1000 ms'))).toBeUndefined()
    expect(httpErrorAnswer(new InvalidParamsError('amountIn must be a decimal string'))).toBeUndefined()
    expect(httpErrorAnswer('not an error')).toBeUndefined()
  })
})

describe('JSON-RPC answers (spec 7.2)', () => {
  it('a JsonRpcError and its subclasses keep their code, message and data', () => {
    expect(rpcErrorAnswer(new InvalidParamsError('tx: malformed hex', { data: { field: 'tx', reason: 'malformed_hex' } }))).toEqual({
      code: -32000,
      message: 'tx: malformed hex',
      data: { field: 'tx', reason: 'malformed_hex' },
    })
    expect(rpcErrorAnswer(new JsonRpcError(-32005, 'limit exceeded'))).toEqual({ code: -32005, message: 'limit exceeded' })
  })

  it('an execution stopped by its budget is a -32000 naming the budget', () => {
    expect(rpcErrorAnswer(new ExecutionBudgetError('gas', 50_000_000n, 'the execution needs more than 50000000 gas'))).toEqual({
      code: -32000,
      message: 'the execution needs more than 50000000 gas',
      data: { reason: 'execution_budget', budget: 'gas', limit: '50000000' },
    })
  })

  it('a refused submission is a -32603 saying why, the outbox error only as cause', () => {
    const refused = new SubmissionRefusedError('outbox_full', 'internal error: the service is at capacity', { cause: new OutboxFullError(10) })
    expect(rpcErrorAnswer(refused)).toEqual({ code: -32603, message: 'internal error: the service is at capacity', data: { reason: 'outbox_full' } })
    expect(refused.walk(OutboxFullError)?.maxOpen).toBe(10)
  })

  it('has no answer for the rest (the dispatcher answers -32603 "internal error")', () => {
    expect(rpcErrorAnswer(new OutboxFullError(10))).toBeUndefined()
    expect(rpcErrorAnswer(new UpstreamError('eth_call: no answer within 5000 ms', 'timeout', { method: 'eth_call' }))).toBeUndefined()
    expect(rpcErrorAnswer(new QuoteFailedError('NO_ROUTE', 'no route'))).toBeUndefined()
    expect(rpcErrorAnswer(new Error('boom'))).toBeUndefined()
  })
})
