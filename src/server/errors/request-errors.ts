/**
 * Errors the server itself raises about a request (the domain's errors live with the domain).
 * Which answer each one gets is written in one place, ./error-answers.ts.
 */
import { BaseError } from '../../primitives/base-error.ts'
import type { ValidationDetail } from '../quote/quote-request.ts'

/** The request body failed validation; carries one detail per violation. */
export class ValidationFailedError extends BaseError<ValidationDetail[]> {
  override readonly name = 'ValidationFailedError'
  /** Fastify sets the reply's status from it before the error handler runs; the answer itself is the table's */
  readonly statusCode = 400
  constructor(details: ValidationDetail[]) {
    super('invalid request', { details })
  }
}

/** Built by the rate limiter's errorResponseBuilder (its headers are already on the reply). */
export class RateLimitedError extends BaseError {
  override readonly name = 'RateLimitedError'
  /** Fastify sets the reply's status from it before the error handler runs; the answer itself is the table's */
  readonly statusCode = 429
  constructor(readonly retryAfterSeconds: number) {
    super(`rate limit exceeded, retry in ${retryAfterSeconds} s`)
  }
}

/** `data.reason` of a -32603 answer: nothing was accepted, retry. */
export type SubmissionRefusalReason = 'persistence' | 'outbox_full'

/**
 * A submission was not stored (the outbox is full, or it could not write): nothing was accepted,
 * and the partner may retry the same request. The message is written for the partner; the
 * outbox's error is the cause.
 */
export class SubmissionRefusedError extends BaseError<{ reason: SubmissionRefusalReason }> {
  override readonly name = 'SubmissionRefusedError'
  constructor(reason: SubmissionRefusalReason, message: string, options: { cause?: unknown } = {}) {
    super(message, { details: { reason }, cause: options.cause })
  }

  get reason(): SubmissionRefusalReason {
    return this.details.reason
  }
}
