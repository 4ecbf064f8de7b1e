/**
 * npm start: the service on the embedded devnet, or on a fork of UPSTREAM_RPC_URL, composed by
 * src/node/start.ts. A wrong configuration prints every problem at once and exits with status 1.
 */
import { startNode } from './node/start.ts'

startNode(process.env).then(
  (node) => {
    const shutdown = async (signal: string) => {
      node.log.info({ signal }, 'shutting down')
      await node.close()
      process.exit(0)
    }
    process.once('SIGINT', () => void shutdown('SIGINT'))
    process.once('SIGTERM', () => void shutdown('SIGTERM'))
  },
  (err: unknown) => {
    // a ConfigError's message lists every problem, one per line, never a secret's value
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  },
)
