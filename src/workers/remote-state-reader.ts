/**
 * A worker's StateReader: pinned to one block like every reader, answered by the main thread's
 * state source (the one cache, so two workers never fetch the same state twice from upstream),
 * with a bounded per-block L1 in front so each key crosses the thread boundary once per block and
 * worker. The L1 holds promises, so concurrent reads of one key share one request; a failed read is
 * not kept.
 */
import { LRUCache } from 'lru-cache'
import type { AccountInfo, Address, BlockInfo, BlockStateDiff, Hex, PrefetchRequest, StateReader } from '../chain/types.ts'
import type { CodeAnswer, PrefetchAnswer, StateRead } from './protocol.ts'
import type { StateRequester } from './state-requester.ts'

/** Keys one block's L1 holds at most (an entry: key string, promise, value; ~300 bytes). */
export const L1_MAX_ENTRIES_PER_BLOCK = 50_000

const EMPTY_CODE = new Uint8Array(0)

/**
 * One object per code across blocks: the EVM memoises its jump-destination analysis per code
 * object, so the same code read at the next block must be the same Uint8Array.
 */
export type CodeInterner = LRUCache<Hex, Uint8Array>

export function createCodeInterner(maxBytes: number): CodeInterner {
  return new LRUCache<Hex, Uint8Array>({ maxSize: maxBytes, sizeCalculation: (code) => Math.max(1, code.byteLength) })
}

export class RemoteStateReader implements StateReader {
  // bounded by maxSize (1 a key), not by `max`: lru-cache preallocates its arrays for `max` entries
  // (~1.4 MB at 50,000), for every block's reader, though a block reads a few thousand keys
  private readonly l1 = new LRUCache<string, Promise<unknown>>({ maxSize: L1_MAX_ENTRIES_PER_BLOCK, sizeCalculation: () => 1 })
  /** reads answered by the L1 (for the pool's statistics) */
  l1Hits = 0
  /** what this block changed, as the main thread announced it with the head */
  private diff: BlockStateDiff | undefined

  constructor(
    readonly block: BlockInfo,
    private readonly requester: StateRequester,
    private readonly codes: CodeInterner,
  ) {}

  async getAccount(address: Address): Promise<AccountInfo | undefined> {
    const addr = address.toLowerCase() as Address
    const account = (await this.cached(`a:${addr}`, { op: 'account', address: addr })) as AccountInfo | undefined
    // fresh objects, as the other readers give: callers (state managers) may keep or change them
    return account === undefined ? undefined : { nonce: account.nonce, balance: account.balance, codeHash: account.codeHash.slice() }
  }

  getCode(address: Address): Promise<Uint8Array> {
    const addr = address.toLowerCase() as Address
    const key = `c:${addr}`
    const hit = this.l1.get(key)
    if (hit !== undefined) {
      this.l1Hits++
      return hit as Promise<Uint8Array>
    }
    const code = this.requester.read(this.block.hash, { op: 'code', address: addr }).then((answer) => this.intern(answer as CodeAnswer))
    this.keep(key, code)
    return code
  }

  async getStorage(address: Address, slot: bigint): Promise<bigint> {
    const addr = address.toLowerCase() as Address
    return (await this.cached(`s:${addr}:${slot.toString(16)}`, { op: 'storage', address: addr, slot })) as bigint
  }

  async hasStorage(address: Address): Promise<boolean> {
    const addr = address.toLowerCase() as Address
    return (await this.cached(`h:${addr}`, { op: 'hasStorage', address: addr })) as boolean
  }

  async getBlockHash(number: bigint): Promise<Hex | undefined> {
    return (await this.cached(`b:${number}`, { op: 'blockHash', number })) as Hex | undefined
  }

  /**
   * What the L1 lacks, in one message: the main thread's reader prefetches it (one upstream batch in
   * fork mode) and answers every value, which fills the L1. Reads of those keys meanwhile wait for
   * that answer instead of asking on their own.
   */
  async prefetch(reads: PrefetchRequest): Promise<void> {
    const accounts = [...new Set((reads.accounts ?? []).map((a) => a.toLowerCase() as Address))].filter((a) => !this.l1.has(`a:${a}`))
    const seen = new Set<string>()
    const storage = (reads.storage ?? [])
      .map(({ address, slot }) => ({ address: address.toLowerCase() as Address, slot }))
      .filter(({ address, slot }) => {
        const key = `s:${address}:${slot.toString(16)}`
        if (seen.has(key) || this.l1.has(key)) return false
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
   * Takes the entries of `parent`'s L1 (the reader of this block's parent) that `diff` vouches for
   * (a changed diff: every key it does not name; an unchanged one: the accounts, code and slots it
   * names), except keys this L1 already holds; block hashes are never carried (cheap, and
   * number-dependent). In the parent's recency order, within this L1's bound.
   * @returns the entries carried
   */
  carryFrom(parent: RemoteStateReader, diff: BlockStateDiff): number {
    const accounts = new Set<string>(diff.accounts)
    const slots = new Set<string>()
    for (const [address, listed] of diff.storage) for (const slot of listed) slots.add(`s:${address}:${slot.toString(16)}`)
    const cleared = new Set<string>(diff.kind === 'changed' ? diff.clearedStorage : [])
    // a changed diff names what to forget; an unchanged one what to keep (storage presence never: it was not re-read)
    const unchanged =
      diff.kind === 'changed'
        ? (key: string): boolean => {
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
        : (key: string): boolean => {
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
    let carried = 0
    // oldest first, so the most recently used end up most recent here too
    for (const entry of parent.l1.rentries()) {
      const [key, value] = entry as [string, Promise<unknown>]
      if (this.l1.has(key) || !unchanged(key)) continue
      this.keep(key, value)
      carried++
    }
    return carried
  }

  private cached(key: string, read: StateRead): Promise<unknown> {
    const hit = this.l1.get(key)
    if (hit !== undefined) {
      this.l1Hits++
      return hit
    }
    const value = this.requester.read(this.block.hash, read)
    this.keep(key, value)
    return value
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
