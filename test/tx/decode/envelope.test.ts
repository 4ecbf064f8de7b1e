import { Common, Mainnet } from '@ethereumjs/common'
import { describe, expect, it } from 'vitest'

import { envelope, inputBytes } from '../../../src/tx/decode/envelope.ts'
import { TxDecodeError, type TxDecodeErrorReason } from '../../../src/tx/errors.ts'

function reasonOf(run: () => unknown): TxDecodeErrorReason | undefined {
  try {
    run()
  } catch (error) {
    if (error instanceof TxDecodeError) return error.reason
    throw error
  }
  return undefined
}

describe('inputBytes', () => {
  it('reads 0x and 0X hex of either case into a copy', () => {
    expect(inputBytes('0xC0ff', 8)).toEqual(new Uint8Array([0xc0, 0xff]))
    expect(inputBytes('0XAB', 8)).toEqual(new Uint8Array([0xab]))
    const given = new Uint8Array([1, 2])
    const read = inputBytes(given, 8)
    given[0] = 9
    expect(read).toEqual(new Uint8Array([1, 2]))
  })

  it.each<[unknown, TxDecodeErrorReason]>([
    ['', 'empty'],
    ['0x', 'empty'],
    [new Uint8Array(), 'empty'],
    ['abcd', 'malformed_hex'],
    ['0xabc', 'malformed_hex'],
    ['0xzz', 'malformed_hex'],
    [42, 'malformed_hex'],
    [`0x${'00'.repeat(9)}`, 'too_large'],
    [new Uint8Array(9), 'too_large'],
  ])('refuses %j as %s', (raw, reason) => {
    expect(reasonOf(() => inputBytes(raw, 8))).toBe(reason)
  })

  it('checks the size before reading the digits (an oversized odd input is too large, not malformed)', () => {
    expect(reasonOf(() => inputBytes(`0x${'0'.repeat(19)}`, 8))).toBe('too_large')
  })
})

describe('envelope', () => {
  const prague = new Common({ chain: Mainnet, hardfork: 'prague' })
  const london = new Common({ chain: Mainnet, hardfork: 'london' })

  it('takes an RLP list as a legacy transaction, whole', () => {
    const bytes = new Uint8Array([0xc1, 0x80])
    expect(envelope(bytes, prague)).toEqual({ type: 0, payload: bytes })
  })

  it('takes an accepted type byte and hands over the bytes after it', () => {
    for (const type of [1, 2, 4]) expect(envelope(new Uint8Array([type, 0xc0]), prague)).toEqual({ type, payload: new Uint8Array([0xc0]) })
  })

  it('refuses blob, unknown and not yet active types, and a leading RLP string', () => {
    expect(reasonOf(() => envelope(new Uint8Array([3, 0xc0]), prague))).toBe('unsupported_type')
    expect(reasonOf(() => envelope(new Uint8Array([5, 0xc0]), prague))).toBe('unsupported_type')
    expect(() => envelope(new Uint8Array([4, 0xc0]), london)).toThrow('transaction type 0x04 (EIP-7702 set-code) is not active at hardfork london')
    expect(reasonOf(() => envelope(new Uint8Array([0x80]), prague))).toBe('rlp')
  })
})
