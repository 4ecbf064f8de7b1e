/**
 * inline-analysis.ts: the inline batch's tables agree with the stock jump analysis. `pushes` holds
 * the stock word at every push data offset (0n elsewhere, a packed array); `pushJumps` names a
 * destination exactly where a PUSH (not a push data byte that looks like one) is followed by JUMP
 * or JUMPI and its word is a valid jump destination.
 */
import { describe, expect, it } from 'vitest'
import { inlineAnalysis } from '../../src/evm/inline-analysis.ts'

/** the stock `_getValidJumpDestinations` of @ethereumjs/evm 10 for legacy code (no EIP-8024) */
function stockAnalysis(code: Uint8Array) {
  const jumps = new Uint8Array(code.length)
  const pushes: Record<number, bigint> = {}
  for (let i = 0; i < code.length; i++) {
    const op = code[i]
    if (op >= 0x60 && op <= 0x7f) {
      const n = op - 0x5f
      const bytes = new Uint8Array(n)
      bytes.set(code.subarray(i + 1, i + 1 + n))
      pushes[i + 1] = BigInt('0x' + (Buffer.from(bytes).toString('hex') || '0'))
      i += n
    } else if (op === 0x5b) {
      jumps[i] = 1
    }
  }
  return { jumps, pushes }
}

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'))

describe('inlineAnalysis', () => {
  it('keeps every push word at its offset in a packed array, 0n elsewhere', () => {
    // PUSH1 0x2a, PUSH2 0x0102, PUSH32 of 0x61 bytes (PUSH2 opcodes as data), PUSH0, a PUSH3 cut short by the end
    const code = hex('602a' + '610102' + '7f' + '61'.repeat(32) + '5f' + '62ab')
    const stock = stockAnalysis(code)
    const { pushes } = inlineAnalysis(code, stock.jumps, stock.pushes)
    expect(pushes.length).toBe(code.length + 1)
    for (let i = 0; i <= code.length; i++) expect(pushes[i], `offset ${i}`).toBe(stock.pushes[i] ?? 0n)
    expect(pushes[code.length - 1]).toBe(0xab0000n) // the cut-short PUSH3, padded on the right as the stock one
  })

  it('names the destination of a PUSH followed by JUMP or JUMPI, and nothing else', () => {
    const parts = [
      '6009' + '56', // 0: PUSH1 9 JUMP -> 9 is the JUMPDEST below
      '6009' + '57', // 3: PUSH1 9 JUMPI
      '600a' + '56', // 6: PUSH1 10 JUMP: 10 is push data, not a JUMPDEST
      '5b', // 9: JUMPDEST
      '615b56', // 10: PUSH2 0x5b56: its data bytes look like JUMPDEST and JUMP
      '6009' + '01', // 13: PUSH1 9 ADD: not a jump
      '7f' + '00'.repeat(31) + '09' + '56', // 16: PUSH32 9 JUMP
      '6109' + '00' + '56', // 50: PUSH2 0x0900 JUMP: past the code
      '6009', // 54: PUSH1 9 at the end: no jump after it
    ]
    const code = hex(parts.join(''))
    const stock = stockAnalysis(code)
    const { pushJumps } = inlineAnalysis(code, stock.jumps, stock.pushes)
    const named = [...pushJumps].flatMap((target, pc) => (target === 0 ? [] : [[pc, target - 1]]))
    expect(named).toEqual([
      [0, 9],
      [3, 9],
      [16, 9],
    ])
  })

  it('sees instruction boundaries as the stock analysis does: a PUSH inside push data is data', () => {
    // 0: PUSH3 0x600456 (its data reads PUSH1 4 JUMP), 4: JUMPDEST, 5: PUSH1 4 JUMP: only the last is named
    const code = hex('62600456' + '5b' + '6004' + '56')
    const stock = stockAnalysis(code)
    const { pushJumps } = inlineAnalysis(code, stock.jumps, stock.pushes)
    expect([...pushJumps].map((t, pc) => [pc, t]).filter(([, t]) => t !== 0)).toEqual([[5, 5]])
  })
})
