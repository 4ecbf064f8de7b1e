/**
 * The devnet as a shared chain (src/node/devnet-chain.ts): its state and its local block builder,
 * for several replicas to fork and send to. Prints one JSON line on stdout when the builder
 * listens, `{"devnetChain":{"url":…,"chainId":…,"pid":…}}`, logs to stderr, and stops on SIGTERM
 * or SIGINT. npm run cluster starts it; `LOCAL_BUILDER_PORT=8546 npx tsx scripts/devnet-chain.ts`
 * runs it alone.
 */
import { openDevnetChain } from '../src/node/devnet-chain.ts'

openDevnetChain(process.env).then(
  (chain) => {
    process.stdout.write(`${JSON.stringify({ devnetChain: { url: chain.url, chainId: chain.chainId.toString(), pid: process.pid } })}\n`)
    const stop = async (signal: string) => {
      chain.log.info({ signal }, 'devnet chain stopping')
      await chain.close()
      process.exit(0)
    }
    process.once('SIGINT', () => void stop('SIGINT'))
    process.once('SIGTERM', () => void stop('SIGTERM'))
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  },
)
