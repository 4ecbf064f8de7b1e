/**
 * A journaled, copy-on-write state overlay that implements ethereumjs' StateManagerInterface on top
 * of a read-only StateReader (devnet genesis or fork cache) or on top of another, frozen overlay.
 *
 * Why our own: the stock SimpleStateManager copies its whole map on every checkpoint (every call
 * frame), so cost grows with the state; the stock RPCStateManager mis-reverts storage. Here a write
 * appends an undo record to a journal, a checkpoint is a journal length, revert undoes exactly the
 * records since that length. Checkpoint and revert cost what changed, not the size of the state.
 *
 * The EVM never learns where state comes from: it only sees this overlay.
 *
 * Storage roots: an overlay has no tries, so the accounts it hands out carry the empty storage
 * root, except at one place. EIP-7610 makes a contract creation over an account with storage a
 * collision, and ethereumjs decides it from the storage root of the account it reads at the
 * creation's target (`EVM._executeCreate`). Knowing whether an account has storage can cost a
 * round trip (a fork's eth_getProof), so it is asked only there: ethereumjs computes that target
 * with `EVM._generateAddress` just before reading it, which is wrapped (once, below) to tell the
 * overlay bound to that EVM; the overlay's next account read, if it is that address and the
 * account has no nonce and no code (otherwise the collision stands without storage), asks
 * `hasStorage` (this overlay's writes, then the reader's optional `hasStorage`) and reports a
 * non-empty storage root when there is storage.
 */
import type { AccountFields, StateManagerInterface, StorageDump } from '@ethereumjs/common'
import { EVM, type Message } from '@ethereumjs/evm'
import {
  Account,
  Address as EjsAddress,
  KECCAK256_NULL,
  KECCAK256_RLP,
  bigIntToBytes,
  bytesToBigInt,
  bytesToHex,
  equalsBytes,
} from '@ethereumjs/util'
import { keccak256 } from './keccak.ts'
import { storageInLayers, type StorageWrites } from '../chain/storage-presence.ts'
import type { AccountInfo, Address, StateReader } from '../chain/types.ts'

/** What an overlay reads through: the base reader, or a frozen parent overlay. */
interface StateLayer {
  readAccount(address: Address): Promise<AccountInfo | undefined>
  readCode(address: Address): Promise<Uint8Array>
  readStorage(address: Address, slot: bigint): Promise<bigint>
}

/** Account record held in the overlay: `null` means deleted (selfdestruct / EIP-161 cleanup). */
type AccountEntry = AccountInfo | null

type UndoRecord =
  | { kind: 'account'; address: Address; previous: AccountEntry | undefined }
  | { kind: 'code'; address: Address; previous: Uint8Array | undefined }
  | { kind: 'storage'; address: Address; slot: bigint; previous: bigint | undefined }
  | { kind: 'clear'; address: Address; previousSlots: Map<bigint, bigint> | undefined; wasCleared: boolean }

const EMPTY_CODE = new Uint8Array(0)

/** A slot's value as the stock state managers return it: the shortest big-endian bytes, 0 as no bytes. */
const valueBytes = (value: bigint): Uint8Array => (value === 0n ? EMPTY_CODE : bigIntToBytes(value))

/**
 * The stock OriginalStorageCache (`@ethereumjs/statemanager`: a slot's value the first time the
 * transaction asks for it, kept until `clear`, which runTx and direct-call.ts call as a transaction
 * ends), keyed by the account's key and the slot as a bigint instead of the hex of both, and
 * answering bigints as well (`value`) for SSTORE's gas (storage-slots.ts).
 */
/** `v` kept in `map` (the transaction's, as it was when the read began) as the slot's original value unless one was kept meanwhile; answers `v` */
function keepOriginal(map: Map<Address, Map<bigint, bigint>>, key: Address, slot: bigint, v: bigint): bigint {
  let slots = map.get(key)
  if (slots === undefined) map.set(key, (slots = new Map()))
  if (!slots.has(slot)) slots.set(slot, v)
  return v
}

export class OriginalSlots {
  private map = new Map<Address, Map<bigint, bigint>>()

