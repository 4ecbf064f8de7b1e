/**
 * The HTTP front end, built by a function so tests can use inject() and a real listen alike.
 * The server depends on the domain; nothing in the domain imports the server.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { LogLevel, ServiceConfig } from '../config.ts'
import type { ChainStateSource } from '../chain/types.ts'
import type { BackrunService } from '../backrun/types.ts'
import type { QuoteService } from '../quote/types.ts'
import type { ApiKeyRegistry } from './auth/api-keys.ts'
import { registerHealthRoutes } from './health-routes.ts'
import { createFrontDoor } from './http-errors.ts'
import { jsonRpcLogSerializers, registerJsonRpcRoutes, type PartnerRegistry } from './jsonrpc/index.ts'
import { countBackrunAnswers } from './metrics/backrun-metrics.ts'
import { registerMetrics } from './metrics/http-metrics.ts'
import { createMetricsRegistry, type MetricsRegistry } from './metrics/registry.ts'
import { registerServiceMetrics } from './metrics/service-metrics.ts'
import { registerOpenApiPlugin, registerOpenApiRoute } from './openapi/openapi.ts'
import { registerQuoteRoutes } from './quote/quote-routes.ts'
import { backrunMethod } from './rpc/backrun-method.ts'
import { submissionMethods, type SubmissionAcceptor, type SubmissionLimits, type SubmissionMethodsDeps } from './rpc/submission-methods.ts'
import { registerSubmissionStatusRoute, type SubmissionStatusStore } from './rpc/submission-status-route.ts'
import type { WindowCounter } from './rate-limit/shared-rate-limit-store.ts'

export interface AppServices {
  chain: ChainStateSource
  quote: QuoteService
  apiKeys: ApiKeyRegistry
  backrun: BackrunService
  /** partner tokens of the JSON-RPC endpoints */
  partners: PartnerRegistry
  /** private submission; without it the submission methods are not served */
  submission?: {
    acceptor: SubmissionAcceptor
    /** what the status route reads; ready(): whether it can be written, for /readyz */
    store: SubmissionStatusStore & { ready?(): Promise<boolean> }
    /** how submitted transactions are decoded and checked */
    decode: SubmissionMethodsDeps['decode']
    limits: Partial<SubmissionLimits>
  }
  /**
   * where the app registers its metrics (HTTP, quote, state source, eth_backrun answers) and serves
   * them from, at GET /metrics; the composition root adds the submission and builder families to
   * it. Default: a fresh registry with prom-client's default process metrics.
   */
  metrics?: MetricsRegistry
  /** the quote rate limit's counter shared by every replica (DATABASE_URL); default: this process's memory */
  rateLimitCounter?: WindowCounter
}

/** The service's pino options: a logger made with them logs requests as the app's own would. */
export function serviceLoggerOptions(level: LogLevel) {
  return {
    level,
    // secrets never reach the logs
    // the partner token sits in /rpc/{token}/... paths: request logs show it redacted
    serializers: jsonRpcLogSerializers,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-flashbots-signature"]'], censor: '[redacted]' },
  }
}

export interface BuildAppOptions {
  /** the service's logger, made with serviceLoggerOptions and shared with the domain; default: the app makes its own */
  loggerInstance?: FastifyBaseLogger
}

export async function buildApp(config: ServiceConfig, services: AppServices, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  // Fastify's own answers (404, body errors, URLs its router refuses) in the documented shape,
  // authentication first where the route needs it; see http-errors.ts
  const frontDoor = createFrontDoor({ partners: services.partners, submissionStatus: services.submission !== undefined })
  const app = Fastify({
    frameworkErrors: frontDoor.frameworkErrors,
    clientErrorHandler: frontDoor.clientErrorHandler,
    // while closing, the front door answers in the documented shape (see http-errors.ts)
    return503OnClosing: false,
    bodyLimit: config.server.bodyLimitBytes,
    keepAliveTimeout: config.server.keepAliveTimeoutMs,
    ...(options.loggerInstance === undefined ? { logger: serviceLoggerOptions(config.server.logLevel) } : { loggerInstance: options.loggerInstance }),
    // request ids for correlating logs; no trust in client-supplied ids
    genReqId: (() => {
      let n = 0
      return () => `req-${(++n).toString(36)}`
    })(),
  })
  // a connection past the bound is closed as it arrives (Node's server.maxConnections)
  app.server.maxConnections = config.server.maxConnections
  // Fastify's default 404 logs the raw URL, which may carry a partner token, and repeats it in its body
  frontDoor.install(app)

  // the OpenAPI route collector and the metrics hook must exist before the routes they observe
  // (GET /metrics included)
  await registerOpenApiPlugin(app)
  const metrics = services.metrics ?? createMetricsRegistry()
  registerMetrics(app, { registry: metrics })
  registerServiceMetrics(metrics, services)
  registerOpenApiRoute(app)

  registerHealthRoutes(app, services)
  await registerQuoteRoutes(app, {
    quoteService: services.quote,
    apiKeys: services.apiKeys,
    rateLimit: { max: config.server.rateLimitMax, timeWindowMs: config.server.rateLimitWindowMs, shared: services.rateLimitCounter },
    metrics,
  })
  const submission = services.submission
  await registerJsonRpcRoutes(app, {
    partners: services.partners,
    endpoints: {
      backrun: { eth_backrun: backrunMethod(countBackrunAnswers(services.backrun, metrics)) },
      submit:
        submission === undefined
          ? {}
          : submissionMethods({ submissions: submission.acceptor, decode: submission.decode, limits: submission.limits, currentBlock: () => services.chain.latest().block.number }),
    },
    maxBatchSize: config.server.rpcMaxBatchSize,
  })
  if (submission !== undefined) registerSubmissionStatusRoute(app, { store: submission.store, partners: services.partners })
  return app
}
