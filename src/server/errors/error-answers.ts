/**
 * The one table from error classes to the answers the server gives: the HTTP status and spec
 * error code of the REST routes (POST /v1/quote, spec 7.1) and the JSON-RPC error of the methods
 * (spec 7.2). The quote route's error handler and the JSON-RPC dispatcher both read it; what is
 * not in it is an unexpected failure: 500 `INTERNAL_ERROR` / -32603 "internal error", logged in
 * full and never described to the client.
 *
 * | error class             | HTTP                           | JSON-RPC                                |
 * |-------------------------|--------------------------------|-----------------------------------------|
 * | UnauthorizedError       | 401 UNAUTHORIZED               |                                         |
 * | ValidationFailedError   | 400 VALIDATION_ERROR + details |                                         |
 * | RateLimitedError        | 429 RATE_LIMIT_EXCEEDED        |                                         |
 * | QuoteFailedError        | 422 QUOTE_ERROR + details      |                                         |
 * | UpstreamError           | 502 UPSTREAM_ERROR             | (-32603 internal error)                 |
 * | ExecutionBudgetError    | (500: a quote wraps it first)  | -32000, data { reason: 'execution_budget', budget, limit } |
 * | SubmissionRefusedError  |                                | -32603, data { reason }                 |
 * | JsonRpcError and its subclasses (InvalidParamsError -32000) |  | its own code, message and data     |
 *
 * Only the error itself is looked up, not its causes: a class that wraps another decides its own
 * answer (an internal error caused by an upstream failure stays a 500).
 *
 * The answers the framework gives (no route, a body Fastify cannot read, an envelope that is not
 * JSON-RPC, an unknown partner token) are not errors of ours and stay with the routes:
 * ../http-errors.ts, ../quote/quote-errors.ts, ../jsonrpc/routes.ts.
 */
import { UpstreamError } from '../../chain/types.ts'
import { ExecutionBudgetError } from '../../evm/execution-budget.ts'
import type { ErrorClass } from '../../primitives/base-error.ts'
import { QuoteFailedError } from '../../quote/types.ts'
import { UnauthorizedError } from '../auth/api-key-auth.ts'
import { JsonRpcError, RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, type JsonRpcErrorObject } from '../jsonrpc/errors.ts'
import type { ValidationDetail } from '../quote/quote-request.ts'
import { toWireJson } from '../quote/quote-response.ts'
import { RateLimitedError, SubmissionRefusedError, ValidationFailedError } from './request-errors.ts'

/** The `code` of an error body of the quote route (spec 7.1). */
export type ErrorCode = 'VALIDATION_ERROR' | 'UNAUTHORIZED' | 'QUOTE_ERROR' | 'RATE_LIMIT_EXCEEDED' | 'UPSTREAM_ERROR' | 'INTERNAL_ERROR'

export interface ErrorBody {
  code: ErrorCode
  message: string
  details?: ValidationDetail[] | Record<string, unknown>
}

/** An HTTP error answer: status, body, and how loudly to log it. */
export interface HttpErrorAnswer {
  status: 400 | 401 | 422 | 429 | 500 | 502
  body: ErrorBody
  /** client mistakes at debug/info, our failures at warn/error */
  level: 'debug' | 'info' | 'warn' | 'error'
}

export const INTERNAL_ERROR_BODY: ErrorBody = Object.freeze({ code: 'INTERNAL_ERROR', message: 'internal error' })

interface ErrorAnswers<E> {
  /** the answer of the REST routes; absent: 500 INTERNAL_ERROR */
  http?: (error: E) => HttpErrorAnswer
  /** the answer of the JSON-RPC methods; absent: -32603 "internal error" */
  rpc?: (error: E) => JsonRpcErrorObject
}

interface Row {
  readonly errorClass: ErrorClass
  readonly http?: (error: unknown) => HttpErrorAnswer
  readonly rpc?: (error: unknown) => JsonRpcErrorObject
}

/** A row of the table: its answers receive the error typed as its class (the lookup checked it). */
function row<E extends Error>(errorClass: ErrorClass<E>, answers: ErrorAnswers<E>): Row {
  const { http, rpc } = answers
  return {
    errorClass,
    ...(http === undefined ? {} : { http: (error: unknown) => http(error as E) }),
    ...(rpc === undefined ? {} : { rpc: (error: unknown) => rpc(error as E) }),
  }
}

/** In lookup order: a subclass before its superclass. */
const ERROR_ANSWERS: readonly Row[] = [
  row(UnauthorizedError, {
    // the message never echoes what was presented (see api-key-auth.ts)
    http: (error) => ({ status: 401, body: { code: 'UNAUTHORIZED', message: error.message }, level: 'info' }),
  }),
  row(ValidationFailedError, {
    http: (error) => ({ status: 400, body: { code: 'VALIDATION_ERROR', message: 'invalid request', details: error.details }, level: 'debug' }),
  }),
  row(RateLimitedError, {
    http: (error) => ({ status: 429, body: { code: 'RATE_LIMIT_EXCEEDED', message: error.message }, level: 'info' }),
  }),
  row(QuoteFailedError, {
    http: (error) => {
      // reason last, so a details entry named `reason` cannot contradict it
      const details = { ...(toWireJson(error.details) as Record<string, unknown>), reason: error.reason }
      return { status: 422, body: { code: 'QUOTE_ERROR', message: error.message, details }, level: 'info' }
    },
  }),
  row(UpstreamError, {
    // the reason is a closed set; error.message may name the upstream URL or method internals
    http: (error) => ({ status: 502, body: { code: 'UPSTREAM_ERROR', message: `upstream node failed (${error.reason})` }, level: 'warn' }),
  }),
  row(ExecutionBudgetError, {
    // eth_backrun: the user's call loops, or asks for more gas than one execution may have (spec 7.2 -32000)
    rpc: (error) => ({ code: RPC_INVALID_PARAMS, message: error.message, data: { reason: 'execution_budget', ...error.toDetails() } }),
  }),
  row(SubmissionRefusedError, {
    rpc: (error) => ({ code: RPC_INTERNAL_ERROR, message: error.message, data: { reason: error.reason } }),
  }),
  row(JsonRpcError, {
    // InvalidParamsError (-32000) and any code a handler chose; message and data are written for the partner
    rpc: (error) => error.toErrorObject(),
  }),
]

/** The REST answer to `error`, or undefined when it is not in the table (answer 500 INTERNAL_ERROR). */
export function httpErrorAnswer(error: unknown): HttpErrorAnswer | undefined {
  for (const entry of ERROR_ANSWERS) {
    if (entry.http !== undefined && error instanceof entry.errorClass) return entry.http(error)
  }
  return undefined
}

/** The JSON-RPC error for `error`, or undefined when it is not in the table (answer -32603 "internal error"). */
export function rpcErrorAnswer(error: unknown): JsonRpcErrorObject | undefined {
  for (const entry of ERROR_ANSWERS) {
    if (entry.rpc !== undefined && error instanceof entry.errorClass) return entry.rpc(error)
  }
  return undefined
}
