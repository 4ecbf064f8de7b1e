/**
 * Remembers which accounts and slots callers read lately, so a new head can re-fetch them in one
 * batch before it is adopted (hot pools stay warm). Bounded by key count, least recently read
 * dropped first; keys not read within `maxAgeBlocks` of the head are not re-fetched.
 */
import type { Address, PrefetchRequest } from '../types.ts'

export interface RecentReadsOptions {
  /** Keys remembered. Default 2048. */
  maxKeys?: number
  /** Keys last read more than this many blocks before the previous head are not re-fetched. Default 16. */
  maxAgeBlocks?: number
}

export const RECENT_READS_DEFAULTS = { maxKeys: 2048, maxAgeBlocks: 16 } as const

interface RecentRead {
  readonly address: Address
  readonly slot?: bigint
  lastBlock: bigint
}

export class RecentReads {
  private readonly reads = new Map<string, RecentRead>()
  private readonly maxKeys: number
  private readonly maxAgeBlocks: bigint

  constructor(options: RecentReadsOptions = {}) {
    this.maxKeys = options.maxKeys ?? RECENT_READS_DEFAULTS.maxKeys
    this.maxAgeBlocks = BigInt(options.maxAgeBlocks ?? RECENT_READS_DEFAULTS.maxAgeBlocks)
  }

  get size(): number {
    return this.reads.size
  }

  account(address: Address, block: bigint): void {
    this.touch(`a:${address}`, address, undefined, block)
  }

  storage(address: Address, slot: bigint, block: bigint): void {
    this.touch(`s:${address}:${slot.toString(16)}`, address, slot, block)
  }

  /** What to re-fetch when moving on from `previousHead`: keys read within the age window. */
  select(previousHead: bigint): Required<PrefetchRequest> {
    const oldest = previousHead - this.maxAgeBlocks
    const accounts: Address[] = []
    const storage: Array<{ address: Address; slot: bigint }> = []
    for (const [key, read] of this.reads) {
      if (read.lastBlock < oldest) {
        this.reads.delete(key)
        continue
      }
      if (read.slot === undefined) accounts.push(read.address)
      else storage.push({ address: read.address, slot: read.slot })
    }
    return { accounts, storage }
  }

  clear(): void {
    this.reads.clear()
  }

  private touch(key: string, address: Address, slot: bigint | undefined, block: bigint): void {
    const existing = this.reads.get(key)
    if (existing !== undefined) {
      this.reads.delete(key)
      if (block > existing.lastBlock) existing.lastBlock = block
      this.reads.set(key, existing) // move to the most recent end
      return
    }
    this.reads.set(key, slot === undefined ? { address, lastBlock: block } : { address, slot, lastBlock: block })
    if (this.reads.size > this.maxKeys) {
      const oldestKey = this.reads.keys().next().value
      if (oldestKey !== undefined) this.reads.delete(oldestKey)
    }
  }
}
