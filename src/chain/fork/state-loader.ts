/**
 * Reads accounts, code and storage at a given block through the state cache, fetching misses from
 * the upstream client. Concurrent misses for the same key share one load; all loads started in the
 * same tick leave in one JSON-RPC batch (the client batches).
 *
 * An account is eth_getBalance + eth_getTransactionCount + eth_getCode at the block. eth_getCode is
 * skipped when the address is known to hold immutable contract code at an earlier or equal block:
 * since Cancun (EIP-6780) a deployed contract's code cannot change or vanish, except EIP-7702
 * delegations (code 0xef0100‖address), which are never treated as immutable. (On a pre-Cancun chain
 * a SELFDESTRUCT + CREATE2 "metamorphic" contract would be missed; no supported chain is pre-Cancun.)
 *
 * Whether an account has storage at all is eth_getProof's storageHash, fetched only for the target
 * of a contract creation (EIP-7610), once per account and block.
 */
import type { Address, Hex, PrefetchRequest } from '../types.ts'
import { decodeData, decodeQuantity, decodeStorageHash, decodeWord } from './rpc-decode.ts'
import { accountKey, codeHashHex, KECCAK256_NULL_HEX, storageKey, storagePresenceKey, type CachedAccount, type StateCache } from './state-cache.ts'
import type { UpstreamClient } from './upstream-client.ts'

export interface StateLoaderStats {
  /** reads (getAccount / getCode / getStorage) answered from the cache */
  cacheHits: number
  /** reads that needed the upstream (including those joining a load already in flight) */
  cacheMisses: number
  /** keys loaded by prefetch (not counted as hits or misses) */
  prefetched: number
}

const MAX_SLOT = (1n << 256n) - 1n
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

export function blockTag(block: bigint): Hex {
  return `0x${block.toString(16)}`
}

export function slotHex(slot: bigint): Hex {
  return `0x${slot.toString(16).padStart(64, '0')}`
}

/** Lowercases and validates an address; a bad address is a caller bug, not an upstream failure. */
export function normalizeAddress(address: string): Address {
  if (!ADDRESS.test(address)) throw new TypeError(`not a 20-byte hex address: ${address}`)
  return address.toLowerCase() as Address
}

export function checkSlot(slot: bigint): bigint {
  if (typeof slot !== 'bigint' || slot < 0n || slot > MAX_SLOT) throw new RangeError(`storage slot out of range: ${String(slot)}`)
  return slot
}

/** The root of an empty trie, keccak256(rlp('')): the storage root of an account without storage. */
const EMPTY_TRIE_ROOT_HEX: Hex = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
/** Some nodes answer a zero storageHash for an account that does not exist. */
const ZERO_HASH_HEX: Hex = `0x${'00'.repeat(32)}`

/** EIP-7702 delegation designator: 0xef0100 followed by a 20-byte address. It can change any block. */
function isDelegation(code: Uint8Array): boolean {
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00
}

export class StateLoader {
  private readonly inflight = new Map<string, Promise<unknown>>()
  /** bumped by `forgetInflight`: a load started before it does not write the cache */
  private epoch = 0
  private readonly counters: StateLoaderStats = { cacheHits: 0, cacheMisses: 0, prefetched: 0 }

  constructor(
    private readonly client: UpstreamClient,
    private readonly cache: StateCache,
  ) {}

  stats(): StateLoaderStats {
    return { ...this.counters }
  }

  async account(block: bigint, address: Address): Promise<CachedAccount> {
    const cached = this.cache.getAccount(accountKey(block, address))
    if (cached !== undefined) {
      this.counters.cacheHits++
      return cached
    }
    this.counters.cacheMisses++
    return this.loadAccount(block, address)
  }

  async code(block: bigint, address: Address): Promise<Uint8Array> {
    const cachedAccount = this.cache.getAccount(accountKey(block, address))
    const cachedCode = cachedAccount === undefined ? undefined : this.cache.getCode(cachedAccount.codeHash)
    if (cachedCode !== undefined) {
      this.counters.cacheHits++
      return cachedCode
    }
    this.counters.cacheMisses++
    const account = cachedAccount ?? (await this.loadAccount(block, address))
    return this.loadCode(block, address, account)
  }

  async storage(block: bigint, address: Address, slot: bigint): Promise<bigint> {
    const key = storageKey(block, address, slot)
    const cached = this.cache.getStorage(key)
    if (cached !== undefined) {
      this.counters.cacheHits++
      return cached
    }
    this.counters.cacheMisses++
    return this.loadStorage(block, address, slot, key)
  }

  /**
   * Whether the account has any storage at `block`: the storageHash of eth_getProof with no keys
   * (one call, whatever the size of the storage). Asked only for contract-creation targets.
   */
  async hasStorage(block: bigint, address: Address): Promise<boolean> {
    const key = storagePresenceKey(block, address)
    const cached = this.cache.getStoragePresence(key)
    if (cached !== undefined) {
      this.counters.cacheHits++
      return cached
    }
    this.counters.cacheMisses++
    const epoch = this.epoch
    return this.shared(key, async () => {
      const root = decodeStorageHash(await this.client.call('eth_getProof', [address, [], blockTag(block)]), 'eth_getProof')
      const present = root !== EMPTY_TRIE_ROOT_HEX && root !== ZERO_HASH_HEX
      if (this.current(epoch)) this.cache.setStoragePresence(key, present)
      return present
    })
  }

