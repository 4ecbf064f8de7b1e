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
 * - SSTORE's gas reads the current and original values as bigints and gives the stock
 *   `updateSstoreGasEIP2200` and `accessStorageEIP2929` what the stock handler gives them (the
 *   values padded to 32 bytes or empty for zero, the key as 32 bytes), made directly;
 * - SSTORE writes the slot as bigints (`putStorageValue`), then reads the account back into the
 *   frame's `env.contract` as `Interpreter.storageStore` does;
 * - the journal's `isWarmedStorage` and `addWarmedStorage` are the stock functions with the
 *   key's hex from Node's encoder, or the one `slotBytes` made it with.
 * Anything else runs the stock functions. Gas, refunds, warm sets and state are the stock ones:
 * storage-slots.test.ts compares them with the stock handlers over every EIP-2200 case, and the
 * anvil, geth and state tests check whole executions.
 */
import type { Common } from '@ethereumjs/common'
import { EthereumJSErrorWithoutCode, type Account, type Address } from '@ethereumjs/util'
import { unprefixedHex } from './address-patches.ts'

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
  interpreter: {
    _stateManager: unknown
    _env: { address: Address; contract: Account }
    isStatic(): boolean
  }
}

type Handler = (runState: SlotRunState, common: Common) => void | Promise<void>
type GasHandler = (runState: SlotRunState, gas: bigint, common: Common) => Promise<bigint>

export interface StorageHandlers {
  sload: Handler
  sstore: Handler
  sstoreGas: GasHandler
}

export interface StorageInternals {
  updateSstoreGasEIP2200(runState: SlotRunState, current: Uint8Array, original: Uint8Array, value: Uint8Array, key: Uint8Array, common: Common): bigint
  accessStorageEIP2929(runState: SlotRunState, key: Uint8Array, isSstore: boolean, common: Common, chargeGas?: boolean): bigint
  trap(error: string): never
  errorMessages: Record<string, string>
}

/** EIPs with SLOAD/SSTORE branches these functions leave to the stock ones. */
const STOCK_EIPS = [6800, 7864, 7928, 8037, 8038]

/** The hex `slotBytes` made a key's bytes from (the journal's key for the slot). */
const SLOT_HEX = Symbol('slot hex')
type SlotBytes = Uint8Array & { [SLOT_HEX]?: string }

const ZEROS_64 = '0'.repeat(64)
const NO_BYTES = new Uint8Array(0)

/** The slot's 32-byte big-endian key, as `setLengthLeft(bigIntToBytes(key), 32)` makes it; its hex kept for the journal. */
export function slotBytes(key: bigint): Uint8Array {
  const hex = key.toString(16)
  const padded = hex.length === 64 ? hex : ZEROS_64.slice(hex.length) + hex
  const bytes = Buffer.from(padded, 'hex') as unknown as SlotBytes
  bytes[SLOT_HEX] = padded
  return bytes
}

/** `setLengthLeftStorage` of the value's bytes: no bytes for zero, else 32. */
function storageBytes(value: bigint): Uint8Array {
  return value === 0n ? NO_BYTES : slotBytes(value)
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

interface WarmJournal {
  journal: Map<string, Set<string>>
  alwaysWarmJournal: Map<string, Set<string>>
  journalDiff: Array<[number, [Set<string>, Map<string, Set<string>>, Set<string>]]>
  accessList?: Map<string, Set<string>>
  addWarmedAddress(address: Uint8Array): void
}

export interface StorageJournalModule {
  Journal: { prototype: { isWarmedStorage: unknown; addWarmedStorage: unknown } }
}

let journalPatched = false

/** The journal's warm-slot functions, line for line the stock ones, with the keys from Node's hex encoder. */
export function patchStorageJournal({ Journal }: StorageJournalModule): void {
  if (journalPatched) return
  journalPatched = true
  Journal.prototype.isWarmedStorage = function (this: WarmJournal, address: Uint8Array, slot: Uint8Array): boolean {
    const addressHex = unprefixedHex(address)
    const slots = this.journal.get(addressHex)
    if (slots === undefined) {
      if (this.alwaysWarmJournal.has(addressHex)) return this.alwaysWarmJournal.get(addressHex)!.has(slotHex(slot))
      return false
    }
    if (slots.has(slotHex(slot))) return true
    if (this.alwaysWarmJournal.has(addressHex)) return this.alwaysWarmJournal.get(addressHex)!.has(slotHex(slot))
    return false
  }
  Journal.prototype.addWarmedStorage = function (this: WarmJournal, address: Uint8Array, slot: Uint8Array): void {
    const addressHex = unprefixedHex(address)
    let slots = this.journal.get(addressHex)
    if (slots === undefined) {
      this.addWarmedAddress(address)
      slots = this.journal.get(addressHex)!
    }
    const slotStr = slotHex(slot)
    if (!slots.has(slotStr)) {
      slots.add(slotStr)
      const addressSlotMap = this.journalDiff[this.journalDiff.length - 1][1][1]
      let slotsSet = addressSlotMap.get(addressHex)
      if (slotsSet === undefined) addressSlotMap.set(addressHex, (slotsSet = new Set()))
      slotsSet.add(slotStr)
    }
    if (this.accessList !== undefined) this.accessList.get(addressHex)!.add(slotStr)
  }
}

/** SLOAD's and SSTORE's handlers and SSTORE's gas over the stock ones (`stock` falls back to them). */
export function storageHandlers(internals: StorageInternals, stock: StorageHandlers): StorageHandlers {
  const { updateSstoreGasEIP2200, accessStorageEIP2929, trap, errorMessages } = internals
  const STATIC_STATE_CHANGE = errorMessages.STATIC_STATE_CHANGE

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
    const keyBytes = slotBytes(key)
    gas += updateSstoreGasEIP2200(runState, storageBytes(current), storageBytes(original), storageBytes(value), keyBytes, common)
    // after the EIP-2200 checks, as the stock handler (its sentry check comes first)
    return gas + accessStorageEIP2929(runState, keyBytes, true, common, true)
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
