/**
 * The devnet as a chain of its own, for several replicas to share (npm run cluster): the embedded
 * devnet's state and its local block builder (openDevnetBuilder, as `npm start` runs it), without
 * the HTTP service. Its JSON-RPC (LOCAL_BUILDER_PORT) is what each replica forks
 * (UPSTREAM_RPC_URL: heads, state, receipts) and its relay (RELAYS: eth_sendBundle,
 * flashbots_getBundleStatsV2), so every replica sees the same blocks and sends to the same builder.
 *
 * Configuration is the service's (devnet mode: DEVNET_GENESIS, LOCAL_BUILDER_PORT,
 * LOCAL_BUILDER_BLOCK_TIME_MS, LOCAL_BUILDER_HISTORY_BLOCKS, BLOCK_TIME_SECONDS, HARDFORK, EVM_*).
 */
import { pino } from 'pino'

import { ConfigError } from '../config.ts'
import { commonForChain } from '../evm/chain-config.ts'
import { Simulator } from '../evm/simulator.ts'
import { loadConfig } from './config.ts'
import { openDevnetBuilder } from './devnet-builder.ts'
import { createServiceLogger, type ServiceLogger } from './logger.ts'
import { openChainSource } from './open-chain-source.ts'

export interface DevnetChain {
  /** the builder's JSON-RPC URL: the replicas' UPSTREAM_RPC_URL and relay */
  url: string
  chainId: bigint
  log: ServiceLogger
  close(): Promise<void>
}

/**
 * @throws ConfigError when a variable is wrong, or UPSTREAM_RPC_URL is set (this is the devnet)
 */
export async function openDevnetChain(env: Readonly<Record<string, string | undefined>>): Promise<DevnetChain> {
  if (env.UPSTREAM_RPC_URL !== undefined && env.UPSTREAM_RPC_URL !== '') throw new ConfigError(['UPSTREAM_RPC_URL: must be unset: this process is the devnet the replicas fork'])
  // the devnet needs no keys of its own: it serves no quotes and accepts no submissions
  const config = loadConfig({ ...env, WORKERS: '0' })
  // stderr: stdout carries the one line that says where the chain is (scripts/devnet-chain.ts)
  const log = createServiceLogger(config.server.logLevel, pino.destination(2))
  const chain = await openChainSource(config, (err) => log.warn({ err }, 'devnet background work failed'))
  try {
    const simulator = new Simulator({ common: commonForChain(chain.chainId, config.chain.hardfork), blockTimeSeconds: config.chain.blockTimeSeconds, budget: config.evm })
    const builder = await openDevnetBuilder(config, chain, simulator, log)
    if (builder === undefined) throw new Error('the devnet chain did not start its builder')
    return {
      url: builder.url,
      chainId: chain.chainId,
      log,
      close: async () => {
        await builder.close()
        await chain.close()
      },
    }
  } catch (err) {
    await chain.close()
    throw err
  }
}
