/**
 * POST /v1/quote (spec 4.1), as an encapsulated plugin: its content-type parsers, error handler
 * and rate limiter apply to this route only.
 *
 * Order of checks, each a different Fastify lifecycle stage, so the order is structural rather
 * than a convention inside one function:
 *   1. auth            onRequest hook          -> 401 UNAUTHORIZED (body not even read)
 *   2. body parsing    content-type parser     -> 400 VALIDATION_ERROR (not JSON, wrong type, too big)
 *      validation      route validatorCompiler -> 400 VALIDATION_ERROR (one detail per violation)
 *   3. rate limit      preHandler hook         -> 429 RATE_LIMIT_EXCEEDED, keyed by API key id
 *   4. quote           handler                 -> 200 / 422 QUOTE_ERROR / 502 UPSTREAM_ERROR
 * Anything else is 500 INTERNAL_ERROR with a fixed body (see quote-errors.ts).
 *
 * The rate limit is @fastify/rate-limit with `hook: 'preHandler'`: Fastify runs preHandler
 * after validation, so requests that fail auth or validation never consume a key's budget
 * (a client's malformed retries cannot lock it out, and an unauthenticated caller cannot drain
 * someone else's bucket), and the keyGenerator can rely on the key id auth recorded.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Counter, Histogram } from 'prom-client'
import { positiveInt } from '../../primitives/numbers.ts'
import type { QuoteRequest, QuoteService } from '../../quote/types.ts'
import { apiKeyAuthHook, getApiKeyId } from '../auth/api-key-auth.ts'
import type { ApiKeyRegistry } from '../auth/api-keys.ts'
import type { MetricsRegistry } from '../metrics/registry.ts'
import { API_BASE_PATH } from '../openapi/openapi.ts'
import { RateLimitedError, ValidationFailedError } from '../errors/request-errors.ts'
import { type MappedError, createQuoteErrorHandler, lastResortErrorHandler } from './quote-errors.ts'
import { parseQuoteRequest } from './quote-request.ts'
import { hasQuoteJson } from './quote-json.ts'
import { toWireQuote } from './quote-response.ts'
import { quoteRouteSchema } from './quote-schemas.ts'
import { sharedRateLimitStore, type WindowCounter } from '../rate-limit/shared-rate-limit-store.ts'

export const QUOTE_PATH = `${API_BASE_PATH}/quote`
/** A quote body is ~200 bytes; 16 KiB leaves room for whitespace without buffering megabytes. */
export const DEFAULT_QUOTE_BODY_LIMIT_BYTES = 16 * 1024
/** the shared rate-limit counter's failures are logged at most this often, ms */
const LOG_FALLBACK_EVERY_MS = 10_000
/** what Fastify gives a body its response serializer wrote */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

export interface QuoteRoutesOptions {
  quoteService: QuoteService
  apiKeys: ApiKeyRegistry
  /**
   * per API key: at most `max` requests per `timeWindowMs` (fixed window), counted in this
   * process's memory, or by `shared` (every replica's requests in one count; in memory while it
   * fails, see shared-rate-limit-store.ts)
   */
  rateLimit: { max: number; timeWindowMs: number; shared?: WindowCounter }
  /** when given, quote outcome counters and the quote service latency are registered here */
  metrics?: MetricsRegistry
  /** largest accepted request body for this route; default DEFAULT_QUOTE_BODY_LIMIT_BYTES */
  bodyLimitBytes?: number
}

/** Registers POST /v1/quote on `app` (inside its own encapsulated context). */
export async function registerQuoteRoutes(app: FastifyInstance, options: QuoteRoutesOptions): Promise<void> {
  await app.register(quoteRoutes, options)
}

type Outcome = 'ok' | 'unauthorized' | 'validation_error' | 'rate_limited' | 'quote_error' | 'upstream_error' | 'internal_error'

const OUTCOME_BY_CODE: Record<MappedError['body']['code'], Outcome> = {
  UNAUTHORIZED: 'unauthorized',
  VALIDATION_ERROR: 'validation_error',
  RATE_LIMIT_EXCEEDED: 'rate_limited',
  QUOTE_ERROR: 'quote_error',
  UPSTREAM_ERROR: 'upstream_error',
  INTERNAL_ERROR: 'internal_error',
}

/**
 * Two nested contexts: the outer one only holds lastResortErrorHandler, which Fastify calls when
 * the inner (route) error handler's own reply fails. See quote-errors.ts.
 */
const quoteRoutes: FastifyPluginAsync<QuoteRoutesOptions> = async (outer, options) => {
  outer.setErrorHandler(lastResortErrorHandler)
  await outer.register(quoteRoute, options)
}

/**
 * Adds `bindings` to every later log line of `request`: on its own logger when that is pino's
 * (setBindings; the service's logger is), else through a child logger that replaces it.
 */
function addLogBindings(request: FastifyRequest, reply: FastifyReply, bindings: Record<string, unknown>): void {
  const log = request.log as FastifyBaseLogger & { setBindings?: (bindings: Record<string, unknown>) => void }
  if (typeof log.setBindings === 'function') {
    log.setBindings(bindings)
    return
  }
  request.log = request.log.child(bindings)
  reply.log = request.log
}

