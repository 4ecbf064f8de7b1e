/**
 * npm start: the service on the embedded devnet, or on a fork of UPSTREAM_RPC_URL.
 */
import type { FastifyInstance } from 'fastify'
import { ConfigError, loadConfig } from './config.ts'
import { openChainSource } from './chain/open-chain-source.ts'
import { buildApp } from './server/app.ts'

async function main() {
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  let app: FastifyInstance | undefined
  // polling and warm-up failures have no caller to reject; they are logged and the next poll retries
  const chain = await openChainSource(config, (err) => app?.log.warn({ err }, 'upstream background read failed'))
  app = await buildApp(config, { chain })
  const shutdown = async (signal: string) => {
    app?.log.info({ signal }, 'shutting down')
    await app?.close()
    await chain.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  await app.listen({ host: config.host, port: config.port })
  app.log.info({ mode: chain.kind, chainId: chain.chainId.toString(), block: chain.latest().block.number.toString() }, 'state source ready')
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
