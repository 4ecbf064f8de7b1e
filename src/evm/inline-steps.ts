/**
 * The commonest opcodes of compiled Solidity (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST, the
 * arithmetic, comparison and bitwise ones without dynamic gas, the call's environment: ADDRESS,
 * CALLER, CALLVALUE, CALLDATASIZE, RETURNDATASIZE, CALLDATALOAD; GAS; MLOAD and MSTORE) run by the interpreter loop itself, with the frame's gas as a number: the stock step
 * costs a function call through the opcode table, an array from `popN` per binary operation and a
 * new bigint per gas subtraction, and each opcode the batch cannot run sends the loop back through
 * its dispatch (~1,900 of a bench:quote mix execution's ~21,700 steps were, MSTORE, MLOAD and
 * CALLDATALOAD ~1,150 of them, SIGNEXTEND, SLT and the other signed operations ~250).
 *
 * `runInlineSteps` runs them in a batch, as long as they follow one another, with the program
 * counter and the stack height in locals. A jump's destination is a JUMPDEST (~6.5% of the batch's
 * steps, nearly all right after a jump): it is run right after the jump, with the checks the loop's
 * next turn would make (steps left, its fee inlined and paid for), not by another turn. It does only what succeeds: with too little gas for the
 * fee, a stack too short or too high, or a jump to no JUMPDEST, it stops before that opcode,
 * changing nothing of it, and the caller runs the stock step, which fails exactly as it always
 * did. What it does is the stock handler's effect (@ethereumjs/evm opcodes/functions.js, line for
 * line in the comments; for CALLDATALOAD, MLOAD and MSTORE this project's handlers of
 * calldata-load.ts and word-memory.ts) plus the stock step's: the static fee charged and the
 * program counter advanced. MLOAD and MSTORE run here inside the memory paid for (their memory gas
 * is then nothing) and where they grow it below MEMORY_GROWTH_BYTES_MAX: their memory gas is then
 * the stock `subMemUsage`'s (words * memoryGas + words^2 / quadCoefficientDivGas, less what the
 * frame has paid) in numbers, exact below 2^53, with the run state's `memoryWordCount` and
 * `highestMemCost` set as it sets them (~280 MSTOREs of a bench:quote mix execution grew memory:
 * Solidity's allocations past the free memory pointer). CALLDATALOAD runs only for a word inside
 * the calldata or past it; anything else is left to the caller's step. The caller keeps the gas as a number only while
 * the frame's gas fits a double exactly (< 2^53) and writes it back to the run state before any
 * other step, so every other code sees `gasLeft` as the stock loop leaves it.
 */

import { addressWord, type AddressWithBytes } from './address-patches.ts'
import { KECCAK_EMPTY_WORD, KECCAK_MEMO_MAX_INPUT_BYTES, keccakWord } from './keccak-opcode.ts'
import { transientWord, type TransientInterpreter } from './transient-storage-opcodes.ts'
import { readWord, wordAt, writeWord, type WordMemory } from './word-memory.ts'

const TWO_POW256 = 1n << 256n
const MAX_UINT256 = TWO_POW256 - 1n
/** memory offsets up to this are compared as numbers (exact below 2^53), as word-memory.ts's withinPaidMemory */
const NUMBER_OFFSET_MAX = 0xffffffffn
/**
 * MLOAD and MSTORE grow memory in the batch only up to this many bytes (16 MiB: at most 2^19
 * words, so words^2 < 2^38 and every term of the memory gas is an exact double); a larger growth,
 * which costs more gas than a block holds, is left to the stock step
 */
export const MEMORY_GROWTH_BYTES_MAX = 1 << 24
/**
 * KECCAK256 runs in the batch for inputs up to this many bytes (the memo's: mapping slots are 64);
 * longer ones, rare, are left to the caller's step
 */
const KECCAK_INLINE_MAX_BYTES = BigInt(KECCAK_MEMO_MAX_INPUT_BYTES)

export interface InlineStack {
  _store: bigint[]
  _len: number
  _maxHeight: number
}

/** What the environment opcodes read (ethereumjs' Interpreter getters, which the stock handlers call), and TLOAD. */
export interface InlineInterpreter extends TransientInterpreter {
  getCallData(): Uint8Array
  getCallDataSize(): bigint
  getCallValue(): bigint
  getCaller(): bigint
  getReturnDataSize(): bigint
  /** the frame's address (an ethereumjs Address; ADDRESS pushes it as a word through address-patches.ts's addressWord) */
  getAddress(): AddressWithBytes
}

