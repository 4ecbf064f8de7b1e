/**
 * inline-steps.ts and the loop of interpreter-patches.ts (13.) that runs its batches: programs made of the
 * inlined opcodes, on edge values (0, 1, 255, 256, 257, 2^255, 2^256 - 1, ...), give a pooled EVM
 * the stack, memory, return data, gas and errors the stock handlers give a VM outside the pool;
 * every way an inlined opcode fails (stack underflow and overflow, a jump to no JUMPDEST or into
 * push data, too little gas for its fee) fails as the stock step does; GAS, a REVERT or RETURN
 * after memory-expanding steps, and the frame's end read the gas the inline and numeric-gas steps
 * left, also past 2^53 (where the loop keeps the gas as a bigint).
 */
import { describe, expect, it } from 'vitest'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { INLINE_OPCODES, MEMORY_GROWTH_BYTES_MAX, runInlineSteps, type InlineBatch, type InlineRunState } from '../../src/evm/inline-steps.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { inlineAnalysis } from '../../src/evm/inline-analysis.ts'
import { stockAnalysis } from './stock-jump-analysis.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { keccak256 } from '../../src/evm/keccak.ts'

const TARGET = createAddressFromString('0x00000000000000000000000000000000000011e1')
const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')
const hexByte = (op: number) => op.toString(16).padStart(2, '0')

const EDGES = [0n, 1n, 2n, 3n, 31n, 32n, 255n, 256n, 257n, 2n ** 64n, 2n ** 128n + 5n, 2n ** 255n, 2n ** 255n + 1n, 2n ** 256n - 2n, 2n ** 256n - 1n]
const BINARY = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1b, 0x1c, 0x1d]
const TERNARY = [0x08, 0x09]
/** fewer edges for the three operands of ADDMOD and MULMOD (15^3 combinations would make a 1 MB program) */
const TERNARY_EDGES = [0n, 1n, 3n, 255n, 2n ** 128n + 5n, 2n ** 255n + 1n, 2n ** 256n - 2n, 2n ** 256n - 1n]
const UNARY = [0x15, 0x19]

interface Outcome {
  error?: string
  gas: bigint
  output: string
}

/** the call's environment beyond the code: calldata, value, caller */
interface CallEnv {
  data?: Uint8Array
  value?: bigint
  caller?: ReturnType<typeof createAddressFromString>
  /** other contracts' code (hex) by address */
  codes?: Array<[ReturnType<typeof createAddressFromString>, string]>
}

async function run(pooled: boolean, code: string, gasLimit = 10_000_000n, env: CallEnv = {}): Promise<Outcome> {
  const state = JournaledState.over(EMPTY_STATE_READER)
  await state.putCode(TARGET, Buffer.from(code, 'hex'))
  for (const [address, other] of env.codes ?? []) await state.putCode(address, Buffer.from(other, 'hex'))
  if (env.caller !== undefined && env.value !== undefined) await state.modifyAccountFields(env.caller, { balance: env.value })
  const exec = async (vm: VM) => {
    const { execResult } = await vm.evm.runCall({ to: TARGET, gasLimit, data: env.data, value: env.value, caller: env.caller })
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, output: Buffer.from(execResult.returnValue).toString('hex') }
  }
  // a VM outside the pool keeps the stock handlers and steps (patchEvmInstance is the pool's)
  const common = commonForChain(31337n)
  return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
}

async function sameAsStock(code: string, gasLimit?: bigint, env?: CallEnv): Promise<Outcome> {
  const stock = await run(false, code, gasLimit, env)
  expect(await run(true, code, gasLimit, env), code.length > 200 ? `${code.slice(0, 200)}...` : code).toEqual(stock)
  return stock
}

/** results stored from memory offset 0 on, one word each; returned with MSIZE */
function storeResult(i: number): string {
  return push32(BigInt(32 * i)) + '52'
}
/** a program that jumps first (the loop inlines once the frame has its jump analysis), then `body`, then returns `words` words */
function program(body: string, words: number): string {
  // PUSH1 4 JUMP INVALID JUMPDEST body RETURN(0, 32 * words)
  return '600456fe5b' + body + push32(BigInt(32 * words)) + '6000' + 'f3'
}