const quoteRoute: FastifyPluginAsync<QuoteRoutesOptions> = async (scope, options) => {
  const max = positiveInt('rateLimit.max', options.rateLimit.max)
  const timeWindowMs = positiveInt('rateLimit.timeWindowMs', options.rateLimit.timeWindowMs)
  const bodyLimit = positiveInt('bodyLimitBytes', options.bodyLimitBytes ?? DEFAULT_QUOTE_BODY_LIMIT_BYTES)

  const registers = options.metrics && [options.metrics]
  const metrics = registers && {
    outcomes: new Counter({
      name: 'quote_requests_total',
      help: 'POST /v1/quote outcomes: ok, unauthorized, validation_error, rate_limited, quote_error, upstream_error, internal_error.',
      labelNames: ['outcome'],
      registers,
    }),
    failures: new Counter({ name: 'quote_failures_total', help: 'Quotes that could not be produced (422), by reason.', labelNames: ['reason'], registers }),
    serviceSeconds: new Histogram({ name: 'quote_service_duration_seconds', help: 'Time the routing engine took per quote, any outcome.', registers }),
    rateLimitFallbacks: new Counter({
      name: 'quote_rate_limit_fallbacks_total',
      help: 'Quote requests counted against their rate limit in this process only, because the shared counter (DATABASE_URL) failed.',
      registers,
    }),
  }
  // a database outage is logged, at most every LOG_FALLBACK_EVERY_MS, never silent
  let lastFallbackLog = Number.NEGATIVE_INFINITY
  const shared = options.rateLimit.shared
  const store =
    shared === undefined
      ? undefined
      : sharedRateLimitStore({
          counter: shared,
          onFallback: (err) => {
            metrics?.rateLimitFallbacks.inc()
            if (Date.now() - lastFallbackLog < LOG_FALLBACK_EVERY_MS) return
            lastFallbackLog = Date.now()
            scope.log.warn({ err }, 'quote rate limit: the shared counter failed; counting in this process only (per-replica limits) until it answers again')
          },
        })

  // The spec's only request media type. Dropping the default text/plain parser makes any other
  // Content-Type a parse error (mapped to 400) instead of a string body reaching validation.
  // Fastify's own JSON parser is reused, with prototype-poisoning keys refused.
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'))

  scope.setErrorHandler(
    createQuoteErrorHandler({
      bodyLimitBytes: bodyLimit,
      onError: (mapped) => {
        if (!metrics) return
        metrics.outcomes.inc({ outcome: OUTCOME_BY_CODE[mapped.body.code] })
        const reason = mapped.body.code === 'QUOTE_ERROR' ? (mapped.body.details as { reason?: unknown } | undefined)?.reason : undefined
        if (typeof reason === 'string') metrics.failures.inc({ reason })
      },
    }),
  )

  // Registered inside this scope (it is fastify-plugin-wrapped, so it attaches to `scope`), with
  // global: false: it only limits routes whose config carries `rateLimit`, i.e. this one.
  await scope.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    // RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (+ Retry-After on 429)
    enableDraftSpec: true,
    keyGenerator: (request: FastifyRequest) => {
      const keyId = getApiKeyId(request)
      // unreachable while auth runs in onRequest; fail closed (500) rather than share a bucket
      if (keyId === undefined) throw new Error('rate limiter ran before authentication')
      return keyId
    },
    errorResponseBuilder: (_request, context) => new RateLimitedError(Math.ceil(context.ttl / 1000)),
    ...(store === undefined ? {} : { store }),
  })

  const authenticate = apiKeyAuthHook(options.apiKeys)
  const service = options.quoteService
  const jsonSource = hasQuoteJson(service) ? service : undefined

  scope.post<{ Body: QuoteRequest }>(
    QUOTE_PATH,
    {
      schema: quoteRouteSchema,
      bodyLimit,
      config: { rateLimit: { max, timeWindow: timeWindowMs } },
      onRequest: async (request, reply) => {
        await authenticate.call(scope, request, reply)
        // every later log line of this request (including "request completed") names the key
        // by its non-secret id; added to the request's own child logger (Fastify makes one per
        // request, shared by the reply) rather than a second child per request on the hot path
        addLogBindings(request, reply, { keyId: getApiKeyId(request) })
      },
      // Fastify calls this once per request part with a schema; only `body` has one (a future
      // querystring/params schema must not be checked by the body parser, hence the guard).
      // The returned function replaces request.body with the typed QuoteRequest on success.
      validatorCompiler: ({ httpPart }) => {
        if (httpPart !== 'body') throw new Error(`no validator for ${String(httpPart)} on ${QUOTE_PATH}`)
        return (data: unknown) => {
          const parsed = parseQuoteRequest(data)
          return parsed.ok ? { value: parsed.value } : { error: new ValidationFailedError(parsed.details) }
        }
      },
    },
    async (request, reply) => {
      const started = performance.now()
      let body
      try {
        // the pool's facade answers with the body its worker wrote (quote-json.ts); sent as it is,
        // with the content type the response serializer would have given it
        body = jsonSource === undefined ? toWireQuote(await service.quote(request.body)) : await jsonSource.quoteJson(request.body)
      } finally {
        metrics?.serviceSeconds.observe((performance.now() - started) / 1000)
      }
      metrics?.outcomes.inc({ outcome: 'ok' })
      if (typeof body === 'string') reply.header('content-type', JSON_CONTENT_TYPE)
      return reply.code(200).send(body)
    },
  )
}
