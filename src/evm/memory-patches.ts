/**
 * EVM memory in the stock interpreter (`@ethereumjs/evm` 10.1.3 memory.js and the copy opcodes),
 * patched without changing what memory holds or what gas is charged (gas is charged before any of
 * this runs). Applied by applyInterpreterPatches (interpreter-patches.ts 7. and 8.).
 *
 * Measured on ethereum/tests QuadraticComplexitySolidity_CallDataCopy (17,000 calls, each copying
 * 50,000 bytes of its 36-byte calldata into a fresh frame's memory; 48 s with the stock code):
 *
 * - Copies (CALLDATACOPY, CODECOPY, EXTCODECOPY) build the bytes they copy with `getDataSlice`,
 *   which pads a source shorter than the copy through `setLengthRight`, i.e.
 *   `new Uint8Array([...source, ...new Uint8Array(n)])`: every padded byte goes through an array
 *   spread (~40 us per kilobyte), then the padded slice is copied again into memory. Here the
 *   existing part of the source is copied into memory directly, and the rest zeroed.
 * - Growing memory allocated the grown part and then a buffer for old + grown part
 *   (`concatBytes`), every frame anew, after the 8 KB every frame is given as it starts. Here a
 *   frame starts without a buffer (`emptyMemory`, used by frame-patches.ts), takes its buffers
 *   from a bounded pool as it grows, and gives them back when it ends (a frame's memory is never read once it has run: its return
 *   data, log data and created code are copies; the calldata views it gave callees are not used
 *   once those callees have returned).
 * - Nothing is zeroed or copied that was never written: a Memory keeps a high-water mark
 *   (`_high`, the end of the furthest write: `write`, patched to keep it, and the copies here are
 *   the only writers), bytes past it are known to be zero, so neither growth, nor copies, nor the
 *   return to the pool zero or copy them again. Expanding memory writes nothing: a frame that
 *   expands its memory to 50,000 bytes and writes 36 of them gives back a buffer with 36 bytes to
 *   zero (it was the furthest byte any `extend` had reached, i.e. all 50,000).
 */

import { EthereumJSErrorWithoutCode } from '@ethereumjs/util'

export interface PatchedMemory {
  _store: Uint8Array
  /** the end of the furthest write (absent: 0); past it, `_store` is all zeros */
  _high?: number
  extend(offset: number, size: number): void
}

/** Memory grows in chunks of this many bytes, as the stock Memory does (its CONTAINER_SIZE). */
const MEMORY_CHUNK = 8192
/** Buffers kept for reuse: none larger than this, ... */
const POOLED_BUFFER_MAX_BYTES = 1024 * 1024
/** ... and at most this many bytes of them in all. */
export const POOLED_MEMORY_MAX_BYTES = 16 * 1024 * 1024

const pooled = new Map<number, Uint8Array[]>()
let pooledBytes = 0
const NO_MEMORY = new Uint8Array(0)

/** A Memory (the stock class) with no buffer yet: `extend` takes one from the pool on first use. */
export function emptyMemory(Memory: { prototype: object }): PatchedMemory {
  const memory = Object.create(Memory.prototype) as PatchedMemory
  memory._store = NO_MEMORY
  memory._high = 0
  return memory
}

/** A zeroed buffer of `size` bytes (a multiple of MEMORY_CHUNK): a reused one when there is one. */
function zeroedBuffer(size: number): Uint8Array {
  const reused = pooled.get(size)?.pop()
  if (reused === undefined) return new Uint8Array(size)
  pooledBytes -= size
  return reused
}

/** What the pool holds (for tests). */
export function memoryPoolStats(): { buffers: number; bytes: number } {
  let buffers = 0
  for (const list of pooled.values()) buffers += list.length
  return { buffers, bytes: pooledBytes }
}

/**
 * `n` rounded up to a multiple of `multiple` (both non-negative integers below 2^53), exactly as
 * Math.ceil(n / multiple) * multiple, without the division: V8 compiles a division it has seen
 * give only small integers as an int32 one and deoptimizes its caller ("lost precision") at the
 * first one with a remainder (seen in every worker's first seconds, writeWord inlined in the batch)
 */
export function roundUp(n: number, multiple: number): number {
  const above = n + multiple - 1
  return above - (above % multiple)
}

/**
 * The stock `Memory.extend`: the size rounded up to a word, the store grown by whole chunks with the
 * old bytes kept; the new store from the pool, and only the bytes below the high-water mark copied.
 */
export function extendMemory(this: PatchedMemory, offset: number, size: number): void {
  if (size === 0) return
  const newSize = roundUp(offset + size, 32)
  const store = this._store
  if (newSize <= store.length) return
  const next = zeroedBuffer(store.length + roundUp(newSize - store.length, MEMORY_CHUNK))
  const high = this._high ?? 0
  if (high > 0) next.set(high >= store.length ? store : store.subarray(0, high))
  this._store = next
}

