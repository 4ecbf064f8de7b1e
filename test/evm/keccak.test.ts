/**
 * keccak.ts: the EVM hashes with src/crypto/keccak.ts's loader (its digests, views and buffers are
 * tested in test/crypto/keccak.test.ts), and the EVM's Common takes the native one.
 */
import { describe, expect, it } from 'vitest'
import * as crypto from '../../src/crypto/keccak.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { keccak256, wasmKeccak256 } from '../../src/evm/keccak.ts'

describe('the EVM keccak256', () => {
  it('is the one loader of src/crypto, not a second one', () => {
    expect(keccak256).toBe(crypto.keccak256)
    expect(wasmKeccak256).toBe(crypto.wasmKeccak256)
  })

  it("is the EVM Common's keccak256, in WebAssembly", () => {
    expect(wasmKeccak256).toBeDefined()
    const common = commonForChain(31337n)
    expect(common.customCrypto.keccak256).toBe(wasmKeccak256)
  })
})
