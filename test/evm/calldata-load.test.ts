/**
 * calldata-load.ts: CALLDATALOAD in a pooled EVM pushes what the stock handler pushes for every
 * offset (inside, straddling the end, at and past it, beyond 2^64) and calldata length (empty,
 * shorter than a word, longer), at the same gas; an empty stack fails as it does.
 */
import { describe, expect, it } from 'vitest'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { calldataLoad } from '../../src/evm/calldata-load.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')
const TARGET = createAddressFromString('0x000000000000000000000000000000000000ca11')

async function run(pooled: boolean, code: string, data: Uint8Array) {
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(TARGET, Buffer.from(code, 'hex'))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: TARGET, data, gasLimit: 1_000_000n })
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, output: Buffer.from(execResult.returnValue).toString('hex') }
  }
  // a VM outside the pool keeps the stock handlers (patchEvmInstance is the pool's)
  const common = commonForChain(31337n)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

describe('CALLDATALOAD in a pooled EVM', () => {
  it("pushes the stock handler's word for every offset and calldata length", async () => {
    for (const length of [0, 1, 31, 32, 33, 100]) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 37 + 11) & 0xff)
      const offsets = [0n, 1n, 31n, 32n, 68n, 2n ** 32n, 2n ** 64n + 1n, 2n ** 256n - 1n, ...[-33, -32, -31, -1, 0, 1].map((d) => BigInt(Math.max(0, length + d)))]
      let code = ''
      offsets.forEach((offset, i) => (code += push32(offset) + '35' + push32(BigInt(32 * i)) + '52'))
      code += push32(BigInt(32 * offsets.length)) + '6000' + 'f3'
      const stock = await run(false, code, data)
      expect(stock.error).toBeUndefined()
      expect(stock.output.length).toBe(64 * offsets.length)
      expect(await run(true, code, data), `calldata of ${length} bytes`).toEqual(stock)
    }
  })

  it('fails on an empty stack as the stock handler does', async () => {
    const stock = await run(false, '35', new Uint8Array(4))
    expect(stock.error).toBeDefined()
    expect(await run(true, '35', new Uint8Array(4))).toEqual(stock)
  })

  it('reads a word straddling the end as the bytes there, zero-padded on the right', () => {
    const pushed: bigint[] = []
    const data = Uint8Array.of(0xaa, 0xbb, 0xcc)
    calldataLoad({ stack: { pop: () => 1n, push: (v) => pushed.push(v) }, interpreter: { getCallData: () => data } })
    expect(pushed).toEqual([0xbbccn << 240n])
  })
})
