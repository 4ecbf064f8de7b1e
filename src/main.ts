/**
 * npm start: the service on the embedded devnet, or on a fork of UPSTREAM_RPC_URL.
 */
import type { FastifyInstance } from 'fastify'
import { ConfigError, loadConfig } from './config.ts'
import { resolveAccess } from './server/access.ts'
import { buildApp } from './server/app.ts'
import { openDevnetBuilder } from './devnet-builder-service.ts'
import { openDomainServices } from './service.ts'
import { openSubmissionServices } from './submission-service.ts'

async function main() {
  let config
  const startupWarnings: string[] = []
  let access
  try {
    config = loadConfig(process.env)
    // before anything is opened: fork mode without keys and partner tokens must not start
    access = resolveAccess(config, { warn: (message) => startupWarnings.push(message) })
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  let app: FastifyInstance | undefined
  // the domain logs through the app's logger once it exists (polling failures have no caller to reject)
  const log = {
    info: (obj: object, msg: string) => app?.log.info(obj, msg),
    warn: (obj: object, msg: string) => app?.log.warn(obj, msg),
    error: (obj: object, msg: string) => app?.log.error(obj, msg),
  }
  const services = await openDomainServices(config, { log })
  const builder = await openDevnetBuilder(config, services.chain, services.simulator, log)
  const submission = await openSubmissionServices({ config, chain: services.chain, simulator: services.simulator, backrun: services.backrun, localBuilderUrl: builder?.url, log })
  app = await buildApp(config, { ...services, ...access, submission: submission.app })
  for (const warning of startupWarnings) app.log.warn(warning)
  const shutdown = async (signal: string) => {
    app?.log.info({ signal }, 'shutting down')
    await app?.close()
    await submission.close()
    await builder?.close()
    await services.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  await app.listen({ host: config.host, port: config.port })
  const chain = services.chain
  app.log.info(
    { mode: chain.kind, chainId: chain.chainId.toString(), block: chain.latest().block.number.toString(), router: services.contracts.router, localBuilder: builder?.url, searcher: submission.searcherAddress },
    'state source ready',
  )
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
