/**
 * The fork's memory: one LRU for per-block state (accounts and storage words, keyed by block
 * number), one LRU for code (keyed by code hash, shared by all blocks), and a small index of which
 * address holds which immutable contract code since which block (so a new block does not re-fetch
 * eth_getCode for a contract it already knows).
 *
 * Memory budget (the whole service must stay under 512 MB with the cache full). Measured on Node
 * 20.20 with random addresses, 32-byte slots and values: a storage entry costs ~375 bytes of heap
 * (key string, BigInt, lru-cache bookkeeping), an account entry ~365, a code-index entry ~315.
 * Defaults:
 *   state: 250,000 entries and ~96 MiB by `approxStateEntryBytes`, whichever binds first
 *   code:  64 MiB of bytecode (held off the JS heap, in ArrayBuffers)
 *   code index: 20,000 addresses
 * Filled to these bounds (250k state entries, 20% accounts; 3,334 contracts of 20 KB; 20k index
 * entries) the cache measured +97 MiB heap and +64 MiB ArrayBuffers: ~160 MiB in all, leaving room
 * for Node itself (~50 MB), the EVM, fastify and in-flight simulations under 512 MB.
 * A V2 swap needs ~21 reads, so 250k entries hold thousands of pools at a few blocks each.
 */
import { LRUCache } from 'lru-cache'
import { keccak256 } from 'viem'
import type { Address, Hex } from '../types.ts'

export interface StateCacheOptions {
  /** Most account + storage entries, all blocks together. Default 250,000. */
  maxEntries?: number
  /** Approximate heap bytes of account + storage entries. Default 96 MiB. */
  maxBytes?: number
  /** Bytes of contract code kept (code is immutable and kept across blocks). Default 64 MiB. */
  maxCodeBytes?: number
  /** Addresses remembered as holding immutable code. Default 20,000. */
  maxCodeIndexEntries?: number
  /**
   * Blocks whose accounts and storage stay cached (dropBlocksBelow, at each new head): the newest
   * this many. Default 64. 0: no bound in blocks (only maxEntries / maxBytes).
   */
  maxBlocks?: number
}

export const STATE_CACHE_DEFAULTS = {
  maxEntries: 250_000,
  maxBytes: 96 * 1024 * 1024,
  maxCodeBytes: 64 * 1024 * 1024,
  maxCodeIndexEntries: 20_000,
  maxBlocks: 64,
} as const

/**
 * keccak256 as 0x-hex built from one Buffer hex string. viem's hex is built by concatenation, which
 * V8 keeps as a tree of ~33 cons-string nodes (~1 KB) until something flattens it; cached hashes live
 * long (measured: an account entry costs ~1,170 bytes of heap with viem's string, ~365 with this).
 */
export function codeHashHex(code: Uint8Array): Hex {
  return `0x${Buffer.from(keccak256(code, 'bytes')).toString('hex')}` as Hex
}

export const KECCAK256_NULL_HEX: Hex = codeHashHex(new Uint8Array(0))

/** An account as cached at one block. `exists: false` caches "no such account". */
export interface CachedAccount {
  readonly exists: boolean
  readonly nonce: bigint
  readonly balance: bigint
  readonly codeHash: Hex
}

/** A contract whose code is known, and the earliest block at which it was seen. */
export interface KnownCode {
  readonly codeHash: Hex
  readonly sinceBlock: bigint
}

/** an account, a storage word, or whether an account has storage (see `storagePresenceKey`) */
type StateValue = CachedAccount | bigint | boolean

/** Measured heap cost (see the header comment): key characters plus a fixed overhead. */
export function approxStateEntryBytes(key: string, value: StateValue): number {
  return key.length + (typeof value === 'object' ? 320 : 256)
}

export function accountKey(block: bigint, address: Address): string {
  return `a:${block}:${address}`
}

export function storageKey(block: bigint, address: Address, slot: bigint): string {
  return `s:${block}:${address}:${slot.toString(16)}`
}

/** Whether the account has any storage at `block` (asked only for contract-creation targets). */
export function storagePresenceKey(block: bigint, address: Address): string {
  return `r:${block}:${address}`
}

export interface StateCacheStats {
  /** account + storage entries currently held */
  stateEntries: number
  /** approximate bytes of account + storage entries */
  stateBytes: number
  codeEntries: number
  codeBytes: number
  codeIndexEntries: number
}

export class StateCache {
  readonly maxEntries: number
  private readonly state: LRUCache<string, StateValue>
  private readonly code: LRUCache<Hex, Uint8Array>
  private readonly codeIndex: LRUCache<Address, KnownCode>
  readonly maxBlocks: number
  /**
   * The state keys set per block number (its decimal text, as in the key), for dropBlocksBelow:
   * a block's entries are found without walking the cache. Keys the LRU evicted stay listed until
   * their block is dropped (deleting them then is a no-op); only kept with maxBlocks > 0, where
   * dropping bounds the lists too.
   */
  private readonly keysByBlock = new Map<string, string[]>()

