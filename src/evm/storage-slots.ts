/**
 * SLOAD and SSTORE (`@ethereumjs/evm` 10.1.3 opcodes/functions.js, opcodes/gas.js, journal.js)
 * on the project's overlay without converting slots and values between bigints, bytes and hex
 * strings at every layer. Installed by applyInterpreterPatches (interpreter-patches.ts 11.).
 *
 * What a slot access cost in the stock EVM (a V3 swap makes 17 SLOADs and 9 SSTOREs): the key
 * made 32 bytes by `setLengthLeft(bigIntToBytes(key), 32)` (hex string, then an array spread:
 * ~1.6 us) in the gas handler and again in the opcode handler; the value read as bytes
 * (`getStorage`: bigint to bytes) and turned back into a bigint; for SSTORE the current and the
 * original value read as bytes and padded by `setLengthLeftStorage` (an array spread each), the
 * original value cached under the hex of address and key; the journal's warm-slot check turning
 * the key into hex (noble's `bytesToHex`) two or three times per access.
 *
 * Here, when the state manager is a JournaledState (it answers slots as bigints) and the chain
 * has none of the EIPs whose branches these leave to the stock functions (6800, 7864, 7928, 8037,
 * 8038) and is at least Istanbul (EIP-2200 gas):
 * - SLOAD reads the slot as a bigint (`storageValue`, at once when an overlay holds it);
 * - SSTORE's gas reads the current and original values as bigints and runs `sstoreGasEIP2200`
 *   and `accessSlot`: the stock `updateSstoreGasEIP2200` (with `adjustSstoreGasEIP2929`) and
 *   `accessStorageEIP2929` line for line, over the words instead of their bytes. The stock
 *   functions only compare the three values with one another and test them for emptiness
 *   (`setLengthLeftStorage`: zero is no bytes, anything else 32), which the words answer alike;
 *   the key goes to the journal as the hex it keys slots by, made from the word and remembered
 *   per thread (word-hex-memo.ts, at most SLOT_KEY_MEMO_MAX_ENTRIES slots) (the stock:
 *   the word to bytes through a hex string, the bytes to hex again two or three times: ~0.5 us a
 *   slot access, 3% of a bench:quote mix's EVM CPU). SLOAD's warm/cold cost (sync-gas.ts) is
 *   `accessSlot` too;
 * - SSTORE writes the slot as bigints (`putStorageValue`), then reads the account back into the
 *   frame's `env.contract` as `Interpreter.storageStore` does;
 * - the journal's `isWarmedStorage` and `addWarmedStorage` are the stock functions with the
 *   key's hex from Node's encoder, or the one `slotBytes` made it with (`isWarmedSlot` and
 *   `addWarmedSlot` take the hex itself).
 * Anything else runs the stock functions. Gas, refunds, warm sets and state are the stock ones:
 * storage-slots.test.ts compares them with the stock handlers over every EIP-2200 case, and the
 * anvil, geth and state tests check whole executions.
 */
import type { Common } from '@ethereumjs/common'
import { EthereumJSErrorWithoutCode, type Account, type Address } from '@ethereumjs/util'
import { unprefixedHex } from './address-patches.ts'
import { WordHexMemo } from './word-hex-memo.ts'

/** The overlay's bigint view of storage (JournaledState). */
interface SlotState {
  storageValue(address: Address, slot: bigint): bigint | Promise<bigint>
  originalStorageValue(address: Address, slot: bigint): bigint | Promise<bigint>
  putStorageValue(address: Address, slot: bigint, value: bigint): void
  getAccount(address: Address): Promise<Account | undefined>
}

interface SlotStack {
  pop(): bigint
  popN(n: number): bigint[]
  peek(n?: number): bigint[]
  push(value: bigint): void
}

export interface SlotRunState {
  stack: SlotStack
  interpreter: SlotInterpreter
}

/** What `accessSlot` reads of the run state: the frame's journal and address. */
export interface SlotAccessRunState {
  interpreter: Pick<SlotInterpreter, 'journal' | 'getAddress'>
}