  constructor(private readonly read: (address: Address, slot: bigint) => bigint | Promise<bigint>) {}

  async get(address: EjsAddress, key: Uint8Array): Promise<Uint8Array> {
    return valueBytes(await this.value(address, bytesToBigInt(key)))
  }

  value(address: EjsAddress, slot: bigint): bigint | Promise<bigint> {
    const key = toKey(address)
    const map = this.map
    const known = map.get(key)?.get(slot)
    if (known !== undefined) return known
    const value = this.read(key, slot)
    // a function, not a closure made per call: under tsx (esbuild's keepNames) a named closure
    // costs an Object.defineProperty of its name each time it is made (~1% of a quote's EVM CPU)
    return typeof value === 'bigint' ? keepOriginal(map, key, slot, value) : value.then((v) => keepOriginal(map, key, slot, v))
  }

  clear(): void {
    this.map = new Map()
  }
}

/**
 * The storage root reported for a creation target that has storage. The overlay does not know the
 * real root; ethereumjs only compares it with the empty root (KECCAK256_RLP).
 */
const NON_EMPTY_STORAGE_ROOT = new Uint8Array(32).fill(0xff)

class ReaderLayer implements StateLayer {
  constructor(private readonly reader: StateReader) {}
  readAccount(address: Address) {
    return this.reader.getAccount(address)
  }
  readCode(address: Address) {
    return this.reader.getCode(address)
  }
  readStorage(address: Address, slot: bigint) {
    return this.reader.getStorage(address, slot)
  }
}

const RESOLVED = Promise.resolve()

/**
 * Whether `outcome` is what JournaledState answers for a write, checkpoint or commit it has
 * already done without error: nothing to wait for. The EVM's call frames (frame-patches.ts) skip
 * the `await` then: each costs a suspension and a microtask turn, several a frame.
 */
/** heldAccount's answer when the account has to be read through getAccount. */
export const NOT_HELD: unique symbol = Symbol('not held')

/**
 * `stateManager.getAccount(address)`, answered at once (no promise, nothing to await) when the
 * state manager is a JournaledState that holds the entry (heldAccount); its promise otherwise.
 */
export function accountNowOrLater(stateManager: { getAccount(address: EjsAddress): Promise<Account | undefined> }, address: EjsAddress): Account | undefined | Promise<Account | undefined> {
  if (!(stateManager instanceof JournaledState)) return stateManager.getAccount(address)
  const held = stateManager.heldAccount(address)
  return held === NOT_HELD ? stateManager.getAccount(address) : held
}

export const isSettled = (outcome: Promise<void>): boolean => outcome === RESOLVED

/**
 * `work` done now, its outcome as a promise: what an async function without an await gives, without
 * allocating one (the EVM awaits putAccount, checkpoint and commit on every call frame).
 */
