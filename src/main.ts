/**
 * npm start: the service on the embedded devnet, or on a fork of UPSTREAM_RPC_URL, composed by
 * src/node/start.ts. A wrong configuration prints every problem at once and exits with status 1.
 */
import { boundResourceTimings } from './node/resource-timing.ts'
import { startNode } from './node/start.ts'
import { collectLoaderIsolateGarbage, runsUnderTsxLoader } from './workers/loader-gc.ts'

// no fetch's timing kept for the life of the process (resource-timing.ts)
boundResourceTimings()

startNode(process.env).then(
  (node) => {
    // Every module is loaded: tsx's module-loader isolate gives back its start-up heap now rather
    // than when V8's memory reducer gets to it, minutes into the load (loader-gc-hook.mjs).
    if (runsUnderTsxLoader()) {
      void collectLoaderIsolateGarbage().then((collected) => {
        if (collected !== undefined) node.log.info({ loaderIsolate: collected }, 'module-loader isolate collected')
      })
    }
    // One shutdown. A second SIGINT/SIGTERM while it runs (a supervisor, or a user pressing ^C
    // twice) is logged and ignored: with `process.once` it met no listener and Node's default
    // action killed the process mid-close, before stores were closed and a --cpu-prof written.
    let closing = false
    const shutdown = async (signal: NodeJS.Signals) => {
      if (closing) {
        node.log.warn({ signal }, 'already shutting down; signal ignored')
        return
      }
      closing = true
      node.log.info({ signal }, 'shutting down')
      await node.close()
      // pino writes to stdout asynchronously: flush what the close logged (and a second signal's
      // line) before exiting, or process.exit drops it
      node.log.flush(() => process.exit(0))
    }
    process.on('SIGINT', (signal) => void shutdown(signal))
    process.on('SIGTERM', (signal) => void shutdown(signal))
  },
  (err: unknown) => {
    // a ConfigError's message lists every problem, one per line, never a secret's value
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  },
)
