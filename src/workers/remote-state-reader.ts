/**
 * A worker's StateReader: pinned to one block like every reader, answered by the main thread's
 * state source (the one cache, so two workers never fetch the same state twice from upstream),
 * with a bounded per-block L1 in front so each key crosses the thread boundary once per block and
 * worker. The L1 holds promises, so concurrent reads of one key share one request; a failed read is
 * not kept.
 */
import { LRUCache } from 'lru-cache'
import type { AccountInfo, Address, BlockInfo, BlockStateDiff, Hex, PrefetchRequest, StateReader } from '../chain/types.ts'
import { InsertionBoundedMap } from './insertion-bounded-map.ts'
import type { CodeAnswer, PrefetchAnswer, StateRead } from './protocol.ts'
import type { StateRequester } from './state-requester.ts'

/** Keys one block's L1 holds at most (an entry: key string, promise, value; ~300 bytes). */
export const L1_MAX_ENTRIES_PER_BLOCK = 50_000

/**
 * Ancestors an L1 miss is looked up in at most (the worker keeps fewer readers than this: the
 * bound is a guard, the readers kept are the real one).
 */
export const MAX_INHERITED_BLOCKS = 8

const EMPTY_CODE = new Uint8Array(0)

/** A reader's link to its parent's L1 (inheritFrom). */
interface Inheritance {
  parentHash: Hex
  vouches: (key: string) => boolean
  parents: (hash: Hex) => RemoteStateReader | undefined
}

/**
 * Whether `diff` vouches for an L1 key of the parent (the key is as true at the child): a changed
 * diff names what to forget, an unchanged one what to keep (storage presence never: it was not
 * re-read); block hashes are never carried (cheap, and number-dependent).
 */
function vouchedBy(diff: BlockStateDiff): (key: string) => boolean {
  const accounts = new Set<string>(diff.accounts)
  const slots = new Set<string>()
  for (const [address, listed] of diff.storage) for (const slot of listed) slots.add(`s:${address}:${slot.toString(16)}`)
  if (diff.kind === 'changed') {
    const cleared = new Set<string>(diff.clearedStorage)
    return (key) => {
      switch (key[0]) {
        case 'a':
        case 'c':
        case 'h':
          return !accounts.has(key.slice(2))
        case 's':
          // s:<0x + 40 hex>:<slot>
          return !slots.has(key) && !cleared.has(key.slice(2, 44))
        default:
          return false
      }
    }
  }
  return (key) => {
    switch (key[0]) {
      case 'a':
      case 'c':
        return accounts.has(key.slice(2))
      case 's':
        return slots.has(key)
      default:
        return false
    }
  }
}

/**
 * One object per code across blocks: the EVM memoises its jump-destination analysis per code
 * object, so the same code read at the next block must be the same Uint8Array.
 */
export type CodeInterner = LRUCache<Hex, Uint8Array>

export function createCodeInterner(maxBytes: number): CodeInterner {
  return new LRUCache<Hex, Uint8Array>({ maxSize: maxBytes, sizeCalculation: (code) => Math.max(1, code.byteLength) })
}

export class RemoteStateReader implements StateReader {
  // a Map with a bound, not lru-cache: read ~150 times a quote, almost always a hit (see
  // insertion-bounded-map.ts); nothing is allocated up front, though a block reads a few thousand keys
  private readonly l1 = new InsertionBoundedMap<string, Promise<unknown>>(L1_MAX_ENTRIES_PER_BLOCK)
  /**
   * The storage entries of the L1 by address (as the caller spelled it) and slot: the L1's own
   * promises, found without building the L1's key (`s:<address>:<slot in hex>`: a 256-bit slot's
   * toString(16) and a ~110-character string hashed per read, ~0.5 us, against ~0.06 us for two
   * Map lookups; most of a quote's ~150 reads are storage hits). Bounded like the L1: emptied whole
   * when it has indexed slotIndexMax entries (L1_MAX_ENTRIES_PER_BLOCK; the L1 still answers
   * them); a failed read is dropped from it as from the L1.
   */
  private readonly slots = new Map<string, Map<bigint, Promise<bigint>>>()
  private slotsIndexed = 0
  /** reads answered by the L1 (for the pool's statistics) */
  l1Hits = 0
  /** what this block changed, as the main thread announced it with the head */
  private diff: BlockStateDiff | undefined
  /** where keys this L1 lacks may be found without asking (inheritFrom) */
  private inheritance: Inheritance | undefined