/** What the slot access and SSTORE's gas use of ethereumjs' Interpreter. */
interface SlotInterpreter {
  _stateManager: unknown
  _env: { address: Address; contract: Account }
  isStatic(): boolean
  journal: unknown
  getAddress(): { bytes: Uint8Array }
  getGasLeft(): bigint
  refundGas(amount: bigint, context?: string): void
  subRefund(amount: bigint, context?: string): void
}

type Handler = (runState: SlotRunState, common: Common) => void | Promise<void>
type GasHandler = (runState: SlotRunState, gas: bigint, common: Common) => Promise<bigint>

export interface StorageHandlers {
  sload: Handler
  sstore: Handler
  sstoreGas: GasHandler
}

export interface StorageInternals {
  trap(error: string): never
  errorMessages: Record<string, string>
}

/** EIPs with SLOAD/SSTORE branches these functions leave to the stock ones. */
const STOCK_EIPS = [6800, 7864, 7928, 8037, 8038]

/** The hex `slotBytes` made a key's bytes from (the journal's key for the slot). */
const SLOT_HEX = Symbol('slot hex')
type SlotBytes = Uint8Array & { [SLOT_HEX]?: string }

/** slots whose journal keys are remembered at most per thread (~200 bytes each: under 1 MB) */
export const SLOT_KEY_MEMO_MAX_ENTRIES = 4096

const slotKeyMemo = new WordHexMemo(SLOT_KEY_MEMO_MAX_ENTRIES, '')

/** How many slot keys the memo holds (for tests). */
export function slotKeyMemoSize(): number {
  return slotKeyMemo.size
}

/** The slot's 32-byte big-endian key, as `setLengthLeft(bigIntToBytes(key), 32)` makes it; its hex kept for the journal. */
export function slotBytes(key: bigint): Uint8Array {
  const padded = slotKeyHex(key)
  const bytes = Buffer.from(padded, 'hex') as unknown as SlotBytes
  bytes[SLOT_HEX] = padded
  return bytes
}

/**
 * The journal's key of the slot `key` (the unprefixed hex of its 32 bytes), made from the word and
 * remembered (word-hex-memo.ts): the warm-slot sets are asked for it on every SLOAD and SSTORE.
 */
export function slotKeyHex(key: bigint): string {
  return slotKeyMemo.hex(key)
}

/** The journal's key of a slot: the unprefixed hex of its bytes (the stock: noble's bytesToUnprefixedHex). */
function slotHex(slot: Uint8Array): string {
  const kept = (slot as SlotBytes)[SLOT_HEX]
  if (kept !== undefined) return kept
  return Buffer.from(slot.buffer, slot.byteOffset, slot.byteLength).toString('hex')
}

const isSlotState = (manager: unknown): manager is SlotState => typeof (manager as Partial<SlotState>).storageValue === 'function'

/** Whether these functions may run for `common` (rules by hardfork; cached per hardfork and EIP set by Common's own tables). */
function supported(common: Common): boolean {
  if (!common.gteHardfork('istanbul')) return false
  for (const eip of STOCK_EIPS) if (common.isActivatedEIP(eip)) return false
  return true
}

export interface WarmJournal {
  journal: Map<string, Set<string>>
  alwaysWarmJournal: Map<string, Set<string>>
  journalDiff: Array<[number, [Set<string>, Map<string, Set<string>>, Set<string>]]>
  accessList?: Map<string, Set<string>>
  addWarmedAddress(address: Uint8Array): void
}

export interface StorageJournalModule {
  Journal: { prototype: { isWarmedStorage: unknown; addWarmedStorage: unknown } }
}

/** The journal's `isWarmedStorage`, line for line, over the hex keys of the address and the slot. */
export function isWarmedSlot(journal: WarmJournal, addressHex: string, slotStr: string): boolean {
  const slots = journal.journal.get(addressHex)
  if (slots === undefined) {
    if (journal.alwaysWarmJournal.has(addressHex)) return journal.alwaysWarmJournal.get(addressHex)!.has(slotStr)
    return false
  }
  if (slots.has(slotStr)) return true
  if (journal.alwaysWarmJournal.has(addressHex)) return journal.alwaysWarmJournal.get(addressHex)!.has(slotStr)
  return false
}

