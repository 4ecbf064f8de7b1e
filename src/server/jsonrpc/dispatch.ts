/**
 * One request object through to its encoded response: envelope check, method lookup, params
 * shape, handler, error mapping. Never throws; returns null when nothing must be sent
 * (a notification).
 *
 * Notifications (no `id` member): an envelope error is still answered (id null, as JSON-RPC 2.0's
 * "invalid Request object" example shows), but once a request is a well-formed notification it is
 * never answered: an unknown method, a wrong params shape or a handler error is only logged.
 */
import type { FastifyBaseLogger } from 'fastify'
import { checkEnvelope, encodeError, encodeFixedError, encodeSuccess, readParamObject, type JsonRpcId } from './envelope.ts'
import { rpcErrorAnswer } from '../errors/error-answers.ts'
import { lazyChildLogger } from './lazy-child-logger.ts'
import { RPC_INTERNAL_ERROR, RPC_INVALID_REQUEST, RPC_METHOD_NOT_FOUND, type JsonRpcErrorObject } from './errors.ts'
import type { JsonRpcEndpointName, MethodRegistry } from './methods.ts'

export interface DispatchContext {
  endpoint: JsonRpcEndpointName
  partnerId: string
  /** Fastify's request id, or `<request id>:<index>` for a batch entry */
  requestId: string
  /** the request logger */
  log: FastifyBaseLogger
  registry: MethodRegistry
}

/** The message every unexpected failure gets; the cause is in the log under the request id. */
export const INTERNAL_ERROR_MESSAGE = 'internal error'

export async function dispatchOne(value: unknown, ctx: DispatchContext): Promise<string | null> {
  const envelope = checkEnvelope(value)
  if (!envelope.ok) return encodeFixedError(envelope.id, RPC_INVALID_REQUEST, envelope.message)
  const { id, method, params } = envelope.call
  // made on its first line only (see lazy-child-logger.ts)
  const log = lazyChildLogger(ctx.log, { rpcMethod: method, partnerId: ctx.partnerId, rpcRequestId: ctx.requestId })

  const lookup = ctx.registry.lookup(ctx.endpoint, method)
  if (!lookup.ok) {
    if (id === undefined) {
      log.debug({ endpoint: ctx.endpoint }, 'json-rpc notification for an unavailable method dropped')
      return null
    }
    return encodeFixedError(id, RPC_METHOD_NOT_FOUND, lookup.message)
  }

  const paramObject = readParamObject(params)
  if (!paramObject.ok) {
    if (id === undefined) {
      log.debug('json-rpc notification with malformed params dropped')
      return null
    }
    return encodeFixedError(id, RPC_INVALID_REQUEST, paramObject.message)
  }

  const started = performance.now()
  let result: unknown
  try {
    result = await lookup.handler(paramObject.value, { partnerId: ctx.partnerId, requestId: ctx.requestId, log })
  } catch (err) {
    const error = toErrorObject(err, log)
    log.debug({ durationMs: elapsed(started), code: error.code }, 'json-rpc call failed')
    return id === undefined ? null : encodeErrorOrInternal(id, error, log)
  }
  log.debug({ durationMs: elapsed(started) }, 'json-rpc call succeeded')
  if (id === undefined) return null
  const encoded = encodeSuccess(id, result)
  if (encoded !== undefined) return encoded
  log.error('json-rpc handler result cannot be serialized as JSON')
  return encodeFixedError(id, RPC_INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)
}

/**
 * The answer the server's error table gives (a JsonRpcError keeps its code, message and data);
 * anything else becomes -32603 and is logged.
 */
function toErrorObject(err: unknown, log: FastifyBaseLogger): JsonRpcErrorObject {
  const answer = rpcErrorAnswer(err)
  if (answer !== undefined) return answer
  log.error({ err }, 'json-rpc handler failed')
  return { code: RPC_INTERNAL_ERROR, message: INTERNAL_ERROR_MESSAGE }
}

function encodeErrorOrInternal(id: JsonRpcId, error: JsonRpcErrorObject, log: FastifyBaseLogger): string {
  const encoded = encodeError(id, error)
  if (encoded !== undefined) return encoded
  log.error({ code: error.code }, 'json-rpc error data cannot be serialized as JSON')
  return encodeFixedError(id, RPC_INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000
}