  constructor(
    readonly block: BlockInfo,
    private readonly requester: StateRequester,
    private readonly codes: CodeInterner,
    /** storage entries the slot index takes before it is emptied (a test's smaller bound) */
    private readonly slotIndexMax = L1_MAX_ENTRIES_PER_BLOCK,
  ) {}

  /** storage entries the slot index holds (tests: its bound) */
  get indexedSlots(): number {
    return this.slotsIndexed
  }

  async getAccount(address: Address): Promise<AccountInfo | undefined> {
    const addr = address.toLowerCase() as Address
    const account = (await this.cached(`a:${addr}`, { op: 'account', address: addr })) as AccountInfo | undefined
    // fresh objects, as the other readers give: callers (state managers) may keep or change them
    return account === undefined ? undefined : { nonce: account.nonce, balance: account.balance, codeHash: account.codeHash.slice() }
  }

  getCode(address: Address): Promise<Uint8Array> {
    const addr = address.toLowerCase() as Address
    const key = `c:${addr}`
    const hit = this.hit(key)
    if (hit !== undefined) return hit as Promise<Uint8Array>
    const code = this.requester.read(this.block.hash, { op: 'code', address: addr }).then((answer) => this.intern(answer as CodeAnswer))
    this.keep(key, code)
    return code
  }

  // The L1's own promise, not an async function's around it: a hit costs no promise and no
  // microtask more (most of a quote's ~150 reads are storage hits). cached() never throws.
  getStorage(address: Address, slot: bigint): Promise<bigint> {
    let bySlot = this.slots.get(address)
    const known = bySlot?.get(slot)
    if (known !== undefined) {
      this.l1Hits++
      return known
    }
    const addr = address.toLowerCase() as Address
    const value = this.cached(`s:${addr}:${slot.toString(16)}`, { op: 'storage', address: addr, slot }) as Promise<bigint>
    if (this.slotsIndexed >= this.slotIndexMax) {
      this.slots.clear()
      this.slotsIndexed = 0
      bySlot = undefined
    }
    if (bySlot === undefined) this.slots.set(address, (bySlot = new Map()))
    const indexed = bySlot
    indexed.set(slot, value)
    this.slotsIndexed++
    value.catch(() => {
      if (indexed.get(slot) === value) indexed.delete(slot)
    })
    return value
  }

  hasStorage(address: Address): Promise<boolean> {
    const addr = address.toLowerCase() as Address
    return this.cached(`h:${addr}`, { op: 'hasStorage', address: addr }) as Promise<boolean>
  }

  getBlockHash(number: bigint): Promise<Hex | undefined> {
    return this.cached(`b:${number}`, { op: 'blockHash', number }) as Promise<Hex | undefined>
  }

  /**
   * What the L1 lacks, in one message: the main thread's reader prefetches it (one upstream batch in
   * fork mode) and answers every value, which fills the L1. Reads of those keys meanwhile wait for
   * that answer instead of asking on their own.
   */
  async prefetch(reads: PrefetchRequest): Promise<void> {
    const accounts = [...new Set((reads.accounts ?? []).map((a) => a.toLowerCase() as Address))].filter((a) => !this.holds(`a:${a}`))
    const seen = new Set<string>()
    const storage = (reads.storage ?? [])
      .map(({ address, slot }) => ({ address: address.toLowerCase() as Address, slot }))
      .filter(({ address, slot }) => {
        const key = `s:${address}:${slot.toString(16)}`
        if (seen.has(key) || this.holds(key)) return false
        seen.add(key)
        return true
      })
    if (accounts.length === 0 && storage.length === 0) return
    const answer = this.requester.read(this.block.hash, { op: 'prefetch', accounts, storage }) as Promise<PrefetchAnswer>
    accounts.forEach((address, i) => this.keep(`a:${address}`, answer.then((a) => a.accounts[i])))
    storage.forEach(({ address, slot }, i) => this.keep(`s:${address}:${slot.toString(16)}`, answer.then((a) => a.storage[i])))
    await answer
  }

  /**
   * What this block changed relative to its parent, once the main thread announced the block with
   * it (as the main thread's reader answers stateDiff), undefined before: per-block caches above
   * the reader can use it on both sides of the thread boundary.
   */
  stateDiff(): BlockStateDiff | undefined {
    return this.diff
  }

  /** The announced diff of this block (RemoteChainSource.adoptHead). */
  knowDiff(diff: BlockStateDiff): void {
    this.diff = diff
  }

