import { describe, expect, it } from 'vitest'

import type { RawFields } from '../../../src/tx/decode/fields.ts'
import { SECP256K1_N, SECP256K1_N_HALF, checkChainId, checkFieldRules, checkSignatureRange } from '../../../src/tx/decode/rules.ts'
import { TxDecodeError } from '../../../src/tx/errors.ts'

function fields(overrides: Partial<RawFields> = {}): RawFields {
  return {
    type: 2,
    chainId: 1n,
    nonce: 0n,
    maxPriorityFeePerGas: 1n,
    maxFeePerGas: 2n,
    gasLimit: 21_000n,
    to: new Uint8Array(20),
    value: 0n,
    data: new Uint8Array(),
    accessList: [],
    authorizationList: [],
    signature: { v: 0n, yParity: 0, r: 1n, s: 1n },
    items: [],
    ...overrides,
  }
}

function reasonOf(run: () => void): string | undefined {
  try {
    run()
  } catch (error) {
    if (error instanceof TxDecodeError) return `${error.reason}: ${error.message}`
    throw error
  }
  return undefined
}

describe('checkChainId', () => {
  it("accepts the service's chain and, unless disabled, unprotected legacy", () => {
    expect(reasonOf(() => checkChainId(fields(), { chainId: 1n }))).toBeUndefined()
    expect(reasonOf(() => checkChainId(fields({ type: 0, chainId: undefined }), { chainId: 1n }))).toBeUndefined()
  })

  it('refuses another chain, and unprotected legacy when disabled', () => {
    expect(reasonOf(() => checkChainId(fields({ chainId: 5n }), { chainId: 1n }))).toMatch(/^chain_id: transaction chain id 5 /)
    expect(reasonOf(() => checkChainId(fields({ type: 0, chainId: undefined }), { chainId: 1n, allowUnprotectedLegacy: false }))).toMatch(/^chain_id: transaction is not replay-protected/)
  })
})

describe('checkSignatureRange', () => {
  it('accepts r below n and s up to n/2', () => {
    expect(reasonOf(() => checkSignatureRange({ v: 0n, yParity: 0, r: SECP256K1_N - 1n, s: SECP256K1_N_HALF }))).toBeUndefined()
  })

  it('refuses zero, r at n and high s (EIP-2)', () => {
    expect(reasonOf(() => checkSignatureRange({ v: 0n, yParity: 0, r: 0n, s: 1n }))).toMatch(/r and s must be non-zero/)
    expect(reasonOf(() => checkSignatureRange({ v: 0n, yParity: 0, r: SECP256K1_N, s: 1n }))).toMatch(/r is not below the secp256k1 curve order/)
    expect(reasonOf(() => checkSignatureRange({ v: 0n, yParity: 0, r: 1n, s: SECP256K1_N_HALF + 1n }))).toMatch(/high-s signatures are forbidden since EIP-2/)
  })
})

describe('checkFieldRules', () => {
  it('accepts a plain fee-market transaction', () => {
    expect(reasonOf(() => checkFieldRules(fields()))).toBeUndefined()
  })

  it.each<[string, Partial<RawFields>, RegExp]>([
    ['nonce 2^64-1 (EIP-2681)', { nonce: (1n << 64n) - 1n }, /nonce 2\^64-1 is not allowed/],
    ['a tip above the fee cap', { maxPriorityFeePerGas: 3n }, /the tip cannot exceed the fee cap/],
    ['gasLimit * fee cap beyond 256 bits', { gasLimit: 1n << 200n, maxFeePerGas: 1n << 60n, maxPriorityFeePerGas: 0n }, /overflows 256 bits/],
    ['a set-code transaction that creates', { type: 4, to: null, authorizationList: [[new Uint8Array(), new Uint8Array(20), new Uint8Array(), new Uint8Array(), new Uint8Array([1]), new Uint8Array([1])]] }, /cannot create contracts/],
    ['a set-code transaction without authorizations', { type: 4 }, /empty authorization list/],
  ])('refuses %s', (_what, overrides, message) => {
    const reason = reasonOf(() => checkFieldRules(fields(overrides)))
    expect(reason).toMatch(/^invalid_fields: /)
    expect(reason).toMatch(message)
  })
})
