import { describe, expect, it } from 'vitest'
import { hexToBytesStrict } from '../../src/chain/quantity.ts'

describe('hexToBytesStrict', () => {
  it('decodes even-length hex, with or without 0x, in either case, into a plain Uint8Array', () => {
    expect(hexToBytesStrict('0x00ff10Ab')).toEqual(new Uint8Array([0x00, 0xff, 0x10, 0xab]))
    expect(hexToBytesStrict('deadBEEF')).toEqual(new Uint8Array([0xde, 0xad, 0xbe, 0xef]))
    const bytes = hexToBytesStrict('0x0102')
    expect(Buffer.isBuffer(bytes)).toBe(false)
    expect(bytes.byteOffset).toBe(0)
    expect(bytes.buffer.byteLength).toBe(2)
  })

  it('decodes the empty string and a bare 0x to no bytes', () => {
    expect(hexToBytesStrict('0x')).toEqual(new Uint8Array(0))
    expect(hexToBytesStrict('')).toEqual(new Uint8Array(0))
  })

  it('agrees with Buffer on every byte value and on a long string', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    const hex = Buffer.from(all).toString('hex')
    expect(hexToBytesStrict(`0x${hex}`)).toEqual(all)
    expect(hexToBytesStrict(hex.toUpperCase())).toEqual(all)
    const long = Buffer.alloc(3000, 0xa5).toString('hex')
    expect(hexToBytesStrict(long)).toEqual(new Uint8Array(3000).fill(0xa5))
  })

  it('refuses an odd length', () => {
    expect(() => hexToBytesStrict('0xabc', 'data')).toThrow('data: not an even-length hex string')
    expect(() => hexToBytesStrict('a')).toThrow('hex: not an even-length hex string')
  })

  it('refuses a character that is not a hex digit, wherever it is', () => {
    const good = '00112233445566778899aabbccddeeff'
    for (let i = 0; i < good.length; i++) {
      for (const bad of ['g', 'x', ' ', '-', 'G', '\u00e9']) {
        const value = `0x${good.slice(0, i)}${bad}${good.slice(i + 1)}`
        expect(() => hexToBytesStrict(value, 'data'), value).toThrow('data: not an even-length hex string')
      }
    }
    // a second 0x is not a prefix
    expect(() => hexToBytesStrict('0x0x00')).toThrow()
  })

  it('refuses a character that is not a hex digit in a long string (the native writer path) too', () => {
    const good = '0123456789abcdef'.repeat(20)
    for (const i of [0, 1, 2, 127, 128, 129, 130, good.length - 2, good.length - 1]) {
      for (const bad of ['g', ' ', '\u00e9']) {
        const value = `${good.slice(0, i)}${bad}${good.slice(i + 1)}`
        expect(() => hexToBytesStrict(value, 'data'), `${i} ${bad}`).toThrow('data: not an even-length hex string')
      }
    }
    expect(hexToBytesStrict(good)).toEqual(Uint8Array.from(Buffer.from(good, 'hex')))
  })
})