function settled(work: () => void): Promise<void> {
  try {
    work()
    return RESOLVED
  } catch (err) {
    return Promise.reject(err)
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a === b || equalsBytes(a, b)

function toKey(address: EjsAddress): Address {
  return address.toString() as Address
}

export class JournaledState implements StateManagerInterface, StateLayer {
  readonly originalStorageCache: OriginalSlots
  private readonly accounts = new Map<Address, AccountEntry>()
  private readonly code = new Map<Address, Uint8Array>()
  private readonly storage = new Map<Address, Map<bigint, bigint>>()
  /** accounts whose storage below this overlay must be ignored (cleared by create or selfdestruct) */
  private readonly cleared = new Set<Address>()
  private readonly journal: UndoRecord[] = []
  private readonly checkpoints: number[] = []
  private frozen = false
  /** observers of storage reads that reach this layer (used to discover ERC-20 balance slots) */
  private readonly storageReadObservers = new Set<(address: Address, slot: bigint) => void>()
  /** the address the EVM is creating at, until the next account read (see the module comment) */
  private creationTarget: Address | undefined

  private constructor(
    private readonly base: StateLayer,
    readonly reader: StateReader,
  ) {
    this.originalStorageCache = new OriginalSlots((address, slot) => this.slotValue(address, slot))
  }

  /** A fresh overlay over a pinned reader. */
  static over(reader: StateReader): JournaledState {
    return new JournaledState(new ReaderLayer(reader), reader)
  }

  /**
   * A child overlay that sees this overlay's state. This overlay is frozen from then on: a
   * simulation result can be chained (bundle, backrun after a swap) while the parent stays intact
   * for other branches.
   */
  fork(): JournaledState {
    if (this.checkpoints.length > 0) throw new Error('cannot fork a state overlay inside an open checkpoint')
    this.frozen = true
    return new JournaledState(this, this.reader)
  }

  /** Number of accounts, code entries and slots written in this layer (for tests and metrics). */
  get writeCount(): number {
    let slots = 0
    for (const m of this.storage.values()) slots += m.size
    return this.accounts.size + this.code.size + slots
  }

  /** Undo records held for open checkpoints: proportional to what changed, never to the state size. */
  get journalLength(): number {
    return this.journal.length
  }

  // ---- StateLayer (reads through this layer) ----

  // Not async functions: a read that goes down a layer hands back that layer's promise as it is
  // (an async function returning a promise costs a `then` job and two microtask turns more, per
  // layer; the EVM reads the callee's code through every layer on every call frame).

  readAccount(address: Address): Promise<AccountInfo | undefined> {
    const entry = this.accounts.get(address)
    if (entry !== undefined) return Promise.resolve(entry ?? undefined)
    return this.base.readAccount(address)
  }

  readCode(address: Address): Promise<Uint8Array> {
    const own = this.code.get(address)
    if (own !== undefined) return Promise.resolve(own)
    const entry = this.accounts.get(address)
    if (entry === null) return Promise.resolve(EMPTY_CODE)
    return this.base.readCode(address)
  }

  async readStorage(address: Address, slot: bigint): Promise<bigint> {
    return this.slotValue(address, slot)
  }

  /**
   * A slot's value: at once when this overlay or a frozen one below holds it, else the reader's
   * promise. SLOAD and SSTORE read through it (storage-slots.ts), without a promise per layer.
   */
  private slotValue(address: Address, slot: bigint): bigint | Promise<bigint> {
    for (const observe of this.storageReadObservers) observe(address, slot)
    const own = this.storage.get(address)?.get(slot)
    if (own !== undefined) return own
    if (this.cleared.has(address)) return 0n
    const base = this.base
    return base instanceof JournaledState ? base.slotValue(address, slot) : base.readStorage(address, slot)
  }

  /** Calls `observer` for every storage read that reaches this layer until the returned function is called. */
  observeStorageReads(observer: (address: Address, slot: bigint) => void): () => void {
    this.storageReadObservers.add(observer)
    return () => this.storageReadObservers.delete(observer)
  }

  // ---- StateManagerInterface ----

  async getAccount(address: EjsAddress): Promise<Account | undefined> {
    const key = toKey(address)
    const creating = this.creationTarget === key
    this.creationTarget = undefined
    // readAccount, with this layer's own entry read without an async call (the EVM reads the
    // caller and callee of every call frame, and after their first write they are here)
    const own = this.accounts.get(key)
    const info = own === undefined ? await this.base.readAccount(key) : (own ?? undefined)
    if (creating && (info === undefined || (info.nonce === 0n && !hasCode(info))) && (await this.hasStorage(key))) {
      // EIP-7610: ethereumjs sees a collision in this root
      return new Account(info?.nonce ?? 0n, info?.balance ?? 0n, NON_EMPTY_STORAGE_ROOT, info?.codeHash ?? KECCAK256_NULL)
    }
    if (info === undefined) return undefined
    // A fresh object every time: ethereumjs mutates the account it gets before putting it back.
    return new Account(info.nonce, info.balance, KECCAK256_RLP, info.codeHash)
  }

  /**
   * What `getAccount(address)` answers, at once, when this layer holds the entry (the EVM reads
   * the caller and callee of every call frame, and after their first write in the transaction
   * they are here); NOT_HELD when the answer has to come from below (then call getAccount), or
   * when the next read is a creation's collision check (getAccount's alone: see expectCreationAt).
   * The same fresh Account getAccount would make: ethereumjs mutates it before putting it back.
   */
  heldAccount(address: EjsAddress): Account | undefined | typeof NOT_HELD {
    if (this.creationTarget !== undefined) return NOT_HELD
    const own = this.accounts.get(toKey(address))
    if (own === undefined) return NOT_HELD
    if (own === null) return undefined
    return new Account(own.nonce, own.balance, KECCAK256_RLP, own.codeHash)
  }

  /**
   * Tells this overlay that the EVM bound to it is creating a contract at `address`: its next
   * account read is the creation's collision check (called by the `_generateAddress` wrapper).
   */
  expectCreationAt(address: EjsAddress): void {
    this.creationTarget = toKey(address)
  }

  /**
   * Whether the account has any non-zero storage slot: what this overlay and its frozen parents
   * wrote (see storageInLayers), then the reader (a reader without `hasStorage` holds none).
   */
  async hasStorage(address: Address): Promise<boolean> {
    return storageInLayers(this.layerWrites(), address) ?? (await this.reader.hasStorage?.(address)) ?? false
  }

  /** The writes of this overlay and of the frozen overlays below it, newest first. */
  private *layerWrites(): Generator<StorageWrites> {
    for (let layer: StateLayer = this; layer instanceof JournaledState; layer = layer.base) yield { storage: layer.storage, cleared: layer.cleared }
  }

  putAccount(address: EjsAddress, account?: Account): Promise<void> {
    if (account === undefined) return this.deleteAccount(address)
    return settled(() => {
      const key = toKey(address)
      const current = this.accounts.get(key)
      // the EVM writes caller and callee back on every call frame, mostly unchanged (no value
      // moved): this layer already holds that entry, so there is nothing to write or to undo
      if (current != null && current.nonce === account.nonce && current.balance === account.balance && sameBytes(current.codeHash, account.codeHash)) return
      this.setAccount(key, { nonce: account.nonce, balance: account.balance, codeHash: account.codeHash })
    })
  }

  async deleteAccount(address: EjsAddress): Promise<void> {
    const key = toKey(address)
    this.setAccount(key, null)
    this.setCode(key, EMPTY_CODE)
    this.clearSlots(key)
  }

  async modifyAccountFields(address: EjsAddress, fields: AccountFields): Promise<void> {
    const key = toKey(address)
    const current = (await this.readAccount(key)) ?? { nonce: 0n, balance: 0n, codeHash: KECCAK256_NULL }
    this.setAccount(key, {
      nonce: fields.nonce ?? current.nonce,
      balance: fields.balance ?? current.balance,
      codeHash: fields.codeHash ?? current.codeHash,
    })
  }

  async putCode(address: EjsAddress, value: Uint8Array): Promise<void> {
    const key = toKey(address)
    this.setCode(key, value)
    const current = (await this.readAccount(key)) ?? { nonce: 0n, balance: 0n, codeHash: KECCAK256_NULL }
    this.setAccount(key, { ...current, codeHash: value.length === 0 ? KECCAK256_NULL : keccak256(value) })
  }

  getCode(address: EjsAddress): Promise<Uint8Array> {
    return this.readCode(toKey(address))
  }

  async getCodeSize(address: EjsAddress): Promise<number> {
    return (await this.readCode(toKey(address))).length
  }

  // ---- storage as bigints (storage-slots.ts: SLOAD and SSTORE) ----

  /** The slot's current value (what getStorage answers, as a bigint). */
  storageValue(address: EjsAddress, slot: bigint): bigint | Promise<bigint> {
    return this.slotValue(toKey(address), slot)
  }

  /** The slot's value when the transaction first asked for it (what originalStorageCache.get answers, as a bigint). */
  originalStorageValue(address: EjsAddress, slot: bigint): bigint | Promise<bigint> {
    return this.originalStorageCache.value(address, slot)
  }

  /** Writes the slot (what putStorage writes, from bigints). */
  putStorageValue(address: EjsAddress, slot: bigint, value: bigint): void {
    this.setSlot(toKey(address), slot, value)
  }

  async getStorage(address: EjsAddress, key: Uint8Array): Promise<Uint8Array> {
    const value = await this.readStorage(toKey(address), bytesToBigInt(key))
    // shortest representation, as the stock managers return it (0 is the empty array)
    return valueBytes(value)
  }

  async putStorage(address: EjsAddress, key: Uint8Array, value: Uint8Array): Promise<void> {
    this.setSlot(toKey(address), bytesToBigInt(key), value.length === 0 ? 0n : bytesToBigInt(value))
  }

  async clearStorage(address: EjsAddress): Promise<void> {
    this.clearSlots(toKey(address))
  }

  checkpoint(): Promise<void> {
    this.checkpoints.push(this.journal.length)
    return RESOLVED
  }

  commit(): Promise<void> {
    return settled(() => {
      if (this.checkpoints.pop() === undefined) throw new Error('commit without checkpoint')
      // The undo records stay: an outer checkpoint may still revert them.
      if (this.checkpoints.length === 0) this.journal.length = 0
    })
  }

  async revert(): Promise<void> {
    const mark = this.checkpoints.pop()
    if (mark === undefined) throw new Error('revert without checkpoint')
    for (let i = this.journal.length - 1; i >= mark; i--) this.undo(this.journal[i])
    this.journal.length = mark
  }

  /**
   * An overlay has no trie, so no state root. Pre-Byzantium receipts embed one; they get a zero
   * root (nothing in this service reads it).
   */
  async getStateRoot(): Promise<Uint8Array> {
    return new Uint8Array(32)
  }
  async setStateRoot(): Promise<void> {
    throw new Error('JournaledState has no state root: it is an execution overlay, not a trie')
  }
  async hasStateRoot(): Promise<boolean> {
    return false
  }

  async dumpStorage(address: EjsAddress): Promise<StorageDump> {
    const out: StorageDump = {}
    for (const [slot, value] of this.storage.get(toKey(address)) ?? []) {
      out[bytesToHex(bigIntToBytes(slot))] = bytesToHex(bigIntToBytes(value))
    }
    return out
  }

  clearCaches(): void {}

  shallowCopy(): StateManagerInterface {
    return this.fork()
  }

  // ---- diff access, for results and for committing a devnet block ----

  /** Everything this layer (not its parents) wrote, after the outermost checkpoint closed. */
  diff(): StateDiff {
    const storage = new Map<Address, Map<bigint, bigint>>()
    for (const [a, m] of this.storage) storage.set(a, new Map(m))
    return { accounts: new Map(this.accounts), code: new Map(this.code), storage, cleared: new Set(this.cleared) }
  }

  /**
   * Everything this overlay and the frozen overlays below it changed relative to the base reader,
   * merged into one diff (what committing the chain as a block must apply to the reader): the
   * newest write of each account, code and slot wins; an account in `cleared` had its storage
   * wiped (create over an address, selfdestruct, EIP-161 cleanup) after the reader's state, so
   * only the slots in `storage` remain; `accounts` maps a deleted account to null. Read-only:
   * fresh maps, nothing in the overlays changes. Costs the number of writes in the chain, never
   * the size of the state.
   *
   * @throws when a checkpoint is open (its writes may still be reverted)
   */
  changesSinceReader(): StateDiff {
    if (this.checkpoints.length > 0) throw new Error('cannot list the changes of a state overlay inside an open checkpoint')
    const layers: JournaledState[] = []
    for (let layer: StateLayer = this; layer instanceof JournaledState; layer = layer.base) layers.push(layer)
    const out: StateDiff = { accounts: new Map(), code: new Map(), storage: new Map(), cleared: new Set() }
    // oldest first: within one layer a clear dropped the slots written before it, so it applies
    // before that layer's slots
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i]
      for (const address of layer.cleared) {
        out.storage.delete(address)
        out.cleared.add(address)
      }
      for (const [address, entry] of layer.accounts) out.accounts.set(address, entry)
      for (const [address, code] of layer.code) out.code.set(address, code)
      for (const [address, slots] of layer.storage) {
        let merged = out.storage.get(address)
        if (merged === undefined) {
          merged = new Map()
          out.storage.set(address, merged)
        }
        for (const [slot, value] of slots) merged.set(slot, value)
      }
    }
    return out
  }

  // ---- writes with undo records ----

  private assertWritable() {
    if (this.frozen) throw new Error('state overlay is frozen: it has been forked; write to the child')
  }

  private record(rec: UndoRecord) {
    // Outside any checkpoint nothing can revert, so no undo record is needed.
    if (this.checkpoints.length > 0) this.journal.push(rec)
  }

  private setAccount(address: Address, entry: AccountEntry) {
    this.assertWritable()
    this.record({ kind: 'account', address, previous: this.accounts.get(address) })
    this.accounts.set(address, entry)
  }

  private setCode(address: Address, value: Uint8Array) {
    this.assertWritable()
    this.record({ kind: 'code', address, previous: this.code.get(address) })
    this.code.set(address, value)
  }

  private setSlot(address: Address, slot: bigint, value: bigint) {
    this.assertWritable()
    let slots = this.storage.get(address)
    if (slots === undefined) {
      slots = new Map()
      this.storage.set(address, slots)
    }
    this.record({ kind: 'storage', address, slot, previous: slots.get(slot) })
    slots.set(slot, value)
  }

  private clearSlots(address: Address) {
    this.assertWritable()
    this.record({ kind: 'clear', address, previousSlots: this.storage.get(address), wasCleared: this.cleared.has(address) })
    this.storage.delete(address)
    this.cleared.add(address)
  }

  private undo(rec: UndoRecord) {
    switch (rec.kind) {
      case 'account':
        if (rec.previous === undefined) this.accounts.delete(rec.address)
        else this.accounts.set(rec.address, rec.previous)
        return
      case 'code':
        if (rec.previous === undefined) this.code.delete(rec.address)
        else this.code.set(rec.address, rec.previous)
        return
      case 'storage': {
        const slots = this.storage.get(rec.address)
        if (slots === undefined) return
        if (rec.previous === undefined) slots.delete(rec.slot)
        else slots.set(rec.slot, rec.previous)
        return
      }
      case 'clear':
        if (rec.previousSlots === undefined) this.storage.delete(rec.address)
        else this.storage.set(rec.address, rec.previousSlots)
        if (!rec.wasCleared) this.cleared.delete(rec.address)
        return
    }
  }
}