/** The stock `Memory.write` (extend, the same checks, the bytes set), keeping the high-water mark. */
export function writeMemory(this: PatchedMemory, offset: number, size: number, value: Uint8Array): void {
  if (size === 0) return
  this.extend(offset, size)
  if (value.length !== size) throw EthereumJSErrorWithoutCode('Invalid value size')
  if (offset + size > this._store.length) throw EthereumJSErrorWithoutCode('Value exceeds memory capacity')
  this._store.set(value, offset)
  if (offset + size > (this._high ?? 0)) this._high = offset + size
}

/** A frame's memory back to the pool, zeroed below its high-water mark; the frame's Memory is left empty. */
export function releaseFrameMemory(memory: PatchedMemory): void {
  const store = memory._store
  const high = memory._high ?? 0
  memory._store = NO_MEMORY
  memory._high = 0
  const size = store.length
  if (size < MEMORY_CHUNK || size > POOLED_BUFFER_MAX_BYTES || size % MEMORY_CHUNK !== 0 || pooledBytes + size > POOLED_MEMORY_MAX_BYTES) return
  store.fill(0, 0, Math.min(high, size))
  let list = pooled.get(size)
  if (list === undefined) pooled.set(size, (list = []))
  list.push(store)
  pooledBytes += size
}

/**
 * `source[srcOffset, srcOffset + length)` into memory at `memOffset`, zeros past the source's end:
 * what the stock copy does (`getDataSlice`, then `memory.write` of the padded slice).
 */
function copyToMemory(memory: PatchedMemory, memOffset: bigint, source: Uint8Array, srcOffset: bigint, length: bigint): void {
  const offset = Number(memOffset)
  const size = Number(length)
  const high = memory._high ?? 0
  memory.extend(offset, size)
  const start = srcOffset < BigInt(source.length) ? Number(srcOffset) : source.length
  const end = Math.min(source.length, start + size)
  const store = memory._store
  store.set(source.subarray(start, end), offset)
  // the padding: zeros over what memory held below the old high-water mark (above it: zeros already)
  const padFrom = offset + (end - start)
  const padTo = Math.min(offset + size, high)
  if (padFrom < padTo) store.fill(0, padFrom, padTo)
  if (padFrom > high) memory._high = padFrom
}

export interface CopyRunState {
  stack: { popN(n: number): bigint[] }
  memory: PatchedMemory
  interpreter: { getCallData(): Uint8Array; getCode(): Uint8Array; _evm: { common: { isActivatedEIP(eip: number): boolean }; blockLevelAccessList?: { addAddress(a: string): void } } }
  stateManager: { getCode(address: unknown): Promise<Uint8Array> }
}

export interface CopyInternals {
  createAddressFromStackBigInt(value: bigint): { toString(): string }
  isEOF(code: Uint8Array): boolean
  EOFBYTES: Uint8Array
}

/** The copy opcodes' handlers (0x37 CALLDATACOPY, 0x39 CODECOPY, 0x3c EXTCODECOPY) over `copyToMemory`. */
export function copyHandlers({ createAddressFromStackBigInt, isEOF, EOFBYTES }: CopyInternals): Map<number, (runState: CopyRunState) => void | Promise<void>> {
  return new Map<number, (runState: CopyRunState) => void | Promise<void>>([
    [
      0x37,
      (runState) => {
        const [memOffset, dataOffset, length] = runState.stack.popN(3)
        if (length !== 0n) copyToMemory(runState.memory, memOffset, runState.interpreter.getCallData(), dataOffset, length)
      },
    ],
    [
      0x39,
      (runState) => {
        const [memOffset, codeOffset, length] = runState.stack.popN(3)
        if (length !== 0n) copyToMemory(runState.memory, memOffset, runState.interpreter.getCode(), codeOffset, length)
      },
    ],
    [
      // the stock handler (EIP-7928 access list entry, EOF code seen as EOFBYTES) with the copy above
      0x3c,
      async (runState) => {
        const [addressBigInt, memOffset, codeOffset, length] = runState.stack.popN(4)
        const address = createAddressFromStackBigInt(addressBigInt)
        const evm = runState.interpreter._evm
        if (evm.common.isActivatedEIP(7928)) evm.blockLevelAccessList?.addAddress(address.toString())
        if (length === 0n) return
        const code = await runState.stateManager.getCode(address)
        copyToMemory(runState.memory, memOffset, isEOF(code) ? EOFBYTES : code, codeOffset, length)
      },
    ],
  ])
}
