import { describe, expect, it } from 'vitest'
import { RPC_INVALID_PARAMS } from '../../../src/server/jsonrpc/index.ts'
import { formatEth, formatFixed, MAX_BACKRUN_CALLDATA_BYTES, parseBackrunParams } from '../../../src/server/rpc/backrun-method.ts'

const VALID = {
  to: '0x30D2451AC34693A5f42908E6E4B165D0536C3936',
  calldata: '0x7b5da27f00',
  value: '0',
  tokenIn: '0x7fD2f008b0Ca3D4CcaF6B88aB8370314CD45A972',
  amountIn: '1000000000000000000',
}

function rejection(params: Record<string, unknown>): { code: number; message: string } {
  try {
    parseBackrunParams(params)
  } catch (err) {
    return { code: (err as { code: number }).code, message: (err as Error).message }
  }
  throw new Error('accepted')
}

describe('eth_backrun params', () => {
  it('accepts a valid user transaction, lowercasing addresses and hex; value is optional', () => {
    expect(parseBackrunParams(VALID)).toEqual({
      to: VALID.to.toLowerCase(),
      calldata: VALID.calldata,
      value: 0n,
      tokenIn: VALID.tokenIn.toLowerCase(),
      amountIn: 10n ** 18n,
    })
    const { value: _omitted, ...noValue } = VALID
    expect(parseBackrunParams(noValue).value).toBe(0n)
    expect(parseBackrunParams({ ...VALID, value: '5' }).value).toBe(5n)
  })

  it.each([
    ['to', undefined, /missing field: to/],
    ['to', '0x1234', /to must be/],
    ['to', 42, /to must be/],
    ['calldata', undefined, /missing field: calldata/],
    ['calldata', '7b5d', /calldata must be/],
    ['calldata', '0x7b5', /calldata must be/],
    ['calldata', '0xzz', /calldata must be/],
    ['value', '-1', /value must be/],
    ['value', '01', /value must be/],
    ['value', 1, /value must be/],
    ['value', (1n << 256n).toString(), /value must be/],
    ['tokenIn', undefined, /missing field: tokenIn/],
    ['tokenIn', '0xnothex0000000000000000000000000000000000', /tokenIn must be/],
    ['amountIn', undefined, /missing field: amountIn/],
    ['amountIn', '0', /amountIn must be/],
    ['amountIn', '1.5', /amountIn must be/],
    ['amountIn', '0x10', /amountIn must be/],
    ['amountIn', 1000, /amountIn must be/],
    ['amountIn', (1n << 256n).toString(), /amountIn must be/],
  ])('%s = %j gives -32000 naming the field', (field, value, message) => {
    const params: Record<string, unknown> = { ...VALID }
    if (value === undefined) delete params[field]
    else params[field] = value
    const r = rejection(params)
    expect(r.code).toBe(RPC_INVALID_PARAMS)
    expect(r.code).toBe(-32000)
    expect(r.message).toMatch(message)
  })

  it('refuses oversized calldata and unknown fields', () => {
    expect(rejection({ ...VALID, calldata: `0x${'00'.repeat(MAX_BACKRUN_CALLDATA_BYTES + 1)}` }).message).toMatch(/at most/)
    expect(rejection({ ...VALID, from: VALID.to }).message).toMatch(/unknown field: from/)
  })
})

describe('amount formatting', () => {
  it('writes wei as exact ETH and fixed-point USD', () => {
    expect(formatEth(1n)).toBe('0.000000000000000001')
    expect(formatEth(10n ** 18n)).toBe('1')
    expect(formatEth(1_500_000_000_000_000_000n)).toBe('1.5')
    expect(formatEth(-25n * 10n ** 16n)).toBe('-0.25')
    expect(formatFixed(3_701_234n, 6)).toBe('3.701234')
    expect(formatFixed(0n, 6)).toBe('0')
  })
})
