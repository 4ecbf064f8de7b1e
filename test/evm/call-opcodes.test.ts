/**
 * call-opcodes.ts: CALL and STATICCALL of the pooled EVMs give the stock handlers' gas, results,
 * memory, balances and warm addresses: a call whose return data is longer, shorter than and as long as the
 * output range, a value transfer to a new account (stipend, new-account and transfer gas), a
 * static call to a precompile, a target word with dirty high bits, a call to an EIP-7702
 * delegated account, warm calls, a static call that tries to send value, and out-of-gas halts at
 * every gas limit around the calls; `addressOfWord` makes the stock Address of a word.
 */
import { describe, expect, it } from 'vitest'
import { Account, createAddressFromBigInt, createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { addressOfWord } from '../../src/evm/call-opcodes.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const MASK_160 = (1n << 160n) - 1n
const caller = createAddressFromString('0x000000000000000000000000000000000000ca11')
const callee = createAddressFromString('0x00000000000000000000000000000000000000ee')
const delegated = createAddressFromString('0x0000000000000000000000000000000000000de1')
const fresh = 0xdeadn

const push = (v: bigint) => {
  const hex = v.toString(16)
  const bytes = Math.max(1, Math.ceil(hex.length / 2))
  return (0x5f + bytes).toString(16) + hex.padStart(bytes * 2, '0')
}
/** CALL(gas, to, value, inOffset, inLength, outOffset, outLength), its success flag stored at `flagAt` */
const call = (to: bigint, value: bigint, inOff: bigint, inLen: bigint, outOff: bigint, outLen: bigint, flagAt: bigint) =>
  push(outLen) + push(outOff) + push(inLen) + push(inOff) + push(value) + push(to) + '5a' + 'f1' + push(flagAt) + '52'
/** STATICCALL(gas, to, inOffset, inLength, outOffset, outLength), its flag stored at `flagAt` */
const staticCall = (to: bigint, inOff: bigint, inLen: bigint, outOff: bigint, outLen: bigint, flagAt: bigint) =>
  push(outLen) + push(outOff) + push(inLen) + push(inOff) + push(to) + '5a' + 'fa' + push(flagAt) + '52'

/** the callee: 40 bytes of return data (8 zero bytes, then a word); sent value, it logs it (within the stipend) */
const CALLEE = '34' + '602d' + '57' + push(0x1122334455667788990011223344556677889900aabbccddeeff001122334455n) + '6008' + '52' + '6028' + '6000' + 'f3' + '5b' + '3460005260206000a0' + '00'

function program(): string {
  const calleeWord = BigInt(callee.toString())
  let code = push(0xabcdefn) + push(0x40n) + '52' // input bytes for the identity precompile
  code += call(calleeWord, 0n, 0n, 0n, 0x100n, 0x20n, 0x400n) // return data longer than the output range
  code += call(calleeWord, 0n, 0n, 0n, 0x200n, 0x60n, 0x420n) // shorter: the rest of the range untouched
  code += staticCall(calleeWord | (0xfffn << 170n), 0n, 0n, 0x300n, 0x20n, 0x440n) // dirty high bits
  code += call(fresh, 5n, 0n, 0n, 0n, 0n, 0x460n) // value to a new account: stipend, new account, transfer
  code += call(calleeWord, 1n, 0n, 0n, 0n, 0n, 0x480n) // value to a contract (it logs with the stipend's gas)
  code += staticCall(4n, 0x40n, 0x20n, 0x4a0n, 0x20n, 0x4c0n) // identity precompile
  code += call(BigInt(delegated.toString()), 0n, 0n, 0n, 0x500n, 0x20n, 0x520n) // EIP-7702 delegated to the callee
  code += staticCall(fresh, 0n, 0n, 0n, 0n, 0x540n) // warm, empty
  code += call(calleeWord, 0n, 0n, 0n, 0x600n, 0x28n, 0x620n) // exactly the return data: written from the array itself
  code += staticCall(calleeWord, 0n, 0n, 0x700n, 0x10n, 0x720n) // a part shorter than a word
  code += staticCall(calleeWord, 0n, 0n, 0x7ffn, 0n, 0x740n) // no output range: nothing written, memory not grown by it
  return code + '59' + '6000' + 'f3' // MSIZE PUSH1 0 RETURN
}

async function run(pooled: boolean, code: string, opts: { gasLimit?: bigint; isStatic?: boolean; value?: bigint } = {}) {
  // separate Commons: jump analyses (with the opcode entries they cache) are shared per Common
  const common = commonForChain(31337n)
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putAccount(caller, new Account(0n, 10n ** 18n))
  await state.putCode(caller, Buffer.from(code, 'hex'))
  await state.putCode(callee, Buffer.from(CALLEE, 'hex'))
  await state.putCode(delegated, Buffer.from('ef0100' + callee.toString().slice(2), 'hex'))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: caller, caller: createAddressFromBigInt(0x5e4den), gasLimit: opts.gasLimit ?? 1_000_000n, isStatic: opts.isStatic, value: opts.value })
    const journal = vm.evm.journal as unknown as { journal: Map<string, Set<string>> }
    const balances: string[] = []
    for (const address of [caller, callee, createAddressFromBigInt(fresh)]) balances.push(String((await state.getAccount(address))?.balance))
    return {
      error: execResult.exceptionError?.error,
      gas: execResult.executionGasUsed,
      refund: execResult.gasRefund,
      returned: Buffer.from(execResult.returnValue).toString('hex'),
      warm: [...journal.journal.keys()].sort(),
      balances,
      logs: (execResult.logs ?? []).map(([address, topics, data]) => [Buffer.from(address).toString('hex'), topics.length, Buffer.from(data).toString('hex')]),
    }
  }
  // a VM outside the pool keeps the stock opcode handlers (patchEvmInstance is the pool's)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

