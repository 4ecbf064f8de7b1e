/**
 * The embedded devnet: the chain state of a genesis file (real Uniswap contracts deployed by
 * scripts/build-devnet.ts), held in memory. It needs no network; its head advances only when a
 * block is adopted locally.
 */
import { readFileSync } from 'node:fs'
import type { BlockInfo, ChainStateSource, StateReader } from '../types.ts'
import { parseGenesis, type GethGenesisJson, type ParsedGenesis } from './genesis.ts'
import { MemoryStateReader } from './memory-state-reader.ts'

export class DevnetStateSource implements ChainStateSource {
  readonly kind = 'devnet' as const
  readonly chainId: bigint
  private current: StateReader
  private readonly listeners = new Set<(block: BlockInfo) => void>()

  constructor(readonly genesis: ParsedGenesis) {
    this.chainId = genesis.chainId
    this.current = new MemoryStateReader(genesis.block, genesis.accounts)
  }

  static fromGenesisFile(path: string): DevnetStateSource {
    let json: GethGenesisJson
    try {
      json = JSON.parse(readFileSync(path, 'utf8')) as GethGenesisJson
    } catch (err) {
      throw new Error(`cannot read the devnet genesis ${path}: ${(err as Error).message} (run npm run build:devnet)`)
    }
    return new DevnetStateSource(parseGenesis(json))
  }

  latest(): StateReader {
    return this.current
  }

  /** Makes `reader` the new head (a block built locally) and tells the listeners. */
  adopt(reader: StateReader): void {
    if (reader.block.number <= this.current.block.number) {
      throw new Error(`block ${reader.block.number} is not newer than the head ${this.current.block.number}`)
    }
    this.current = reader
    for (const listener of this.listeners) listener(reader.block)
  }

  onNewHead(listener: (block: BlockInfo) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async ready(): Promise<boolean> {
    return true
  }

  async close(): Promise<void> {
    this.listeners.clear()
  }
}
