/**
 * A cache whose entries belong to one block each (pool snapshots, pool discovery, quote answers,
 * token checks: all keyed by the block they were read at). Only the newest `blocks` blocks are
 * kept: an entry of an older block is never asked for again once the head has moved, so an LRU
 * bounded by entry count alone filled up with dead blocks (~20 MB a minute under load) until it
 * reached its bound. Here the memory held is that of the last few blocks, flat after they are
 * warm. Within a block, `maxPerBlock` entries at most (least recently set first out).
 */
import type { Address, BlockChangedKeys, StateReader } from '../chain/types.ts'

export interface BlockScopedCacheOptions {
  /** blocks kept, the newest by first use. Default 4. */
  blocks?: number
  /** entries per block at most. Default 10 000. */
  maxPerBlock?: number
}

export class BlockScopedCache<V> {
  private readonly byBlock = new Map<string, Map<string, V>>()
  private readonly blocks: number
  private readonly maxPerBlock: number

  constructor(options: BlockScopedCacheOptions = {}) {
    this.blocks = options.blocks ?? 4
    this.maxPerBlock = options.maxPerBlock ?? 10_000
    if (!Number.isSafeInteger(this.blocks) || this.blocks < 1) throw new RangeError(`BlockScopedCache: blocks must be a positive integer, got ${this.blocks}`)
    if (!Number.isSafeInteger(this.maxPerBlock) || this.maxPerBlock < 1) throw new RangeError(`BlockScopedCache: maxPerBlock must be a positive integer, got ${this.maxPerBlock}`)
  }

  get(block: string, key: string): V | undefined {
    return this.byBlock.get(block)?.get(key)
  }

  set(block: string, key: string, value: V): void {
    let entries = this.byBlock.get(block)
    if (entries === undefined) {
      entries = new Map()
      this.byBlock.set(block, entries)
      while (this.byBlock.size > this.blocks) this.byBlock.delete(this.byBlock.keys().next().value as string)
    }
    entries.delete(key)
    entries.set(key, value)
    if (entries.size > this.maxPerBlock) entries.delete(entries.keys().next().value as string)
  }

  delete(block: string, key: string): void {
    this.byBlock.get(block)?.delete(key)
  }

  /**
   * The parent block's entry of `key`, when `reader`'s block wrote none of `contracts` (no storage
   * slot, no nonce, balance or code change): an entry computed only from those contracts' state is
   * then as true at this block. Only for a head whose source names every change of its block (the
   * devnet's stateDiff); a fork's diff names only the keys it re-read, so nothing is carried there.
   * The block is keyed as blockKey (view-calls.ts) keys it: `number:hash`.
   */
  carried(reader: StateReader, key: string, contracts: readonly Address[]): V | undefined {
    const diff = reader.stateDiff?.()
    if (diff === undefined || diff.kind !== 'changed' || reader.block.number === 0n) return undefined
    const parent = this.get(`${reader.block.number - 1n}:${diff.parentHash}`, key)
    if (parent === undefined) return undefined
    const touched = touchedContracts(diff)
    return contracts.some((c) => touched.has(c)) ? undefined : parent
  }

  /** entries held, all blocks together */
  get size(): number {
    let n = 0
    for (const entries of this.byBlock.values()) n += entries.size
    return n
  }
}

const touchedByDiff = new WeakMap<BlockChangedKeys, ReadonlySet<Address>>()

/** every account a block's diff names (its accounts, written storage, cleared storage), once per diff */
function touchedContracts(diff: BlockChangedKeys): ReadonlySet<Address> {
  let touched = touchedByDiff.get(diff)
  if (touched === undefined) {
    touched = new Set([...diff.accounts, ...diff.storage.map(([address]) => address), ...diff.clearedStorage])
    touchedByDiff.set(diff, touched)
  }
  return touched
}
