/**
 * The submissions this dispatcher saw included in the last `windowBlocks` blocks (ids and blocks
 * only), which a reorg re-opens (see reorg.ts). A re-opened submission is read back from the store,
 * which holds its record and lifecycle anyway.
 *
 * Its memory is fixed when it is made, not when it fills. The window is the last to fill under
 * bench:soak (64 blocks of 12 s: 12.8 minutes), so a `Map` of its entries grew the main thread's
 * heap (and, through V8's old-space sizing, RSS ~1.5 times that) until minute 13, long after the
 * first minute after which RSS must be flat (issue 10). Here every entry lives in one of
 * `maxEntries` slots held in typed arrays allocated by the constructor: the id's kind as a byte,
 * its 32-byte hash as bytes, its block as a float64, links to the slots added before and after it
 * (a list in insertion order), a stack of the free slots, and a hash index over the slots (open
 * addressing, linear probing, at least twice as many cells as slots) so that add() finds an id
 * already held. ~70 bytes a slot at any fill (~0.7 MB at the default 10,000), against ~113 bytes an
 * entry in the `Map` at its fullest.
 *
 * It behaves as the `Map` in insertion order did: an id added again moves to the newest place,
 * takeAbove() hands entries back oldest added first, and an add beyond `maxEntries` forgets the
 * oldest added entry (the list's head: no scan, which matters at 100 requests/s, where the
 * window stays at its bound). An id of another shape
 * (its hash not 32 bytes of lower-case hex; the dispatcher makes none) is kept beside the slots in
 * a `Map` by slot, so it still obeys the same bound.
 */
import { KEY_BYTES, cellCountFor, homeCell, unlinkCell } from '../../primitives/linear-probing.ts'
import { positiveInt } from '../../primitives/numbers.ts'
import type { Hex } from '../../chain/types.ts'
import type { SubmissionId, SubmissionKind } from '../types.ts'

export interface RecentInclusionsOptions {
  /** blocks an inclusion is remembered for after its block: the deepest reorg that re-opens it */
  windowBlocks: number
  /** inclusions remembered at most (the oldest are forgotten first); its slots, allocated up front */
  maxEntries: number
}

/** Defaults: the fork source's reorg depth (FORK_SOURCE_DEFAULTS.maxReorgDepth), and a bound on memory. */
export const RECENT_INCLUSIONS_DEFAULTS = { windowBlocks: 64, maxEntries: 10_000 } as const

/** A submission this dispatcher saw included, and the block it was included in. */
export interface RecentInclusion {
  id: SubmissionId
  block: bigint
}

const KINDS: readonly SubmissionKind[] = ['private-tx', 'bundle', 'notify']
/** a slot's kind byte: its kind's index + 1 for a 32-byte hash, ODD for an id kept as text, EMPTY for none */
const CODE_OF = new Map<string, number>(KINDS.map((kind, i) => [kind, i + 1]))
const EMPTY = 0
const ODD = 255
const HASH = /^0x[0-9a-f]{64}$/
const HASH_BYTES = KEY_BYTES

export class RecentInclusions {
  private readonly windowBlocks: bigint
  private readonly capacity: number
  /** per slot: its kind byte (EMPTY: free) */
  private readonly codes: Uint8Array
  /** per slot: the id's 32 hash bytes */
  private readonly hashes: Uint8Array
  /** per slot: the block it was included in (block numbers stay far below 2^53) */
  private readonly blocks: Float64Array
  /** per slot: the slot added just before / after it (-1: none), the order takeAbove() and the bound follow */
  private readonly prev: Int32Array
  private readonly next: Int32Array
  /** the oldest and the newest slot held (-1: none) */
  private head = -1
  private tail = -1
  /** the free slots, a stack: free[0 .. freeCount) */
  private readonly free: Int32Array
  private freeCount: number
  /** per slot: the index cell it would sit in without collisions */
  private readonly homes: Uint32Array
  /** the hash index: cell -> slot + 1 (0: empty cell) */
  private readonly cells: Int32Array
  private readonly cellMask: number
  /** ids of another shape, by slot (normally empty) */
  private readonly oddIds = new Map<number, SubmissionId>()
  /** the id being added or looked up, parsed */
  private readonly scratch = Buffer.alloc(HASH_BYTES)

  constructor(options: RecentInclusionsOptions) {
    this.windowBlocks = BigInt(positiveInt('windowBlocks', options.windowBlocks, 'RecentInclusions'))
    this.capacity = positiveInt('maxEntries', options.maxEntries, 'RecentInclusions')
    this.codes = new Uint8Array(this.capacity)
    this.hashes = new Uint8Array(this.capacity * HASH_BYTES)
    this.blocks = new Float64Array(this.capacity)
    this.prev = new Int32Array(this.capacity)
    this.next = new Int32Array(this.capacity)
    // slot 0 on top: the slots are used in order while none has been freed
    this.free = Int32Array.from({ length: this.capacity }, (_, i) => this.capacity - 1 - i)
    this.freeCount = this.capacity
    this.homes = new Uint32Array(this.capacity)
    // at most half the cells in use: short probe sequences
    const cells = cellCountFor(this.capacity)
    this.cells = new Int32Array(cells)
    this.cellMask = cells - 1
  }

