/**
 * The per-code tables the inline batch (inline-steps.ts) reads, made once per jump analysis and
 * shared with it (interpreter-patches.ts, 1.):
 *
 * - the instruction stream: the batch walks the code's instructions by index, not its bytes by
 *   offset. A step read the code byte, then for a PUSH a jump table and the word table at its
 *   offset: three arrays of up to ~100 KB each at scattered offsets (in the profile the PUSH's two
 *   loads were ~18% of the batch's line ticks). Here a step reads one Int32 of `stream` (the
 *   instructions in code order, two Int32s each, so the next one is in the same cache line) and a
 *   PUSH its word from `words`, in the same order.
 *   `stream[2 * i]` is instruction i's opcode | (the index of its jump destination + 1) << 8, and
 *   `stream[2 * i + 1]` its offset in the code; after the last instruction one more entry, opcode
 *   STOP (never inlined: the batch stops there) at the offset the last one ends at, which is past
 *   the code's end where the code ends inside a PUSH's data (the stock PUSH moves there too).
 * - the fused destination: compiled Solidity jumps almost always to a constant: `PUSHn tag JUMP`
 *   and `PUSHn tag JUMPI`. For a PUSH followed by JUMP or JUMPI whose word is a valid jump
 *   destination, its entry names the destination's instruction (0 for every other instruction):
 *   the batch runs the pair as one step of two (no word pushed and popped, no bigint converted to
 *   find the destination, one dispatch), with the same fees, stack checks and result as the two
 *   steps.
 * - `entries`: per code offset, where the batch starts (the loop's program counter) and where a
 *   jump from the stack lands: (instruction index + 1) << 1, | 1 at a valid jump destination (the
 *   stock analysis' JUMPDESTs); 0 inside push data, where no instruction starts.
 *
 * The walk skips only push data. Where EIP-8024 is active the stock analysis also skips the
 * immediates of DUPN, SWAPN and EXCHANGE, which the batch never runs: it stops at them, and from
 * an offset where this walk and the stock's disagree (entries 0, or not flagged a destination) it
 * runs nothing, so it only ever decodes forward from an instruction the stock loop is at.
 *
 * The PUSH words are kept once, in `words` (instruction order). The stock PUSH handler's table,
 * one word per push data offset, is not kept here: only the stock loop reads it, and the shared
 * analysis makes it when that happens (interpreter-patches.ts, 13.); a dense copy of it held one
 * 8-byte slot per code byte for every code content an isolate had run.
 *
 * Without EIP-8024 the stock analysis is a walk that skips push data, a JUMPDEST valid at an
 * instruction start, each PUSH's word its data bytes (padded on the right where the code ends
 * inside them): `legacyCodeAnalysis` makes that jump table in a walk of its own and the batch's
 * tables from it, without the stock one's per-byte opcode table and word object that were thrown
 * away.
 */

export interface InlineAnalysis {
  stream: Int32Array
  words: bigint[]
  entries: Int32Array
}

/** a fused destination is kept in the 23 bits above the opcode of a (signed) Int32 entry */
const MAX_FUSED_INDEX = (1 << 23) - 2

/**
 * The tables of `code` from the stock analysis' results: its `jumps` (1 at each JUMPDEST) and its
 * `pushes` object, which has a word exactly at the offset after each PUSH the stock analysis reads
 * as an instruction (none for a push data byte that looks like a PUSH). The instruction after a
 * PUSH starts where its data ends, in the stock analysis as here. Without `pushes` each PUSH's word
 * is read from its data bytes, as the stock analysis reads it.
 */
