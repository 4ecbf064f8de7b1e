/**
 * The JSON-RPC routes: `POST /rpc/:partnerToken/backrun` serves eth_backrun and
 * `POST /rpc/:partnerToken/submit` the three submission methods (spec 4.2; the path shape is ours).
 *
 * HTTP behaviour:
 * - 401 with a -32001 JSON-RPC error when the token is unknown (id echoed when the body is a single
 *   request with a readable id, null otherwise).
 * - 413 with a -32600 "request too large" JSON-RPC error (id null) for a body over the body limit.
 * - 200 for everything else, including every other JSON-RPC error.
 * - 200 with an empty body when nothing is to be answered: a single notification, or a batch of
 *   notifications only (geth does the same over HTTP). We chose 200 over 204 so that every answer
 *   to a well-formed POST has the same status.
 * - Any other method or path under `/rpc/` answers 405 (with `Allow: POST`) or 404 with a
 *   -32600 JSON-RPC error, through a route of this plugin, so its logging is redacted too.
 *
 * The body is read as a string by this plugin's own content-type parser, whatever the declared
 * Content-Type (spec 4.2 says clients send application/json; we do not refuse others), so that
 * invalid JSON is a JSON-RPC -32700 with HTTP 200 and not Fastify's 400. The parser, the error
 * handler and the log serializers are encapsulated: other routes of the app are not affected.
 */
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_BATCH_CONCURRENCY, DEFAULT_MAX_BATCH_SIZE, joinBatchResponses, mapBounded, planBatch } from './batch.ts'
import { dispatchOne, INTERNAL_ERROR_MESSAGE } from './dispatch.ts'
import { encodeFixedError, parseJsonText, readEchoId } from './envelope.ts'
import { RPC_INTERNAL_ERROR, RPC_INVALID_REQUEST, RPC_PARSE_ERROR, RPC_UNAUTHORIZED } from './errors.ts'
import { jsonRpcLogSerializers } from './log-redaction.ts'
import { JSON_RPC_ENDPOINTS, MethodRegistry, SPEC_METHOD_ENDPOINTS, type JsonRpcEndpointName, type MethodTable } from './methods.ts'
import type { PartnerRegistry } from './partners.ts'

export interface JsonRpcRoutesOptions {
  /** token -> partner id */
  partners: PartnerRegistry
  /** handlers of the backrun endpoint and of the submission endpoint */
  endpoints: { backrun: MethodTable; submit: MethodTable }
  /**
   * Every method name the service knows, with the endpoint serving it; a known method sent to the
   * other endpoint gets -32601 saying where it is served. Default: the spec's four methods
   * ({@link SPEC_METHOD_ENDPOINTS}). Methods in `endpoints` are added automatically.
   */
  knownMethods?: Readonly<Record<string, JsonRpcEndpointName>>
  /** most entries in one batch; default {@link DEFAULT_MAX_BATCH_SIZE} */
  maxBatchSize?: number
  /** most entries of one batch handled at the same time; default {@link DEFAULT_BATCH_CONCURRENCY} */
  batchConcurrency?: number
  /** body limit of these routes in bytes; default: the app's `bodyLimit` */
  bodyLimit?: number
}

export const UNAUTHORIZED_MESSAGE = 'unauthorized: unknown partner token'
export const REQUEST_TOO_LARGE_MESSAGE = 'request too large'

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
const ENDPOINT_PATH = /\/rpc\/[^/]+\/(?:backrun|submit)$/

interface Settings {
  partners: PartnerRegistry
  registry: MethodRegistry
  maxBatchSize: number
  batchConcurrency: number
  bodyLimit: number | undefined
}

/**
 * Registers the JSON-RPC routes in their own encapsulated context. Options are checked at once
 * (throws on a bad value or a method registered on the wrong endpoint); the routes exist after
 * `app.ready()`.
 */
export function registerJsonRpcRoutes(app: FastifyInstance, options: JsonRpcRoutesOptions): void {
  const settings = resolveSettings(options)
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body))
    scope.setErrorHandler(handleFrameworkError)

    const routeOptions = {
      logSerializers: jsonRpcLogSerializers,
      ...(settings.bodyLimit === undefined ? {} : { bodyLimit: settings.bodyLimit }),
    }
    for (const endpoint of JSON_RPC_ENDPOINTS) {
      scope.post<{ Params: { partnerToken: string } }>(`/rpc/:partnerToken/${endpoint}`, routeOptions, (req, reply) =>
        handleRpcPost(endpoint, settings, req, reply),
      )
    }
    scope.all('/rpc/*', routeOptions, handleOtherRpcAddress)
  })
}

