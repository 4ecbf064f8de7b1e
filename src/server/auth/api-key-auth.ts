/**
 * The X-API-Key check as an onRequest hook (spec section 5).
 *
 * onRequest is the first route-level stage, before the body is read or parsed: an
 * unauthenticated client gets 401 without the server buffering its body, and auth is decided
 * before validation (tested: invalid key + invalid body -> 401).
 *
 * The accepted key's id is remembered per request (getApiKeyId) for the rate limiter and logs.
 * A WeakMap rather than a request decorator keeps this module free of global type
 * augmentation and of registration order concerns; entries die with their request.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyRegistry } from './api-keys.ts'
import { BaseError } from '../../primitives/base-error.ts'

export const API_KEY_HEADER = 'x-api-key'

/** Thrown by the hook; the route's error handler turns it into 401 UNAUTHORIZED. */
export class UnauthorizedError extends BaseError {
  override readonly name = 'UnauthorizedError'
  readonly statusCode = 401
  constructor(message: string) {
    super(message)
  }
}

const keyIds = new WeakMap<FastifyRequest, string>()

/** The id of the key that authenticated this request; undefined before/without auth. */
export function getApiKeyId(request: FastifyRequest): string | undefined {
  return keyIds.get(request)
}

export function apiKeyAuthHook(registry: ApiKeyRegistry): onRequestAsyncHookHandler {
  return async function apiKeyAuth(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers[API_KEY_HEADER]
    // a repeated header arrives joined or as an array: either way it is not one valid key
    const presented = typeof header === 'string' ? header : undefined
    const keyId = registry.lookup(presented)
    if (keyId === undefined) {
      // the message never echoes what was presented
      throw new UnauthorizedError(header === undefined ? 'missing X-API-Key header' : 'invalid API key')
    }
    keyIds.set(request, keyId)
  }
}
