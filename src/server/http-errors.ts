/**
 * The front door: every answer Fastify itself would write (no route, a method the path does not
 * serve, a body it cannot read, a URL its router refuses) in the service's documented shape
 * `{ code, message[, details] }` (ErrorResponse in the OpenAPI document), never Fastify's default
 * body (which repeats the URL, where a partner token or an API key may sit).
 *
 * - no route: 404 NOT_FOUND; a known path with another method: 405 METHOD_NOT_ALLOWED with
 *   `Allow`. A request to no route is answered so whatever its body (a body too large, of an
 *   unknown type or malformed does not change that the route does not exist).
 * - a body Fastify cannot read on a route without its own error handler: 413 PAYLOAD_TOO_LARGE,
 *   415 UNSUPPORTED_MEDIA_TYPE, 400 VALIDATION_ERROR (malformed JSON and the rest); anything else
 *   500 INTERNAL_ERROR, logged, with a fixed message.
 * - a URL the router refuses before any route (`frameworkErrors`: a path segment longer than
 *   `maxParamLength`, or not valid percent-encoding): under /rpc/ the JSON-RPC plugin's answers
 *   (an endpoint POST is 401 -32001); a GET of /v1/submissions/<segment> is answered as that route
 *   answers a bad hash, authentication first (401, then 400 VALIDATION_ERROR); any other path the
 *   404/405 above, or 400 VALIDATION_ERROR for a malformed URL.
 *
 * - a request that arrives while the server is closing (keep-alive connections still open):
 *   503 SERVICE_UNAVAILABLE (under /rpc/: 503 with JSON-RPC -32603, id null), `Connection: close`,
 *   instead of Fastify's default 503 body; nothing of it is processed.
 * - a request Node's HTTP parser refuses before Fastify sees it (`clientErrorHandler`): the
 *   request line and headers over Node's limit (16 KiB: a URL that long) 431 VALIDATION_ERROR, a
 *   malformed request 400 VALIDATION_ERROR, a request not received in time 408 REQUEST_TIMEOUT.
 *   Nothing of the raw request (which may hold a token or key) is logged.
 *
 * The quote route and the JSON-RPC routes keep their own error handlers (their own documented
 * bodies); this one serves the rest of the app.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { answerRpcWhileClosing, answerUnroutableRpc, NOT_FOUND_BODY, redactRpcUrl, SHUTTING_DOWN_MESSAGE, type PartnerRegistry } from './jsonrpc/index.ts'
import type { HttpErrorCode } from './openapi/components.ts'
import { listRegisteredRoutes } from './openapi/openapi.ts'
import { answerUnroutableStatusRequest } from './rpc/submission-status-route.ts'

export interface ErrorBody {
  code: HttpErrorCode
  message: string
  details?: Array<{ field: string; message: string }>
}

export interface FrontDoorOptions {
  partners: PartnerRegistry
  /** whether GET /v1/submissions/:hash is served (its unroutable requests are answered as it does) */
  submissionStatus: boolean
}

