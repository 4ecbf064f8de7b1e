/**
 * The composition root: the one place where configuration becomes components. In order:
 * configuration (every variable parsed and checked, every problem in one ConfigError, before
 * anything is opened), the logger, then the domain (state source, simulator, routing, quote,
 * backrun), the devnet's local builder, private submission, and last the HTTP server, which is
 * handed the same logger. `npm start` (src/main.ts) runs it; tests can too.
 */
import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import type { ServiceConfig } from '../config.ts'
import { buildApp } from '../server/app.ts'
import type { MetricsRegistry } from '../server/metrics/registry.ts'
import { resolveAccess } from './access.ts'
import { loadConfig, type LoadConfigOptions } from './config.ts'
import { openDevnetBuilder, type DevnetBuilderService } from './devnet-builder.ts'
import { openDomainServices, type DomainServices } from './domain.ts'
import { createServiceLogger, type ServiceLogger } from './logger.ts'
import { createNodeMetrics } from './metrics.ts'
import { openRateLimitCounter } from './rate-limit.ts'
import { openSubmissionServices, type SubmissionServices } from './submission.ts'

export interface StartNodeOptions extends LoadConfigOptions {
  /** where the log goes; default stdout */
  logDestination?: DestinationStream
}

/** The running service. */
export interface ServiceNode {
  config: ServiceConfig
  log: ServiceLogger
  domain: DomainServices
  /** devnet mode: the local block builder */
  builder?: DevnetBuilderService
  submission: SubmissionServices
  /** what GET /metrics serves */
  metrics: MetricsRegistry
  app: FastifyInstance
  /** where the HTTP server listens, http://host:port */
  url: string
  /** closes the server, then what it served, in the reverse order of opening */
  close(): Promise<void>
}

/**
 * Starts the service from environment variables.
 * @throws ConfigError (nothing opened, nothing logged) when a variable is wrong; any other failure
 *   while opening closes what was already opened before it is thrown
 */
export async function startNode(env: Readonly<Record<string, string | undefined>>, options: StartNodeOptions = {}): Promise<ServiceNode> {
  const config = loadConfig(env, options)
  const log = createServiceLogger(config.server.logLevel, options.logDestination)
  const access = resolveAccess(config, { warn: (message) => log.warn(message) })

  const opened: Array<() => Promise<void>> = []
  const close = async (): Promise<void> => {
    for (const closeOne of opened.splice(0).reverse()) await closeOne()
  }
  try {
    const domain = await openDomainServices(config, { log })
    opened.push(() => domain.close())
    const builder = await openDevnetBuilder(config, domain.chain, domain.simulator, log)
    if (builder !== undefined) opened.push(() => builder.close())
    const submission = await openSubmissionServices({
      config,
      chain: domain.chain,
      simulator: domain.simulator,
      backrun: domain.backrun,
      // WORKERS > 0: the dispatcher's simulations and backrun planning run in the pool, so the
      // acknowledgement of a private submission never waits behind them on this thread
      workers: domain.workers,
      localBuilderUrl: builder?.url,
      log,
    })
    opened.push(() => submission.close())
    const metrics = createNodeMetrics(config, { domain, builder, submission })
    const rateLimit = openRateLimitCounter(config, log)
    opened.push(() => rateLimit.close())
    const app = await buildApp(config, { ...domain, ...access, submission: submission.app, metrics, rateLimitCounter: rateLimit.counter }, { loggerInstance: log })
    opened.push(() => app.close())
    await app.listen({ host: config.server.host, port: config.server.port })
    const address = app.server.address()
    const url = address !== null && typeof address === 'object' ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : String(address)
    const chain = domain.chain
    log.info(
      {
        mode: chain.kind,
        chainId: chain.chainId.toString(),
        block: chain.latest().block.number.toString(),
        router: domain.contracts.router,
        // quotes and eth_backrun run in this many worker threads (0: on the main thread)
        workers: config.workers.threads,
        localBuilder: builder?.url,
        searcher: submission.searcherAddress,
      },
      'state source ready',
    )
    return { config, log, domain, builder, submission, metrics, app, url, close }
  } catch (err) {
    await close().catch((closeErr: unknown) => log.error({ err: closeErr }, 'closing after a failed start failed'))
    throw err
  }
}
