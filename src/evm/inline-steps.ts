/**
 * The commonest opcodes of compiled Solidity (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST and the
 * cheap arithmetic, comparison and bitwise ones: about two thirds of a swap's ~7,600 steps) run by
 * the interpreter loop itself, with the frame's gas as a number: the stock step costs a function
 * call through the opcode table, an array from `popN` per binary operation and a new bigint per
 * gas subtraction.
 *
 * `inlineStep` does only what succeeds: with too little gas for the fee, a stack too short or too
 * high, or a jump to no JUMPDEST, it changes nothing and answers NOT_INLINE, and the caller runs
 * the stock step, which fails exactly as it always did. What it does is the stock handler's
 * effect (@ethereumjs/evm opcodes/functions.js, line for line in the comments) plus the stock
 * step's: the static fee charged and the program counter advanced. The caller keeps the gas as a
 * number only while the frame's gas fits a double exactly (< 2^53) and writes it back to the run
 * state before any other step, so every other code sees `gasLeft` as the stock loop leaves it.
 */

/** answered when the step must run the stock way; nothing was changed */
export const NOT_INLINE = -1

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

/** the opcodes inlineStep runs; every one static-fee and synchronous in every hardfork that has it */
export const INLINE_OPCODES: readonly number[] = [
  0x01, 0x02, 0x03, 0x04, // ADD MUL SUB DIV
  0x10, 0x11, 0x14, 0x15, // LT GT EQ ISZERO
  0x16, 0x17, 0x18, 0x19, // AND OR XOR NOT
  0x1b, 0x1c, // SHL SHR
  0x50, 0x56, 0x57, 0x5b, 0x5f, // POP JUMP JUMPI JUMPDEST PUSH0
  ...Array.from({ length: 0x9f - 0x60 + 1 }, (_, i) => 0x60 + i), // PUSH1-32, DUP1-16, SWAP1-16
]

/** where a jump to `dest` goes, or -1 where the stock handler traps: past the code, or not at a JUMPDEST (validJumps 1) */
function jumpDestination(rs: InlineRunState, dest: bigint): number {
  if (!(dest < rs.code.length)) return -1
  const to = Number(dest)
  return rs.validJumps[to] === 1 ? to : -1
}

/**
 * Runs opcode `op` (at the run state's program counter, whose static fee is `fee`) with `gas`
 * left, and answers the gas left after it, or NOT_INLINE. Needs the frame's jump analysis
 * (`validJumps`, `cachedPushes`) done.
 */
export function inlineStep(rs: InlineRunState, op: number, fee: number, gas: number): number {
  if (gas < fee) return NOT_INLINE
  const stack = rs.stack
  const s = stack._store
  const len = stack._len
  const pc = rs.programCounter
  if (op >= 0x60) {
    if (op <= 0x7f) {
      // PUSH1-32: stack.push(runState.cachedPushes[programCounter]); programCounter += numToPush
      if (len >= stack._maxHeight) return NOT_INLINE
      s[len] = rs.cachedPushes[pc + 1]
      stack._len = len + 1
      rs.programCounter = pc + 1 + (op - 0x5f)
      return gas - fee
    }
    if (op <= 0x8f) {
      // DUP1-16: stack.dup(opCode - 0x7f)
      const n = op - 0x7f
      if (len < n || len >= stack._maxHeight) return NOT_INLINE
      s[len] = s[len - n]
      stack._len = len + 1
    } else if (op <= 0x9f) {
      // SWAP1-16: stack.swap(opCode - 0x8f)
      const n = op - 0x8f
      if (len <= n) return NOT_INLINE
      const head = len - 1
      const other = head - n
      const top = s[head]
      s[head] = s[other]
      s[other] = top
    } else {
      return NOT_INLINE
    }
    rs.programCounter = pc + 1
    return gas - fee
  }
  switch (op) {
    case 0x5b: // JUMPDEST: nothing
      break
    case 0x5f: // PUSH0
      if (len >= stack._maxHeight) return NOT_INLINE
      s[len] = 0n
      stack._len = len + 1
      break
    case 0x50: // POP
      if (len < 1) return NOT_INLINE
      stack._len = len - 1
      break
    case 0x56: {
      // JUMP: dest = pop()
      if (len < 1) return NOT_INLINE
      const to = jumpDestination(rs, s[len - 1])
      if (to < 0) return NOT_INLINE
      stack._len = len - 1
      rs.programCounter = to
      return gas - fee
    }
    case 0x57: {
      // JUMPI: [dest, cond] = popN(2); jump as JUMP when cond !== 0
      if (len < 2) return NOT_INLINE
      if (s[len - 2] === 0n) {
        stack._len = len - 2
        break
      }
      const to = jumpDestination(rs, s[len - 1])
      if (to < 0) return NOT_INLINE
      stack._len = len - 2
      rs.programCounter = to
      return gas - fee
    }
    case 0x15: // ISZERO
      if (len < 1) return NOT_INLINE
      s[len - 1] = s[len - 1] === 0n ? 1n : 0n
      break
    case 0x19: // NOT: BigInt.asUintN(256, ~a)
      if (len < 1) return NOT_INLINE
      s[len - 1] = MAX_UINT256 ^ s[len - 1]
      break
    default: {
      // binary operations: [a, b] = popN(2) (a the top); push(r)
      if (len < 2) return NOT_INLINE
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
          return NOT_INLINE
      }
      s[len - 2] = r
      stack._len = len - 1
    }
  }
  rs.programCounter = pc + 1
  return gas - fee
}