export interface InlineRunState {
  stack: InlineStack
  programCounter: number
  code: Uint8Array
  /** the frame's memory and the words of it paid for: MLOAD and MSTORE run inline inside them */
  memory: WordMemory & { read(offset: number, size: number, avoidCopy?: boolean): Uint8Array }
  memoryWordCount: bigint
  /** what the frame has paid for its memory so far (the stock `subMemUsage` keeps it) */
  highestMemCost: bigint
  interpreter: InlineInterpreter
}

/**
 * the opcodes runInlineSteps runs with the stock handler's effect; every one static-fee and
 * synchronous in every hardfork that has it
 */
export const INLINE_OPCODES: readonly number[] = [
  0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, // ADD MUL SUB DIV SDIV MOD SMOD ADDMOD MULMOD SIGNEXTEND
  0x10, 0x11, 0x12, 0x13, 0x14, 0x15, // LT GT SLT SGT EQ ISZERO
  0x16, 0x17, 0x18, 0x19, 0x1a, // AND OR XOR NOT BYTE
  0x1b, 0x1c, 0x1d, // SHL SHR SAR
  0x30, 0x33, 0x34, 0x36, 0x3d, // ADDRESS CALLER CALLVALUE CALLDATASIZE RETURNDATASIZE
  0x5a, // GAS
  0x50, 0x56, 0x57, 0x5b, 0x5f, // POP JUMP JUMPI JUMPDEST PUSH0
  ...Array.from({ length: 0x9f - 0x60 + 1 }, (_, i) => 0x60 + i), // PUSH1-32, DUP1-16, SWAP1-16
]

/**
 * the opcodes runInlineSteps runs with the effect of this project's handler of them (calldata-load.ts,
 * word-memory.ts), which the EVM must have installed: CALLDATALOAD of a whole word inside the
 * calldata, and MLOAD and MSTORE inside the memory already paid for (their memory gas is then nothing
 * beyond the static fee); any other access is left to the caller's step
 */
export const INLINE_OWN_HANDLER_OPCODES: readonly number[] = [0x35, 0x51, 0x52] // CALLDATALOAD MLOAD MSTORE

/**
 * the opcodes runInlineSteps runs with the effect of this project's handler of them where the EVM
 * has it installed, and which are not a third of the batch's exits without it (a bench:quote mix
 * execution: KECCAK256 42, TLOAD 27 of ~260): KECCAK256 (keccak-opcode.ts) of at most
 * KECCAK_MEMO_MAX_INPUT_BYTES (its gas, memory growth as MSTORE's, charged in the batch; longer
 * inputs left to the caller's step) and TLOAD (transient-storage-opcodes.ts; static fee, never
 * awaits)
 */
export const INLINE_STATE_OPCODES: readonly number[] = [0x20, 0x5c] // KECCAK256 TLOAD

/** The frame's code as the batch walks it: inline-analysis.ts says what each table holds. */
export interface InlineCode {
  stream: Int32Array
  words: bigint[]
  entries: Int32Array
}

/** How many steps the last `runInlineSteps` ran (the caller's deadline countdown counts them). */
export interface InlineBatch {
  steps: number
  /**
   * the Common's `memoryGas` and `quadCoefficientDivGas` (3 and 512 in every hardfork), read once
   * per frame; absent, MLOAD and MSTORE that grow memory are left to the caller's step
   */
  memoryGas?: number
  quadCoefficient?: number
  /** the Common's `keccak256WordGas` (6 in every hardfork), read once per frame; absent, KECCAK256 is left to the caller's step */
  keccakWordGas?: number
  /**
   * the frame's code as instructions (inline-analysis.ts's `stream`, `words` and `entries`, shared
   * by every frame of that code); absent, the batch runs nothing (the caller's steps run until the
   * frame has its jump analysis)
   */
  code?: InlineCode
}

/** the calldata CALLDATALOAD read last, and a DataView over it: a frame reads its words in bursts (ABI decoding) */
let viewedCalldata: Uint8Array | undefined
let calldataWords: DataView | undefined

