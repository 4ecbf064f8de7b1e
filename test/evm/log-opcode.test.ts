/**
 * log-opcode.ts and LOG's synchronous gas (sync-gas.ts): LOG0-LOG4 in a pooled EVM record the logs
 * (address, topics, data) and cost the gas of a VM outside the pool, for topics from 0 to 2^256 - 1
 * and data empty, inside and past written memory; the gas twin answers what the stock (async) gas
 * handler answers, and traps as it does in a static frame; a LOG under STATICCALL fails in both.
 */
import { describe, expect, it } from 'vitest'
import { Common, Hardfork, Mainnet } from '@ethereumjs/common'
import { paramsEVM } from '@ethereumjs/evm'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { loadSyncGasHandlers, type GasRunState } from '../../src/evm/sync-gas.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')
const TARGET = createAddressFromString('0x0000000000000000000000000000000000000106')
const OTHER = createAddressFromString('0x0000000000000000000000000000000000000107')
const TOPICS = [0n, 1n, 2n ** 160n - 1n, 2n ** 255n, 2n ** 256n - 1n]

const evmEntry = import.meta.resolve('@ethereumjs/evm')
const { dynamicGasHandlers } = (await import(new URL('./opcodes/gas.js', evmEntry).href)) as {
  dynamicGasHandlers: Map<number, (rs: unknown, gas: bigint, common: Common) => Promise<bigint>>
}

async function run(pooled: boolean, code: string, other = '') {
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(TARGET, Buffer.from(code, 'hex'))
  if (other !== '') await state.putCode(OTHER, Buffer.from(other, 'hex'))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: TARGET, gasLimit: 1_000_000n })
    const logs = (execResult.logs ?? []).map(([address, topics, data]) => [Buffer.from(address).toString('hex'), topics.map((t) => Buffer.from(t).toString('hex')), Buffer.from(data).toString('hex')])
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, logs, output: Buffer.from(execResult.returnValue).toString('hex') }
  }
  // a VM outside the pool keeps the stock LOG handler (patchEvmInstance is the pool's)
  const common = commonForChain(31337n)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

describe('LOG0-LOG4 in a pooled EVM', () => {
  it("record the stock handler's logs at the same gas", async () => {
    let code = push32(0x1122334455667788n) + push32(40n) + '52' // some memory written
    const ranges: Array<[bigint, bigint]> = [[0n, 0n], [2n ** 40n, 0n], [0n, 32n], [50n, 30n], [60n, 100n], [1000n, 7n]]
    let i = 0
    for (let topics = 0; topics <= 4; topics++) {
      for (const [offset, length] of ranges) {
        for (let t = 0; t < topics; t++) code += push32(TOPICS[(i + t) % TOPICS.length])
        code += push32(length) + push32(offset) + (0xa0 + topics).toString(16)
        i++
      }
    }
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    expect(stock.logs.length).toBe(5 * ranges.length)
    expect(await run(true, code)).toEqual(stock)
  })

  it('fail as the stock step does: stack underflow, a LOG in a static call', async () => {
    for (const code of ['a0', '6000a2', push32(0n) + push32(0n) + 'a1']) {
      const stock = await run(false, code)
      expect(stock.error).toBeDefined()
      expect(await run(true, code)).toEqual(stock)
    }
    // STATICCALL(gas, OTHER, 0, 0, 0, 0), whose code is LOG0(0, 0); return the call's success
    const caller = '6000600060006000' + '73' + OTHER.toString().slice(2) + '620186a0' + 'fa' + '600052' + '60206000f3'
    const stock = await run(false, caller, '60006000a0')
    expect(stock.output).toBe('0'.repeat(64)) // the static call failed
    expect(await run(true, caller, '60006000a0')).toEqual(stock)
  })

  it("LOG's synchronous gas is the stock gas handler's, and traps as it does in a static frame", async () => {
    const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM })
    const sync = await loadSyncGasHandlers()
    const state = (op: number, top: [bigint, bigint], isStatic: boolean, words: bigint) => ({
      opCode: op,
      stack: { peek: (n = 1) => top.slice(0, n) },
      env: {},
      interpreter: { getReturnDataSize: () => 0n, isStatic: () => isStatic },
      memoryWordCount: words,
      highestMemCost: words * 3n + (words * words) / 512n,
    })
    const outcome = async (f: () => Promise<bigint> | bigint) => {
      try {
        return String(await f())
      } catch (err) {
        return `trap ${(err as { error?: string }).error}`
      }
    }
    for (let op = 0xa0; op <= 0xa4; op++) {
      for (const [top, words] of [[[0n, 0n], 0n], [[0n, 32n], 0n], [[31n, 33n], 1n], [[64n, 1000n], 4n], [[2n ** 20n, 5n], 0n]] as Array<[[bigint, bigint], bigint]>) {
        for (const isStatic of [false, true]) {
          const ours = state(op, top, isStatic, words)
          const stock = state(op, top, isStatic, words)
          expect(await outcome(() => sync.get(op)!(ours as unknown as GasRunState, 375n, common)), `op ${op} ${top} static ${isStatic}`).toBe(await outcome(() => dynamicGasHandlers.get(op)!(stock, 375n, common)))
          expect([ours.memoryWordCount, ours.highestMemCost]).toEqual([stock.memoryWordCount, stock.highestMemCost])
        }
      }
    }
  })
})
