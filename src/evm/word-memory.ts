/**
 * MLOAD and MSTORE (`@ethereumjs/evm` 10.1.3 opcodes/functions.js) and the memory gas of word
 * accesses, without hex strings between bigints and bytes. Installed per EVM by
 * patchEvmInstance (interpreter-patches.ts 4.), the gas by sync-gas.ts.
 *
 * A V3 swap runs ~420 of them. Measured with a loop of DUP1 PUSH1 0 MSTORE PUSH1 0 MLOAD POP
 * in the interpreter: ~680 ns each, of which:
 * - MLOAD turned the 32 bytes into a 66-character hex string (`bytesToBigInt`), then parsed it
 *   (~500 ns); here four big-endian 64-bit reads of a DataView over the memory (~90 ns);
 * - MSTORE wrote the word's hex into a buffer through Node's hex decoder (~230 ns; ethereumjs'
 *   own `setLengthLeft(bigIntToBytes(word), 32)` was ~1.6 us); here four 64-bit writes (~75 ns);
 * - the memory gas of a word inside the memory already paid for went through `subMemUsage`'s
 *   bigint ceiling division (`divCeil` is a division and a modulo) and `Common.param` twice:
 *   here the end of the access is compared with the memory size as plain numbers first, and only
 *   an access that may expand memory goes to the stock `subMemUsage`.
 *
 * Memory holds and gas charges exactly what the stock handlers give: the store is grown by the same
 * `extend`, and the high-water mark of memory-patches.ts is kept (a write past it raises it).
 */
import type { PatchedMemory } from './memory-patches.ts'

export interface WordMemory extends PatchedMemory {
  /** a DataView over `_viewOf`, the store it was made for (the store changes as memory grows) */
  _view?: DataView
  _viewOf?: Uint8Array
}

/** What the handlers use of ethereumjs' Stack (`_store` and `_len` are its own fields). */
interface WordStack {
  _store: bigint[]
  _len: number
  pop(): bigint
  popN(n: number): bigint[]
  push(value: bigint): void
}

export interface WordRunState {
  stack: WordStack
  memory: WordMemory
}

function viewOf(memory: WordMemory): DataView {
  const store = memory._store
  if (memory._viewOf !== store || memory._view === undefined) {
    memory._view = new DataView(store.buffer, store.byteOffset, store.byteLength)
    memory._viewOf = store
  }
  return memory._view
}

/** The 32-byte big-endian word at `offset`, memory grown to hold it as `Memory.read` grows it. */
export function readWord(memory: WordMemory, offset: number): bigint {
  memory.extend(offset, 32)
  return wordAt(viewOf(memory), offset)
}

const TWO_POW64 = 1n << 64n
const TWO_POW128 = 1n << 128n

/** `word` (< 2^256) written big-endian at `offset`, as `Memory.write(offset, 32, bytes)` writes it. */
export function writeWord(memory: WordMemory, offset: number, word: bigint): void {
  memory.extend(offset, 32)
  putWord(viewOf(memory), offset, word)
  const end = offset + 32
  if (end > (memory._high ?? 0)) memory._high = end
}

/**
 * `word` (< 2^256) as 32 big-endian bytes at `offset` of `view`. Most words written are below
 * 2^128 (numbers, addresses, amounts): their zero high halves are written as doubles (+0 is eight
 * zero bytes), not as a bigint each, and only the shifts a word needs are made (~25% less time a
 * word than four bigint writes with three shifts, a loop over 256 words of mixed sizes,
 * seventeenth session).
 */
export function putWord(view: DataView, offset: number, word: bigint): void {
  // setBigUint64 keeps the low 64 bits of what it is given
  if (word < TWO_POW64) {
    view.setFloat64(offset, 0)
    view.setFloat64(offset + 8, 0)
    view.setFloat64(offset + 16, 0)
  } else if (word < TWO_POW128) {
    view.setFloat64(offset, 0)
    view.setFloat64(offset + 8, 0)
    view.setBigUint64(offset + 16, word >> 64n)
  } else {
    view.setBigUint64(offset, word >> 192n)
    view.setBigUint64(offset + 8, word >> 128n)
    view.setBigUint64(offset + 16, word >> 64n)
  }
  view.setBigUint64(offset + 24, word)
}

/** where bytesOfWord writes a word before copying it out: a DataView made per word cost ~2/3 of its time */
const scratchWord = new Uint8Array(32)
const scratchWordView = new DataView(scratchWord.buffer)

/**
 * `word` (< 2^256) as 32 new big-endian bytes: what `setLengthLeft(bigIntToBytes(word), 32)` gives
 * (~190-200 ns in a loop over 64 words, against ~500-640 with a DataView made over new bytes per word)
 */