/** a DataView over `data`, the same one while the same calldata is read (calldata is never written) */
function calldataView(data: Uint8Array): DataView {
  if (data !== viewedCalldata || calldataWords === undefined) {
    calldataWords = new DataView(data.buffer, data.byteOffset, data.byteLength)
    viewedCalldata = data
  }
  return calldataWords
}

/**
 * The memory gas of `words` words as the stock `subMemUsage` computes it (words * memoryGas +
 * words^2 / quadCoefficientDivGas, the division truncated), or -1 when the batch leaves the growth
 * to the stock step (no parameters, or past MEMORY_GROWTH_BYTES_MAX).
 */
function memoryCost(words: number, batch: InlineBatch): number {
  const fee = batch.memoryGas
  const quad = batch.quadCoefficient
  if (fee === undefined || quad === undefined || !(quad >= 1) || words * 32 > MEMORY_GROWTH_BYTES_MAX) return -1
  const square = words * words
  return words * fee + (square - (square % quad)) / quad
}

/**
 * Memory grown to `paidWords` words where `available` gas pays for it: answers the gas charged, with
 * the run state's `memoryWordCount` and `highestMemCost` set as the stock `subMemUsage` sets them
 * (it charges the difference when the new cost is higher, else the whole cost); -1 with nothing
 * changed where the batch leaves the growth to the stock step or the gas does not cover it.
 */
function payMemoryGrowth(rs: InlineRunState, paidWords: number, batch: InlineBatch, available: number): number {
  const cost = memoryCost(paidWords, batch)
  if (cost < 0) return -1
  const highest = Number(rs.highestMemCost)
  const charge = cost > highest ? cost - highest : cost
  if (available < charge) return -1
  if (cost > highest) rs.highestMemCost = BigInt(cost)
  rs.memoryWordCount = BigInt(paidWords)
  return charge
}

/**
 * Runs the inlined opcodes from the run state's program counter on, one after another, while the
 * next one is inlined (`fees[op]` > 0, its static fee), succeeds, and `maxSteps` allows; answers the
 * gas left after them (`gas` when none ran) and puts in `batch.steps` how many ran. The program
 * counter, the stack's height and its items are kept in locals between steps and written back once:
 * a step costs no property write, no call. Walks the frame's code as instructions (`batch.code`,
 * from its jump analysis: inline-analysis.ts), the program counter read from the instruction it
 * stops at; that opcode (not inlined, or one that would fail) is left for the caller's stock step,
 * nothing of it changed.
 */
