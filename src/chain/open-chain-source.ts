/** Chooses the state source from configuration: a fork of UPSTREAM_RPC_URL, else the embedded devnet. */
import type { ServiceConfig } from '../config.ts'
import { ForkStateSource } from './fork/index.ts'
import { DevnetStateSource } from './memory/devnet-source.ts'
import type { ChainStateSource } from './types.ts'

export async function openChainSource(
  config: ServiceConfig,
  onBackgroundError: (error: unknown) => void = () => {},
): Promise<ChainStateSource> {
  if (config.upstreamRpcUrl === undefined) return DevnetStateSource.fromGenesisFile(config.devnetGenesisPath)
  return ForkStateSource.create({
    url: config.upstreamRpcUrl,
    blockNumber: config.forkBlock,
    timeoutMs: config.upstreamTimeoutMs,
    maxRetries: config.upstreamRetries,
    maxBatchSize: config.upstreamBatchSize,
    pollIntervalMs: config.headPollIntervalMs,
    cache: { maxEntries: config.forkCacheMaxEntries },
    onError: onBackgroundError,
  })
}
