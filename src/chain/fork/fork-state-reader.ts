/**
 * A `StateReader` pinned to one block of the fork: every read names that block number, never
 * 'latest', so one simulation never mixes two blocks, even after the source has moved on.
 */
import { BLOCK_HASH_WINDOW, type AccountInfo, type Address, type BlockInfo, type BlockUnchangedKeys, type Hex, type PrefetchRequest, type StateReader } from '../types.ts'
import { hexToBytes } from 'viem'
import type { BlockHashRecord } from './block-hashes.ts'
import { checkSlot, normalizeAddress, type StateLoader } from './state-loader.ts'
import type { RecentReads } from './recent-reads.ts'

export class ForkStateReader implements StateReader {
  constructor(
    readonly block: BlockInfo,
    private readonly loader: StateLoader,
    private readonly recent: RecentReads,
    private readonly hashes: BlockHashRecord,
    /** the keys re-read at this head that hold the parent's values (unchanged-keys.ts), when it is the parent's child */
    private readonly diff?: BlockUnchangedKeys,
  ) {}

  /** The recently read keys this block left unchanged (see unchanged-keys.ts); undefined after a reorg or a gap. */
  stateDiff(): BlockUnchangedKeys | undefined {
    return this.diff
  }

  async getAccount(address: Address): Promise<AccountInfo | undefined> {
    const addr = normalizeAddress(address)
    this.recent.account(addr, this.block.number)
    const account = await this.loader.account(this.block.number, addr)
    if (!account.exists) return undefined
    // fresh objects: callers (state managers) may keep or mutate what they get
    return { nonce: account.nonce, balance: account.balance, codeHash: hexToBytes(account.codeHash) }
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const addr = normalizeAddress(address)
    this.recent.account(addr, this.block.number)
    // shared, never mutated (StateReader contract): the EVM memoises analysis per code object
    return this.loader.code(this.block.number, addr)
  }

  async getStorage(address: Address, slot: bigint): Promise<bigint> {
    const addr = normalizeAddress(address)
    checkSlot(slot)
    this.recent.storage(addr, slot, this.block.number)
    return this.loader.storage(this.block.number, addr, slot)
  }

  /** One eth_getProof per account and block (cached); not a recent read: it is never warmed. */
  async hasStorage(address: Address): Promise<boolean> {
    return this.loader.hasStorage(this.block.number, normalizeAddress(address))
  }

  /**
   * Its own hash and its parent's from its header; older ones from the source's record, read
   * upstream on a miss (so on the chain the source follows now: after a reorg deeper than this
   * reader's block, the new chain's).
   */
  async getBlockHash(number: bigint): Promise<Hex | undefined> {
    const head = this.block.number
    if (number > head || number < 0n || head - number > BLOCK_HASH_WINDOW) return undefined
    if (number === head) return this.block.hash
    if (number === head - 1n && this.block.parentHash !== undefined) return this.block.parentHash
    return this.hashes.hashOf(number)
  }

  async prefetch(reads: PrefetchRequest): Promise<void> {
    for (const address of reads.accounts ?? []) this.recent.account(normalizeAddress(address), this.block.number)
    for (const { address, slot } of reads.storage ?? []) this.recent.storage(normalizeAddress(address), checkSlot(slot), this.block.number)
    await this.loader.prefetch(this.block.number, reads)
  }
}