describe('inlined opcodes against the stock handlers', () => {
  it('binary and unary operations on edge values', async () => {
    let body = ''
    let i = 0
    for (const op of BINARY) {
      for (const a of EDGES) {
        for (const b of EDGES) body += push32(b) + push32(a) + hexByte(op) + storeResult(i++)
      }
    }
    for (const op of UNARY) for (const a of EDGES) body += push32(a) + hexByte(op) + storeResult(i++)
    for (const op of TERNARY) {
      for (const a of TERNARY_EDGES) {
        for (const b of TERNARY_EDGES) for (const c of TERNARY_EDGES) body += push32(c) + push32(b) + push32(a) + hexByte(op) + storeResult(i++)
      }
    }
    const outcome = await sameAsStock(program(body, i))
    expect(outcome.error).toBeUndefined()
    expect(outcome.output.length).toBe(64 * i)
  })

  it('CALLER, CALLVALUE, CALLDATASIZE, RETURNDATASIZE and CALLDATALOAD inside, across and past the calldata', async () => {
    const data = Uint8Array.from({ length: 70 }, (_, i) => (i * 37 + 11) & 0xff)
    let body = '33' + storeResult(0) + '34' + storeResult(1) + '36' + storeResult(2) + '3d' + storeResult(3)
    let words = 4
    for (const offset of [0n, 1n, 31n, 38n, 39n, 40n, 69n, 70n, 71n, 2n ** 64n, 2n ** 256n - 1n]) body += push32(offset) + '35' + storeResult(words++)
    // RETURNDATASIZE after a call that returned data: CALL(gas, identity precompile, 0, in 0..70, out nothing)
    body += '6000' + '6000' + '6046' + '6000' + '6000' + '6004' + '61ffff' + 'f1' + '50' + '3d' + storeResult(words++)
    const caller = createAddressFromString('0x00000000000000000000000000000000000c0ffe')
    const outcome = await sameAsStock(program(body, words), undefined, { data, value: 12345n, caller })
    expect(outcome.error).toBeUndefined()
    expect(BigInt('0x' + outcome.output.slice(128, 192))).toBe(70n) // CALLDATASIZE
  })

  it('MLOAD and MSTORE inside paid memory, where they grow it, and at offsets past any memory', async () => {
    let body = push32(2n ** 256n - 1n) + '6000' + '52' // memory paid for 1 word
    // the words read are kept on the stack and stored at the end (from offset 512 on)
    body += '6001' + '51' // inside it
    body += push32(7n) + '6040' + '52' // grows it to 3 words
    body += '6021' + '51' + '6020' + '51' // inside it, unaligned and aligned
    body += push32(2n ** 255n + 9n) + '6022' + '52' // inside, unaligned, across words
    body += '6050' + '51' // grows it (80 + 32 past 96)
    body += '6010' + '51' // inside it
    body += '59' // MSIZE
    for (let i = 0; i < 6; i++) body += storeResult(16 + i)
    const outcome = await sameAsStock(program(body, 22))
    expect(outcome.error).toBeUndefined()
    // offsets no memory can reach: out of gas as the stock step (the first two numbers below 2^32
    // whose word ends past it: its words do not fit an int32)
    for (const offset of [2n ** 32n - 32n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 64n, 2n ** 256n - 1n]) {
      await sameAsStock(program('6000' + push32(offset) + '52', 0))
      await sameAsStock(program(push32(offset) + '51', 0))
    }
    // underflow
    await sameAsStock(program('6000' + '6000' + '52' + '51' + '6000' + '52', 0))
    await sameAsStock(program('6000' + '6000' + '52' + '6000' + '52', 0))
  })

  it('ADDRESS, CALLER and GAS (the gas left after its fee), twice each, and at the stack limit', async () => {
    const caller = createAddressFromString('0x00000000000000000000000000000000000c0ffe')
    const body = '30' + '33' + '5a' + '30' + '33' + '6001' + '6002' + '01' + '5a'
    let i = 0
    let stores = ''
    for (let n = 0; n < 7; n++) stores += storeResult(i++)
    const outcome = await sameAsStock(program(body + stores, 7), undefined, { caller, value: 0n })
    expect(BigInt('0x' + outcome.output.slice(64 * 6, 64 * 7))).toBe(BigInt(TARGET.toString())) // the first ADDRESS
    expect(BigInt('0x' + outcome.output.slice(64 * 5, 64 * 6))).toBe(BigInt(caller.toString())) // the first CALLER
    for (const op of ['30', '33', '5a']) await sameAsStock(program('6000'.repeat(1024) + op, 0))
    // GAS as the frame's gas runs out around it
    for (let gasLimit = 20n; gasLimit <= 40n; gasLimit++) await sameAsStock(program('5a'.repeat(3) + '5a' + storeResult(0), 1), gasLimit)
  })

  it('MLOAD and MSTORE that grow memory by a word, by many, near and past the batch bound of 16 MiB, and out of gas there', async () => {
    // each growth charges what subMemUsage charges (its quadratic term matters from ~700 words on)
    for (const offset of [32n, 100n, 4_000n, 100_000n, 1_000_000n, BigInt(MEMORY_GROWTH_BYTES_MAX - 32), BigInt(MEMORY_GROWTH_BYTES_MAX - 31), BigInt(MEMORY_GROWTH_BYTES_MAX)]) {
      // MSTORE there, MLOAD a word further on (a second growth), MSIZE and GAS after both
      const body = push32(2n ** 255n + offset) + push32(offset) + '52' + push32(offset + 40n) + '51' + '59' + '5a' + storeResult(0) + storeResult(1) + storeResult(2)
      const outcome = await sameAsStock(program(body, 3), 10_000_000_000n)
      expect(outcome.error, `offset ${offset}`).toBeUndefined()
    }
    // out of gas exactly at a growing MSTORE (fee 3 + memory 3 * 301 + 301^2 / 512 = 1,083 at offset 9,600), and at a growing MLOAD
    const grow = (op: string) => '6001' + '612580' + op
    for (let gasLimit = 1_070n; gasLimit <= 1_110n; gasLimit++) {
      await sameAsStock(program(grow('52'), 0), gasLimit)
      await sameAsStock(program('612580' + '51', 0), gasLimit)
    }
  })

  it('KECCAK256 in the batch: empty anywhere, up to 128 bytes inside paid memory and growing it, 129 bytes (the step\'s), out of gas at its word gas and its growth', async () => {
    // memory: 160 bytes of a pattern (5 words), then hashes kept on the stack and stored from 1,024 on
    let body = ''
    for (let w = 0; w < 5; w++) body += push32(2n ** 256n - 1n - BigInt(w * 0x1234567)) + push32(BigInt(32 * w)) + '52'
    const ranges: Array<[bigint, bigint]> = [[0n, 0n], [2n ** 256n - 1n, 0n], [0n, 1n], [0n, 32n], [3n, 64n], [31n, 100n], [0n, 128n], [32n, 128n], [0n, 129n], [150n, 64n], [1_000n, 64n]]
    for (const [offset, length] of ranges) body += push32(length) + push32(offset) + '20'
    body += '59' // MSIZE after the growths
    for (let i = 0; i <= ranges.length; i++) body += push32(BigInt(1024 + 32 * i)) + '52'
    const outcome = await sameAsStock(program(body + push32(BigInt(32 * (ranges.length + 1))) + push32(1024n) + 'f3', 0))
    expect(outcome.error).toBeUndefined()
    // offsets no memory can reach: out of gas as the stock step
    for (const offset of [2n ** 32n - 1n, 2n ** 64n, 2n ** 256n - 1n]) await sameAsStock(program('6020' + push32(offset) + '20', 0))
    // out of gas at the word gas (30 + 6 * 3 for 65 bytes inside paid memory) and at a growth
    for (let gasLimit = 100n; gasLimit <= 140n; gasLimit++) {
      await sameAsStock(program('6000' + '6040' + '52' + '6041' + '6000' + '20', 0), gasLimit)
      await sameAsStock(program('6040' + '6010' + '20', 0), gasLimit)
    }
  })

  it('TLOAD in the batch: a slot set, one never set, one set to zero, and in a callee (its own address\'s slots)', async () => {
    // the callee (at 0x11e2) reads its slot 1 (never set by it: 0, though the caller's slot 1 is 7),
    // stores 9 there, reads it back and returns both
    const callee = '6001' + '5c' + '6009' + '6001' + '5d' + '6001' + '5c' + '6020' + '52' + '6000' + '52' + '6040' + '6000' + 'f3'
    const CALLEE = createAddressFromString('0x00000000000000000000000000000000000011e2')
    let body = '6007' + '6001' + '5d' // slot 1 = 7
    body += '6000' + '6002' + '5d' // slot 2 = 0
    body += '6001' + '5c' + storeResult(0) + '6002' + '5c' + storeResult(1) + '6003' + '5c' + storeResult(2) + push32(2n ** 256n - 1n) + '5c' + storeResult(3)
    // CALL(gas, callee, 0, no input, output at 128..192), then slot 1 here again
    body += '6040' + '6080' + '6000' + '6000' + '6000' + push32(BigInt(CALLEE.toString())) + '61ffff' + 'f1' + storeResult(6) + '6001' + '5c' + storeResult(7)
    const stock = await sameAsStock(program(body, 8), 1_000_000n, { codes: [[CALLEE, callee]] })
    expect(stock.error).toBeUndefined()
    const word = (i: number) => BigInt('0x' + stock.output.slice(64 * i, 64 * (i + 1)))
    expect([word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7)]).toEqual([7n, 0n, 0n, 0n, 0n, 9n, 1n, 7n])
    // TLOAD of an empty stack, and out of gas at its fee (100)
    await sameAsStock(program('5c', 0))
    for (let gasLimit = 100n; gasLimit <= 125n; gasLimit++) await sameAsStock(program('6001' + '5c', 0), gasLimit)
  })

  it('RETURN: empty (at an offset no memory reaches), of unpaid memory, and of paid memory in a callee', async () => {
    // RETURN(2^256 - 1, 0): no memory touched, empty output
    expect((await sameAsStock('600456fe5b' + '6000' + push32(2n ** 256n - 1n) + 'f3')).output).toBe('')
    // RETURN of 100 bytes from offset 10, past what any step paid for: grows memory, zeros
    expect((await sameAsStock('600456fe5b' + '6064' + '600a' + 'f3')).output).toBe('00'.repeat(100))
  })

  it('CALLDATALOAD reads each frame its own calldata: a caller, its callee with other data, the caller again', async () => {
    const data = Uint8Array.from({ length: 70 }, (_, i) => (i * 53 + 7) & 0xff)
    const hex2 = (n: number) => n.toString(16).padStart(4, '0')
    // the callee (this same code, called with 32 bytes) returns its calldata's first word; the
    // caller (70 bytes) stores its first word, calls itself with another word, stores what that
    // returns and its own first word again
    let body = '36' + '6020' + '14' + '61XXXX' + '57'
    body += '6000' + '35' + storeResult(0)
    body += push32(0xabcdefn * 2n ** 200n + 77n) + '610100' + '52'
    body += '6020' + '610200' + '6020' + '610100' + '6000' + '30' + '5a' + 'f1' + '50'
    body += '610200' + '51' + storeResult(1)
    body += '6000' + '35' + storeResult(2)
    body += '61YYYY' + '56'
    const inner = 5 + body.length / 2
    body += '5b' + '6000' + '35' + '6000' + '52' + '6020' + '6000' + 'f3'
    const end = 5 + body.length / 2
    body += '5b'
    body = body.replace('XXXX', hex2(inner)).replace('YYYY', hex2(end))
    const outcome = await sameAsStock(program(body, 3), undefined, { data })
    expect(outcome.error).toBeUndefined()
    const word = (i: number) => outcome.output.slice(64 * i, 64 * i + 64)
    expect(word(0)).toBe(Buffer.from(data.subarray(0, 32)).toString('hex'))
    expect(BigInt('0x' + word(1))).toBe(0xabcdefn * 2n ** 200n + 77n)
    expect(word(2)).toBe(word(0))
  })

  it('PUSH0-32, DUP1-16, SWAP1-16, POP, JUMPDEST, JUMP and JUMPI taken and not', async () => {
    let body = '5f'
    for (let n = 1; n <= 32; n++) body += hexByte(0x5f + n) + 'ab'.repeat(n - 1) + 'cd'
    for (let n = 1; n <= 16; n++) body += hexByte(0x7f + n)
    for (let n = 1; n <= 16; n++) body += hexByte(0x8f + n)
    body += '50505b5b'
    let words = 0
    for (let i = 0; i < 30; i++) body += storeResult(words++)
    // JUMPI not taken (cond 0), then JUMPI taken over an INVALID, then JUMP over another
    const at = () => 5 + body.length / 2 // the body starts after PUSH1 4 JUMP INVALID JUMPDEST
    body += '6000' + '6000' + '57'
    body += '6001' + '61' + (at() + 2 + 3 + 1 + 1).toString(16).padStart(4, '0') + '57' + 'fe' + '5b'
    body += '61' + (at() + 3 + 1 + 1).toString(16).padStart(4, '0') + '56' + 'fe' + '5b'
    const outcome = await sameAsStock(program(body, words))
    expect(outcome.error).toBeUndefined()
  })

  it('a loop of inlined steps (a countdown with JUMPI back) costs and returns what the stock loop does', async () => {
    // PUSH2 1000; loop (at 8, after the 5 bytes of the program's start): JUMPDEST PUSH1 1 SWAP1 SUB
    // DUP1 PUSH1 8 JUMPI; POP; GAS; stored; returned
    const body = '6103e8' + '5b' + '6001' + '90' + '03' + '80' + '6008' + '57' + '50' + '5a' + storeResult(0)
    const outcome = await sameAsStock(program(body, 1))
    expect(outcome.error).toBeUndefined()
    expect(BigInt('0x' + outcome.output)).toBeGreaterThan(0n) // GAS read after the inline steps
  })

  it('PUSH then JUMP or JUMPI (one step of two in the batch): taken, not taken, failing, out of gas between them', async () => {
    const at = (body: string) => 5 + body.length / 2 // the body starts after PUSH1 4 JUMP INVALID JUMPDEST
    const to = (offset: number) => '61' + offset.toString(16).padStart(4, '0')
    // JUMPI not taken on 0, taken on 1 and on 2^256 - 1 (each over an INVALID), JUMP over another; GAS after each
    let body = ''
    let words = 0
    body += '6000' + to(at(body) + 2 + 3 + 1) + '57' + '5b' + '5a' + storeResult(words++) // not taken: on to the JUMPDEST after it
    for (const cond of ['6001', push32(2n ** 256n - 1n)]) {
      body += cond
      body += to(at(body) + 3 + 1 + 1) + '57' + 'fe' + '5b' + '5a' + storeResult(words++)
    }
    body += to(at(body) + 3 + 1 + 1) + '56' + 'fe' + '5b' + '5a' + storeResult(words++)
    // a countdown whose JUMPI back is a fused pair: taken 9 times, then not
    const loop = at(body) + 2
    body += '600a' + '5b' + '6001' + '90' + '03' + '80' + to(loop) + '57' + '50' + '5a' + storeResult(words++)
    const outcome = await sameAsStock(program(body, words))
    expect(outcome.error).toBeUndefined()
    // JUMPI with only its destination on the stack (underflow at the JUMPI), PUSH+JUMP at 1,024 items (overflow at the PUSH)
    await sameAsStock(program(to(4) + '57', 0)) // to the program's JUMPDEST at 4
    await sameAsStock(program('5b'.repeat(3) + '6000'.repeat(1024) + to(5) + '56', 0))
    await sameAsStock(program('5b'.repeat(3) + '6000'.repeat(1023) + to(5 + 3 + 1023 * 2 + 4) + '56' + '5b', 0))
    // out of gas at the PUSH, between the PUSH and the jump, and after it, for JUMP and JUMPI taken and not
    for (const pair of [to(9) + '56' + '5b', '6001' + to(11) + '57' + '5b', '6000' + to(11) + '57' + '5b']) {
      for (let gasLimit = 20n; gasLimit <= 45n; gasLimit++) await sameAsStock(program(pair, 0), gasLimit)
    }
  })

  it('PC after a fused PUSH and jump, taken and not, and after a jump from the stack: the offset the stock loop reads', async () => {
    const at = (body: string) => 5 + body.length / 2 // the body starts after PUSH1 4 JUMP INVALID JUMPDEST
    const to = (offset: number) => '61' + offset.toString(16).padStart(4, '0')
    let body = ''
    let words = 0
    // PUSH JUMP onto a JUMPDEST then PC; PUSH JUMPI not taken then PC; taken then PC; JUMP from the stack then PC
    body += to(at(body) + 3 + 1 + 1) + '56' + 'fe' + '5b' + '58' + storeResult(words++)
    body += '6000' + to(at(body)) + '57' + '58' + storeResult(words++)
    body += '6001' + to(at(body) + 2 + 3 + 1 + 1) + '57' + 'fe' + '5b' + '58' + storeResult(words++)
    body += to(at(body) + 3 + 1 + 1 + 1) + '80' + '56' + 'fe' + '5b' + '50' + '58' + storeResult(words++)
    const outcome = await sameAsStock(program(body, words))
    expect(outcome.error).toBeUndefined()
  })

  it('code that ends inside a PUSH: its word padded, the frame ended as the stock loop ends it', async () => {
    // after the jump (the batch runs from there): inlined steps, then a PUSH3 with one byte of its
    // data, a PUSH32 with 31, a PUSH2 with none; the gas used is the stock loop's
    for (const tail of ['62ab', '7f' + 'cd'.repeat(31), '61']) {
      const outcome = await sameAsStock('600456fe5b' + '6001' + '6002' + '01' + '50' + tail)
      expect(outcome.error).toBeUndefined()
    }
  })

  it('failures: underflow, overflow, jumps to no JUMPDEST or into push data, out of gas at an inlined opcode', async () => {
    const failing = [
      ...[...BINARY, 0x57].map((op) => '6001' + hexByte(op)), // one item where two are needed
      ...[...UNARY, 0x50, 0x56].map(hexByte), // none where one is needed
      '6001' + '81', // DUP2 of one item
      '6001' + '90', // SWAP1 of one item
      '6003' + '56', // JUMP to the INVALID at 3
      '6007' + '56' + '00' + '6100' + '5b', // JUMP into PUSH2's data (a 0x5b byte there)
      push32(2n ** 64n) + '56', // JUMP far past the code
      push32(2n ** 53n + 5n) + '56', // JUMP to a word a double cannot hold exactly
      push32(2n ** 256n - 1n) + '56', // JUMP to the largest word
      '6001' + push32(2n ** 53n + 1n) + '57', // JUMPI taken there
      '6001' + '6003' + '57', // JUMPI taken to no JUMPDEST
      '6000' + '6003' + '57' + '00', // JUMPI not taken: STOP, no error
      '5b'.repeat(3) + '6000'.repeat(1025), // PUSH past 1,024 items
      '6000'.repeat(1024) + '80', // DUP past 1,024 items
      '6000'.repeat(1024) + '5f', // PUSH0 past 1,024 items
    ]
    for (const body of failing) await sameAsStock(program(body, 0))
    // out of gas exactly at an inlined opcode, for several gas limits around the last step's fee
    const body = '6001'.repeat(10) + '01'.repeat(9) + '5b' + '56'
    for (let gasLimit = 30n; gasLimit <= 80n; gasLimit++) await sameAsStock(program(body, 0), gasLimit)
  })

  it('a callee that expands memory and reverts or returns gives its caller back the gas the stock steps leave', async () => {
    const callee = createAddressFromString('0x00000000000000000000000000000000000011e2')
    // callee: PUSH1 4 JUMP INVALID JUMPDEST; MSTORE at 200; KECCAK256 of 300 bytes; then REVERT(0, 64) or RETURN(0, 64)
    const calleeCode = (end: string) => '600456fe5b' + '602a' + '60c8' + '52' + '61012c' + '6000' + '20' + '50' + '6040' + '6000' + end
    // caller: CALL(gas 100000, callee, 0, 0, 0, 0, 0); store success and GAS after it; return both
    const callerBody = '6000' + '6000' + '6000' + '6000' + '6000' + '73' + callee.toString().slice(2) + '620186a0' + 'f1' + storeResult(0) + '5a' + storeResult(1)
    for (const end of ['fd', 'f3']) {
      const outcomes = []
      for (const pooled of [false, true]) {
        const state = JournaledState.over(EMPTY_STATE_READER)
        await state.putCode(TARGET, Buffer.from(program(callerBody, 2), 'hex'))
        await state.putCode(callee, Buffer.from(calleeCode(end), 'hex'))
        const exec = async (vm: VM) => {
          const { execResult } = await vm.evm.runCall({ to: TARGET, gasLimit: 1_000_000n })
          return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, output: Buffer.from(execResult.returnValue).toString('hex') }
        }
        const common = commonForChain(31337n)
        outcomes.push(pooled ? await new VmPool(common).with(state, exec) : await exec(await createVM({ common, stateManager: state })))
      }
      expect(outcomes[0].error).toBeUndefined()
      expect(BigInt('0x' + outcomes[0].output.slice(0, 64))).toBe(end === 'fd' ? 0n : 1n)
      expect(outcomes[1]).toEqual(outcomes[0])
    }
  })

  it('gas past 2^53 stays a bigint and reads the same', async () => {
    const body = '6001600201' + '5a' + storeResult(0) + '6001600201' + '5a' + storeResult(1)
    const outcome = await sameAsStock(program(body, 2), 2n ** 60n)
    expect(BigInt('0x' + outcome.output.slice(0, 64))).toBeGreaterThan(2n ** 59n)
  })
})

