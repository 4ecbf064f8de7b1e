/**
 * The per-code tables the inline batch (inline-steps.ts) reads, made once per jump analysis and
 * shared with it (interpreter-patches.ts, 1.):
 *
 * - `pushes`: the stock analysis keeps each PUSH's word in an object keyed by the push data's
 *   offset. For some codes (a 12 KB contract of the devnet's, one push per ~10 bytes) V8 keeps
 *   that object's elements as a hash table, and every lookup is a hash lookup. Here it is an array
 *   of one word per code offset (0n where no push data starts): an indexed load for every code.
 *   The stock PUSH handler reads it as it reads the object (`cachedPushes[programCounter]`, only at
 *   push data offsets), on the steps the batch leaves to it.
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
 */

export interface InlineAnalysis {
  pushes: bigint[]
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
 * PUSH starts where its data ends, in the stock analysis as here.
 */
export function inlineAnalysis(code: Uint8Array, jumps: Uint8Array, pushes: Record<number, bigint>): InlineAnalysis {
  const length = code.length
  // pushed one by one: a packed array of words, no holes
  const dense: bigint[] = []
  for (let i = 0; i <= length; i++) dense.push(0n)
  const entries = new Int32Array(length)
  const offsets: number[] = []
  const words: bigint[] = []
  let pc = 0
  while (pc < length) {
    const op = code[pc]
    entries[pc] = ((offsets.length + 1) << 1) | (jumps[pc] === 1 ? 1 : 0)
    offsets.push(pc)
    const word = op >= 0x60 && op <= 0x7f ? pushes[pc + 1] : undefined
    words.push(word ?? 0n)
    if (word !== undefined) dense[pc + 1] = word
    pc += op >= 0x60 && op <= 0x7f ? op - 0x5e : 1
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
  return { pushes: dense, stream, words, entries }
}
