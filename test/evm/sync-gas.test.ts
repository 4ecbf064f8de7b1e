/**
 * sync-gas.ts: the synchronous RETURNDATACOPY gas handler keeps the EIP-211 rule that reading past
 * the end of the return data is an exceptional halt (ethereumjs puts that check in the gas handler,
 * so a twin that forgot it would silently copy zeros and succeed).
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