/** The journal's `addWarmedStorage`, line for line, over the hex keys of the address (and its bytes, to warm it) and the slot. */
export function addWarmedSlot(journal: WarmJournal, address: Uint8Array, addressHex: string, slotStr: string): void {
  let slots = journal.journal.get(addressHex)
  if (slots === undefined) {
    journal.addWarmedAddress(address)
    slots = journal.journal.get(addressHex)!
  }
  if (!slots.has(slotStr)) {
    slots.add(slotStr)
    const addressSlotMap = journal.journalDiff[journal.journalDiff.length - 1][1][1]
    let slotsSet = addressSlotMap.get(addressHex)
    if (slotsSet === undefined) addressSlotMap.set(addressHex, (slotsSet = new Set()))
    slotsSet.add(slotStr)
  }
  if (journal.accessList !== undefined) journal.accessList.get(addressHex)!.add(slotStr)
}

let journalPatched = false

/** The journal's warm-slot functions, line for line the stock ones, with the keys from Node's hex encoder. */
export function patchStorageJournal({ Journal }: StorageJournalModule): void {
  if (journalPatched) return
  journalPatched = true
  Journal.prototype.isWarmedStorage = function (this: WarmJournal, address: Uint8Array, slot: Uint8Array): boolean {
    return isWarmedSlot(this, unprefixedHex(address), slotHex(slot))
  }
  Journal.prototype.addWarmedStorage = function (this: WarmJournal, address: Uint8Array, slot: Uint8Array): void {
    addWarmedSlot(this, address, unprefixedHex(address), slotHex(slot))
  }
}

/**
 * The stock `accessStorageEIP2929` (opcodes/EIP2929.js; charged, as SLOAD and SSTORE call it) of
 * the slot `key` in the frame's contract, where EIPs 6800 and 7864 are not active (the callers'
 * condition: `supported`, and the fast step of interpreter-patches.ts 3.): a cold slot is warmed
 * and costs `coldsloadGas`; a warm one `warmstoragereadGas` for SLOAD, nothing for SSTORE.
 */
export function accessSlot(runState: SlotAccessRunState, key: bigint, isSstore: boolean, common: Common): bigint {
  if (!common.isActivatedEIP(2929)) return 0n
  const journal = runState.interpreter.journal as WarmJournal
  const address = runState.interpreter.getAddress().bytes
  const addressHex = unprefixedHex(address)
  const slotStr = slotKeyHex(key)
  if (!isWarmedSlot(journal, addressHex, slotStr)) {
    addWarmedSlot(journal, address, addressHex, slotStr)
    return common.param('coldsloadGas')
  }
  return isSstore ? 0n : common.param('warmstoragereadGas')
}

/** The stock `adjustSstoreGasEIP2929` (opcodes/EIP2929.js) over the slot's word. */
function adjustSstoreGasEIP2929(runState: SlotRunState, key: bigint, defaultCost: bigint, costName: 'noop' | 'initRefund' | 'cleanRefund', common: Common): bigint {
  if (!common.isActivatedEIP(2929)) return defaultCost
  const address = runState.interpreter.getAddress().bytes
  const warmRead = common.param('warmstoragereadGas')
  const coldSload = common.param('coldsloadGas')
  if (isWarmedSlot(runState.interpreter.journal as WarmJournal, unprefixedHex(address), slotKeyHex(key))) {
    switch (costName) {
      case 'noop':
        return warmRead
      case 'initRefund':
        return common.param('sstoreInitEIP2200Gas') - warmRead
      case 'cleanRefund':
        return common.param('sstoreResetGas') - coldSload - warmRead
    }
  }
  return defaultCost
}

