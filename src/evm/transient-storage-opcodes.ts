/**
 * TLOAD (0x5c) and TSTORE (0x5d) with the slot key made into TransientStorage's map key directly.
 * The stock handlers turn the key into bytes (`setLengthLeft(bigIntToBytes(key), 32)`: a hex
 * string and an array spread) that @ethereumjs/evm's TransientStorage turns back into a hex string
 * (`bytesToHex`) for its map: ~3.6% of the EVM's CPU on the bench:quote mix, whose V4 PoolManager
 * keeps its deltas and lock in transient storage. Here the key's hex is made once from the bigint,
 * the same string (`0x` and 64 lower-case digits), and the storage's own map and journal are
 * read and written exactly as its `get` and `put` do; values are stored as the stock handler stores
 * them (`bigIntToBytes`'s bytes, empty for zero; made and read through word-memory.ts's DataView, not
 * a hex string), so checkpoints, reverts and `toJSON` see the same entries.
 * A static frame's TSTORE, and any EVM whose transient storage is not the stock class's shape, run
 * the stock handlers.
 *
 * The keys are remembered per thread by slot (word-hex-memo.ts, at most
 * TRANSIENT_KEY_MEMO_MAX_ENTRIES): a quote's ~45 TLOADs and TSTOREs an execution touch few slots
 * (V4's lock, its currency deltas and their count), the same ones quote after quote.
 */
import { shortBytesOfWord, wordOfShortBytes } from './word-memory.ts'
import { WordHexMemo } from './word-hex-memo.ts'

/** The parts of @ethereumjs/evm's TransientStorage its get and put use. */
interface StockTransientStorage {
  _storage: Map<string, Map<string, Uint8Array>>
  _changeJournal: { addr: string; key: string; prevValue: Uint8Array }[]
}

/** What TLOAD reads of ethereumjs' Interpreter: the EVM's transient storage and the frame's address. */
export interface TransientInterpreter {
  _evm: { transientStorage: unknown }
  _env: { address: { toString(): string } }
}

export interface TransientRunState {
  stack: { pop(): bigint; popN(n: number): bigint[]; push(value: bigint): void }
  interpreter: TransientInterpreter & { isStatic(): boolean }
}

type Handler = (runState: TransientRunState, common: unknown) => void

/** slots whose keys are remembered at most (~200 bytes each: under 1 MB) */
export const TRANSIENT_KEY_MEMO_MAX_ENTRIES = 4096

const keyMemo = new WordHexMemo(TRANSIENT_KEY_MEMO_MAX_ENTRIES, '0x')

/** How many keys the memo holds (for tests). */
export function transientKeyMemoSize(): number {
  return keyMemo.size
}

/** TransientStorage's key of a slot: `bytesToHex(setLengthLeft(bigIntToBytes(key), 32))`, remembered */
export function transientKey(key: bigint): string {
  return keyMemo.hex(key)
}

function stockShaped(storage: unknown): storage is StockTransientStorage {
  const s = storage as Partial<StockTransientStorage> | undefined
  return s !== undefined && s._storage instanceof Map && Array.isArray(s._changeJournal)
}

/**
 * The frame's transient word at slot `key` as TLOAD reads it, or undefined where the EVM's transient
 * storage is not the stock class's shape (the stock handler reads it then). TLOAD's handler below
 * and the inline batch (inline-steps.ts, which runs TLOAD without a turn of the loop) both read it
 * here, so the two give the same word.
 */
export function transientWord(interpreter: TransientInterpreter, key: bigint): bigint | undefined {
  const storage = interpreter._evm.transientStorage
  return stockShaped(storage) ? readWord(storage, interpreter, key) : undefined
}

/** TransientStorage.get: a missing address or slot reads as 32 zero bytes, i.e. 0 */
function readWord(storage: StockTransientStorage, interpreter: TransientInterpreter, key: bigint): bigint {
  const value = storage._storage.get(interpreter._env.address.toString())?.get(transientKey(key))
  return value === undefined || value.length === 0 ? 0n : wordOfShortBytes(value)
}

/** TLOAD and TSTORE over the stock handlers `stock`, which they fall back to. */
export function transientStorageHandlers(stock: { tload: Handler; tstore: Handler }): { tload: Handler; tstore: Handler } {
  const tload: Handler = (runState, common) => {
    const storage = runState.interpreter._evm.transientStorage
    if (!stockShaped(storage)) return stock.tload(runState, common)
    runState.stack.push(readWord(storage, runState.interpreter, runState.stack.pop()))
  }
  const tstore: Handler = (runState, common) => {
    const storage = runState.interpreter._evm.transientStorage
    if (!stockShaped(storage) || runState.interpreter.isStatic()) return stock.tstore(runState, common)
    const [key, val] = runState.stack.popN(2)
    // the stock handler's value: empty for zero, else the shortest big-endian bytes (bigIntToBytes's)
    const value = val === 0n ? new Uint8Array(0) : shortBytesOfWord(val)
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
