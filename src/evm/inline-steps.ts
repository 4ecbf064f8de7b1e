/**
 * The commonest opcodes of compiled Solidity (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST and the
 * cheap arithmetic, comparison and bitwise ones: about two thirds of a swap's ~7,600 steps, and 92%
 * of the ~23,000 steps of a bench:quote mix quote) run by the interpreter loop itself, with the
 * frame's gas as a number: the stock step costs a function call through the opcode table, an array
 * from `popN` per binary operation and a new bigint per gas subtraction.
 *
 * `runInlineSteps` runs them in a batch, as long as they follow one another, with the program
 * counter and the stack height in locals. It does only what succeeds: with too little gas for the
 * fee, a stack too short or too high, or a jump to no JUMPDEST, it stops before that opcode,
 * changing nothing of it, and the caller runs the stock step, which fails exactly as it always
 * did. What it does is the stock handler's effect (@ethereumjs/evm opcodes/functions.js, line for
 * line in the comments) plus the stock step's: the static fee charged and the program counter
 * advanced. The caller keeps the gas as a number only while the frame's gas fits a double exactly
 * (< 2^53) and writes it back to the run state before any other step, so every other code sees
 * `gasLeft` as the stock loop leaves it.
 */

const TWO_POW256 = 1n << 256n
const MAX_UINT256 = TWO_POW256 - 1n

export interface InlineStack {
  _store: bigint[]
  _len: number
  _maxHeight: number
}

export interface InlineRunState {
  stack: InlineStack
  programCounter: number
  code: Uint8Array
  validJumps: Uint8Array
  cachedPushes: Record<number, bigint>
}

/** the opcodes runInlineSteps runs; every one static-fee and synchronous in every hardfork that has it */
export const INLINE_OPCODES: readonly number[] = [
  0x01, 0x02, 0x03, 0x04, // ADD MUL SUB DIV
  0x10, 0x11, 0x14, 0x15, // LT GT EQ ISZERO
  0x16, 0x17, 0x18, 0x19, // AND OR XOR NOT
  0x1b, 0x1c, // SHL SHR
  0x50, 0x56, 0x57, 0x5b, 0x5f, // POP JUMP JUMPI JUMPDEST PUSH0
  ...Array.from({ length: 0x9f - 0x60 + 1 }, (_, i) => 0x60 + i), // PUSH1-32, DUP1-16, SWAP1-16
]

/** How many steps the last `runInlineSteps` ran (the caller's deadline countdown counts them). */
export interface InlineBatch {
  steps: number
}

/**
 * Runs the inlined opcodes from the run state's program counter on, one after another, while the
 * next one is inlined (`fees[op]` > 0, its static fee), succeeds, and `maxSteps` allows; answers the
 * gas left after them (`gas` when none ran) and puts in `batch.steps` how many ran. The program
 * counter, the stack's height and its items are kept in locals between steps and written back once:
 * a step costs no property write, no call. Needs the frame's jump analysis (`validJumps`,
 * `cachedPushes`) done; the opcode it stops at (not inlined, or one that would fail) is left for
 * the caller's stock step, nothing of it changed.
 */
export function runInlineSteps(rs: InlineRunState, fees: Uint8Array, gas: number, maxSteps: number, batch: InlineBatch): number {
  const code = rs.code
  const end = code.length
  const stack = rs.stack
  const s = stack._store
  const maxHeight = stack._maxHeight
  const pushes = rs.cachedPushes
  const validJumps = rs.validJumps
  let pc = rs.programCounter
  let len = stack._len
  let steps = 0
  run: while (steps < maxSteps && pc < end) {
    const op = code[pc]
    const fee = fees[op]
    if (fee === 0 || gas < fee) break
    if (op >= 0x60) {
      if (op <= 0x7f) {
        // PUSH1-32: stack.push(runState.cachedPushes[programCounter]); programCounter += numToPush
        if (len >= maxHeight) break
        s[len++] = pushes[pc + 1]
        pc += op - 0x5e
      } else if (op <= 0x8f) {
        // DUP1-16: stack.dup(opCode - 0x7f)
        const n = op - 0x7f
        if (len < n || len >= maxHeight) break
        s[len] = s[len - n]
        len++
        pc++
      } else if (op <= 0x9f) {
        // SWAP1-16: stack.swap(opCode - 0x8f)
        const n = op - 0x8f
        if (len <= n) break
        const head = len - 1
        const other = head - n
        const top = s[head]
        s[head] = s[other]
        s[other] = top
        pc++
      } else {
        break
      }
    } else {
      switch (op) {
        case 0x5b: // JUMPDEST: nothing
          pc++
          break
        case 0x5f: // PUSH0
          if (len >= maxHeight) break run
          s[len++] = 0n
          pc++
          break
        case 0x50: // POP
          if (len < 1) break run
          len--
          pc++
          break
        case 0x56: {
          // JUMP: dest = pop(); a destination past the code or not at a JUMPDEST traps (stock step)
          if (len < 1) break run
          const dest = s[len - 1]
          if (!(dest < end) || validJumps[Number(dest)] !== 1) break run
          len--
          pc = Number(dest)
          break
        }
        case 0x57: {
          // JUMPI: [dest, cond] = popN(2); jump as JUMP when cond !== 0
          if (len < 2) break run
          if (s[len - 2] === 0n) {
            len -= 2
            pc++
            break
          }
          const dest = s[len - 1]
          if (!(dest < end) || validJumps[Number(dest)] !== 1) break run
          len -= 2
          pc = Number(dest)
          break
        }
        case 0x15: // ISZERO
          if (len < 1) break run
          s[len - 1] = s[len - 1] === 0n ? 1n : 0n
          pc++
          break
        case 0x19: // NOT: BigInt.asUintN(256, ~a)
          if (len < 1) break run
          s[len - 1] = MAX_UINT256 ^ s[len - 1]
          pc++
          break
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
          pc++
        }
      }
    }
    gas -= fee
    steps++
  }
  rs.programCounter = pc
  stack._len = len
  batch.steps = steps
  return gas
}