/** SLOAD's and SSTORE's handlers and SSTORE's gas over the stock ones (`stock` falls back to them). */
export function storageHandlers(internals: StorageInternals, stock: StorageHandlers): StorageHandlers {
  const { trap, errorMessages } = internals
  const STATIC_STATE_CHANGE = errorMessages.STATIC_STATE_CHANGE
  const OUT_OF_GAS = errorMessages.OUT_OF_GAS

  /**
   * The stock `updateSstoreGasEIP2200` (opcodes/EIP2200.js) over the words: `equalsBytes` of two
   * `setLengthLeftStorage` values is the words' equality, an empty one a zero word.
   */
  const sstoreGasEIP2200 = (runState: SlotRunState, current: bigint, original: bigint, value: bigint, key: bigint, common: Common): bigint => {
    const interpreter = runState.interpreter
    // Fail if not enough gas is left
    if (interpreter.getGasLeft() <= common.param('sstoreSentryEIP2200Gas')) trap(OUT_OF_GAS)
    // Noop
    if (current === value) return adjustSstoreGasEIP2929(runState, key, common.param('sstoreNoopEIP2200Gas'), 'noop', common)
    if (original === current) {
      // Create slot
      if (original === 0n) return common.param('sstoreInitEIP2200Gas')
      // Delete slot
      if (value === 0n) interpreter.refundGas(common.param('sstoreClearRefundEIP2200Gas'), 'EIP-2200 -> sstoreClearRefundEIP2200')
      // Write existing slot
      return common.param('sstoreCleanEIP2200Gas')
    }
    if (original !== 0n) {
      if (current === 0n) {
        // Recreate slot
        interpreter.subRefund(common.param('sstoreClearRefundEIP2200Gas'), 'EIP-2200 -> sstoreClearRefundEIP2200')
      } else if (value === 0n) {
        // Delete slot
        interpreter.refundGas(common.param('sstoreClearRefundEIP2200Gas'), 'EIP-2200 -> sstoreClearRefundEIP2200')
      }
    }
    if (original === value) {
      if (original === 0n) {
        // Reset to original non-existent slot
        interpreter.refundGas(adjustSstoreGasEIP2929(runState, key, common.param('sstoreInitRefundEIP2200Gas'), 'initRefund', common), 'EIP-2200 -> initRefund')
      } else {
        // Reset to original existing slot
        interpreter.refundGas(adjustSstoreGasEIP2929(runState, key, common.param('sstoreCleanRefundEIP2200Gas'), 'cleanRefund', common), 'EIP-2200 -> cleanRefund')
      }
    }
    // Dirty update
    return common.param('sstoreDirtyEIP2200Gas')
  }

  const sload: Handler = (runState, common) => {
    const state = runState.interpreter._stateManager
    if (!isSlotState(state) || !supported(common)) return stock.sload(runState, common)
    const stack = runState.stack
    const value = state.storageValue(runState.interpreter._env.address, stack.pop())
    if (typeof value === 'bigint') {
      stack.push(value)
      return
    }
    return value.then((v) => stack.push(v))
  }

  const sstoreGas: GasHandler = async (runState, gas, common) => {
    const state = runState.interpreter._stateManager
    if (!isSlotState(state) || !supported(common)) return stock.sstoreGas(runState, gas, common)
    if (runState.interpreter.isStatic()) trap(STATIC_STATE_CHANGE)
    const [key, value] = runState.stack.peek(2)
    const address = runState.interpreter._env.address
    // the stock order: the current value, then the original one
    const current = await state.storageValue(address, key)
    const original = await state.originalStorageValue(address, key)
    gas += sstoreGasEIP2200(runState, current, original, value, key, common)
    // after the EIP-2200 checks, as the stock handler (its sentry check comes first)
    return gas + accessSlot(runState, key, true, common)
  }

  const sstore: Handler = (runState, common) => {
    const state = runState.interpreter._stateManager
    if (!isSlotState(state) || !supported(common)) return stock.sstore(runState, common)
    const [key, value] = runState.stack.popN(2)
    const env = runState.interpreter._env
    state.putStorageValue(env.address, key, value)
    // Interpreter.storageStore: the frame's account read again after the write
    return state.getAccount(env.address).then((account) => {
      if (!account) throw EthereumJSErrorWithoutCode('could not read account while persisting memory')
      env.contract = account
    })
  }

  return { sload, sstore, sstoreGas }
}
