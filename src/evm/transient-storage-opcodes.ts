/**
 * TLOAD (0x5c) and TSTORE (0x5d) with the slot key made into TransientStorage's map key directly.
 * The stock handlers turn the key into bytes (`setLengthLeft(bigIntToBytes(key), 32)`: a hex
 * string and an array spread) that @ethereumjs/evm's TransientStorage turns back into a hex string
 * (`bytesToHex`) for its map: ~3.6% of the EVM's CPU on the bench:quote mix, whose V4 PoolManager
 * keeps its deltas and lock in transient storage. Here the key's hex is made once from the bigint,
 * the same string (`0x` and 64 lower-case digits), and the storage's own map and journal are
 * read and written exactly as its `get` and `put` do; values are stored as the stock handler stores
 * them (`bigIntToBytes`, empty for zero), so checkpoints, reverts and `toJSON` see the same entries.
 * A static frame's TSTORE, and any EVM whose transient storage is not the stock class's shape, run
 * the stock handlers.
 */
import { bigIntToBytes, bytesToBigInt } from '@ethereumjs/util'

/** The parts of @ethereumjs/evm's TransientStorage its get and put use. */
interface StockTransientStorage {
  _storage: Map<string, Map<string, Uint8Array>>
  _changeJournal: { addr: string; key: string; prevValue: Uint8Array }[]
}

export interface TransientRunState {
  stack: { pop(): bigint; popN(n: number): bigint[]; push(value: bigint): void }
  interpreter: {
    isStatic(): boolean
    _evm: { transientStorage: unknown }
    _env: { address: { toString(): string } }
  }
}

type Handler = (runState: TransientRunState, common: unknown) => void

/** TransientStorage's key of a slot: `bytesToHex(setLengthLeft(bigIntToBytes(key), 32))` */
export function transientKey(key: bigint): string {
  return `0x${key.toString(16).padStart(64, '0')}`
}

function stockShaped(storage: unknown): storage is StockTransientStorage {
  const s = storage as Partial<StockTransientStorage> | undefined
  return s !== undefined && s._storage instanceof Map && Array.isArray(s._changeJournal)
}

/** TLOAD and TSTORE over the stock handlers `stock`, which they fall back to. */
export function transientStorageHandlers(stock: { tload: Handler; tstore: Handler }): { tload: Handler; tstore: Handler } {
  const tload: Handler = (runState, common) => {
    const storage = runState.interpreter._evm.transientStorage
    if (!stockShaped(storage)) return stock.tload(runState, common)
    const key = runState.stack.pop()
    // TransientStorage.get: a missing address or slot reads as 32 zero bytes, i.e. 0
    const value = storage._storage.get(runState.interpreter._env.address.toString())?.get(transientKey(key))
    runState.stack.push(value === undefined || value.length === 0 ? 0n : bytesToBigInt(value))
  }
  const tstore: Handler = (runState, common) => {
    const storage = runState.interpreter._evm.transientStorage
    if (!stockShaped(storage) || runState.interpreter.isStatic()) return stock.tstore(runState, common)
    const [key, val] = runState.stack.popN(2)
    // the stock handler's value: empty for zero, else the shortest big-endian bytes
    const value = val === 0n ? new Uint8Array(0) : bigIntToBytes(val)
    // TransientStorage.put: journal the previous value (32 zero bytes when none), then set
    const address = runState.interpreter._env.address.toString()
    let slots = storage._storage.get(address)
    if (slots === undefined) {
      slots = new Map()
      storage._storage.set(address, slots)
    }
    const keyHex = transientKey(key)
    storage._changeJournal.push({ addr: address, key: keyHex, prevValue: slots.get(keyHex) ?? new Uint8Array(32) })
    slots.set(keyHex, value)
  }
  return { tload, tstore }
}