export interface StateDiff {
  accounts: Map<Address, AccountEntry>
  code: Map<Address, Uint8Array>
  storage: Map<Address, Map<bigint, bigint>>
  cleared: Set<Address>
}

function hasCode(info: AccountInfo): boolean {
  return info.codeHash.length !== 0 && !equalsBytes(info.codeHash, KECCAK256_NULL)
}

/**
 * Wraps `EVM._generateAddress` (the target of every creation: ethereumjs calls it in `runCall` to
 * warm the address and in `_executeCreate` right before reading the target for the collision
 * check) so that it tells the state manager of that EVM, when it is an overlay (found by its
 * method, not by class: a module loaded twice must still be told). Any other state manager is left
 * alone. Installed once, when this module loads; fails loudly if ethereumjs renames the method,
 * since the EIP-7610 check would otherwise pass silently.
 */
function reportCreationTargets(): void {
  type Generate = (this: { stateManager: unknown }, message: Message) => Promise<EjsAddress>
  const proto = EVM.prototype as unknown as { _generateAddress?: Generate; __reportsCreationTargets?: true }
  if (proto.__reportsCreationTargets === true) return
  const generate = proto._generateAddress
  if (typeof generate !== 'function') throw new Error('@ethereumjs/evm has no EVM._generateAddress: the EIP-7610 collision check in journaled-state.ts needs it')
  proto._generateAddress = async function (this: { stateManager: unknown }, message: Message): Promise<EjsAddress> {
    const address = await generate.call(this, message)
    ;(this.stateManager as Partial<Pick<JournaledState, 'expectCreationAt'>>).expectCreationAt?.(address)
    return address
  }
  proto.__reportsCreationTargets = true
}

reportCreationTargets()