describe('runInlineSteps', () => {
  const state = (stack: bigint[], code: number[]): InlineRunState => ({
    stack: { _store: [...stack], _len: stack.length, _maxHeight: 1024 },
    programCounter: 0,
    code: Uint8Array.from(code),
    memory: { _store: new Uint8Array(0), extend: () => {}, read: () => new Uint8Array(0) },
    memoryWordCount: 0n,
    highestMemCost: 0n,
    interpreter: { getCallData: () => new Uint8Array(0), getCallDataSize: () => 0n, getCallValue: () => 0n, getCaller: () => 0n, getReturnDataSize: () => 0n, getAddress: () => ({ bytes: new Uint8Array(20) }), _evm: { transientStorage: undefined }, _env: { address: { toString: () => '0x' + '00'.repeat(20) } } },
  })
  const fees = new Uint8Array(256)
  for (const op of INLINE_OPCODES) fees[op] = 3
  const json = (rs: InlineRunState) => JSON.stringify(rs, (_, v) => (typeof v === 'bigint' ? v.toString() : v))
  /** a batch over `code` as the frame's analysis gives it (its JUMPDESTs the stock analysis') */
  const over = (code: number[], extra: Omit<InlineBatch, 'steps' | 'code'> = {}): InlineBatch => {
    const bytes = Uint8Array.from(code)
    const stock = stockAnalysis(bytes)
    return { steps: 0, ...extra, code: inlineAnalysis(bytes, stock.jumps, stock.pushes) }
  }

  it('changes nothing when the first opcode is not inlined or would fail', () => {
    // [code, gas]: ADD of one item, JUMP to no JUMPDEST, PUSH1 without its fee, DUP2 and SWAP1 of one item, EXP (not inlined)
    for (const [op, gas] of [[0x01, 100], [0x56, 100], [0x60, 2], [0x81, 100], [0x90, 100], [0x0a, 100]] as const) {
      const rs = state([1n], [op, 0x00, 0x00])
      const batch = over([op, 0x00, 0x00])
      batch.steps = -1
      const before = json(rs)
      expect(runInlineSteps(rs, fees, gas, 100, batch)).toBe(gas)
      expect(batch.steps).toBe(0)
      expect(json(rs)).toBe(before)
    }
  })

  it('runs consecutive inlined opcodes, charging each fee, and stops before the first it cannot run', () => {
    // SUB (9 - 5), PUSH1 7 (its cached push at 2), ADD, then EXP (not inlined)
    const rs = state([5n, 9n], [0x03, 0x60, 0x07, 0x01, 0x0a])
    const batch = over([0x03, 0x60, 0x07, 0x01, 0x0a])
    expect(runInlineSteps(rs, fees, 10, 100, batch)).toBe(1)
    expect(batch.steps).toBe(3)
    expect(rs.stack._len).toBe(1)
    expect(rs.stack._store[0]).toBe(11n)
    expect(rs.programCounter).toBe(4)
  })

  it('stops after maxSteps, and where the gas left is below the next fee', () => {
    const batch = over([0x5b, 0x5b, 0x5b, 0x5b])
    const rs = state([], [0x5b, 0x5b, 0x5b, 0x5b])
    expect(runInlineSteps(rs, fees, 100, 2, batch)).toBe(94)
    expect([batch.steps, rs.programCounter]).toEqual([2, 2])
    expect(runInlineSteps(rs, fees, 5, 100, batch)).toBe(2)
    expect([batch.steps, rs.programCounter]).toEqual([1, 3])
  })

  it('grows memory for MSTORE with the memory gas set, and leaves it to the stock step without it', () => {
    const withMemory = (): InlineRunState => {
      const rs = state([7n, 64n], [0x52, 0x00])
      let store = new Uint8Array(0)
      rs.memory = {
        get _store() { return store },
        set _store(v) { store = v },
        extend(offset: number, size: number) {
          if (offset + size > store.length) store = new Uint8Array(Math.ceil((offset + size) / 32) * 32)
        },
        read(offset: number, size: number) {
          this.extend(offset, size)
          return store.subarray(offset, offset + size)
        },
      }
      return rs
    }
    const fees3 = new Uint8Array(256)
    fees3[0x52] = 3
    // without the parameters: nothing changed
    const bare = withMemory()
    const batch = over([0x52, 0x00])
    expect(runInlineSteps(bare, fees3, 100, 10, batch)).toBe(100)
    expect([batch.steps, bare.memoryWordCount]).toEqual([0, 0n])
    // with them: 3 words cost 3 * 3 + 9 / 512 = 9, charged with the fee; the word written at 64
    const grown = withMemory()
    const paid = over([0x52, 0x00], { memoryGas: 3, quadCoefficient: 512 })
    expect(runInlineSteps(grown, fees3, 100, 10, paid)).toBe(100 - 3 - 9)
    expect([paid.steps, grown.memoryWordCount, grown.highestMemCost, grown.stack._len]).toEqual([1, 3n, 9n, 0])
    expect(grown.memory._store[95]).toBe(7)
    // too little gas for fee and growth: nothing changed, the stock step's to fail
    const poor = withMemory()
    expect(runInlineSteps(poor, fees3, 11, 10, paid)).toBe(11)
    expect([paid.steps, poor.memoryWordCount, poor.highestMemCost, poor.stack._len]).toEqual([0, 0n, 0n, 2])
  })

  it('runs KECCAK256 of a small range and TLOAD (from stock-shaped transient storage) in the batch, with their gas; leaves them to the step otherwise', () => {
    const withWords = (stack: bigint[], code: number[]): InlineRunState => {
      const rs = state(stack, code)
      const store = Uint8Array.from({ length: 96 }, (_, i) => (i * 7 + 1) & 0xff)
      rs.memory = { _store: store, extend: () => {}, read: (offset: number, size: number) => store.subarray(offset, offset + size) }
      rs.memoryWordCount = 3n
      return rs
    }
    const stateFees = new Uint8Array(256)
    stateFees[0x20] = 30
    stateFees[0x5c] = 100
    // KECCAK256(offset 3, 40 bytes): 30 + 6 * 2 words, inside paid memory; the digest of those bytes
    const code = [0x20, 0x00]
    const hashing = over(code, { keccakWordGas: 6, memoryGas: 3, quadCoefficient: 512 })
    const rs = withWords([40n, 3n], code)
    expect(runInlineSteps(rs, stateFees, 1_000, 10, hashing)).toBe(1_000 - 30 - 12)
    expect([hashing.steps, rs.stack._len, rs.programCounter]).toEqual([1, 1, 1])
    expect(rs.stack._store[0]).toBe(BigInt('0x' + Buffer.from(keccak256(rs.memory._store.subarray(3, 43))).toString('hex')))
    // growing memory to 4 words (offset 64, 40 bytes: 104): 4 * 3 + 16 / 512 = 12 charged, paid up to 3 words before (highest 0 here)
    const growing = withWords([40n, 64n], code)
    expect(runInlineSteps(growing, stateFees, 1_000, 10, hashing)).toBe(1_000 - 30 - 12 - 12)
    expect([growing.memoryWordCount, growing.highestMemCost]).toEqual([4n, 12n])
    // without the word gas, with gas for the fee but not the words, or 129 bytes: nothing changed
    for (const [stack, gas, batch] of [[[40n, 3n], 1_000, over(code)], [[40n, 3n], 41, hashing], [[129n, 0n], 1_000, hashing]] as const) {
      const left = withWords([...stack], code)
      const before = json(left)
      expect(runInlineSteps(left, stateFees, gas, 10, batch)).toBe(gas)
      expect(json(left)).toBe(before)
    }
    // TLOAD: the frame's address's slot, 0 for another slot; left to the step where the storage is not the stock class's shape
    const tcode = [0x5c, 0x00]
    const address = '0x' + '00'.repeat(19) + '11'
    const loading = (key: bigint, transientStorage: unknown) => {
      const t = state([key], tcode)
      t.interpreter._evm = { transientStorage }
      t.interpreter._env = { address: { toString: () => address } }
      return t
    }
    const slots = new Map([[address, new Map([['0x' + '0'.repeat(63) + '5', Uint8Array.of(1, 2)]])]])
    const storage = { _storage: slots, _changeJournal: [] }
    for (const [key, word] of [[5n, 0x0102n], [6n, 0n]] as const) {
      const t = loading(key, storage)
      expect(runInlineSteps(t, stateFees, 1_000, 10, over(tcode))).toBe(900)
      expect(t.stack._store[0]).toBe(word)
    }
    const other = loading(5n, { _storage: slots })
    expect(runInlineSteps(other, stateFees, 1_000, 10, over(tcode))).toBe(1_000)
    expect(other.stack._store[0]).toBe(5n)
  })

  it('runs a PUSH and the jump after it as one step of two only when both fit in maxSteps and the gas', () => {
    // 0: PUSH1 4, 2: JUMP, 3: INVALID, 4: JUMPDEST; the jump's fee 8, the others' 3
    const code = [0x60, 0x04, 0x56, 0xfe, 0x5b]
    const jumpFees = new Uint8Array(fees)
    jumpFees[0x56] = 8
    const jumping = () => state([], code)
    const batch = over(code)
    // both: PUSH and JUMP, then the JUMPDEST
    let rs = jumping()
    expect(runInlineSteps(rs, jumpFees, 100, 100, batch)).toBe(100 - 3 - 8 - 3)
    expect([batch.steps, rs.programCounter, rs.stack._len]).toEqual([3, 5, 0])
    // one step allowed: the PUSH alone, its word on the stack
    rs = jumping()
    expect(runInlineSteps(rs, jumpFees, 100, 1, batch)).toBe(97)
    expect([batch.steps, rs.programCounter, rs.stack._len, rs.stack._store[0]]).toEqual([1, 2, 1, 4n])
    // gas for the PUSH, not for the JUMP after it: the PUSH alone, the JUMP left to the stock step
    rs = jumping()
    expect(runInlineSteps(rs, jumpFees, 10, 100, batch)).toBe(7)
    expect([batch.steps, rs.programCounter, rs.stack._len]).toEqual([1, 2, 1])
    // JUMPI with its condition under the pushed destination: 0 falls through, anything else jumps
    const jumpi = [0x60, 0x05, 0x57, 0x5b, 0xfe, 0x5b]
    for (const [cond, pc] of [[0n, 3], [1n, 5]] as const) {
      const r = state([9n, cond], jumpi)
      expect(runInlineSteps(r, fees, 100, 2, over(jumpi))).toBe(94)
      expect([r.programCounter, r.stack._len, r.stack._store[0]]).toEqual([pc, 1, 9n])
    }
  })

  it("runs a jump's destination JUMPDEST right after it only where the loop's next turn would: within maxSteps, the gas, and inlined", () => {
    // the jump's fee 8, JUMPDEST's 1, the others' 3; the destination 4 is a JUMPDEST
    const jumpFees = new Uint8Array(fees)
    jumpFees[0x56] = 8
    jumpFees[0x57] = 10
    jumpFees[0x5b] = 1
    const noJumpdest = new Uint8Array(jumpFees)
    noJumpdest[0x5b] = 0
    // [what, code, stack, fees, gas, maxSteps] -> [gas left, steps, pc]; a PUSH before a jump runs with it
    const fused = [0x60, 0x04, 0x56, 0xfe, 0x5b, 0x00]
    const fusedI = [0x60, 0x04, 0x57, 0xfe, 0x5b, 0x00]
    const dynamic = [0x56, 0xfe, 0xfe, 0xfe, 0x5b, 0x00]
    const dynamicI = [0x57, 0xfe, 0xfe, 0xfe, 0x5b, 0x00]
    const cases: Array<[string, number[], bigint[], Uint8Array, number, number, [number, number, number]]> = [
      ['PUSH JUMP, room for all', fused, [], jumpFees, 100, 100, [100 - 3 - 8 - 1, 3, 5]],
      ['PUSH JUMP, two steps allowed', fused, [], jumpFees, 100, 2, [100 - 3 - 8, 2, 4]],
      ['PUSH JUMP, gas for the two only', fused, [], jumpFees, 11, 100, [0, 2, 4]],
      ['PUSH JUMP, JUMPDEST not inlined', fused, [], noJumpdest, 100, 100, [100 - 3 - 8, 2, 4]],
      ['PUSH JUMPI taken', fusedI, [1n], jumpFees, 100, 100, [100 - 3 - 10 - 1, 3, 5]],
      ['PUSH JUMPI taken, two steps allowed', fusedI, [1n], jumpFees, 100, 2, [100 - 3 - 10, 2, 4]],
      ['JUMP, room for all', dynamic, [4n], jumpFees, 100, 100, [100 - 8 - 1, 2, 5]],
      ['JUMP, one step allowed', dynamic, [4n], jumpFees, 100, 1, [100 - 8, 1, 4]],
      ['JUMP, gas for it only', dynamic, [4n], jumpFees, 8, 100, [0, 1, 4]],
      ['JUMP, JUMPDEST not inlined', dynamic, [4n], noJumpdest, 100, 100, [100 - 8, 1, 4]],
      ['JUMPI taken', dynamicI, [1n, 4n], jumpFees, 100, 100, [100 - 10 - 1, 2, 5]],
      ['JUMPI taken, one step allowed', dynamicI, [1n, 4n], jumpFees, 100, 1, [100 - 10, 1, 4]],
      ['JUMPI taken, gas for it only', dynamicI, [1n, 4n], jumpFees, 10, 100, [0, 1, 4]],
      ['JUMPI taken, JUMPDEST not inlined', dynamicI, [1n, 4n], noJumpdest, 100, 100, [100 - 10, 1, 4]],
      ['PUSH JUMPI taken, JUMPDEST not inlined', fusedI, [1n], noJumpdest, 100, 100, [100 - 3 - 10, 2, 4]],
      ['PUSH JUMPI not taken onto a JUMPDEST: not run with the jump', [0x60, 0x04, 0x57, 0x5b, 0x5b, 0x00], [0n], jumpFees, 100, 100, [100 - 3 - 10 - 1 - 1, 4, 5]],
    ]
    for (const [what, code, stack, stepFees, gas, maxSteps, expected] of cases) {
      const rs = state(stack, code)
      const batch = over(code)
      const left = runInlineSteps(rs, stepFees, gas, maxSteps, batch)
      expect([left, batch.steps, rs.programCounter], what).toEqual(expected)
      expect(rs.stack._len, what).toBe(0)
    }
  })

  it('stops at the end of code that ends inside a PUSH with the program counter where the stock PUSH leaves it', () => {
    // JUMPDEST, PUSH3 0xab.. cut short: its word padded on the right, the program counter at 5 (past the end)
    const code = [0x5b, 0x62, 0xab]
    const rs = state([], code)
    const batch = over(code)
    expect(runInlineSteps(rs, fees, 100, 100, batch)).toBe(94)
    expect([batch.steps, rs.programCounter, rs.stack._len, rs.stack._store[0]]).toEqual([2, 5, 1, 0xab0000n])
  })

  it('runs nothing from inside push data (a program counter no instruction starts at) or past the code', () => {
    const code = [0x61, 0x5b, 0x5b, 0x5b]
    for (const pc of [1, 2, 4]) {
      const rs = state([], code)
      rs.programCounter = pc
      const batch = over(code)
      expect(runInlineSteps(rs, fees, 100, 100, batch)).toBe(100)
      expect([batch.steps, rs.programCounter]).toEqual([0, pc])
    }
  })

  it('covers only static-fee opcodes', () => {
    expect(INLINE_OPCODES).not.toContain(0x0a) // EXP: dynamic gas
    expect(INLINE_OPCODES).not.toContain(0x51) // MLOAD: inlined only by its own handler's rules (INLINE_OWN_HANDLER_OPCODES)
    expect(new Set(INLINE_OPCODES).size).toBe(INLINE_OPCODES.length)
  })
})