function resolveSettings(options: JsonRpcRoutesOptions): Settings {
  if (typeof options.partners?.resolve !== 'function') throw new TypeError('registerJsonRpcRoutes: partners must be a PartnerRegistry')
  if (typeof options.endpoints?.backrun !== 'object' || typeof options.endpoints.submit !== 'object') {
    throw new TypeError('registerJsonRpcRoutes: endpoints.backrun and endpoints.submit must be method tables')
  }
  return {
    partners: options.partners,
    registry: new MethodRegistry(options.endpoints, options.knownMethods ?? SPEC_METHOD_ENDPOINTS),
    maxBatchSize: positiveInteger('maxBatchSize', options.maxBatchSize) ?? DEFAULT_MAX_BATCH_SIZE,
    batchConcurrency: positiveInteger('batchConcurrency', options.batchConcurrency) ?? DEFAULT_BATCH_CONCURRENCY,
    bodyLimit: positiveInteger('bodyLimit', options.bodyLimit),
  }
}

/** undefined stays undefined (use the default); anything else must be a positive integer */
function positiveInteger(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`registerJsonRpcRoutes: ${name} must be a positive integer, got ${String(value)}`)
  return value
}

async function handleRpcPost(
  endpoint: JsonRpcEndpointName,
  settings: Settings,
  req: FastifyRequest<{ Params: { partnerToken: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const partnerId = settings.partners.resolve(req.params.partnerToken)
  const parsed = parseJsonText(typeof req.body === 'string' ? req.body : undefined)
  if (partnerId === undefined) {
    req.log.warn({ endpoint }, 'json-rpc request with an unknown partner token refused')
    return sendJson(reply, 401, encodeFixedError(parsed.ok ? readEchoId(parsed.value) : null, RPC_UNAUTHORIZED, UNAUTHORIZED_MESSAGE))
  }
  if (!parsed.ok) return sendJson(reply, 200, encodeFixedError(null, RPC_PARSE_ERROR, 'parse error: the body is not valid JSON'))

  const base = { endpoint, partnerId, log: req.log, registry: settings.registry }
  if (!Array.isArray(parsed.value)) {
    const encoded = await dispatchOne(parsed.value, { ...base, requestId: req.id })
    return encoded === null ? sendEmpty(reply) : sendJson(reply, 200, encoded)
  }

  const plan = planBatch(parsed.value, settings.maxBatchSize)
  switch (plan.kind) {
    case 'empty':
      return sendJson(reply, 200, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: empty batch'))
    case 'too_large':
      req.log.info({ endpoint, entries: parsed.value.length, maxBatchSize: settings.maxBatchSize }, 'json-rpc batch over the limit refused')
      return sendJson(reply, 200, `[${encodeFixedError(plan.id, RPC_INVALID_REQUEST, `batch too large: at most ${settings.maxBatchSize} entries`)}]`)
    case 'run': {
      const encoded = await mapBounded(plan.entries, settings.batchConcurrency, (entry, index) =>
        dispatchOne(entry, { ...base, requestId: `${req.id}:${index}` }),
      )
      const body = joinBatchResponses(encoded)
      return body === undefined ? sendEmpty(reply) : sendJson(reply, 200, body)
    }
  }
}

/** Other methods and paths under /rpc/: no token check, so nothing is revealed about tokens. */
async function handleOtherRpcAddress(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const path = req.url.split('?', 1)[0]
  if (ENDPOINT_PATH.test(path)) {
    reply.header('allow', 'POST')
    return sendJson(reply, 405, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: JSON-RPC requests must use POST'))
  }
  return sendJson(reply, 404, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: no JSON-RPC endpoint here; use POST /rpc/<token>/backrun or /rpc/<token>/submit'))
}

/**
 * Errors raised by Fastify before the handler runs (body reading) or, by a bug, from it. Every
 * answer is a JSON-RPC error with id null: the body was never read as a request.
 */
function handleFrameworkError(error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500
  const log: FastifyBaseLogger = req.log
  if (status === 413) return sendJson(reply, 413, encodeFixedError(null, RPC_INVALID_REQUEST, REQUEST_TOO_LARGE_MESSAGE))
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return sendJson(reply, 200, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: malformed Content-Type header'))
  }
  if (status >= 400 && status < 500) {
    log.info({ code: error.code }, 'json-rpc request body could not be read')
    return sendJson(reply, 200, encodeFixedError(null, RPC_PARSE_ERROR, 'parse error: the request body could not be read'))
  }
  log.error({ err: error }, 'json-rpc route failed')
  return sendJson(reply, 200, encodeFixedError(null, RPC_INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE))
}

function sendJson(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(body)
}

function sendEmpty(reply: FastifyReply): FastifyReply {
  return reply.code(200).send()
}
