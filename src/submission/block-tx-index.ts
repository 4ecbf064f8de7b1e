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
 *
 * Its memory is fixed when it is made, not when it fills (issue 10: RSS flat after the first
 * minute). The window fills over `windowBlocks` heads (27 blocks of 12 s with the default expiry:
 * 5.4 minutes), and as a `Map` of hashes (a string, a map entry and a list slot each) it grew the
 * main thread's heap, and through V8's old-space sizing RSS ~1.5 times that, until then. Here every
 * hash lives in one of `maxHashes` slots held in typed arrays allocated (and written, so that their
 * pages are resident) by the constructor: its 32 bytes, the window place of its block, the next
 * slot of the same block (each block's hashes a list, dropped as a whole), a stack of the free
 * slots, and a hash index over the slots (open addressing, linear probing, at least twice as many
 * cells as slots). A block is kept at place `number mod windowBlocks`, so the blocks of the window
 * never share one. A block whose hashes do not all fit in the free slots (or that carries a hash of
 * another shape) is a gap, like an unreadable one: its submissions are checked by receipt, so the
 * bound costs requests, never a wrong answer. ~56 bytes a slot at any fill (0.92 MB at the default
 * 16,384).
 */
import type { Hex } from '../chain/types.ts'
import { KEY_BYTES, cellCountFor, homeCell, unlinkCell } from '../primitives/linear-probing.ts'
import { positiveInt } from '../primitives/numbers.ts'

/** The transaction hashes of block `number`, or null when the node does not have it (yet). */
export type BlockTransactionsReader = (number: bigint) => Promise<readonly Hex[] | null>

export interface BlockTxIndexOptions {
  read: BlockTransactionsReader
  /** blocks kept (the newest ones); a submission older than that is checked by receipt */
  windowBlocks: number
  /**
   * hashes held at most over the window (their slots allocated up front); a block whose hashes do
   * not fit in what is free is a gap. Default BLOCK_TX_INDEX_DEFAULTS.maxHashes.
   */
  maxHashes?: number
  /**
   * blocks read at most per head (in parallel), the head first, then missing ones newest first;
   * the others stay gaps until a later head. Default 4: one read per head in steady state, and a
   * window's worth of gaps filled over a few heads without ever holding a head up behind a long
   * series of reads.
   */
  maxReadsPerHead?: number
  onError?: (block: bigint, error: unknown) => void
}

/**
 * maxHashes by default: 27 blocks (the default expiry's window) of ~600 transactions, twice what
 * bench:soak's 100 requests/s puts in a block and above mainnet's usual 150-400.
 */
export const BLOCK_TX_INDEX_DEFAULTS = { maxHashes: 16_384 } as const

const HASH = /^0x[0-9a-fA-F]{64}$/
/** a window place without a block */
const NONE = -1

export class BlockTxIndex {
  private readonly read: BlockTransactionsReader
  private readonly windowBlocks: bigint
  private readonly places: number
  private readonly maxReadsPerHead: number
  private readonly onError: (block: bigint, error: unknown) => void
  private readonly capacity: number
  /** per window place (block number mod windowBlocks): the block held there, NONE for none */
  private readonly placeBlock: Float64Array
  /** per window place: the first slot of its block's hashes (-1: none) */
  private readonly placeFirst: Int32Array
  /**
   * per window place: the block whose hashes did not fit there and were reported (NONE: none). Such
   * a block stays a gap and is read again at later heads (it may fit once older blocks leave), so
   * without this its report repeated at every head (up to maxReadsPerHead a head) while in the window
   */
  private readonly placeOverflowReported: Float64Array
  /** per slot: its hash's bytes */
  private readonly keys: Uint8Array
  /** per slot: the window place of its block */
  private readonly slotPlace: Int32Array
  /** per slot: the next slot of the same block (-1: the last) */
  private readonly slotNext: Int32Array
  /** the free slots, a stack: free[0 .. freeCount) */
  private readonly free: Int32Array
  private freeCount: number
  /** per slot: the index cell its hash starts from */
  private readonly homes: Uint32Array
  /** the hash index: cell -> slot + 1 (0: empty cell) */
  private readonly cells: Int32Array
  private readonly cellMask: number
  private blocksHeld = 0
  /** the hash being put or looked up, parsed */
  private readonly scratch = Buffer.alloc(KEY_BYTES)
  private newest = -1n
  private chain: Promise<void> = Promise.resolve()

  constructor(options: BlockTxIndexOptions) {
    this.places = positiveInt('windowBlocks', options.windowBlocks, 'BlockTxIndex')
    this.windowBlocks = BigInt(this.places)
    this.capacity = positiveInt('maxHashes', options.maxHashes ?? BLOCK_TX_INDEX_DEFAULTS.maxHashes, 'BlockTxIndex')
    this.maxReadsPerHead = positiveInt('maxReadsPerHead', options.maxReadsPerHead ?? 4, 'BlockTxIndex')
    this.read = options.read
    this.onError = options.onError ?? (() => undefined)
    this.placeBlock = new Float64Array(this.places).fill(NONE)
    this.placeFirst = new Int32Array(this.places).fill(-1)
    this.placeOverflowReported = new Float64Array(this.places).fill(NONE)
    // written once here (fill), so that their pages are resident from the start rather than
    // faulted in as the window fills: what RSS must not do after the first minute
    this.keys = new Uint8Array(this.capacity * KEY_BYTES).fill(0)
    this.slotPlace = new Int32Array(this.capacity).fill(0)
    this.slotNext = new Int32Array(this.capacity).fill(-1)
    this.homes = new Uint32Array(this.capacity).fill(0)
    // slot 0 on top: the slots are used in order while none has been freed
    this.free = Int32Array.from({ length: this.capacity }, (_, i) => this.capacity - 1 - i)
    this.freeCount = this.capacity
    this.cells = new Int32Array(cellCountFor(this.capacity)).fill(0)
    this.cellMask = this.cells.length - 1
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
    for (let n = from; n <= to; n++) if (!this.holds(n)) return false
    return true
  }

  /**
   * An indexed block that holds `hash`, if any (a hash in two blocks of the window, which only a
   * reorg the index was not told of leaves, is found in one of them).
   */
  blockOf(hash: Hex): bigint | undefined {
    if (!this.parse(hash)) return undefined
    const cell = this.find()
    return cell < 0 ? undefined : BigInt(this.placeBlock[this.slotPlace[this.cells[cell] - 1]])
  }

  /**
   * Forgets every block above `block` (a reorg replaced them; -1n: all): they are gaps until read
   * again, and the newest block is `block`, so the window follows a shorter new chain. Runs in
   * turn with advance(), after the heads already being indexed.
   */
  dropAbove(block: bigint): Promise<void> {
    const run = this.chain.then(() => {
      const floor = Number(block)
      for (let place = 0; place < this.places; place++) if (this.placeBlock[place] > floor) this.dropPlace(place)
      if (this.newest > block) this.newest = block
    })
    this.chain = run
    return run
  }

  /** blocks and hashes held (for tests and metrics) */
  size(): { blocks: number; hashes: number } {
    return { blocks: this.blocksHeld, hashes: this.capacity - this.freeCount }
  }

  /** bytes of the typed arrays allocated by the constructor: what it holds from the start, whatever its fill */
  get bytesAllocated(): number {
    return [this.placeBlock, this.placeFirst, this.placeOverflowReported, this.keys, this.slotPlace, this.slotNext, this.free, this.homes, this.cells].reduce((sum, a) => sum + a.byteLength, 0)
  }

  private async index(head: bigint, headHashes: readonly Hex[] | undefined): Promise<void> {
    if (head > this.newest) this.newest = head
    const oldest = this.newest - this.windowBlocks + 1n
    const oldestNumber = Number(oldest)
    for (let place = 0; place < this.places; place++) if (this.placeBlock[place] !== NONE && this.placeBlock[place] < oldestNumber) this.dropPlace(place)
    if (headHashes !== undefined) this.put(head, headHashes)
    const wanted: bigint[] = []
    for (let n = head; n >= oldest && n >= 0n && wanted.length < this.maxReadsPerHead; n--) {
      if ((n === head && headHashes === undefined) || !this.holds(n)) wanted.push(n)
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

  private holds(n: bigint): boolean {
    return n >= 0n && this.placeBlock[Number(n % this.windowBlocks)] === Number(n)
  }

  /**
   * Indexes block `n` with `hashes`, replacing what its place held. A block outside the window,
   * one whose hashes do not all fit in the free slots, or one with a hash of another shape stays a
   * gap (checked by receipt).
   */
  private put(n: bigint, hashes: readonly Hex[]): void {
    this.drop(n)
    if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER) || n <= this.newest - this.windowBlocks) return
    const place = Number(n % this.windowBlocks)
    if (this.placeBlock[place] !== NONE) this.dropPlace(place)
    if (hashes.length > this.freeCount) {
      // reported once per block (see placeOverflowReported)
      if (this.placeOverflowReported[place] !== Number(n)) {
        this.placeOverflowReported[place] = Number(n)
        this.onError(n, new RangeError(`block ${n} has ${hashes.length} transactions, more than the ${this.freeCount} free of the inclusion index's ${this.capacity} hashes`))
      }
      return
    }
    if (!hashes.every((h) => HASH.test(h))) return
    this.placeBlock[place] = Number(n)
    this.placeFirst[place] = -1
    this.blocksHeld++
    for (const hash of hashes) {
      this.parse(hash)
      const slot = this.free[--this.freeCount]
      this.keys.set(this.scratch, slot * KEY_BYTES)
      this.slotPlace[slot] = place
      this.slotNext[slot] = this.placeFirst[place]
      this.placeFirst[place] = slot
      const home = homeCell(this.keys, slot * KEY_BYTES, this.cellMask)
      this.homes[slot] = home
      let cell = home
      while (this.cells[cell] !== 0) cell = (cell + 1) & this.cellMask
      this.cells[cell] = slot + 1
    }
  }

  private drop(n: bigint): void {
    if (this.holds(n)) this.dropPlace(Number(n % this.windowBlocks))
  }

  /** Empties window place `place`: its block's slots leave the index and go back to the free stack. */
  private dropPlace(place: number): void {
    if (this.placeBlock[place] === NONE) return
    for (let slot = this.placeFirst[place]; slot >= 0; slot = this.slotNext[slot]) {
      let cell = this.homes[slot]
      while (this.cells[cell] !== slot + 1) cell = (cell + 1) & this.cellMask
      unlinkCell(this.cells, this.cellMask, this.homes, cell)
      this.free[this.freeCount++] = slot
    }
    this.placeBlock[place] = NONE
    this.placeFirst[place] = -1
    this.blocksHeld--
  }

  /** Puts `hash`'s bytes in `scratch`; false for a hash of another shape. */
  private parse(hash: string): boolean {
    if (!HASH.test(hash)) return false
    this.scratch.write(hash.slice(2), 0, KEY_BYTES, 'hex')
    return true
  }

  /** The index cell holding the slot whose hash is `scratch`, or -1. */
  private find(): number {
    let cell = homeCell(this.scratch, 0, this.cellMask)
    for (;;) {
      const entry = this.cells[cell]
      if (entry === 0) return -1
      if (this.sameKey(entry - 1)) return cell
      cell = (cell + 1) & this.cellMask
    }
  }

  private sameKey(slot: number): boolean {
    const base = slot * KEY_BYTES
    for (let i = 0; i < KEY_BYTES; i++) if (this.keys[base + i] !== this.scratch[i]) return false
    return true
  }
}