export function bytesOfWord(word: bigint): Uint8Array {
  putWord(scratchWordView, 0, word)
  return scratchWord.slice()
}

/**
 * `word` (< 2^256) as its shortest big-endian bytes, new (one byte, 0, for 0): what
 * `bigIntToBytes(word)` gives (TSTORE's stored value) without its hex string and parse (~120 ns
 * against ~240-340 a word, a loop over 64 small and large words, sixteenth session).
 */
export function shortBytesOfWord(word: bigint): Uint8Array {
  putWord(scratchWordView, 0, word)
  let first = 0
  while (first < 31 && scratchWord[first] === 0) first++
  return scratchWord.slice(first)
}

/**
 * The bigint of `bytes` (big-endian, at most 32 of them; 0 for none): what `bytesToBigInt(bytes)`
 * gives (TLOAD's stored value), read through the scratch word's DataView instead of a hex string
 * (~120 ns against ~205 a word, the same loop).
 */
export function wordOfShortBytes(bytes: Uint8Array): bigint {
  const n = bytes.length
  if (n === 0) return 0n
  if (n > 32) throw new RangeError(`wordOfShortBytes: ${n} bytes, more than a word`)
  scratchWord.fill(0, 0, 32 - n)
  scratchWord.set(bytes, 32 - n)
  return wordAt(scratchWordView, 0)
}

/**
 * The bigint of the first 32 big-endian bytes of `bytes` (a digest, a calldata word): four 64-bit
 * reads of a DataView, as readWord (~2x faster than through a hex string and BigInt's parser,
 * measured in a loop over 127 words: ~180-290 against ~400-1,100 ns on a loaded machine).
 */
export function wordOfBytes(bytes: Uint8Array): bigint {
  return wordAt(new DataView(bytes.buffer, bytes.byteOffset, 32), 0)
}

/**
 * The bigint of the 32 big-endian bytes at `offset` of `view` (which holds them). Most words are
 * small numbers, addresses or amounts, whose high 12 bytes are zero: those are tested as numbers
 * first, and such a word made of two 64-bit reads and at most a 32-bit one, not four bigints (~20%
 * less time a word over 256 words of mixed sizes, the same for full-width words: a loop,
 * seventeenth session).
 */
export function wordAt(view: DataView, offset: number): bigint {
  if ((view.getUint32(offset) | view.getUint32(offset + 4) | view.getUint32(offset + 8)) === 0) {
    const high = view.getUint32(offset + 12)
    const c = view.getBigUint64(offset + 16)
    const d = view.getBigUint64(offset + 24)
    if (high === 0) return c === 0n ? d : (c << 64n) | d
    return (BigInt(high) << 128n) | (c << 64n) | d
  }
  const a = view.getBigUint64(offset)
  const b = view.getBigUint64(offset + 8)
  const c = view.getBigUint64(offset + 16)
  const d = view.getBigUint64(offset + 24)
  return (a << 192n) | (b << 128n) | (c << 64n) | d
}

/** 0x51 MLOAD: the stock handler (pop the offset, push the word there). */
export function mload(runState: WordRunState): void {
  const stack = runState.stack
  const offset = stack.pop()
  stack.push(readWord(runState.memory, Number(offset)))
}

/** 0x52 MSTORE: the stock handler (pop offset, then word; write the word at the offset). */
export function mstore(runState: WordRunState): void {
  const stack = runState.stack
  // popN's underflow check first, as the stock handler's `popN(2)`
  if (stack._len < 2) stack.popN(2)
  const offset = stack.pop()
  const word = stack.pop()
  writeWord(runState.memory, Number(offset), word)
}

export interface PaidMemoryRunState {
  stack: Pick<WordStack, '_store' | '_len'>
  memoryWordCount: bigint
}

/** Offsets up to this are compared as numbers (exact below 2^53). */
const NUMBER_OFFSET_MAX = 0xffffffffn

/**
 * Whether `width` bytes at the offset on top of the stack lie in the memory already paid for
 * (`memoryWordCount` words): then `subMemUsage` charges nothing and changes nothing. Undefined when
 * that is not decided here (an empty stack, an offset too large for a number).
 */
export function withinPaidMemory(runState: PaidMemoryRunState, width: number): boolean | undefined {
  const stack = runState.stack
  if (stack._len < 1) return undefined
  const offset = stack._store[stack._len - 1]
  if (offset > NUMBER_OFFSET_MAX) return undefined
  return Number(offset) + width <= Number(runState.memoryWordCount) * 32
}
