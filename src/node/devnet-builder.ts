/**
 * Devnet mode's local block builder (src/devnet/local-builder.ts): a JSON-RPC relay on loopback
 * that includes bundles atomically in the next devnet block, so the whole private-submission loop
 * (submit, backrun appended, included, profit at the beneficiary) runs on the embedded devnet.
 */
import type { ServiceConfig } from '../config.ts'
import { DevnetStateSource } from '../chain/memory/devnet-source.ts'
import type { ChainStateSource } from '../chain/types.ts'
import type { Simulator } from '../evm/simulator.ts'
import { LocalBuilder } from '../devnet/local-builder.ts'

export interface DevnetBuilderService {
  builder: LocalBuilder
  url: string
  close(): Promise<void>
}

/** Starts the builder when `chain` is the embedded devnet; undefined in fork mode. */
export async function openDevnetBuilder(
  config: ServiceConfig,
  chain: ChainStateSource,
  simulator: Simulator,
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
): Promise<DevnetBuilderService | undefined> {
  if (!(chain instanceof DevnetStateSource)) return undefined
  const builder = new LocalBuilder({
    source: chain,
    simulator,
    blockTimeMs: config.devnet.localBuilderBlockTimeMs,
    // one window for what a built block leaves behind, so the service's memory levels off once
    // that many blocks have passed (bench:soak measures it)
    historyBlocks: config.devnet.localBuilderHistoryBlocks,
    bundleStatsBlocks: config.devnet.localBuilderHistoryBlocks,
    // it builds in the service's main thread: in slices, so requests are answered during a build
    sliceMs: config.devnet.localBuilderSliceMs,
    // a chain keeps producing blocks: submissions are re-sent per block and expire by block count
    mineEmptyBlocks: true,
    onError: (err) => log.warn({ err }, 'local builder: block building failed'),
    onBlock: (built) => log.info({ block: built.block.number.toString(), txs: built.receipts.length }, 'local builder: block built'),
  })
  const { url } = await builder.start({ host: '127.0.0.1', port: config.devnet.localBuilderPort })
  return { builder, url, close: () => builder.close() }
}
