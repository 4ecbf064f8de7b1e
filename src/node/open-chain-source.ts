/** Chooses the state source from configuration: a fork of UPSTREAM_RPC_URL, else the embedded devnet. */
import type { ServiceConfig } from '../config.ts'
import { ForkStateSource } from '../chain/fork/index.ts'
import { DevnetStateSource } from '../chain/memory/devnet-source.ts'
import type { ChainStateSource } from '../chain/types.ts'

export async function openChainSource(
  config: ServiceConfig,
  onBackgroundError: (error: unknown) => void = () => {},
): Promise<ChainStateSource> {
  if (config.chain.mode === 'devnet') return DevnetStateSource.fromGenesisFile(config.devnet.genesisPath, { maxLayerDepth: config.devnet.stateLayerDepth })
  const upstream = config.chain.upstream
  return ForkStateSource.create({
    url: upstream.url,
    blockNumber: upstream.forkBlock,
    timeoutMs: upstream.timeoutMs,
    maxRetries: upstream.retries,
    maxBatchSize: upstream.batchSize,
    pollIntervalMs: upstream.headPollIntervalMs,
    cache: { maxEntries: upstream.cacheMaxEntries, maxBlocks: upstream.cacheMaxBlocks },
    onError: onBackgroundError,
  })
}
