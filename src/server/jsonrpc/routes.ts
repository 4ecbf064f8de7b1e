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
 * invalid JSON is a JSON-RPC -32700 with HTTP 200 and not Fastify's 400. A malformed Content-Type
 * header (one Fastify cannot parse) is a -32600 after the token check, with the body's id when
 * the body is a request with a readable id. The parser, the error handler and the log
 * serializers are encapsulated: other routes of the app are not affected.
 *
 * The routes carry JSON schemas for the OpenAPI document only: Fastify's validation would answer
 * with its own 400 bodies, before the token check, so the routes' validator and serializer
 * compilers pass everything through and every answer is the JSON-RPC one written here.
 */
import { createRequire } from 'node:module'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { positiveInt } from '../../primitives/numbers.ts'
import { ref } from '../openapi/components.ts'
import { ROOT_SERVERS } from '../openapi/openapi.ts'
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
const MALFORMED_CONTENT_TYPE_MESSAGE = 'invalid request: malformed Content-Type header'

/**
 * Fastify's own Content-Type parser (the class its body parsing uses), so "malformed" means
 * exactly what would have made Fastify refuse the body.
 */
const FastifyContentType = createRequire(import.meta.url)('fastify/lib/content-type.js') as { from(header: string): { isValid: boolean } }

/** Requests whose Content-Type header was malformed (the header is removed so the body is still read). */
const malformedContentType = new WeakSet<object>()

function setAsideMalformedContentType(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const header = req.raw.headers['content-type']
  if (header !== undefined && !FastifyContentType.from(header).isValid) {
    malformedContentType.add(req.raw)
    delete req.raw.headers['content-type']
  }
  done()
}

const tokenParam = {
  type: 'object',
  required: ['partnerToken'],
  properties: {
    partnerToken: {
      type: 'string',
      minLength: 16,
      maxLength: 100,
      pattern: '^[A-Za-z0-9._~-]+$',
      description: "the partner's secret token (on the devnet with no PARTNER_TOKENS: dev-partner-token-insecure); never logged",
    },
  },
}

const unauthorizedResponse = { description: 'Unknown partner token: -32001, with the request id when the body is a request with a readable id.', ...ref('JsonRpcErrorResponse') }
const tooLargeResponse = { description: 'The body is over the body limit: -32600 "request too large", id null.', ...ref('JsonRpcErrorResponse') }
const ENVELOPE_NOTES =
  ' JSON-RPC 2.0 over HTTP POST: a request object or a batch (an array of at most RPC_MAX_BATCH_SIZE requests). `params` is always an array holding exactly one parameter object. ' +
  'Every JSON-RPC error (-32700, -32600, -32601, -32000, -32603) is HTTP 200; a notification (no id) or a batch of notifications gets an empty 200.'

/** Documentation of the two endpoints (see the module comment: not enforced by Fastify). */
const ENDPOINT_SCHEMAS: Record<JsonRpcEndpointName, object> = {
  backrun: {
    operationId: 'rpcBackrun',
    summary: 'eth_backrun',
    description: 'Finds the most profitable backrun of a user transaction, verified in the EVM right after it; answers null when none pays.' + ENVELOPE_NOTES,
    tags: ['json-rpc'],
    servers: ROOT_SERVERS,
    params: tokenParam,
    body: { oneOf: [ref('EthBackrunRequest'), { type: 'array', minItems: 1, items: ref('EthBackrunRequest') }] },
    response: {
      200: {
        description: 'The result or the JSON-RPC error (a batch: an array of them, in request order).',
        oneOf: [
          ref('EthBackrunResponse'),
          ref('JsonRpcErrorResponse'),
          { type: 'array', items: { oneOf: [ref('EthBackrunResponse'), ref('JsonRpcErrorResponse')] } },
        ],
      },
      401: unauthorizedResponse,
      413: tooLargeResponse,
    },
  },
  submit: {
    operationId: 'rpcSubmit',
    summary: 'eth_sendPrivateRawTransaction, eth_sendBundle, eth_notifyRawTransaction',
    description:
      'Private submission. The answer (the transaction or bundle hash) is sent only once the submission is fsynced to the outbox; the same ' +
      'submission again returns the same hash. Follow it with GET /v1/submissions/{hash}.' +
      ENVELOPE_NOTES,
    tags: ['json-rpc'],
    servers: ROOT_SERVERS,
    params: tokenParam,
    body: {
      oneOf: [
        ref('EthSendPrivateRawTransactionRequest'),
        ref('EthSendBundleRequest'),
        ref('EthNotifyRawTransactionRequest'),
        {
          type: 'array',
          minItems: 1,
          items: { oneOf: [ref('EthSendPrivateRawTransactionRequest'), ref('EthSendBundleRequest'), ref('EthNotifyRawTransactionRequest')] },
        },
      ],
    },
    response: {
      200: {
        description: 'The hash or the JSON-RPC error (a batch: an array of them, in request order).',
        oneOf: [
          ref('SubmissionHashResponse'),
          ref('JsonRpcErrorResponse'),
          { type: 'array', items: { oneOf: [ref('SubmissionHashResponse'), ref('JsonRpcErrorResponse')] } },
        ],
      },
      401: unauthorizedResponse,
      413: tooLargeResponse,
    },
  },
}

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
    scope.setErrorHandler((error: FastifyError, req: FastifyRequest, reply: FastifyReply) => handleFrameworkError(settings, error, req, reply))

    const routeOptions = {
      logSerializers: jsonRpcLogSerializers,
      ...(settings.bodyLimit === undefined ? {} : { bodyLimit: settings.bodyLimit }),
    }
    for (const endpoint of JSON_RPC_ENDPOINTS) {
      scope.post<{ Params: { partnerToken: string } }>(
        `/rpc/:partnerToken/${endpoint}`,
        {
          ...routeOptions,
          schema: ENDPOINT_SCHEMAS[endpoint],
          // documentation only (see the module comment)
          validatorCompiler: () => () => true,
          serializerCompiler: () => (data) => JSON.stringify(data),
          onRequest: setAsideMalformedContentType,
        },
        (req, reply) => handleRpcPost(endpoint, settings, req, reply),
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
    maxBatchSize: positiveInt('maxBatchSize', options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE, 'registerJsonRpcRoutes'),
    batchConcurrency: positiveInt('batchConcurrency', options.batchConcurrency ?? DEFAULT_BATCH_CONCURRENCY, 'registerJsonRpcRoutes'),
    bodyLimit: options.bodyLimit === undefined ? undefined : positiveInt('bodyLimit', options.bodyLimit, 'registerJsonRpcRoutes'),
  }
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
  if (malformedContentType.has(req.raw)) {
    return sendJson(reply, 200, encodeFixedError(parsed.ok ? readEchoId(parsed.value) : null, RPC_INVALID_REQUEST, MALFORMED_CONTENT_TYPE_MESSAGE))
  }
  if (!parsed.ok) return sendJson(reply, 200, encodeFixedError(null, RPC_PARSE_ERROR, 'parse error: the body is not valid JSON'))

  // one literal per entry, not `{ ...base, requestId }`: in Node 20's V8 an object made by a spread
  // followed by more properties can get a hidden class of its own, allocated in old space
  // (eighteenth session, BENCHMARKS h18-heap: ~0.4 KB of old-space garbage per request)
  const context = (requestId: string) => ({ endpoint, partnerId, log: req.log, registry: settings.registry, requestId })
  if (!Array.isArray(parsed.value)) {
    const encoded = await dispatchOne(parsed.value, context(req.id))
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
        dispatchOne(entry, context(`${req.id}:${index}`)),
      )
      const body = joinBatchResponses(encoded)
      return body === undefined ? sendEmpty(reply) : sendJson(reply, 200, body)
    }
  }
}

