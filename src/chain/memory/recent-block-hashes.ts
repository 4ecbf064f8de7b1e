/**
 * The hashes of a devnet block and the BLOCK_HASH_WINDOW blocks before it, for BLOCKHASH. Each
 * block's reader holds its own (immutable) record, so a reader pinned to an older head answers for
 * its own chain position however far the head has moved on.
 *
 * Bound: BLOCK_HASH_WINDOW + 1 hashes (257) per record. Extending copies the previous record's
 * references (257 pointers, ~2 KB, about a microsecond per committed block); the hash strings
 * themselves are shared by every record that holds them.
 */
import { BLOCK_HASH_WINDOW, type Hex } from '../types.ts'

const CAPACITY = Number(BLOCK_HASH_WINDOW) + 1

export class RecentBlockHashes {
  private constructor(
    /** the newest block's number */
    readonly newest: bigint,
    /** newest first: hashes[i] is block newest - i */
    private readonly hashes: readonly Hex[],
  ) {}

  /** The record of a chain's first known block (a genesis): only its own hash. */
  static of(block: { number: bigint; hash: Hex }): RecentBlockHashes {
    return new RecentBlockHashes(block.number, [block.hash])
  }

  /**
   * The record of a child block (number = newest + 1), keeping the newest BLOCK_HASH_WINDOW + 1.
   * @throws RangeError when the block is not the next one
   */
  extend(block: { number: bigint; hash: Hex }): RecentBlockHashes {
    if (block.number !== this.newest + 1n) throw new RangeError(`block ${block.number} does not follow block ${this.newest}`)
    const hashes = [block.hash, ...this.hashes.slice(0, CAPACITY - 1)]
    return new RecentBlockHashes(block.number, hashes)
  }

  /** Block `number`'s hash, or undefined when it is not in the record (newer, or too old). */
  get(number: bigint): Hex | undefined {
    if (number > this.newest) return undefined
    const back = this.newest - number
    return back < BigInt(this.hashes.length) ? this.hashes[Number(back)] : undefined
  }

  /** Hashes held (at most BLOCK_HASH_WINDOW + 1). */
  get size(): number {
    return this.hashes.length
  }
}
