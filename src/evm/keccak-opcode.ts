/**
 * KECCAK256 (0x20) without the stock handler's hex round trip: the stock handler hashes a copy of
 * the memory range and turns the digest into a bigint through @ethereumjs/util's JavaScript hex
 * encoder; here the hash reads memory in place (hashing never writes its input) and the digest
 * becomes a bigint through a DataView (wordOfBytes). Same stack effects, same errors (the stack's
 * own popN), same memory extension (Memory.read extends as the stock call does); gas is charged by
 * the step before the handler runs and is untouched.
 *
 * Digests of short inputs are remembered per thread: a quote's KECCAK256s are mostly mapping slots
 * (a 64-byte key and slot: ERC-20 balances and allowances, V4 pool states, tick bitmap words), and
 * the same slots are hashed again by the next quote on the same state (the bench:quote mix: ~42 a
 * router execution, ~340 distinct inputs over thousands of hashes). A native hash is ~1.5-3 us
 * plus the digest's conversion (4.5% of the mix's EVM CPU); a remembered one is a latin1 key (one
 * character per byte, so distinct inputs give distinct keys) and a Map lookup. keccak256 is a pure
 * function, so a remembered digest is never stale: the memo needs no invalidation, only its bound
 * (KECCAK_MEMO_MAX_ENTRIES inputs of at most KECCAK_MEMO_MAX_INPUT_BYTES, the oldest out first).
 */
import { keccak256 } from './keccak.ts'
import { wordOfBytes } from './word-memory.ts'

export interface KeccakRunState {
  stack: { popN(n: number): bigint[]; push(value: bigint): void }
  memory: { read(offset: number, size: number, avoidCopy?: boolean): Uint8Array }
}

const EMPTY = new Uint8Array(0)
/** keccak256 of no bytes, as a word */
export const KECCAK_EMPTY_WORD = wordOfBytes(keccak256(EMPTY))

/** inputs longer than this are hashed every time (mapping slots are 64 bytes, nested ones too) */
export const KECCAK_MEMO_MAX_INPUT_BYTES = 128
/** digests remembered per thread at most (~250 bytes each: ~2 MB) */
export const KECCAK_MEMO_MAX_ENTRIES = 8192

/** input (latin1: one character per byte) -> digest as a word, in insertion order (oldest first) */
const memo = new Map<string, bigint>()

/** How many digests the memo holds (for tests). */
export function keccakMemoSize(): number {
  return memo.size
}

/** The digest of `data` as a word: remembered for inputs up to KECCAK_MEMO_MAX_INPUT_BYTES. */
export function keccakWord(data: Uint8Array): bigint {
  if (data.length > KECCAK_MEMO_MAX_INPUT_BYTES) return wordOfBytes(keccak256(data))
  const key = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1')
  let word = memo.get(key)
  if (word === undefined) {
    word = wordOfBytes(keccak256(data))
    if (memo.size >= KECCAK_MEMO_MAX_ENTRIES) memo.delete(memo.keys().next().value!)
    memo.set(key, word)
  }
  return word
}

export function keccakOpcode(runState: KeccakRunState): void {
  const [offset, length] = runState.stack.popN(2)
  if (length === 0n) {
    runState.stack.push(KECCAK_EMPTY_WORD)
    return
  }
  runState.stack.push(keccakWord(runState.memory.read(Number(offset), Number(length), true)))
}
