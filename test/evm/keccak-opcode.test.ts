/**
 * keccak-opcode.ts: KECCAK256 in a pooled EVM leaves the stack, memory, gas and errors exactly as
 * the stock handler with noble's hash does: empty ranges (at any offset), ranges inside and past
 * written memory, across the sponge's rate, memory expansion, a stack underflow, and a range too
 * large to pay for.
 */
import { describe, expect, it } from 'vitest'
import { Common, Mainnet } from '@ethereumjs/common'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain, DEFAULT_HARDFORK } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { wordOfBytes } from '../../src/evm/word-memory.ts'
import { KECCAK_MEMO_MAX_ENTRIES, KECCAK_MEMO_MAX_INPUT_BYTES, keccakMemoSize, keccakWord } from '../../src/evm/keccak-opcode.ts'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { VmPool } from '../../src/evm/vm-pool.ts'

const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')
const TARGET = createAddressFromString('0x000000000000000000000000000000000000ecca')

/** fills 400 bytes of memory, then hashes each (offset, length) and stores the digests from 10,000 on; returns that area and MSIZE */
function program(ranges: Array<[bigint, bigint]>): string {
  let code = ''
  for (let i = 0; i < 13; i++) code += push32(0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20n * BigInt(i + 1)) + push32(BigInt(32 * i)) + '52'
  ranges.forEach(([offset, length], i) => (code += push32(length) + push32(offset) + '20' + push32(BigInt(10_000 + 32 * i)) + '52'))
  return code + '59' + push32(10_000n) + '52' + push32(BigInt(32 * (ranges.length + 1))) + push32(10_000n) + 'f3'
}

async function run(pooled: boolean, code: string, gasLimit = 10_000_000n) {
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(TARGET, Buffer.from(code, 'hex'))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: TARGET, gasLimit })
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, output: Buffer.from(execResult.returnValue).toString('hex') }
  }
  // the stock side: a VM outside the pool (stock opcode handlers) on a Common hashing with noble
  return pooled ? new VmPool(commonForChain(31337n)).with(state, exec) : exec(await createVM({ common: new Common({ chain: Mainnet, hardfork: DEFAULT_HARDFORK }), stateManager: state }))
}

describe('KECCAK256 in a pooled EVM', () => {
  it("gives the stock handler's digests, memory size and gas", async () => {
    const ranges: Array<[bigint, bigint]> = [[0n, 0n], [2n ** 200n, 0n], [0n, 32n], [0n, 64n], [7n, 100n], [0n, 135n], [0n, 136n], [1n, 137n], [300n, 200n], [390n, 33n], [1000n, 64n], [5000n, 1n]]
    const code = program(ranges)
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    expect(stock.output.length).toBe(2 * 32 * (ranges.length + 1))
    expect(await run(true, code)).toEqual(stock)
  })

  it('fails as the stock handler does: stack underflow, out of gas for a huge range', async () => {
    for (const code of ['20', '600020', push32(2n ** 40n) + '600020', push32(2n ** 64n) + push32(0n) + '20']) {
      const stock = await run(false, code, 1_000_000n)
      expect(stock.error).toBeDefined()
      expect(await run(true, code, 1_000_000n)).toEqual(stock)
    }
  })

  it('the same range hashed again, and ranges that share a prefix or differ in one byte, give the stock digests', async () => {
    // the memo answers the second hash of each range; [0, 64) and [0, 65), [32, 96) and [33, 96) differ by a byte
    const ranges: Array<[bigint, bigint]> = [[0n, 64n], [0n, 64n], [0n, 65n], [0n, 65n], [32n, 64n], [33n, 63n], [32n, 64n], [0n, 129n], [0n, 129n], [64n, 0n]]
    const code = program(ranges)
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    expect(await run(true, code)).toEqual(stock)
    // and a second execution, answered from what the first remembered
    expect(await run(true, code)).toEqual(stock)
  })

  it('remembers digests of inputs up to its byte bound, at most its entry bound, each the digest of its own input', () => {
    const word = (bytes: Uint8Array) => wordOfBytes(keccak_256(bytes))
    const input = new Uint8Array(KECCAK_MEMO_MAX_INPUT_BYTES + 1).map((_, i) => i)
    for (const length of [1, 32, 64, KECCAK_MEMO_MAX_INPUT_BYTES, KECCAK_MEMO_MAX_INPUT_BYTES + 1]) {
      expect(keccakWord(input.subarray(0, length))).toBe(word(input.subarray(0, length)))
      expect(keccakWord(input.subarray(1, length))).toBe(word(input.subarray(1, length)))
      expect(keccakWord(input.subarray(0, length))).toBe(word(input.subarray(0, length)))
    }
    // more distinct inputs than the bound: the size stays at it, and old and new inputs still hash right
    const slot = new Uint8Array(64)
    const view = new DataView(slot.buffer)
    for (let i = 0; i < KECCAK_MEMO_MAX_ENTRIES + 100; i++) {
      view.setUint32(28, i)
      keccakWord(slot)
      expect(keccakMemoSize()).toBeLessThanOrEqual(KECCAK_MEMO_MAX_ENTRIES)
    }
    expect(keccakMemoSize()).toBe(KECCAK_MEMO_MAX_ENTRIES)
    for (const i of [0, 1, KECCAK_MEMO_MAX_ENTRIES + 99]) {
      view.setUint32(28, i)
      expect(keccakWord(slot)).toBe(word(slot))
    }
  })

  it('turns a digest into its big-endian integer, leading zeros included', () => {
    const digest = new Uint8Array(32)
    digest[31] = 1
    expect(wordOfBytes(digest)).toBe(1n)
    digest.fill(0xff)
    expect(wordOfBytes(digest)).toBe(2n ** 256n - 1n)
    const view = new Uint8Array(40).fill(0xab).subarray(8)
    expect(wordOfBytes(view)).toBe(BigInt('0x' + 'ab'.repeat(32)))
  })
})
