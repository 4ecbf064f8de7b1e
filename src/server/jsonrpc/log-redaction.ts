/**
 * Keeps partner tokens out of the logs. The token is a path segment (`/rpc/<token>/…`), and
 * Fastify's request logging writes `req.url`, so the `req` serializer must redact it.
 *
 * The JSON-RPC routes install {@link redactingRequestSerializer} as their own `logSerializers`,
 * which covers every request that reaches them (the plugin also catches every other method and
 * path under `/rpc/`). Requests that never reach a route of the plugin (the app's 404 outside
 * that tree, a path segment over `maxParamLength`, a malformed URL when `frameworkErrors` logs)
 * use the root logger's serializers: pass {@link jsonRpcLogSerializers} to Fastify's `logger`
 * option so those are redacted as well. Fastify's default not-found handler also writes the raw
 * URL into its log message and its body; install {@link redactingNotFoundHandler} (or the app's
 * front door, src/server/http-errors.ts, which uses the same body) with `app.setNotFoundHandler`
 * to close that path.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Path segments shown as they are: the words of our own routes. Everything else, and always the
 * segment after `rpc` (the partner token's place), is shown as `[redacted]`: a token must not
 * reach the log through a path that is not canonical (`/rpc//TOKEN/backrun`,
 * `/rpc/x/../TOKEN/backrun`) or through a route that does not exist.
 */
const SHOWN_SEGMENTS = new Set(['', 'rpc', 'backrun', 'submit', 'v1', 'quote', 'submissions', 'healthz', 'readyz', 'metrics', 'openapi.json', 'docs', 'json'])
const HASH_SEGMENT = /^0x[0-9a-fA-F]{64}$/

/**
 * `/rpc/s3cr3t/backrun?token=x` -> `/rpc/[redacted]/backrun?[redacted]`. Only the words of our
 * routes are kept (and a 32-byte hash after `submissions`); every other path segment and the whole
 * query (an API key or token may be sent there) are redacted.
 */
export function redactRpcUrl(url: string): string {
  const queryAt = url.search(/[?#]/)
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const hasQuery = queryAt !== -1 && url.length > queryAt + 1
  const segments = path.split('/')
  const shown = segments.map((segment, i) => {
    const previous = (segments[i - 1] ?? '').toLowerCase()
    if (previous === 'rpc') return '[redacted]'
    if (previous === 'submissions' && HASH_SEGMENT.test(segment)) return segment
    return SHOWN_SEGMENTS.has(segment.toLowerCase()) ? segment : '[redacted]'
  })
  return shown.join('/') + (hasQuery ? `${url[queryAt]}[redacted]` : '')
}

/** The fields Fastify's default `req` serializer reads (a FastifyRequest has them all). */
export interface LoggedRequest {
  method?: string
  url?: string
  host?: string
  ip?: string
  headers?: Record<string, string | string[] | undefined>
  socket?: { remotePort?: number } | null
}

export interface LoggedRequestFields {
  [key: string]: unknown
  method?: string
  url?: string
  version?: string
  host?: string
  remoteAddress?: string
  remotePort?: number
}

/** Fastify's default `req` serializer with the token segment of the URL redacted. */
export function redactingRequestSerializer(req: LoggedRequest): LoggedRequestFields {
  const version = req.headers?.['accept-version']
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactRpcUrl(req.url) : undefined,
    version: typeof version === 'string' ? version : undefined,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }
}

/** For `Fastify({ logger: { serializers: jsonRpcLogSerializers, … } })`. */
export const jsonRpcLogSerializers = Object.freeze({ req: redactingRequestSerializer })

/** The body of a 404: the documented error shape, and never the URL (it may carry a token or key). */
export const NOT_FOUND_BODY = Object.freeze({ code: 'NOT_FOUND', message: 'no such route; the routes are described at GET /v1/openapi.json' })

/**
 * A 404 in the service's error shape (`{ code, message }`, not Fastify's default body, which
 * repeats the URL); the log line names the URL with its token segment redacted.
 */
export function redactingNotFoundHandler(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  req.log.info(`Route ${req.method}:${redactRpcUrl(req.url)} not found`)
  return reply.code(404).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(NOT_FOUND_BODY))
}