  /** The account as cached at `block`, without loading it (undefined when not cached). */
  cachedAccount(block: bigint, address: Address): CachedAccount | undefined {
    return this.cache.getAccount(accountKey(block, normalizeAddress(address)))
  }

  /** The storage word as cached at `block`, without loading it (undefined when not cached). */
  cachedStorage(block: bigint, address: Address, slot: bigint): bigint | undefined {
    return this.cache.getStorage(storageKey(block, normalizeAddress(address), slot))
  }

  /**
   * Starts every missing load in the same tick (so they share one batch) and waits for all of them.
   * Rejects with the first failure, after every load has settled.
   */
  async prefetch(block: bigint, reads: PrefetchRequest): Promise<void> {
    const loads: Promise<unknown>[] = []
    for (const raw of reads.accounts ?? []) {
      const address = normalizeAddress(raw)
      const account = this.cache.getAccount(accountKey(block, address))
      if (account === undefined) {
        this.counters.prefetched++
        loads.push(this.loadAccount(block, address))
      } else if (this.cache.getCode(account.codeHash) === undefined) {
        this.counters.prefetched++
        loads.push(this.loadCode(block, address, account))
      }
    }
    for (const read of reads.storage ?? []) {
      const address = normalizeAddress(read.address)
      const slot = checkSlot(read.slot)
      const key = storageKey(block, address, slot)
      if (this.cache.getStorage(key) === undefined) {
        this.counters.prefetched++
        loads.push(this.loadStorage(block, address, slot, key))
      }
    }
    const results = await Promise.allSettled(loads)
    for (const result of results) if (result.status === 'rejected') throw result.reason
  }

  /**
   * After a reorg: loads in flight may be answered by either chain, so they are no longer shared
   * with new reads, and what they bring back is handed to their callers but not cached.
   */
  forgetInflight(): void {
    this.epoch++
    this.inflight.clear()
  }

  /** Whether a load started at `epoch` may still write the cache. */
  private current(epoch: number): boolean {
    return epoch === this.epoch
  }

  private shared<T>(key: string, load: () => Promise<T>): Promise<T> {
    const existing = this.inflight.get(key)
    if (existing !== undefined) return existing as Promise<T>
    const promise = load()
    this.inflight.set(key, promise)
    const forget = () => {
      if (this.inflight.get(key) === promise) this.inflight.delete(key)
    }
    promise.then(forget, forget)
    return promise
  }

  private loadAccount(block: bigint, address: Address): Promise<CachedAccount> {
    const key = accountKey(block, address)
    const epoch = this.epoch
    return this.shared(key, async () => {
      const tag = blockTag(block)
      const known = this.cache.knownCode(address, block)
      // all calls are issued before the first await, so they join the same batch
      const balanceCall = this.client.call('eth_getBalance', [address, tag])
      const nonceCall = this.client.call('eth_getTransactionCount', [address, tag])
      const codeCall = known === undefined ? this.client.call('eth_getCode', [address, tag]) : undefined
      const [balanceRaw, nonceRaw, codeRaw] = await Promise.all([balanceCall, nonceCall, codeCall])
      const balance = decodeQuantity(balanceRaw, 'eth_getBalance')
      const nonce = decodeQuantity(nonceRaw, 'eth_getTransactionCount')
      let codeHash: Hex
      if (known !== undefined) {
        codeHash = known.codeHash
      } else {
        const code = decodeData(codeRaw, 'eth_getCode')
        codeHash = this.storeCode(block, address, code, epoch)
      }
      const account: CachedAccount = {
        exists: nonce !== 0n || balance !== 0n || codeHash !== KECCAK256_NULL_HEX,
        nonce,
        balance,
        codeHash,
      }
      if (this.current(epoch)) this.cache.setAccount(key, account)
      return account
    })
  }

  /** Code of an account already loaded at `block`: from the code cache, else eth_getCode (evicted code). */
  private loadCode(block: bigint, address: Address, account: CachedAccount): Promise<Uint8Array> {
    const cached = this.cache.getCode(account.codeHash)
    if (cached !== undefined) return Promise.resolve(cached)
    const epoch = this.epoch
    return this.shared(`c:${block}:${address}`, async () => {
      const code = decodeData(await this.client.call('eth_getCode', [address, blockTag(block)]), 'eth_getCode')
      this.storeCode(block, address, code, epoch)
      return code
    })
  }

  /** Code by hash is cached whatever the chain (it is content-addressed); where it lives only if no reorg intervened. */
  private storeCode(block: bigint, address: Address, code: Uint8Array, epoch: number): Hex {
    if (code.length === 0) return KECCAK256_NULL_HEX
    const codeHash = codeHashHex(code)
    this.cache.setCode(codeHash, code)
    if (!isDelegation(code) && this.current(epoch)) this.cache.rememberCode(address, codeHash, block)
    return codeHash
  }

  private loadStorage(block: bigint, address: Address, slot: bigint, key: string): Promise<bigint> {
    const epoch = this.epoch
    return this.shared(key, async () => {
      const raw = await this.client.call('eth_getStorageAt', [address, slotHex(slot), blockTag(block)])
      const value = decodeWord(raw, 'eth_getStorageAt')
      if (this.current(epoch)) this.cache.setStorage(key, value)
      return value
    })
  }
}
