/**
 * Every failure of POST /v1/quote becomes one of the spec's error bodies (section 7.1):
 * `{ code, message }` plus `details` for VALIDATION_ERROR and QUOTE_ERROR.
 *
 * This is the route scope's error handler, so it receives errors from the handler AND from
 * every hook (auth, content-type parsing, validation, rate limiting) and from response
 * serialization. Anything unrecognised is a 500 `{ code: 'INTERNAL_ERROR', message: 'internal
 * error' }`: the client never sees a stack, an error message we did not write for it, or an
 * upstream URL (which may embed a provider key). The full error goes to the log instead.
 *
 * Transport-level body problems (wrong Content-Type, unparsable JSON, oversized body, bad
 * Content-Length) all answer 400 VALIDATION_ERROR with a `body`/`Content-Type` detail rather
 * than 413/415: the spec lists 400 as THE status for invalid request data, and clients built
 * from it (or from our OpenAPI document) handle exactly 400/401/422/429/502.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { UpstreamError } from '../../chain/types.ts'
import { QuoteFailedError } from '../../quote/types.ts'
import { UnauthorizedError } from '../auth/api-key-auth.ts'
import type { ValidationDetail } from './quote-request.ts'
import { toWireJson } from './quote-response.ts'

/** The request body failed validation; carries one detail per violation. */
export class ValidationFailedError extends Error {
  override readonly name = 'ValidationFailedError'
  readonly statusCode = 400
  constructor(readonly details: ValidationDetail[]) {
    super('invalid request')
  }
}

/** Built by the rate limiter's errorResponseBuilder (its headers are already on the reply). */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError'
  readonly statusCode = 429
  constructor(readonly retryAfterSeconds: number) {
    super(`rate limit exceeded, retry in ${retryAfterSeconds} s`)
  }
}

export type ErrorCode = 'VALIDATION_ERROR' | 'UNAUTHORIZED' | 'QUOTE_ERROR' | 'RATE_LIMIT_EXCEEDED' | 'UPSTREAM_ERROR' | 'INTERNAL_ERROR'

export interface ErrorBody {
  code: ErrorCode
  message: string
  details?: ValidationDetail[] | Record<string, unknown>
}

export interface MappedError {
  status: 400 | 401 | 422 | 429 | 500 | 502
  body: ErrorBody
  /** how loudly to log: client mistakes at debug, our failures at warn/error */
  level: 'debug' | 'info' | 'warn' | 'error'
}

export const INTERNAL_ERROR_BODY: ErrorBody = Object.freeze({ code: 'INTERNAL_ERROR', message: 'internal error' })

/** Fastify body-parsing errors, mapped to a detail we wrote (Fastify's texts are not contract). */
const BODY_ERRORS: Record<string, ValidationDetail> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { field: 'Content-Type', message: 'must be application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { field: 'body', message: 'is too large' },
  FST_ERR_CTP_INVALID_JSON_BODY: { field: 'body', message: 'is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { field: 'body', message: 'is empty; expected a JSON object' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { field: 'body', message: 'length does not match Content-Length' },
}

function fastifyCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

function fastifyStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode
  return typeof status === 'number' ? status : undefined
}

export function mapQuoteError(error: unknown, bodyLimitBytes?: number): MappedError {
  if (error instanceof UnauthorizedError) {
    return { status: 401, body: { code: 'UNAUTHORIZED', message: error.message }, level: 'info' }
  }
  if (error instanceof ValidationFailedError) {
    return { status: 400, body: { code: 'VALIDATION_ERROR', message: 'invalid request', details: error.details }, level: 'debug' }
  }
  if (error instanceof RateLimitedError) {
    return { status: 429, body: { code: 'RATE_LIMIT_EXCEEDED', message: error.message }, level: 'info' }
  }
  if (error instanceof QuoteFailedError) {
    // reason last, so a details entry named `reason` cannot contradict it
    const details = { ...(toWireJson(error.details) as Record<string, unknown>), reason: error.reason }
    return { status: 422, body: { code: 'QUOTE_ERROR', message: error.message, details }, level: 'info' }
  }
  if (error instanceof UpstreamError) {
    // the reason is a closed set; error.message may name the upstream URL or method internals
    return { status: 502, body: { code: 'UPSTREAM_ERROR', message: `upstream node failed (${error.reason})` }, level: 'warn' }
  }
  const code = fastifyCode(error)
  const known = code === undefined ? undefined : BODY_ERRORS[code]
  if (known !== undefined) {
    const detail = code === 'FST_ERR_CTP_BODY_TOO_LARGE' && bodyLimitBytes !== undefined ? { field: 'body', message: `exceeds ${bodyLimitBytes} bytes` } : known
    return { status: 400, body: { code: 'VALIDATION_ERROR', message: 'invalid request', details: [detail] }, level: 'debug' }
  }
  const status = fastifyStatus(error)
  if (status === 400) {
    // any other client-side body problem Fastify reports (e.g. a forbidden __proto__ key, an
    // aborted upload): still the request's fault, described without echoing Fastify's text
    return { status: 400, body: { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'body', message: 'could not be read as a JSON object' }] }, level: 'debug' }
  }
  return { status: 500, body: INTERNAL_ERROR_BODY, level: 'error' }
}

/**
 * The route's error handler. It must not throw, and what it sends should not fail: when a
 * reply sent by an error handler fails (a hook that throws on send, a body that cannot be
 * serialized), Fastify hands the NEW error to the parent context's handler. That parent is
 * lastResortErrorHandler below, not Fastify's default, whose body carries the raw message.
 */
export function createQuoteErrorHandler(options: { bodyLimitBytes?: number; onError?: (mapped: MappedError) => void } = {}) {
  return function quoteErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    let mapped: MappedError
    try {
      mapped = mapQuoteError(error, options.bodyLimitBytes)
    } catch (mappingError) {
      // e.g. QuoteFailedError.details with a getter that throws
      request.log.error({ err: mappingError }, 'error mapping failed')
      mapped = { status: 500, body: INTERNAL_ERROR_BODY, level: 'error' }
    }
    if (mapped.level === 'error' || mapped.level === 'warn') {
      // the full error (stack included) is for operators only
      request.log[mapped.level]({ err: error, code: mapped.body.code }, 'quote request failed')
    } else {
      request.log[mapped.level]({ code: mapped.body.code }, 'quote request rejected')
    }
    try {
      options.onError?.(mapped)
    } catch {
      // metrics must never change the response
    }
    void reply.code(mapped.status).send(mapped.body)
  }
}

const INTERNAL_ERROR_JSON = JSON.stringify(INTERNAL_ERROR_BODY)

/**
 * Installed one context above the route, so it only sees errors raised while SENDING an error
 * response (hooks already failed once). It writes the fixed 500 body straight to the socket,
 * bypassing the hooks and serializers that just failed; onResponse hooks (metrics) still run.
 */
export function lastResortErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  request.log.error({ err: error }, 'sending the error response failed; answering with the fixed 500 body')
  if (reply.raw.headersSent) {
    // too late for a clean answer: cut the connection rather than leave a half response
    reply.raw.destroy()
    return
  }
  reply.hijack()
  reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(INTERNAL_ERROR_JSON) })
  reply.raw.end(INTERNAL_ERROR_JSON)
}
