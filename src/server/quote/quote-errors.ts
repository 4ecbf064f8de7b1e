/**
 * Every failure of POST /v1/quote becomes one of the spec's error bodies (section 7.1):
 * `{ code, message }` plus `details` for VALIDATION_ERROR and QUOTE_ERROR. Errors of ours (auth,
 * validation, rate limit, quote, upstream) are answered as the server's one table says
 * (../errors/error-answers.ts); the body errors Fastify raises are mapped here.
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
import { httpErrorAnswer, INTERNAL_ERROR_BODY, type HttpErrorAnswer } from '../errors/error-answers.ts'
import type { ValidationDetail } from './quote-request.ts'

/** What the route answers for an error: the table's answer (../errors/error-answers.ts) or one of the body errors below. */
export type MappedError = HttpErrorAnswer

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
  const answer = httpErrorAnswer(error)
  if (answer !== undefined) return answer
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