  constructor(options: StateCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? STATE_CACHE_DEFAULTS.maxEntries
    this.maxBlocks = options.maxBlocks ?? STATE_CACHE_DEFAULTS.maxBlocks
    if (!Number.isSafeInteger(this.maxBlocks) || this.maxBlocks < 0) throw new RangeError(`maxBlocks must be a non-negative integer, got ${options.maxBlocks}`)
    this.state = new LRUCache<string, StateValue>({
      max: this.maxEntries,
      maxSize: options.maxBytes ?? STATE_CACHE_DEFAULTS.maxBytes,
      sizeCalculation: (value, key) => approxStateEntryBytes(key, value),
    })
    this.code = new LRUCache<Hex, Uint8Array>({
      maxSize: options.maxCodeBytes ?? STATE_CACHE_DEFAULTS.maxCodeBytes,
      // code larger than the whole bound is simply not cached (lru-cache refuses it)
      sizeCalculation: (value) => value.length + 128,
    })
    this.codeIndex = new LRUCache<Address, KnownCode>({
      max: options.maxCodeIndexEntries ?? STATE_CACHE_DEFAULTS.maxCodeIndexEntries,
    })
  }

  getAccount(key: string): CachedAccount | undefined {
    const value = this.state.get(key)
    return typeof value === 'object' ? value : undefined
  }

  setAccount(key: string, account: CachedAccount): void {
    this.setState(key, account)
  }

  getStorage(key: string): bigint | undefined {
    const value = this.state.get(key)
    return typeof value === 'bigint' ? value : undefined
  }

  setStorage(key: string, value: bigint): void {
    this.setState(key, value)
  }

  getStoragePresence(key: string): boolean | undefined {
    const value = this.state.get(key)
    return typeof value === 'boolean' ? value : undefined
  }

  setStoragePresence(key: string, present: boolean): void {
    this.setState(key, present)
  }

  private setState(key: string, value: StateValue): void {
    if (this.maxBlocks > 0 && !this.state.has(key)) {
      // every state key is `<kind>:<block>:...`
      const block = key.slice(2, key.indexOf(':', 2))
      const keys = this.keysByBlock.get(block)
      if (keys === undefined) this.keysByBlock.set(block, [key])
      else keys.push(key)
    }
    this.state.set(key, value)
  }

  /**
   * Forgets the accounts, storage words and storage presence cached for blocks more than maxBlocks
   * behind `head` (nothing with maxBlocks 0). Why: each block's reads are entries of their own,
   * and a followed chain's old blocks are not read again once no task runs on them; bounded by
   * entries alone, the cache kept filling for about an hour of blocks under bench:soak's load
   * (BENCHMARKS.md, h20-heap), and so did the service's memory. Returns how many were dropped.
   */
  dropBlocksBelow(head: bigint): number {
    if (this.maxBlocks === 0) return 0
    const oldestKept = head - BigInt(this.maxBlocks) + 1n
    let dropped = 0
    for (const [block, keys] of this.keysByBlock) {
      if (BigInt(block) >= oldestKept) continue
      for (const key of keys) if (this.state.delete(key)) dropped++
      this.keysByBlock.delete(block)
    }
    return dropped
  }

  getCode(codeHash: Hex): Uint8Array | undefined {
    if (codeHash === KECCAK256_NULL_HEX) return new Uint8Array(0)
    return this.code.get(codeHash)
  }

  setCode(codeHash: Hex, code: Uint8Array): void {
    if (code.length > 0) this.code.set(codeHash, code)
  }

  /** Immutable code known at `address` for reads at `block`, if any. */
  knownCode(address: Address, block: bigint): KnownCode | undefined {
    const known = this.codeIndex.get(address)
    return known !== undefined && known.sinceBlock <= block ? known : undefined
  }

  /** Remembers that `address` held `codeHash` at `block` (keeps the earliest block seen). */
  rememberCode(address: Address, codeHash: Hex, block: bigint): void {
    const known = this.codeIndex.peek(address)
    if (known !== undefined && known.codeHash === codeHash && known.sinceBlock <= block) return
    this.codeIndex.set(address, { codeHash, sinceBlock: block })
  }

  /**
   * Forgets what was read at blocks above `block` (a reorg replaced them): accounts, storage words
   * and storage presence cached for those numbers, and contracts first seen there. Walks every
   * entry (up to maxEntries): reorgs are rare, reads are not, so keys stay as cheap as they are.
   * Returns how many entries were dropped.
   */
  dropBlocksAbove(block: bigint): number {
    let dropped = 0
    for (const key of [...this.state.keys()]) {
      // every state key is `<kind>:<block>:...`
      const end = key.indexOf(':', 2)
      if (BigInt(key.slice(2, end)) > block) {
        this.state.delete(key)
        dropped++
      }
    }
    for (const [address, known] of [...this.codeIndex.entries()]) {
      if (known.sinceBlock > block) {
        this.codeIndex.delete(address)
        dropped++
      }
    }
    return dropped
  }

  stats(): StateCacheStats {
    return {
      stateEntries: this.state.size,
      stateBytes: this.state.calculatedSize,
      codeEntries: this.code.size,
      codeBytes: this.code.calculatedSize,
      codeIndexEntries: this.codeIndex.size,
    }
  }

  clear(): void {
    this.keysByBlock.clear()
    this.state.clear()
    this.code.clear()
    this.codeIndex.clear()
  }
}