  /**
   * This block's L1 takes over its parent's entries that `diff` vouches for (a changed diff: every
   * key it does not name; an unchanged one: the accounts, code and slots it names; storage presence
   * of an unchanged diff and block hashes never), lazily: a key this L1 lacks is looked up in the
   * parent's L1 (and through the parent's own inheritance, up the blocks `parents` still holds) and
   * copied here on its first read. A head costs O(diff) instead of a copy of the parent's whole L1,
   * run synchronously before the worker's next task: ~1,000 entries a head on bench:quote's mix,
   * each a new promise, handler and LRU node (~0.3 ms, whose allocation set off a 20-50 ms
   * scavenge in about a third of the heads in isolation), 40-390 ms at 20,000 entries
   * (BENCHMARKS.md, Quote, ninth session).
   * `parents` finds a block's reader by hash among those the worker keeps (no reference is held
   * from child to parent, so the readers a worker drops are freed as before).
   * @returns the parent's entries this block may now take without asking (the pool's `l1Carried`)
   */
  inheritFrom(parent: RemoteStateReader, diff: BlockStateDiff, parents: (hash: Hex) => RemoteStateReader | undefined): number {
    this.inheritance = { parentHash: diff.parentHash, vouches: vouchedBy(diff), parents }
    return parent.vouchedEntries(diff, this.inheritance.vouches)
  }

  /**
   * How many of this L1's entries `diff` vouches for, in O(diff) unless it cleared storage (a
   * changed diff's count includes the few block hashes this L1 may hold, which are not carried).
   */
  private vouchedEntries(diff: BlockStateDiff, vouches: (key: string) => boolean): number {
    if (diff.kind === 'changed' && diff.clearedStorage.length > 0) {
      // rare (a contract created or destroyed): count by walking this L1
      let n = 0
      for (const key of this.l1.keys()) if (vouches(key)) n++
      return n
    }
    let named = 0
    for (const address of diff.accounts) {
      if (this.l1.has(`a:${address}`)) named++
      if (this.l1.has(`c:${address}`)) named++
      if (diff.kind === 'changed' && this.l1.has(`h:${address}`)) named++
    }
    for (const [address, slots] of diff.storage) for (const slot of slots) if (this.l1.has(`s:${address}:${slot.toString(16)}`)) named++
    return diff.kind === 'changed' ? this.l1.size - named : named
  }

  /**
   * The entry of `key` an ancestor's L1 holds and every block since vouches for (inheritFrom),
   * copied into this L1; undefined when there is none.
   */
  private inherited(key: string): Promise<unknown> | undefined {
    let reader: RemoteStateReader = this
    for (let depth = 0; depth < MAX_INHERITED_BLOCKS; depth++) {
      const inheritance = reader.inheritance
      if (inheritance === undefined || !inheritance.vouches(key)) return undefined
      const parent = inheritance.parents(inheritance.parentHash)
      if (parent === undefined) return undefined
      const entry = parent.l1.get(key)
      if (entry !== undefined) {
        this.keep(key, entry)
        return entry
      }
      reader = parent
    }
    return undefined
  }

  /** The L1's entry of `key`, its own or inherited (counted as a hit either way). */
  private hit(key: string): Promise<unknown> | undefined {
    const entry = this.l1.get(key) ?? this.inherited(key)
    if (entry !== undefined) this.l1Hits++
    return entry
  }

  private cached(key: string, read: StateRead): Promise<unknown> {
    const hit = this.hit(key)
    if (hit !== undefined) return hit
    const value = this.requester.read(this.block.hash, read)
    this.keep(key, value)
    return value
  }

  /** Whether the L1 answers `key` without asking (its own entry or an inherited one, now copied). */
  private holds(key: string): boolean {
    return this.l1.has(key) || this.inherited(key) !== undefined
  }

  /** Keeps an answer; a failure is forgotten (the next read asks again) and handled by its caller. */
  private keep(key: string, value: Promise<unknown>): void {
    this.l1.set(key, value)
    value.catch(() => {
      if (this.l1.get(key) === value) this.l1.delete(key)
    })
  }

  private intern(answer: CodeAnswer): Uint8Array {
    if (answer.code.byteLength === 0) return EMPTY_CODE
    if (answer.codeHash === undefined) return answer.code
    const known = this.codes.get(answer.codeHash)
    if (known !== undefined) return known
    this.codes.set(answer.codeHash, answer.code)
    return answer.code
  }
}
