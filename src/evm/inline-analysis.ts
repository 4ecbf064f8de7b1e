/**
 * The per-code tables the inline batch (inline-steps.ts) reads, made once per jump analysis and
 * shared with it (interpreter-patches.ts, 1.):
 *
 * - `pushes`: the stock analysis keeps each PUSH's word in an object keyed by the push data's
 *   offset. For some codes (a 12 KB contract of the devnet's, one push per ~10 bytes) V8 keeps
 *   that object's elements as a hash table, and every PUSH of the inline batch (its commonest
 *   opcode, ~30% of a quote's steps) is a hash lookup. Here it is an array of one word per code
 *   offset (0n where no push data starts): an indexed load for every code. The stock PUSH handler
 *   reads it as it reads the object (`cachedPushes[programCounter]`, only at push data offsets).
 * - `pushJumps`: compiled Solidity jumps almost always to a constant: `PUSHn tag JUMP` and
 *   `PUSHn tag JUMPI`. For a PUSH at `pc` followed by JUMP or JUMPI whose word is a valid jump
 *   destination, `pushJumps[pc]` is that destination + 1 (0 for every other offset): the batch
 *   runs the pair as one step of two (no word pushed and popped, no bigint converted to find the
 *   destination, one dispatch), with the same fees, stack checks and result as the two steps.
 */

export interface InlineAnalysis {
  pushes: bigint[]
  pushJumps: Int32Array
}

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
  const pushJumps = new Int32Array(length)
  for (let pc = 0; pc < length; pc++) {
    const op = code[pc]
    if (op < 0x60 || op > 0x7f) continue
    const word = pushes[pc + 1]
    if (word === undefined) continue
    dense[pc + 1] = word
    const next = pc + op - 0x5e
    if (next >= length) continue
    const follower = code[next]
    if ((follower === 0x56 || follower === 0x57) && word < BigInt(length) && jumps[Number(word)] === 1) pushJumps[pc] = Number(word) + 1
  }
  return { pushes: dense, pushJumps }
}