export function inlineAnalysis(code: Uint8Array, jumps: Uint8Array, pushes?: Record<number, bigint>): InlineAnalysis {
  const length = code.length
  const entries = new Int32Array(length)
  const offsets: number[] = []
  const words: bigint[] = []
  // one bigint per distinct word below 2^48 of this code (dropped with the walk)
  const seen = new Map<number, bigint>()
  let pc = 0
  while (pc < length) {
    const op = code[pc]
    entries[pc] = ((offsets.length + 1) << 1) | (jumps[pc] === 1 ? 1 : 0)
    offsets.push(pc)
    const isPush = op >= 0x60 && op <= 0x7f
    words.push(!isPush ? 0n : pushes === undefined ? codeWord(code, pc + 1, op - 0x5f, seen) : sharedWord(pushes[pc + 1] ?? 0n, seen))
    pc += isPush ? op - 0x5e : 1
  }
  const count = offsets.length
  const stream = new Int32Array(2 * (count + 1))
  for (let i = 0; i < count; i++) {
    const at = offsets[i]
    const op = code[at]
    let fused = 0
    if (op >= 0x60 && op <= 0x7f && i + 1 < count) {
      const follower = code[offsets[i + 1]]
      const word = words[i]
      if ((follower === 0x56 || follower === 0x57) && word < BigInt(length) && jumps[Number(word)] === 1) {
        const target = (entries[Number(word)] >> 1) - 1
        if (target <= MAX_FUSED_INDEX) fused = target + 1
      }
    }
    stream[2 * i] = op | (fused << 8)
    stream[2 * i + 1] = at
  }
  // the end: STOP (0x00) where the last instruction ends
  stream[2 * count] = 0x00
  stream[2 * count + 1] = pc
  words.push(0n)
  return { stream, words, entries }
}

/** words below this are shared: a number key exact in a double */
const SHARED_WORD_LIMIT = 1n << 48n

/** the words below 256 (most PUSH1s: 0x20, 0x40, 0x00, 0x04, 0xff, ...), one bigint each for every code */
const BYTE_WORDS: readonly bigint[] = Array.from({ length: 256 }, (_, v) => BigInt(v))

/**
 * The PUSH words of one code as few bigints: a word below 256 is BYTE_WORDS' and one below 2^48
 * that an earlier PUSH of the code pushed already (the PUSH2 tags of a function's return, memory
 * offsets) is that one's bigint, so an analysis holds one heap object per distinct value, not one
 * per PUSH (~24 bytes each; a bigint is immutable and `===` compares values: which object a step
 * pushes is not observable).
 */
function sharedWord(word: bigint, seen: Map<number, bigint>): bigint {
  if (word >= SHARED_WORD_LIMIT) return word
  return numberWord(Number(word), seen, word)
}

/** the bigint of `value` (an integer below 2^48) for this code: BYTE_WORDS', the code's earlier one, or `word` (made here when not given) */
function numberWord(value: number, seen: Map<number, bigint>, word?: bigint): bigint {
  if (value < 256) return BYTE_WORDS[value]
  const held = seen.get(value)
  if (held !== undefined) return held
  const made = word ?? BigInt(value)
  seen.set(value, made)
  return made
}

/** a PUSH's word read from the code as `pushWord` reads it, shared as `sharedWord` shares it (a whole word of up to 6 bytes without a bigint made first) */
function codeWord(code: Uint8Array, at: number, size: number, seen: Map<number, bigint>): bigint {
  if (size > 6 || at + size > code.length) return sharedWord(pushWord(code, at, size), seen)
  return numberWord(bytesValue(code, at, size), seen)
}

/** `size` (at most 6: up to 48 bits, exact in a double) code bytes from `at` as one big-endian number */
function bytesValue(code: Uint8Array, at: number, size: number): number {
  let value = 0
  for (let i = 0; i < size; i++) value = value * 256 + code[at + i]
  return value
}

/**
 * The stock jump analysis' `jumps` (1 at each JUMPDEST that starts an instruction) and the batch's
 * tables of `code`, in the stock analysis' walk where EIP-8024 is not active (only push data
 * skipped): what the stock analysis and `inlineAnalysis` over its results give, without its
 * per-byte opcode table and word object.
 */
export function legacyCodeAnalysis(code: Uint8Array): { jumps: Uint8Array; inline: InlineAnalysis } {
  const jumps = new Uint8Array(code.length)
  for (let pc = 0; pc < code.length; pc++) {
    const op = code[pc]
    if (op === 0x5b) jumps[pc] = 1
    else if (op >= 0x60 && op <= 0x7f) pc += op - 0x5f
  }
  return { jumps, inline: inlineAnalysis(code, jumps) }
}

/** the word of a PUSH of `size` bytes whose data starts at `at`: missing bytes past the code's end are zeros on the right, as the stock analysis pads them */
export function pushWord(code: Uint8Array, at: number, size: number): bigint {
  const present = Math.max(0, Math.min(size, code.length - at))
  const word = present <= 6 ? BigInt(bytesValue(code, at, present)) : BigInt('0x' + Buffer.from(code.buffer, code.byteOffset + at, present).toString('hex'))
  return present === size || word === 0n ? word : word << BigInt(8 * (size - present))
}