describe('CALL and STATICCALL in a pooled EVM', () => {
  it('give the stock handlers\' gas, results, memory, balances and warm addresses', async () => {
    const code = program()
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    const returned = Buffer.from(stock.returned, 'hex')
    // every call succeeded, the delegated one ran the callee's code
    for (const at of [0x400, 0x420, 0x440, 0x460, 0x480, 0x4c0, 0x520, 0x540]) expect(returned[at + 31], `flag at ${at.toString(16)}`).toBe(1)
    expect(returned.subarray(0x500, 0x520).toString('hex')).toBe('0000000000000000' + '1122334455667788990011223344556677889900aabbccdd')
    expect(returned.subarray(0x200, 0x228).toString('hex')).toBe('0000000000000000' + '1122334455667788990011223344556677889900aabbccddeeff001122334455')
    expect(returned.subarray(0x228, 0x260).every((b) => b === 0)).toBe(true)
    expect(stock.logs).toEqual([[callee.toString().slice(2), 0, '01'.padStart(64, '0')]])
    expect(stock.warm).toContain(fresh.toString(16).padStart(40, '0'))
    expect(await run(true, code)).toEqual(stock)
  })

  it('halt as the stock ones do: out of gas around every call, and value sent from a static frame', async () => {
    const code = program()
    const full = (await run(false, code)).gas
    const limits = new Set<bigint>()
    for (let g = 2_000n; g < full + 100n; g += 1_777n) limits.add(g)
    for (const limit of limits) {
      const stock = await run(false, code, { gasLimit: limit })
      expect(await run(true, code, { gasLimit: limit }), `gas limit ${limit}`).toEqual(stock)
    }
    const valueCall = call(BigInt(callee.toString()), 1n, 0n, 0n, 0n, 0n, 0n)
    const staticStock = await run(false, valueCall, { isStatic: true })
    expect(staticStock.error).toBe('static state change')
    expect(await run(true, valueCall, { isStatic: true })).toEqual(staticStock)
  })
})

describe('addressOfWord', () => {
  it('makes the Address createAddressFromStackBigInt makes (the low 160 bits), its hex and bytes, the same again for the same word', () => {
    for (const word of [0n, 1n, 0xeen, MASK_160, MASK_160 + 1n, (1n << 256n) - 1n, 0x00000000000000000000000000000000000000ffn << 100n, 0xabcn | (1n << 255n)]) {
      const stock = createAddressFromBigInt(word & MASK_160)
      const ours = addressOfWord(word)
      expect(ours.bytes).toEqual(stock.bytes)
      expect(ours.bytes).toBeInstanceOf(Uint8Array)
      expect(ours.toString()).toBe(stock.toString())
      expect(addressOfWord(word)).toBe(ours)
    }
  })
})
