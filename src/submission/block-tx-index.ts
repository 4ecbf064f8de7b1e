/**
 * Which of the last few blocks holds which transaction hash: the dispatcher's cheap answer to "is
 * it on chain yet?" for every open submission at once.
 *
 * Without it, every open submission asks the node for its receipt at every head: one request per
 * submission per block, which under a backlog of thousands is the node's (and, with the embedded
 * devnet, this process's own) heaviest load, and grows with the very backlog it should drain. With
 * it, the dispatcher learns each new block's transaction hashes once, and asks for receipts only
 * for the submissions whose hash it found. The hashes come with the head itself where the chain
 * source has them (the devnet, a fork's header answer: no request at all); otherwise, and for a
 * head that was missed, they are read (eth_getBlockByNumber without bodies).
 *
 * Exactness: a block that could not be read (timeout, the node not having it yet) is a gap, and a
 * submission whose blocks are not all indexed is checked by receipt as before. The head block is
 * always read again when it arrives (a same-height reorg replaces it); a deeper reorg is told by the
 * chain source, and `dropAbove` forgets the replaced blocks (gaps until read again). Expiry and a
 * used nonce are always settled with a direct receipt check.
 */
import type { Hex } from '../chain/types.ts'
import { positiveInt } from '../primitives/numbers.ts'

/** The transaction hashes of block `number`, or null when the node does not have it (yet). */
export type BlockTransactionsReader = (number: bigint) => Promise<readonly Hex[] | null>

export interface BlockTxIndexOptions {
  read: BlockTransactionsReader
  /** blocks kept (the newest ones); a submission older than that is checked by receipt */
  windowBlocks: number
  /**
   * blocks read at most per head (in parallel), the head first, then missing ones newest first;
   * the others stay gaps until a later head. Default 4: one read per head in steady state, and a
   * window's worth of gaps filled over a few heads without ever holding a head up behind a long
   * series of reads.
   */
  maxReadsPerHead?: number
  onError?: (block: bigint, error: unknown) => void
}

export class BlockTxIndex {
  private readonly read: BlockTransactionsReader
  private readonly windowBlocks: bigint
  private readonly maxReadsPerHead: number
  private readonly onError: (block: bigint, error: unknown) => void
  /** block number -> its tx hashes (lower case) */
  private readonly blocks = new Map<bigint, readonly string[]>()
  /** tx hash (lower case) -> block number */
  private readonly where = new Map<string, bigint>()
  private newest = -1n
  private chain: Promise<void> = Promise.resolve()

  constructor(options: BlockTxIndexOptions) {
    this.windowBlocks = BigInt(positiveInt('windowBlocks', options.windowBlocks, 'BlockTxIndex'))
    this.maxReadsPerHead = positiveInt('maxReadsPerHead', options.maxReadsPerHead ?? 4, 'BlockTxIndex')
    this.read = options.read
    this.onError = options.onError ?? (() => undefined)
  }

  /**
   * Indexes `head` (again, if it was indexed: a same-height reorg) from `hashes` when the head
   * came with them, else by reading it; then reads blocks of the window not indexed yet, newest
   * first, at most maxReadsPerHead reads in all, in parallel. Heads are indexed one after another;
   * the promise resolves when this one is done and never rejects (a failed read is a gap).
   */
  advance(head: bigint, hashes?: readonly Hex[]): Promise<void> {
    const run = this.chain.then(() => this.index(head, hashes)).catch((error: unknown) => this.onError(head, error))
    this.chain = run
    return run
  }

  /** Every block from `from` to `to` (both included) is indexed. */
  covers(from: bigint, to: bigint): boolean {
    if (to - from + 1n > this.windowBlocks) return false
    for (let n = from; n <= to; n++) if (!this.blocks.has(n)) return false
    return true
  }

  /** The indexed block that holds `hash`, if any. */
  blockOf(hash: Hex): bigint | undefined {
    return this.where.get(hash.toLowerCase())
  }

  /**
   * Forgets every block above `block` (a reorg replaced them; -1n: all): they are gaps until read
   * again, and the newest block is `block`, so the window follows a shorter new chain. Runs in
   * turn with advance(), after the heads already being indexed.
   */
  dropAbove(block: bigint): Promise<void> {
    const run = this.chain.then(() => {
      for (const n of [...this.blocks.keys()]) if (n > block) this.drop(n)
      if (this.newest > block) this.newest = block
    })
    this.chain = run
    return run
  }

  /** blocks and hashes held (for tests and metrics) */
  size(): { blocks: number; hashes: number } {
    return { blocks: this.blocks.size, hashes: this.where.size }
  }

  private async index(head: bigint, headHashes: readonly Hex[] | undefined): Promise<void> {
    if (head > this.newest) this.newest = head
    const oldest = this.newest - this.windowBlocks + 1n
    for (const n of [...this.blocks.keys()]) if (n < oldest) this.drop(n)
    if (headHashes !== undefined) this.put(head, headHashes)
    const wanted: bigint[] = []
    for (let n = head; n >= oldest && n >= 0n && wanted.length < this.maxReadsPerHead; n--) {
      if ((n === head && headHashes === undefined) || !this.blocks.has(n)) wanted.push(n)
    }
    const answers = await Promise.all(
      wanted.map((n) =>
        this.read(n).then(
          (hashes) => ({ n, hashes }),
          (error: unknown) => {
            this.onError(n, error)
            return { n, hashes: null }
          },
        ),
      ),
    )
    for (const { n, hashes } of answers) {
      if (hashes === null) this.drop(n)
      else this.put(n, hashes)
    }
  }

  private put(n: bigint, hashes: readonly Hex[]): void {
    this.drop(n)
    const lower = hashes.map((h) => h.toLowerCase())
    this.blocks.set(n, lower)
    for (const h of lower) this.where.set(h, n)
  }

  private drop(n: bigint): void {
    const hashes = this.blocks.get(n)
    if (hashes === undefined) return
    this.blocks.delete(n)
    for (const h of hashes) if (this.where.get(h) === n) this.where.delete(h)
  }
}
