/**
 * A StateReader for a block built on the embedded devnet: the parent block's state plus what the
 * block changed, kept as a diff over the parent instead of a copy, so committing a block costs
 * what it changed, never the size of the state.
 *
 * Readers stack: block N+1's reader holds N+1's diff above block N's reader. Every layer is
 * immutable once built, so a reader handed out for block N keeps answering for block N after
 * N+1, N+2, ... are committed (a simulation never mixes two blocks).
 *
 * Depth bound: a read that misses looks through every layer down to the genesis reader. So that
 * this stays cheap, a stack deeper than `maxDepth` is flattened: the new block's reader gets one
 * layer holding every change since the root (the genesis), merged. Flattening costs the number of
 * entries changed since the genesis (not the state size) and happens once every `maxDepth`
 * blocks; older readers keep their own layers and are unaffected. Memory held by the newest
 * reader is the root plus every account, code and slot changed since it.
 *
 * BLOCKHASH: each reader holds the hashes of its block and the 256 before it (RecentBlockHashes),
 * its parent's record extended by its own block.
 */
import { storageInLayers } from '../storage-presence.ts'
import type { AccountInfo, Address, BlockChangedKeys, BlockInfo, Hex, PrefetchRequest, StateReader } from '../types.ts'
import { RecentBlockHashes } from './recent-block-hashes.ts'

/** What one block (or a merged run of blocks) changed, relative to the state below it. */
export interface StateChanges {
  /** newest account fields; null: the account was deleted (selfdestruct, EIP-161 cleanup) */
  readonly accounts: ReadonlyMap<Address, AccountInfo | null>
  readonly code: ReadonlyMap<Address, Uint8Array>
  /** slots written (0 included: a write of zero hides the value below) */
  readonly storage: ReadonlyMap<Address, ReadonlyMap<bigint, bigint>>
  /** accounts whose storage below must be ignored: only the slots in `storage` remain */
  readonly cleared: ReadonlySet<Address>
}

/** A devnet block's header: the fields a simulation needs, and the parent it was built on. */
export interface DevnetBlockInfo extends BlockInfo {
  parentHash: Hex
}

/** Default depth bound of a reader stack (see the module comment). */
export const DEFAULT_MAX_LAYER_DEPTH = 64

const EMPTY_CODE = new Uint8Array(0)

export class LayeredStateReader implements StateReader {
  /**
   * The layers above the root, newest first. Shared with (a prefix of) no one: each reader owns
   * its array; the layer objects themselves are shared with older readers and never mutated.
   */
  private readonly layers: readonly StateChanges[]
  /** the keys of `changes`, listed once when first asked */
  private diff: BlockChangedKeys | undefined

  private constructor(
    readonly block: DevnetBlockInfo,
    /** the reader at the bottom of the stack (the genesis) */
    readonly root: StateReader,
    layers: readonly StateChanges[],
    /** this block's own changes relative to its parent (kept even when the stack was flattened) */
    readonly changes: StateChanges,
    /** this block's hash and its ancestors', for BLOCKHASH */
    readonly blockHashes: RecentBlockHashes,
  ) {
    this.layers = layers
  }

