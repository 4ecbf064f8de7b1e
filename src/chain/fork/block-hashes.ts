/**
 * The fork's record of the upstream chain's block hashes, by number: the heads it adopted (and
 * their parents, named by the headers), the blocks it read while checking a new head's ancestry,
 * and the blocks BLOCKHASH asked for (read with eth_getBlockByNumber on a miss, concurrent misses
 * sharing one read).
 *
 * Two users: BLOCKHASH answers (a reader asks for a block within 256 of its own), and reorg
 * detection (a new head's ancestry is compared with the hashes recorded for the same numbers).
 * On a reorg the source drops every number above the common ancestor (`dropAbove`); a read that
 * was in flight then is still answered to its caller but not recorded (it may have been answered
 * by either chain).
 *
 * Bound: at most `maxEntries` numbers (default 1,024, ~200 KB); past it the lowest numbers go
 * first: the window of the newest heads is what both users need.
 */
import { UpstreamError, type BlockInfo, type Hex } from '../types.ts'
import { decodeBlock } from './rpc-decode.ts'
import { blockTag } from './state-loader.ts'
import type { UpstreamClient } from './upstream-client.ts'

export interface BlockHashRecordOptions {
  /** Block numbers remembered. Default 1,024; at least 257 (BLOCKHASH's window and the head). */
  maxEntries?: number
}

export const BLOCK_HASH_RECORD_DEFAULTS = { maxEntries: 1_024 } as const
const MIN_ENTRIES = 257

export interface BlockHashRecordStats {
  /** block numbers whose hash is recorded */
  blockHashes: number
  /** eth_getBlockByNumber reads made for BLOCKHASH */
  blockHashReads: number
}

export class BlockHashRecord {
  private readonly hashes = new Map<bigint, Hex>()
  private readonly maxEntries: number
  /** bumped by dropAbove: reads started before it are not recorded */
  private epoch = 0
  private reads = 0

  constructor(
    private readonly client: UpstreamClient,
    options: BlockHashRecordOptions = {},
  ) {
    const max = options.maxEntries ?? BLOCK_HASH_RECORD_DEFAULTS.maxEntries
    if (!Number.isSafeInteger(max) || max < MIN_ENTRIES) throw new RangeError(`blockHashes.maxEntries must be an integer >= ${MIN_ENTRIES}, got ${max}`)
    this.maxEntries = max
  }

  /** The recorded hash of block `number`, without reading. */
  known(number: bigint): Hex | undefined {
    return this.hashes.get(number)
  }

  /** The newest number recorded, if any. */
  newest(): bigint | undefined {
    let newest: bigint | undefined
    for (const n of this.hashes.keys()) if (newest === undefined || n > newest) newest = n
    return newest
  }

  /** Block `number`'s hash: recorded, else read from the upstream (eth_getBlockByNumber) and recorded. */
  async hashOf(number: bigint): Promise<Hex> {
    const known = this.hashes.get(number)
    if (known !== undefined) return known
    const epoch = this.epoch
    this.reads++
    const tag = blockTag(number)
    // the client shares identical calls in flight: concurrent misses make one read
    const block = decodeBlock(await this.client.call('eth_getBlockByNumber', [tag, false]), 'eth_getBlockByNumber', tag)
    if (block.number !== number) {
      throw new UpstreamError(`eth_getBlockByNumber: asked for block ${number}, got ${block.number}`, 'malformed', { method: 'eth_getBlockByNumber' })
    }
    if (epoch === this.epoch) this.record(block)
    return block.hash
  }

  /** Records a header's hash, and its parent's when it names it. */
  record(block: Pick<BlockInfo, 'number' | 'hash' | 'parentHash'>): void {
    this.set(block.number, block.hash)
    if (block.parentHash !== undefined && block.number > 0n) this.set(block.number - 1n, block.parentHash)
  }

  /** Forgets every number above `number` (a reorg replaced those blocks). Returns what was dropped, oldest first. */
  dropAbove(number: bigint): Array<{ number: bigint; hash: Hex }> {
    this.epoch++
    const dropped: Array<{ number: bigint; hash: Hex }> = []
    for (const [n, hash] of this.hashes) {
      if (n > number) {
        dropped.push({ number: n, hash })
        this.hashes.delete(n)
      }
    }
    return dropped.sort((a, b) => (a.number < b.number ? -1 : 1))
  }

  /** Forgets everything (a new head whose ancestry could not be checked). */
  clear(): void {
    this.epoch++
    this.hashes.clear()
  }

  stats(): BlockHashRecordStats {
    return { blockHashes: this.hashes.size, blockHashReads: this.reads }
  }

  private set(number: bigint, hash: Hex): void {
    this.hashes.set(number, hash)
    if (this.hashes.size <= this.maxEntries) return
    let lowest: bigint | undefined
    for (const n of this.hashes.keys()) if (lowest === undefined || n < lowest) lowest = n
    if (lowest !== undefined) this.hashes.delete(lowest)
  }
}
