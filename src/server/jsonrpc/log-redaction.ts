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
 * URL into its log message and its body; install {@link redactingNotFoundHandler} with
 * `app.setNotFoundHandler` to close that path.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

/** The segment after any `rpc` segment of the path (case-insensitive), up to the next `/`. */
const TOKEN_SEGMENT = /(^|\/)(rpc)\/[^/]*/gi

/** `/rpc/s3cr3t/backrun?x=1` -> `/rpc/[redacted]/backrun?x=1`; the query is left as it is. */
export function redactRpcUrl(url: string): string {
  const queryAt = url.search(/[?#]/)
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const rest = queryAt === -1 ? '' : url.slice(queryAt)
  return path.replace(TOKEN_SEGMENT, '$1$2/[redacted]') + rest
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

/**
 * Fastify's default 404 (same status and body shape), except that the URL in the log message and
 * in the body has its token segment redacted.
 */
export function redactingNotFoundHandler(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const route = `${req.method}:${redactRpcUrl(req.url)}`
  req.log.info(`Route ${route} not found`)
  return reply.code(404).send({ message: `Route ${route} not found`, error: 'Not Found', statusCode: 404 })
}
