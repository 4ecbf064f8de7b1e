/**
 * sync-gas.ts: the synchronous RETURNDATACOPY gas handler keeps the EIP-211 rule that reading past
 * the end of the return data is an exceptional halt (ethereumjs puts that check in the gas handler,
 * so a twin that forgot it would silently copy zeros and succeed); EXTCODESIZE's twin charges and
 * warms the account as the stock (async) gas handler does, on the stock step beside it.
 */
import { describe, expect, it } from 'vitest'
import type { Hex } from 'viem'
import { Common, Hardfork, Mainnet } from '@ethereumjs/common'
import { paramsEVM } from '@ethereumjs/evm'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { loadSyncGasHandlers, type GasRunState } from '../../src/evm/sync-gas.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { Account, createAddressFromString } from '@ethereumjs/util'
import { createVM } from '@ethereumjs/vm'
import { GENESIS_PATH } from '../support/devnet.ts'

const RETURNDATACOPY = 0x3e

/** the EVM error a handler traps with (ethereumjs throws an EVMError whose text is in .error) */
function trapped(run: () => unknown): string {
  try {
    run()
    return 'no trap'
  } catch (err) {
    const e = err as { error?: unknown; message?: unknown }
    return String(e.error ?? e.message)
  }
}

function runState(stackTop: [bigint, bigint, bigint], returnDataSize: bigint): GasRunState {
  return {
    // peek(3) answers the top three, top first: memOffset, returnDataOffset, length
    stack: { peek: (n = 1) => stackTop.slice(0, n) },
    env: {},
    interpreter: { getReturnDataSize: () => returnDataSize },
    memoryWordCount: 0n,
    highestMemCost: 0n,
  }
}

describe('sync gas: RETURNDATACOPY', () => {
  // the EVM's own parameters (memoryGas, copyGas, ...), as the EVM adds them to its Common
  const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM })

  it('halts (out of gas) when the copy reads past the end of the return data', async () => {
    const handler = (await loadSyncGasHandlers()).get(RETURNDATACOPY)!
    expect(trapped(() => handler(runState([0n, 0n, 1n], 0n), 3n, common))).toMatch(/out of gas/i)
    expect(trapped(() => handler(runState([0n, 16n, 17n], 32n), 3n, common))).toMatch(/out of gas/i)
    expect(trapped(() => handler(runState([0n, 16n, 16n], 32n), 3n, common))).toBe('no trap')
  })

  it('charges memory expansion and copy gas when the range is inside the return data', async () => {
    const handler = (await loadSyncGasHandlers()).get(RETURNDATACOPY)!
    // 32 bytes into fresh memory: one word of expansion (3) and one word of copy (3)
    expect(handler(runState([0n, 0n, 32n], 32n), 3n, common)).toBe(3n + 3n + 3n)
    expect(handler(runState([0n, 32n, 0n], 32n), 3n, common)).toBe(3n)
  })

  it('in the EVM: an out-of-bounds RETURNDATACOPY halts the call, an in-bounds one does not', async () => {
    const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const caller: Address = '0x000000000000000000000000000000000000c0de'
    const outOfBounds: Address = '0x0000000000000000000000000000000000000e01'
    const empty: Address = '0x0000000000000000000000000000000000000e02'
    const state = sim.openState(source.latest())
    await applyAccountOverrides(state, new Map([
      // PUSH1 1 (length) PUSH1 0 (returnDataOffset) PUSH1 0 (memOffset) RETURNDATACOPY STOP, no return data yet
      [outOfBounds, { code: '0x6001600060003e00' as Hex }],
      // the same with length 0: allowed
      [empty, { code: '0x6000600060003e00' as Hex }],
    ]))
    const halted = await sim.call(state, { from: caller, to: outOfBounds, gasLimit: 100_000n })
    expect(halted.status).toBe('halted')
    expect(halted.error).toMatch(/out of gas/i)
    // an exceptional halt consumes all the gas given
    expect(halted.gasUsed).toBe(100_000n)
    const fine = await sim.call(state, { from: caller, to: empty, gasLimit: 100_000n })
    expect(fine.status).toBe('success')
    expect(fine.gasUsed).toBe(21_000n + 3n * 3n + 3n)
  })
})

describe('EXTCODESIZE gas', () => {
  const caller = createAddressFromString('0x000000000000000000000000000000000000ca11')
  const contract = createAddressFromString('0x00000000000000000000000000000000000000ee')
  const word = (a: { toString(): string }) => BigInt(a.toString())
  const push = (v: bigint) => {
    const hex = v.toString(16)
    const bytes = Math.max(1, Math.ceil(hex.length / 2))
    return (0x5f + bytes).toString(16) + hex.padStart(bytes * 2, '0')
  }
  // EXTCODESIZE of: the contract (cold), again (warm), its word with dirty high bits (warm: the low
  // 160 bits), an empty account (cold), the executing account (warm); each size stored in memory, GAS between
  const targets = [word(contract), word(contract), word(contract) | (0xabcn << 170n), 0xdeadn, word(caller)]
  const PROGRAM = targets.map((t, i) => push(t) + '3b' + push(BigInt(i * 64)) + '52' + '5a' + push(BigInt(i * 64 + 32)) + '52').join('') + push(BigInt(targets.length * 64)) + '6000f3'

  async function run(stock: boolean, gasLimit: bigint) {
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putAccount(caller, new Account(0n, 1n))
    await state.putCode(caller, Buffer.from(PROGRAM, 'hex'))
    await state.putCode(contract, Buffer.from('6001600055', 'hex'))
    const vm = await createVM({ common: commonForChain(31337n), stateManager: state })
    // a step listener puts the EVM on the stock step, with the stock (async) gas handler
    if (stock) vm.evm.events!.on('step', (_step: unknown, resolve?: () => void) => resolve?.())
    const { execResult } = await vm.evm.runCall({ to: caller, caller: createAddressFromString('0x0000000000000000000000000000000000005e4d'), gasLimit })
    const journal = vm.evm.journal as unknown as { journal: Map<string, Set<string>> }
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, returned: Buffer.from(execResult.returnValue).toString('hex'), warm: [...journal.journal.keys()].sort() }
  }

  it("is the stock handler's: cold and warm accounts, a dirty word, an empty account, out-of-gas halts around each access", async () => {
    const full = await run(false, 1_000_000n)
    expect(full).toEqual(await run(true, 1_000_000n))
    expect(full.error).toBeUndefined()
    // sizes 5, 5, 5, 0, the program's own
    const sizes = [0, 1, 2, 3, 4].map((i) => BigInt(`0x${full.returned.slice(i * 128, i * 128 + 64)}`))
    expect(sizes).toEqual([5n, 5n, 5n, 0n, BigInt(PROGRAM.length / 2)])
    // between the GAS readings the same opcodes and memory growth: only the access differs, cold
    // (2,600) for the empty account, warm (100) for the contract again, dirty word or not
    const gasLeft = [0, 1, 2, 3, 4].map((i) => BigInt(`0x${full.returned.slice(i * 128 + 64, i * 128 + 128)}`))
    const spent = [1, 2, 3].map((i) => gasLeft[i - 1] - gasLeft[i])
    expect([spent[1] - spent[0], spent[2] - spent[0]]).toEqual([0n, 2_500n])
    for (let limit = 2_500n; limit <= 9_000n; limit += 97n) expect(await run(false, limit)).toEqual(await run(true, limit))
  })
})