export interface FrontDoor {
  /** pass as Fastify's `frameworkErrors` option */
  frameworkErrors: (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => void
  /** pass as Fastify's `clientErrorHandler` option */
  clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => void
  /**
   * installs the not-found and the root error handler, and the answer while closing, on the root
   * instance (create it with `return503OnClosing: false`)
   */
  install(app: FastifyInstance): void
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
const SUBMISSION_STATUS_SEGMENT = /^\/v1\/submissions\/[^/]*$/
const INTERNAL_ERROR: ErrorBody = { code: 'INTERNAL_ERROR', message: 'internal error' }

function send(reply: FastifyReply, status: number, body: ErrorBody | Readonly<{ code: string; message: string }>): FastifyReply {
  return reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(JSON.stringify(body))
}

function pathOf(url: string): string {
  const at = url.search(/[?#]/)
  return at === -1 ? url : url.slice(0, at)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
}

/** `/v1/submissions/:hash` -> /^\/v1\/submissions\/[^/]+$/; `/rpc/*` -> /^\/rpc\/.*$/ */
function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : escapeRegExp(segment).replace(/\*/g, '.*')))
    .join('/')
  return new RegExp(`^${source}$`)
}

export function createFrontDoor(options: FrontDoorOptions): FrontDoor {
  let app: FastifyInstance | undefined
  const patterns = new Map<string, RegExp>()

  /** methods the app serves on this concrete path (none: the path does not exist) */
  const allowedMethods = (path: string): string[] => {
    if (app === undefined) return []
    const methods = new Set<string>()
    for (const route of listRegisteredRoutes(app)) {
      let pattern = patterns.get(route.url)
      if (pattern === undefined) {
        pattern = routePattern(route.url)
        patterns.set(route.url, pattern)
      }
      if (pattern.test(path)) methods.add(route.method)
    }
    return [...methods].sort()
  }

  const answerNoRoute = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const allowed = allowedMethods(pathOf(req.url)).filter((m) => m !== req.method)
    if (allowed.length > 0) {
      req.log.info(`Route ${req.method}:${redactRpcUrl(req.url)} does not serve this method`)
      reply.header('allow', allowed.join(', '))
      return send(reply, 405, { code: 'METHOD_NOT_ALLOWED', message: `this path serves only ${allowed.join(', ')}` })
    }
    req.log.info(`Route ${req.method}:${redactRpcUrl(req.url)} not found`)
    return send(reply, 404, NOT_FOUND_BODY)
  }

  const rootErrorHandler = (error: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (req.is404) return answerNoRoute(req, reply)
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500
    if (status >= 500) {
      req.log.error({ err: error }, 'request failed')
      return send(reply, 500, INTERNAL_ERROR)
    }
    req.log.info({ code: error.code }, 'request refused')
    if (status === 413) return send(reply, 413, { code: 'PAYLOAD_TOO_LARGE', message: 'the request body is too large' })
    if (status === 415) return send(reply, 415, { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported or malformed Content-Type' })
    const message = error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'is not valid JSON' : error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'is empty' : 'could not be read'
    return send(reply, 400, { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'body', message }] })
  }

  const frameworkErrors = (error: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const path = pathOf(req.url)
    if (path.startsWith('/rpc/')) {
      answerUnroutableRpc(req, reply)
      return
    }
    if (options.submissionStatus && (req.method === 'GET' || req.method === 'HEAD') && SUBMISSION_STATUS_SEGMENT.test(path)) {
      answerUnroutableStatusRequest(options.partners, req, reply)
      return
    }
    if (error.code === 'FST_ERR_BAD_URL') {
      req.log.info('request with a malformed URL refused')
      send(reply, 400, { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'url', message: 'a path segment is not valid percent-encoding' }] })
      return
    }
    answerNoRoute(req, reply)
  }

  let log: FastifyBaseLogger | undefined
  /** Fastify's defaultClientErrorHandler with the documented body, logging the error's code only */
  const clientErrorHandler = (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const [status, body]: [number, ErrorBody] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, { code: 'REQUEST_TIMEOUT', message: 'the request was not received in time' }]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'headers', message: 'the request line and headers are too large (a URL this long cannot be served)' }] }]
          : [400, { code: 'VALIDATION_ERROR', message: 'invalid request', details: [{ field: 'request', message: 'is not a well-formed HTTP request' }] }]
    // the error's rawPacket holds the raw request (URL, headers): never logged
    log?.debug({ code: error.code }, 'malformed HTTP request refused')
    if (socket.writable) {
      const json = JSON.stringify(body)
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(json)}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nConnection: close\r\n\r\n${json}`)
    }
    socket.destroy()
  }

  return {
    frameworkErrors,
    clientErrorHandler,
    install(instance) {
      log = instance.log
      app = instance
      instance.setNotFoundHandler(answerNoRoute)
      instance.setErrorHandler(rootErrorHandler)
      let closing = false
      instance.addHook('preClose', (done) => {
        closing = true
        done()
      })
      instance.addHook('onRequest', (req, reply, done) => {
        if (!closing) return done()
        reply.header('connection', 'close')
        if (pathOf(req.url).startsWith('/rpc/')) answerRpcWhileClosing(reply)
        else send(reply, 503, { code: 'SERVICE_UNAVAILABLE', message: SHUTTING_DOWN_MESSAGE })
      })
    },
  }
}