/**
 * Other methods and paths under /rpc/: no token check, so nothing is revealed about tokens. A POST
 * to an endpoint address lands here only when its token segment could not be routed (longer
 * than the router's `maxParamLength`): no token is that long, so it is the 401 of an unknown token.
 */
async function handleOtherRpcAddress(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (req.method === 'POST' && ENDPOINT_PATH.test(req.url.split('?', 1)[0])) {
    const parsed = parseJsonText(typeof req.body === 'string' ? req.body : undefined)
    req.log.warn('json-rpc request with an unknown partner token refused')
    return sendJson(reply, 401, encodeFixedError(parsed.ok ? readEchoId(parsed.value) : null, RPC_UNAUTHORIZED, UNAUTHORIZED_MESSAGE))
  }
  return answerOtherRpcAddress(req, reply)
}

/**
 * A request under /rpc/ the router refused before any route (a path segment longer than
 * `maxParamLength`, or one that is not valid percent-encoding), answered as this plugin answers:
 * a POST to an endpoint address is a request with an unknown token (401, -32001: no token is that
 * long or has such characters); anything else is the 404/405 of {@link handleOtherRpcAddress}.
 * The body is not read, so the id is null.
 */
export function answerUnroutableRpc(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = req.url.split('?', 1)[0]
  if (req.method === 'POST' && ENDPOINT_PATH.test(path)) {
    req.log.warn('json-rpc request with an unknown partner token refused')
    return sendJson(reply, 401, encodeFixedError(null, RPC_UNAUTHORIZED, UNAUTHORIZED_MESSAGE))
  }
  return answerOtherRpcAddress(req, reply)
}

/** A JSON-RPC request that arrives while the server is shutting down: 503, -32603, id null (its body is not read). */
export function answerRpcWhileClosing(reply: FastifyReply): FastifyReply {
  return sendJson(reply, 503, encodeFixedError(null, RPC_INTERNAL_ERROR, SHUTTING_DOWN_MESSAGE))
}

export const SHUTTING_DOWN_MESSAGE = 'the service is shutting down: retry, on another instance if there is one'

function answerOtherRpcAddress(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = req.url.split('?', 1)[0]
  if (ENDPOINT_PATH.test(path)) {
    reply.header('allow', 'POST')
    return sendJson(reply, 405, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: JSON-RPC requests must use POST'))
  }
  return sendJson(reply, 404, encodeFixedError(null, RPC_INVALID_REQUEST, 'invalid request: no JSON-RPC endpoint here; use POST /rpc/<token>/backrun or /rpc/<token>/submit'))
}

/**
 * Errors raised by Fastify before the handler runs (body reading) or, by a bug, from it. Every
 * answer is a JSON-RPC error with id null: the body was never read as a request. The token is
 * still checked first: an unknown token is the 401 whatever became of the body.
 */
function handleFrameworkError(settings: Settings, error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500
  const log: FastifyBaseLogger = req.log
  const token = (req.params as { partnerToken?: unknown } | undefined)?.partnerToken
  if (typeof token === 'string' && settings.partners.resolve(token) === undefined) {
    log.warn('json-rpc request with an unknown partner token refused')
    return sendJson(reply, 401, encodeFixedError(null, RPC_UNAUTHORIZED, UNAUTHORIZED_MESSAGE))
  }
  if (status === 413) return sendJson(reply, 413, encodeFixedError(null, RPC_INVALID_REQUEST, REQUEST_TOO_LARGE_MESSAGE))
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // not reached while setAsideMalformedContentType runs first; kept as the fallback
    return sendJson(reply, 200, encodeFixedError(null, RPC_INVALID_REQUEST, MALFORMED_CONTENT_TYPE_MESSAGE))
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