export function runInlineSteps(rs: InlineRunState, fees: Uint8Array, gas: number, maxSteps: number, batch: InlineBatch): number {
  const decoded = batch.code
  batch.steps = 0
  // no stream yet (the frame's analysis not adopted), or the program counter inside push data
  // (never the loop's; only `run`'s opts.pc could be): the caller's step runs it
  if (decoded === undefined || rs.programCounter >= decoded.entries.length) return gas
  const at = decoded.entries[rs.programCounter]
  if (at === 0) return gas
  const stream = decoded.stream
  const words = decoded.words
  const entries = decoded.entries
  const end = entries.length
  const stack = rs.stack
  const s = stack._store
  const maxHeight = stack._maxHeight
  // JUMPDEST's fee (0 where the batch does not run it): a jump's destination is always one, run
  // right after the jump (below) without a turn of the loop
  const jumpdestFee = fees[0x5b]
  // what is paid for changes only where MLOAD or MSTORE grows memory (set then here and in rs)
  let paidBytes = Number(rs.memoryWordCount) * 32
  // the instruction's index in the stream; its program counter is read from the stream where the
  // batch stops (the stream ends with STOP, which no fee table inlines: no end check per step)
  let i = (at >> 1) - 1
  let len = stack._len
  let steps = 0
  run: while (steps < maxSteps) {
    const entry = stream[i << 1]
    const op = entry & 0xff
    const fee = fees[op]
    if (fee === 0 || gas < fee) break
    if (op >= 0x60) {
      if (op <= 0x7f) {
        // PUSH1-32: stack.push(runState.cachedPushes[programCounter]); programCounter += numToPush
        if (len >= maxHeight) break
        // the index of the destination's JUMPDEST + 1 where a JUMP or JUMPI follows (inline-analysis.ts), else 0
        const target = entry >> 8
        if (target !== 0 && steps + 1 < maxSteps) {
          // PUSH and the JUMP or JUMPI after it (its word a valid destination) as one step of two:
          // the word pushed and popped at once; the second step's fee here, the PUSH's below as
          // every step's
          const jumpOp = stream[(i + 1) << 1] & 0xff
          const jumpFee = fees[jumpOp]
          if (jumpFee !== 0 && gas - fee >= jumpFee && (jumpOp === 0x56 || len >= 1)) {
            const after = i + 2
            if (jumpOp === 0x56) {
              i = target - 1
            } else {
              // JUMPI: [dest, cond] = popN(2), the condition the item under the pushed word
              len--
              i = s[len] === 0n ? after : target - 1
            }
            gas -= jumpFee
            steps++
            gas -= fee
            steps++
            if (i !== after && steps < maxSteps && jumpdestFee !== 0 && gas >= jumpdestFee) {
              // the destination's JUMPDEST, as the loop's next turn would run it (its checks, its step)
              i = target
              gas -= jumpdestFee
              steps++
            }
            continue
          }
        }
        s[len++] = words[i]
        i++
      } else if (op <= 0x8f) {
        // DUP1-16: stack.dup(opCode - 0x7f)
        const n = op - 0x7f
        if (len < n || len >= maxHeight) break
        s[len] = s[len - n]
        len++
        i++
      } else if (op <= 0x9f) {
        // SWAP1-16: stack.swap(opCode - 0x8f)
        const n = op - 0x8f
        if (len <= n) break
        const head = len - 1
        const other = head - n
        const top = s[head]
        s[head] = s[other]
        s[other] = top
        i++
      } else {
        break
      }
    } else {
      switch (op) {
        case 0x5b: // JUMPDEST: nothing
          i++
          break
        case 0x5f: // PUSH0
          if (len >= maxHeight) break run
          s[len++] = 0n
          i++
          break
        case 0x50: // POP
          if (len < 1) break run
          len--
          i++
          break
        case 0x56:
        case 0x57: {
          // JUMP: dest = pop(). JUMPI: [dest, cond] = popN(2), jumping as JUMP when cond !== 0. A
          // destination past the code or not at a JUMPDEST traps (the stock step's)
          const popped = op === 0x56 ? 1 : 2
          if (len < popped) break run
          if (popped === 2 && s[len - 2] === 0n) {
            len -= 2
            i++
            break
          }
          // the word as a number, converted once: exact below 2^53, at least 2^53 above it (past
          // any code); compared as numbers, not a bigint with a number (a runtime call in V8)
          const dest = Number(s[len - 1])
          // (index + 1) << 1 | 1 at a valid destination (the stock analysis' JUMPDESTs)
          const landing = dest < end ? entries[dest] : 0
          if ((landing & 1) === 0) break run
          len -= popped
          i = (landing >> 1) - 1
          gas -= fee
          steps++
          if (steps < maxSteps && jumpdestFee !== 0 && gas >= jumpdestFee) {
            // the destination's JUMPDEST, as the loop's next turn would run it (its checks, its step)
            i++
            gas -= jumpdestFee
            steps++
          }
          continue
        }
        case 0x15: // ISZERO
          if (len < 1) break run
          s[len - 1] = s[len - 1] === 0n ? 1n : 0n
          i++
          break
        case 0x19: // NOT: BigInt.asUintN(256, ~a)
          if (len < 1) break run
          s[len - 1] = MAX_UINT256 ^ s[len - 1]
          i++
          break
        case 0x30: // ADDRESS: push(bytesToBigInt(interpreter.getAddress().bytes)), the word kept on the Address
          if (len >= maxHeight) break run
          s[len++] = addressWord(rs.interpreter.getAddress())
          i++
          break
        case 0x5a: // GAS: push(interpreter.getGasLeft()), the gas left once GAS's own fee is charged
          if (len >= maxHeight) break run
          s[len++] = BigInt(gas - fee)
          i++
          break
        case 0x33: // CALLER: push(interpreter.getCaller())
          if (len >= maxHeight) break run
          s[len++] = rs.interpreter.getCaller()
          i++
          break
        case 0x34: // CALLVALUE: push(interpreter.getCallValue())
          if (len >= maxHeight) break run
          s[len++] = rs.interpreter.getCallValue()
          i++
          break
        case 0x36: // CALLDATASIZE: push(interpreter.getCallDataSize())
          if (len >= maxHeight) break run
          s[len++] = rs.interpreter.getCallDataSize()
          i++
          break
        case 0x3d: // RETURNDATASIZE: push(interpreter.getReturnDataSize())
          if (len >= maxHeight) break run
          s[len++] = rs.interpreter.getReturnDataSize()
          i++
          break
        case 0x35: {
          // CALLDATALOAD (calldata-load.ts): pos = pop(); past the calldata zero, else its word
          // there; a read partly past the end (zero-padded) is left to the handler
          if (len < 1) break run
          const data = rs.interpreter.getCallData()
          const pos = s[len - 1]
          if (pos > NUMBER_OFFSET_MAX) {
            // past any calldata shorter than that (the stock handler's pos >= length)
            if (data.length > NUMBER_OFFSET_MAX) break run
            s[len - 1] = 0n
          } else {
            const i = Number(pos)
            if (i >= data.length) {
              s[len - 1] = 0n
            } else {
              if (i + 32 > data.length) break run
              // read in place: no subarray and DataView made per word
              s[len - 1] = wordAt(calldataView(data), i)
            }
          }
          i++
          break
        }
        case 0x51:
        case 0x52: {
          // MLOAD (word-memory.ts): offset = pop(); push(the word there). MSTORE: offset = pop(),
          // word = pop(); the word written there. Past paid memory, its growth is charged first as
          // the stock gas handler's subMemUsage charges it (readWord and writeWord then extend the
          // store as the stock Memory does)
          if (len < (op === 0x51 ? 1 : 2)) break run
          const word = s[len - 1]
          if (word > NUMBER_OFFSET_MAX) break run
          const offset = Number(word)
          const end = offset + 32
          if (end > paidBytes) {
            // past MEMORY_GROWTH_BYTES_MAX memoryCost answers -1 (left to the stock step) anyway;
            // below it the words are an int32 sum and shift. Math.ceil(end / 32) deoptimized the
            // batch ("lost precision": V8 had seen only offsets that are multiples of 32 and
            // compiled the division as an int32 one) the first time a word was written unaligned
            if (end > MEMORY_GROWTH_BYTES_MAX) break run
            const paidWords = (end + 31) >> 5
            const charge = payMemoryGrowth(rs, paidWords, batch, gas - fee)
            if (charge < 0) break run
            gas -= charge
            paidBytes = paidWords * 32
          }
          if (op === 0x51) {
            s[len - 1] = readWord(rs.memory, offset)
          } else {
            writeWord(rs.memory, offset, s[len - 2])
            len -= 2
          }
          i++
          break
        }
        case 0x20: {
          // KECCAK256 (keccak-opcode.ts): [offset, length] = popN(2); push(keccak256 of memory there),
          // an empty input's digest without reading memory. Gas (sync-gas.ts, the stock gas
          // handler's): the fee, keccak256WordGas per word of input, and subMemUsage's growth of
          // memory to offset + length (none for an empty input), all charged before anything changes
          if (len < 2) break run
          const offsetWord = s[len - 1]
          const lengthWord = s[len - 2]
          const wordGas = batch.keccakWordGas
          if (wordGas === undefined || lengthWord > KECCAK_INLINE_MAX_BYTES) break run
          const length = Number(lengthWord)
          const hashGas = wordGas * ((length + 31) >> 5)
          if (gas < fee + hashGas) break run
          let digest = KECCAK_EMPTY_WORD
          if (length !== 0) {
            if (offsetWord > NUMBER_OFFSET_MAX) break run
            const offset = Number(offsetWord)
            const end = offset + length
            if (end > paidBytes) {
              if (end > MEMORY_GROWTH_BYTES_MAX) break run
              const paidWords = (end + 31) >> 5
              const charge = payMemoryGrowth(rs, paidWords, batch, gas - fee - hashGas)
              if (charge < 0) break run
              gas -= charge
              paidBytes = paidWords * 32
            }
            // read in place as the handler reads it (Memory.read extends the store as the stock read does)
            digest = keccakWord(rs.memory.read(offset, length, true))
          }
          gas -= hashGas
          s[len - 2] = digest
          len--
          i++
          break
        }
        case 0x5c: {
          // TLOAD (transient-storage-opcodes.ts): key = pop(); push(the frame's transient word);
          // transient storage not of the stock class's shape is left to the caller's step
          if (len < 1) break run
          const value = transientWord(rs.interpreter, s[len - 1])
          if (value === undefined) break run
          s[len - 1] = value
          i++
          break
        }
        case 0x08: // ADDMOD: [a, b, c] = popN(3); c === 0 ? 0 : mod(a + b, c)
        case 0x09: {
          // MULMOD: [a, b, c] = popN(3); c === 0 ? 0 : mod(a * b, c) (all unsigned: mod is %)
          if (len < 3) break run
          const a = s[len - 1]
          const b = s[len - 2]
          const c = s[len - 3]
          s[len - 3] = c === 0n ? 0n : op === 0x08 ? (a + b) % c : (a * b) % c
          len -= 2
          i++
          break
        }
        default: {
          // binary operations: [a, b] = popN(2) (a the top); push(r)
          if (len < 2) break run
          const a = s[len - 1]
          const b = s[len - 2]
          let r: bigint
          switch (op) {
            case 0x01: // ADD: mod(a + b, 2^256)
              r = a + b
              if (r > MAX_UINT256) r -= TWO_POW256
              break
            case 0x02: // MUL: mod(a * b, 2^256)
              r = (a * b) & MAX_UINT256
              break
            case 0x03: // SUB: mod(a - b, 2^256)
              r = a - b
              if (r < 0n) r += TWO_POW256
              break
            case 0x04: // DIV: b === 0 ? 0 : mod(a / b, 2^256)
              r = b === 0n ? 0n : a / b
              break
            case 0x05: // SDIV: b === 0 ? 0 : toTwos(fromTwos(a) / fromTwos(b))
              r = b === 0n ? 0n : BigInt.asUintN(256, BigInt.asIntN(256, a) / BigInt.asIntN(256, b))
              break
            case 0x06: // MOD: b === 0 ? b : mod(a, b) (both unsigned: %)
              r = b === 0n ? 0n : a % b
              break
            case 0x07: // SMOD: b === 0 ? b : toTwos(fromTwos(a) % fromTwos(b))
              r = b === 0n ? 0n : BigInt.asUintN(256, BigInt.asIntN(256, a) % BigInt.asIntN(256, b))
              break
            case 0x0b: // SIGNEXTEND: [k, val]; for k < 31 the bits above byte k copy its sign bit
              if (a < 31n) {
                const signBit = a * 8n + 7n
                const mask = (1n << signBit) - 1n
                r = ((b >> signBit) & 1n) === 1n ? b | (MAX_UINT256 ^ mask) : b & mask
              } else {
                r = b
              }
              break
            case 0x12: // SLT
              r = BigInt.asIntN(256, a) < BigInt.asIntN(256, b) ? 1n : 0n
              break
            case 0x13: // SGT
              r = BigInt.asIntN(256, a) > BigInt.asIntN(256, b) ? 1n : 0n
              break
            case 0x1a: // BYTE: [pos, word]; pos > 32 ? 0 : (word >> ((31 - pos) * 8)) & 255
              r = a > 32n ? 0n : (b >> ((31n - a) * 8n)) & 255n
              break
            case 0x1d: {
              // SAR: [a, b]; b shifted right by a, the shifted-in bits b's sign
              const signed = BigInt.asIntN(256, b) < 0n
              if (a > 256n) {
                r = signed ? MAX_UINT256 : 0n
              } else if (signed) {
                const shiftedOutWidth = 255n - a
                r = (b >> a) | ((MAX_UINT256 >> shiftedOutWidth) << shiftedOutWidth)
              } else {
                r = b >> a
              }
              break
            }
            case 0x10: // LT
              r = a < b ? 1n : 0n
              break
            case 0x11: // GT
              r = a > b ? 1n : 0n
              break
            case 0x14: // EQ
              r = a === b ? 1n : 0n
              break
            case 0x16: // AND
              r = a & b
              break
            case 0x17: // OR
              r = a | b
              break
            case 0x18: // XOR
              r = a ^ b
              break
            case 0x1b: // SHL: a > 256 ? 0 : (b << a) & MAX
              r = a > 256n ? 0n : (b << a) & MAX_UINT256
              break
            case 0x1c: // SHR: a > 256 ? 0 : b >> a
              r = a > 256n ? 0n : b >> a
              break
            default:
              break run
          }
          s[len - 2] = r
          len--
          i++
        }
      }
    }
    gas -= fee
    steps++
  }
  rs.programCounter = stream[(i << 1) + 1]
  stack._len = len
  batch.steps = steps
  return gas
}
