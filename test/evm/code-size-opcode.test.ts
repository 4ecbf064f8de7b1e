/**
 * code-size-opcode.ts: EXTCODESIZE of a pooled EVM gives the stock handler's sizes, gas, warm
 * addresses and errors: a contract, an account without code, a precompile, a target word with
 * dirty high bits, EOF code (seen as EOFBYTES), the same target twice (cold, then warm), a stack
 * underflow, and out-of-gas halts at every gas limit around the reads.
 */
import { describe, expect, it } from 'vitest'
import { createAddressFromBigInt, createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const target = createAddressFromString('0x000000000000000000000000000000000000c0de')
const contract = createAddressFromString('0x00000000000000000000000000000000000000ee')
const eof = createAddressFromString('0x00000000000000000000000000000000000000ef')
const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')

/** EXTCODESIZE of each word, each size stored at 32 * i, then RETURN of them all */
function program(words: bigint[]): string {
  let code = ''
  words.forEach((word, i) => (code += push32(word) + '3b' + push32(BigInt(32 * i)) + '52'))
  return code + push32(BigInt(32 * words.length)) + '6000' + 'f3'
}

const WORDS = [
  BigInt(contract.toString()),
  0xdeadn, // no account
  4n, // the identity precompile
  BigInt(contract.toString()) | (0xabcn << 180n), // dirty high bits: the same account
  BigInt(eof.toString()),
  BigInt(contract.toString()), // warm now
]

async function run(pooled: boolean, code: string, gasLimit = 1_000_000n) {
  // separate Commons, so that each side's frames run with its own EVM's handlers
  const common = commonForChain(31337n)
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(target, Buffer.from(code, 'hex'))
  await state.putCode(contract, Buffer.from('6001600101' + '00'.repeat(40), 'hex'))
  await state.putCode(eof, Buffer.from('ef0001' + '00'.repeat(20), 'hex'))
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: target, caller: createAddressFromBigInt(0x5e4den), gasLimit })
    const journal = vm.evm.journal as unknown as { journal: Map<string, Set<string>> }
    return {
      error: execResult.exceptionError?.error,
      gas: execResult.executionGasUsed,
      returned: Buffer.from(execResult.returnValue).toString('hex'),
      warm: [...journal.journal.keys()].sort(),
    }
  }
  // a VM outside the pool keeps the stock opcode handlers (patchEvmInstance is the pool's)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

describe('EXTCODESIZE in a pooled EVM', () => {
  it("gives the stock handler's sizes, gas and warm addresses", async () => {
    const code = program(WORDS)
    const stock = await run(false, code)
    expect(stock.error).toBeUndefined()
    const sizes = Buffer.from(stock.returned, 'hex')
    const sizeAt = (i: number) => sizes.readUInt32BE(32 * i + 28)
    // the contract's 45 bytes (twice, once through dirty high bits), nothing, nothing, EOF seen as 2 bytes
    expect(WORDS.map((_, i) => sizeAt(i))).toEqual([45, 0, 0, 45, 2, 45])
    expect(await run(true, code)).toEqual(stock)
  })

  it('fails as the stock handler does: an empty stack, and out of gas around every read', async () => {
    const underflow = await run(false, '3b')
    expect(underflow.error).toBe('stack underflow')
    expect(await run(true, '3b')).toEqual(underflow)
    const code = program(WORDS)
    const full = (await run(false, code)).gas
    for (let limit = 0n; limit < full + 50n; limit += 97n) {
      expect(await run(true, code, limit), `gas limit ${limit}`).toEqual(await run(false, code, limit))
    }
  })
})