  add(id: SubmissionId, block: bigint): void {
    if (block > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`RecentInclusions keeps block numbers up to 2^53 - 1, got ${block}`)
    const code = this.parse(id)
    if (code === ODD) {
      for (const [slot, held] of this.oddIds) if (held === id) this.release(slot)
    } else {
      const cell = this.find(code)
      if (cell >= 0) this.release(this.cells[cell] - 1)
    }
    // past maxEntries: the oldest added goes
    if (this.freeCount === 0) this.release(this.head)
    const slot = this.free[--this.freeCount]
    this.codes[slot] = code
    this.blocks[slot] = Number(block)
    this.prev[slot] = this.tail
    this.next[slot] = -1
    if (this.tail >= 0) this.next[this.tail] = slot
    else this.head = slot
    this.tail = slot
    if (code === ODD) {
      this.oddIds.set(slot, id)
      return
    }
    this.hashes.set(this.scratch, slot * HASH_BYTES)
    const home = homeCell(this.scratch, 0, this.cellMask)
    this.homes[slot] = home
    let cell = home
    while (this.cells[cell] !== 0) cell = (cell + 1) & this.cellMask
    this.cells[cell] = slot + 1
  }

  /** Forgets the inclusions older than the window at `head`. */
  forgetBefore(head: bigint): void {
    const oldest = Number(head - this.windowBlocks)
    for (let slot = 0; slot < this.capacity; slot++) if (this.codes[slot] !== EMPTY && this.blocks[slot] < oldest) this.release(slot)
  }

  /** Removes and returns the inclusions in blocks above `floor` (a reorg replaced them), oldest added first. */
  takeAbove(floor: bigint): RecentInclusion[] {
    const above = Number(floor)
    const slots: number[] = []
    for (let slot = this.head; slot >= 0; slot = this.next[slot]) if (this.blocks[slot] > above) slots.push(slot)
    const taken = slots.map((slot) => ({ id: this.idAt(slot), block: BigInt(this.blocks[slot]) }))
    for (const slot of slots) this.release(slot)
    return taken
  }

  get size(): number {
    return this.capacity - this.freeCount
  }

  /** bytes of the typed arrays allocated by the constructor: what it holds from the start, whatever its fill */
  get bytesAllocated(): number {
    return [this.codes, this.hashes, this.blocks, this.prev, this.next, this.free, this.homes, this.cells].reduce((sum, a) => sum + a.byteLength, 0)
  }

  /** The id's kind byte, with its hash bytes in `scratch`; ODD for an id of another shape. */
  private parse(id: SubmissionId): number {
    const colon = id.indexOf(':')
    const code = CODE_OF.get(id.slice(0, colon))
    const hash = id.slice(colon + 1)
    if (code === undefined || !HASH.test(hash)) return ODD
    this.scratch.write(hash.slice(2), 0, HASH_BYTES, 'hex')
    return code
  }

  /** The index cell holding the slot whose kind is `code` and hash is `scratch`, or -1. */
  private find(code: number): number {
    let cell = homeCell(this.scratch, 0, this.cellMask)
    for (;;) {
      const entry = this.cells[cell]
      if (entry === 0) return -1
      const slot = entry - 1
      if (this.codes[slot] === code && this.sameHash(slot)) return cell
      cell = (cell + 1) & this.cellMask
    }
  }

  private sameHash(slot: number): boolean {
    const base = slot * HASH_BYTES
    for (let i = 0; i < HASH_BYTES; i++) if (this.hashes[base + i] !== this.scratch[i]) return false
    return true
  }

  private idAt(slot: number): SubmissionId {
    const code = this.codes[slot]
    if (code === ODD) return this.oddIds.get(slot) as SubmissionId
    const hash = Buffer.from(this.hashes.buffer, this.hashes.byteOffset + slot * HASH_BYTES, HASH_BYTES).toString('hex')
    return `${KINDS[code - 1]}:0x${hash}` as `${SubmissionKind}:${Hex}`
  }

  /** Empties `slot`, takes it out of the list and the index, and returns it to the free stack. */
  private release(slot: number): void {
    const code = this.codes[slot]
    if (code === EMPTY) return
    this.codes[slot] = EMPTY
    this.free[this.freeCount++] = slot
    const before = this.prev[slot]
    const after = this.next[slot]
    if (before >= 0) this.next[before] = after
    else this.head = after
    if (after >= 0) this.prev[after] = before
    else this.tail = before
    if (code === ODD) {
      this.oddIds.delete(slot)
      return
    }
    let cell = this.homes[slot]
    while (this.cells[cell] !== slot + 1) cell = (cell + 1) & this.cellMask
    unlinkCell(this.cells, this.cellMask, this.homes, cell)
  }
}
