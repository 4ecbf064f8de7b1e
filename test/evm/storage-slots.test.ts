/**
 * storage-slots.ts: SLOAD and SSTORE of the pooled EVMs give the stock handlers' gas, refunds,
 * results and storage over every EIP-2200 transition (0 -> X -> Y -> 0, X -> 0 -> X, X -> Y -> X,
 * no-ops, fresh and cold slots, slots written twice), the sentry's out-of-gas and the static-call
 * halt; OriginalSlots answers the stock cache's bytes; the journal's warm slots are the same keys.
 */
import { describe, expect, it } from 'vitest'
import { createAddressFromString, type Address } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { SLOT_KEY_MEMO_MAX_ENTRIES, slotBytes, slotKeyHex, slotKeyMemoSize } from '../../src/evm/storage-slots.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const target = createAddressFromString('0x00000000000000000000000000000000000051a7')
const word = (v: bigint) => v.toString(16).padStart(64, '0')
const push32 = (v: bigint) => '7f' + word(v)
const sstore = (slot: bigint, value: bigint) => push32(value) + push32(slot) + '55'
let results = 0
/** SLOAD of the slot, written to the next word of the results. */
const sload = (slot: bigint) => push32(slot) + '54' + push32(BigInt(32 * results++)) + '52'

/** Slots before the call: 1 and 3 hold values, 0, 2 and 4 are empty. */
const PRE = new Map<bigint, bigint>([[1n, 5n], [3n, 7n], [2n ** 255n + 1n, 9n]])

function program(): string {
  results = 0
  let code = ''
  code += sstore(0n, 1n) + sload(0n) + sstore(0n, 2n) + sstore(0n, 0n) + sload(0n) // 0 -> 1 -> 2 -> 0
  code += sstore(1n, 5n) + sstore(1n, 0n) + sload(1n) + sstore(1n, 5n) // X no-op, X -> 0 -> X
  code += sstore(2n, 0n) + sload(2n) // no-op on an empty slot
  code += sstore(3n, 8n) + sstore(3n, 7n) + sload(3n) + sstore(3n, 6n) + sstore(3n, 0n) // X -> Y -> X -> Z -> 0
  code += sload(4n) + sstore(4n, 2n ** 256n - 1n) + sload(4n) // cold read, then a full-width value
  code += sload(2n ** 255n + 1n) + sstore(2n ** 255n + 1n, 10n) + sload(2n ** 255n + 1n) // a high slot
  return code + '59' + '6000' + 'f3' // MSIZE PUSH1 0 RETURN
}

async function run(pooled: boolean, code: string, opts: { gasLimit?: bigint; isStatic?: boolean } = {}) {
  // separate Commons: jump analyses (with the opcode entries they cache) are shared per Common
  const common = commonForChain(31337n)
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(target, Buffer.from(code, 'hex'))
  for (const [slot, value] of PRE) await state.putStorage(target, slotBytes(slot), slotBytes(value))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: target, gasLimit: opts.gasLimit ?? 1_000_000n, isStatic: opts.isStatic })
    const journal = vm.evm.journal as unknown as { journal: Map<string, Set<string>> }
    const warm = [...(journal.journal.get(target.toString().slice(2)) ?? [])].sort()
    const slots: Record<string, bigint> = {}
    for (const slot of [0n, 1n, 2n, 3n, 4n, 2n ** 255n + 1n]) slots[slot.toString()] = await state.storageValue(target as Address, slot)
    return {
      error: execResult.exceptionError?.error,
      gas: execResult.executionGasUsed,
      refund: execResult.gasRefund,
      returned: Buffer.from(execResult.returnValue).toString('hex'),
      warm,
      slots,
    }
  }
  // a VM outside the pool keeps the stock opcode handlers (patchEvmInstance is the pool's)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

describe('SLOAD and SSTORE in a pooled EVM', () => {
  it('give the stock handlers\' gas, refund, results, storage and warm slots over every EIP-2200 transition', async () => {
    const code = program()
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    expect(stock.refund).toBeGreaterThan(0n)
    expect(stock.warm.length).toBe(6)
    expect(stock.slots['4']).toBe(2n ** 256n - 1n)
    expect(await run(true, code)).toEqual(stock)
  })

  it('halt as the stock ones do: the EIP-2200 sentry (2,300 gas left) and a static call', async () => {
    const store = sstore(0n, 1n)
    // two PUSH32 (6 gas) leave exactly the sentry's 2,300: out of gas before anything is written
    for (const gasLimit of [2306n, 2307n, 22_106n, 22_107n]) {
      const stock = await run(false, store, { gasLimit })
      expect(await run(true, store, { gasLimit }), `gas limit ${gasLimit}`).toEqual(stock)
    }
    expect((await run(false, store, { gasLimit: 2306n })).error).toBe('out of gas')
    const staticStock = await run(false, store, { isStatic: true })
    expect(staticStock.error).toBe('static state change')
    expect(await run(true, store, { isStatic: true })).toEqual(staticStock)
  })
})

describe('OriginalSlots', () => {
  it('answers the value a slot had when first asked, as bytes (stock API) and as a bigint, until cleared', async () => {
    const state = JournaledState.over(EMPTY_STATE_READER)
    const address = target as Address
    await state.putStorage(target, slotBytes(1n), Uint8Array.of(5))
    expect(await state.originalStorageCache.get(target, slotBytes(1n))).toEqual(Uint8Array.of(5))
    state.putStorageValue(address, 1n, 0n)
    expect(await state.originalStorageValue(address, 1n)).toBe(5n)
    expect(await state.originalStorageValue(address, 2n)).toBe(0n)
    expect(await state.originalStorageCache.get(target, slotBytes(2n))).toEqual(new Uint8Array(0))
    state.originalStorageCache.clear()
    expect(await state.originalStorageValue(address, 1n)).toBe(0n)
  })
})

describe('slotKeyHex', () => {
  it("is the journal's key of the slot's 32 bytes, remembered for at most its bound of slots", () => {
    const stockKey = (key: bigint) => Buffer.from(key.toString(16).padStart(64, '0'), 'hex').toString('hex')
    for (const key of [0n, 1n, 0xffn, 1n << 255n, (1n << 256n) - 1n]) expect(slotKeyHex(key)).toBe(stockKey(key))
    const slot = (i: number) => (BigInt(i) << 200n) | 0x5107n
    for (let i = 0; i < SLOT_KEY_MEMO_MAX_ENTRIES + 10; i++) expect(slotKeyHex(slot(i))).toBe(stockKey(slot(i)))
    expect(slotKeyMemoSize()).toBe(SLOT_KEY_MEMO_MAX_ENTRIES)
    expect(slotKeyHex(slot(0))).toBe(stockKey(slot(0)))
  })
})
