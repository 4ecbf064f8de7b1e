/**
 * inline-analysis.ts: the inline batch's tables agree with the stock jump analysis. Each PUSH's word
 * is kept once (`words`), read from the code as the stock analysis reads it where its `pushes` is
 * not given, and legacyCodeAnalysis' own walk gives the stock jumps and the same tables; the stream has one entry
 * per instruction the stock analysis sees (its offset, its word in `words`), ends with STOP where
 * the last instruction ends, and names a destination exactly where a PUSH (not a push data byte
 * that looks like one) is followed by JUMP or JUMPI and its word is a valid jump destination;
 * `entries` maps each instruction's offset to its index and flags the valid destinations.
 */
import { describe, expect, it } from 'vitest'
import { inlineAnalysis, legacyCodeAnalysis, pushWord } from '../../src/evm/inline-analysis.ts'
import { stockAnalysis } from './stock-jump-analysis.ts'

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'))

/** [offset of the PUSH, offset of its fused destination] for every fused PUSH of the stream */
function fusedPairs(code: Uint8Array): number[][] {
  const stock = stockAnalysis(code)
  const { stream } = inlineAnalysis(code, stock.jumps, stock.pushes)
  const pairs: number[][] = []
  for (let i = 0; 2 * i < stream.length; i++) {
    const target = stream[2 * i] >> 8
    if (target !== 0) pairs.push([stream[2 * i + 1], stream[2 * (target - 1) + 1]])
  }
  return pairs
}

describe('inlineAnalysis', () => {
  it('keeps each PUSH word once, in instruction order (no per-offset copy)', () => {
    // PUSH1 0x2a, PUSH2 0x0102, PUSH32 of 0x61 bytes (PUSH2 opcodes as data), PUSH0, a PUSH3 cut short by the end
    const code = hex('602a' + '610102' + '7f' + '61'.repeat(32) + '5f' + '62ab')
    const stock = stockAnalysis(code)
    const analysis = inlineAnalysis(code, stock.jumps, stock.pushes)
    expect(Object.keys(analysis).sort()).toEqual(['entries', 'stream', 'words'])
    expect(analysis.words).toEqual([0x2an, 0x0102n, BigInt('0x' + '61'.repeat(32)), 0n, 0xab0000n, 0n])
  })

  it('gives every PUSH its own value where words repeat (shared below 2^48) and across the 2^48 bound', () => {
    // the same values pushed again, by PUSHes of other sizes too (PUSH1 0x20 / PUSH2 0x0020), a
    // word whose low 16 bits are another's (0x010020, 0x0101ab), a byte above 0x7f, words just below, at and above 2^48 twice
    // each, and 2^53 and 2^53 + 1 (one double): each word the value its own bytes say
    const words = ['6020', '6040', '610020', '6020', '62010020', '65000000000040', '65ffffffffffff', '6601000000000000', '65ffffffffffff', '6601000000000000', '6600ffffffffffff', '6101ab', '6101ab', '620101ab', '6000', '6001', '60ff', '6620000000000000', '6620000000000001']
    const code = hex(words.join('') + '00')
    const stock = stockAnalysis(code)
    const expected = [0x20n, 0x40n, 0x20n, 0x20n, 0x010020n, 0x40n, (1n << 48n) - 1n, 1n << 48n, (1n << 48n) - 1n, 1n << 48n, (1n << 48n) - 1n, 0x1abn, 0x1abn, 0x0101abn, 0n, 1n, 0xffn, 1n << 53n, (1n << 53n) + 1n, 0n, 0n]
    expect(inlineAnalysis(code, stock.jumps, stock.pushes).words).toEqual(expected)
    expect(inlineAnalysis(code, stock.jumps).words).toEqual(expected)
    expect(legacyCodeAnalysis(code).inline.words).toEqual(expected)
  })

  it("reads the words from the code as the stock analysis does, and legacyCodeAnalysis's walk gives the stock jumps and the same tables", () => {
    // cut short by the end, by 1 to 31 bytes, of every PUSH size; and random code dense in PUSHes and JUMPDESTs
    const codes: Uint8Array[] = []
    for (let size = 1; size <= 32; size++) {
      for (const present of [0, 1, Math.floor(size / 2), size - 1]) {
        if (present >= size) continue
        codes.push(Uint8Array.from([0x5b, 0x5f + size, ...Array.from({ length: present }, (_, i) => 0x80 + i)]))
      }
    }
    let seed = 12345
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    const pick = [0x5b, 0x56, 0x57, 0x60, 0x61, 0x62, 0x66, 0x67, 0x6f, 0x7f, 0x5f, 0x01, 0x00, 0xff]
    for (let n = 0; n < 200; n++) codes.push(Uint8Array.from({ length: 1 + (next() % 300) }, () => (next() % 3 === 0 ? next() % 256 : pick[next() % pick.length])))
    for (const code of codes) {
      const stock = stockAnalysis(code)
      const expected = inlineAnalysis(code, stock.jumps, stock.pushes)
      expect(inlineAnalysis(code, stock.jumps), Buffer.from(code).toString('hex')).toEqual(expected)
      const legacy = legacyCodeAnalysis(code)
      expect(legacy.jumps, Buffer.from(code).toString('hex')).toEqual(stock.jumps)
      expect(legacy.inline, Buffer.from(code).toString('hex')).toEqual(expected)
    }
    expect(pushWord(hex('ab'), 0, 3)).toBe(0xab0000n)
    expect(pushWord(hex('0102030405060708'), 0, 32)).toBe(0x0102030405060708n << 192n)
    expect(pushWord(hex(''), 0, 32)).toBe(0n)
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
    expect(fusedPairs(hex(parts.join('')))).toEqual([
      [0, 9],
      [3, 9],
      [16, 9],
    ])
  })

  it('sees instruction boundaries as the stock analysis does: a PUSH inside push data is data', () => {
    // 0: PUSH3 0x600456 (its data reads PUSH1 4 JUMP), 4: JUMPDEST, 5: PUSH1 4 JUMP: only the last is named
    expect(fusedPairs(hex('62600456' + '5b' + '6004' + '56'))).toEqual([[5, 4]])
  })

  it('has one stream entry per instruction, its word in words, and STOP where the last one ends', () => {
    // 0: PUSH1 0x2a, 2: JUMPDEST, 3: PUSH2 0x5b5b (data that looks like JUMPDESTs), 6: ADD, 7: a PUSH3 cut short by the end
    const code = hex('602a' + '5b' + '615b5b' + '01' + '62ab')
    const stock = stockAnalysis(code)
    const { stream, words, entries } = inlineAnalysis(code, stock.jumps, stock.pushes)
    const ops = [0x60, 0x5b, 0x61, 0x01, 0x62, 0x00]
    const offsets = [0, 2, 3, 6, 7, 11] // the stock PUSH3 at 7 moves the program counter to 11, past the end
    expect(stream.length).toBe(2 * ops.length)
    for (let i = 0; i < ops.length; i++) expect([stream[2 * i] & 0xff, stream[2 * i + 1]], `instruction ${i}`).toEqual([ops[i], offsets[i]])
    expect(words).toEqual([0x2an, 0n, 0x5b5bn, 0n, 0xab0000n, 0n])
    // (index + 1) << 1, | 1 at the one valid destination; 0 in push data
    expect([...entries]).toEqual([1 << 1, 0, (2 << 1) | 1, 3 << 1, 0, 0, 4 << 1, 5 << 1, 0])
  })
})
