/**
 * word-hex-memo.ts: a word's key is its 64 hex digits after the prefix, the same for a word made
 * again, different for words equal in their low 64 bits (as V8 hashes a bigint); the memo holds
 * at most its bound, the oldest out first, and a word pushed out gets its key again.
 */
import { describe, expect, it } from 'vitest'
import { WordHexMemo } from '../../src/evm/word-hex-memo.ts'

const digits = (word: bigint) => word.toString(16).padStart(64, '0')

describe('WordHexMemo', () => {
  it("answers the prefix and the word's 64 digits, for words of every width", () => {
    const bare = new WordHexMemo(16, '')
    const prefixed = new WordHexMemo(16, '0x')
    for (const word of [0n, 1n, 0xabcn, 1n << 64n, 1n << 255n, (1n << 256n) - 1n]) {
      expect(bare.hex(word)).toBe(digits(word))
      expect(prefixed.hex(word)).toBe('0x' + digits(word))
      // made again from a new bigint of the same value
      expect(bare.hex(BigInt(word.toString()))).toBe(digits(word))
    }
  })

  it('holds at most its bound, the oldest out first, and keys a word pushed out again', () => {
    const memo = new WordHexMemo(8, '0x')
    const word = (i: number) => (BigInt(i) << 128n) | 0xfeedn // equal in the low 64 bits
    for (let i = 0; i < 20; i++) {
      expect(memo.hex(word(i))).toBe('0x' + digits(word(i)))
      expect(memo.size).toBe(Math.min(i + 1, 8))
    }
    // 12..19 held: asking them adds nothing; 0 was pushed out and comes back, pushing 12 out
    for (let i = 12; i < 20; i++) memo.hex(word(i))
    expect(memo.size).toBe(8)
    expect(memo.hex(word(0))).toBe('0x' + digits(word(0)))
    expect(memo.size).toBe(8)
  })
})