  /**
   * The reader of a block that applied `changes` on top of `parent`. Takes ownership of
   * `changes`: its maps must never be mutated afterwards.
   */
  static stack(parent: StateReader, block: DevnetBlockInfo, changes: StateChanges, maxDepth = DEFAULT_MAX_LAYER_DEPTH): LayeredStateReader {
    if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) throw new RangeError(`maxDepth must be a positive integer, got ${maxDepth}`)
    const hashes = blockHashesAfter(parent, block)
    if (!(parent instanceof LayeredStateReader)) return new LayeredStateReader(block, parent, [changes], changes, hashes)
    if (parent.layers.length + 1 <= maxDepth) return new LayeredStateReader(block, parent.root, [changes, ...parent.layers], changes, hashes)
    // oldest first, so newer layers win
    const merged = mergeChanges([...parent.layers].reverse().concat([changes]))
    return new LayeredStateReader(block, parent.root, [merged], changes, hashes)
  }

  /** Layers between this reader and its root (1 after a flattening). */
  get depth(): number {
    return this.layers.length
  }

  async getAccount(address: Address): Promise<AccountInfo | undefined> {
    for (const layer of this.layers) {
      const entry = layer.accounts.get(address)
      if (entry === null) return undefined
      // a fresh object: callers may treat what they get as theirs
      if (entry !== undefined) return { nonce: entry.nonce, balance: entry.balance, codeHash: entry.codeHash }
    }
    return this.root.getAccount(address)
  }

  async getCode(address: Address): Promise<Uint8Array> {
    for (const layer of this.layers) {
      const code = layer.code.get(address)
      if (code !== undefined) return code
      if (layer.accounts.get(address) === null) return EMPTY_CODE
    }
    return this.root.getCode(address)
  }

  async getStorage(address: Address, slot: bigint): Promise<bigint> {
    for (const layer of this.layers) {
      const value = layer.storage.get(address)?.get(slot)
      if (value !== undefined) return value
      if (layer.cleared.has(address)) return 0n
    }
    return this.root.getStorage(address, slot)
  }

  /** The layers' writes (see storageInLayers), then the root's answer. */
  async hasStorage(address: Address): Promise<boolean> {
    return storageInLayers(this.layers, address) ?? (await this.root.hasStorage?.(address)) ?? false
  }

  async prefetch(reads: PrefetchRequest): Promise<void> {
    await this.root.prefetch?.(reads)
  }

  /** From this block's record: its own hash and the 256 before it. */
  async getBlockHash(number: bigint): Promise<Hex | undefined> {
    return this.blockHashes.get(number)
  }

  /** The keys of this block's own changes (the devnet knows every one: it built the block). */
  stateDiff(): BlockChangedKeys {
    this.diff ??= diffOf(this.block.parentHash, this.changes)
    return this.diff
  }
}

function diffOf(parentHash: Hex, changes: StateChanges): BlockChangedKeys {
  const lower = (address: Address) => address.toLowerCase() as Address
  const accounts = new Set<Address>()
  for (const address of changes.accounts.keys()) accounts.add(lower(address))
  for (const address of changes.code.keys()) accounts.add(lower(address))
  // a storage write may change whether the account holds storage at all
  for (const address of changes.storage.keys()) accounts.add(lower(address))
  for (const address of changes.cleared) accounts.add(lower(address))
  return {
    kind: 'changed',
    parentHash,
    accounts: [...accounts],
    storage: [...changes.storage].map(([address, slots]) => [lower(address), [...slots.keys()]] as const),
    clearedStorage: [...changes.cleared].map(lower),
  }
}

/**
 * The record of `block` stacked on `parent`: the parent's record (a genesis reader's: its own
 * hash) extended by the block. A block that does not follow its parent (only possible outside
 * DevnetStateSource.commitBlock, which refuses it) starts a record of its own.
 */
function blockHashesAfter(parent: StateReader, block: DevnetBlockInfo): RecentBlockHashes {
  const below = parent instanceof LayeredStateReader ? parent.blockHashes : RecentBlockHashes.of(parent.block)
  return block.number === below.newest + 1n && block.parentHash === parent.block.hash ? below.extend(block) : RecentBlockHashes.of(block)
}

/**
 * One diff equivalent to applying `runs` in order (oldest first). Fresh maps throughout: the
 * inputs are shared with older readers and stay untouched.
 */
export function mergeChanges(runs: readonly StateChanges[]): StateChanges {
  const accounts = new Map<Address, AccountInfo | null>()
  const code = new Map<Address, Uint8Array>()
  const storage = new Map<Address, Map<bigint, bigint>>()
  const cleared = new Set<Address>()
  for (const run of runs) {
    // a run's own slots were written after its clears (a clear drops what its layer wrote before)
    for (const address of run.cleared) {
      storage.delete(address)
      cleared.add(address)
    }
    for (const [address, entry] of run.accounts) accounts.set(address, entry)
    for (const [address, bytes] of run.code) code.set(address, bytes)
    for (const [address, slots] of run.storage) {
      let into = storage.get(address)
      if (into === undefined) {
        into = new Map()
        storage.set(address, into)
      }
      for (const [slot, value] of slots) into.set(slot, value)
    }
  }
  return { accounts, code, storage, cleared }
}
