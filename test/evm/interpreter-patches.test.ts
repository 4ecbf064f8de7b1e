/**
 * interpreter-patches.ts: a step that cannot suspend never yields (a pure-compute loop of 7,000
 * opcodes runs in a handful of microtask turns, where the stock interpreter takes at least one per
 * opcode) and costs the gas the yellow paper gives it; a frame watched step by step (a `step`
 * listener) still sees every step; jump analyses are shared by the EVMs of one Common, by code
 * content, and not across Commons. Gas and results of real contracts are checked against anvil and
 * geth by the differential tests.
 */
import { describe, expect, it } from 'vitest'
import type { Hex } from 'viem'
import { Common as CommonClass, type Common } from '@ethereumjs/common'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { applyInterpreterPatches, SHARED_ANALYSIS_CODE_BYTES } from '../../src/evm/interpreter-patches.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { GENESIS_PATH } from '../support/devnet.ts'

// captured before any VM of this file applies the patches (the pool applies them on first use)
const stockCommon = {
  param: CommonClass.prototype.param,
  gteHardfork: CommonClass.prototype.gteHardfork,
  isActivatedEIP: CommonClass.prototype.isActivatedEIP,
}

// PUSH2 1000, loop: JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 3 JUMPI, STOP
const COUNTDOWN: Hex = `0x6103e85b6001900380600357${'00'}`
const ITERATIONS = 1000
const STEPS = ITERATIONS * 7

const PUSHED_WORD = BigInt('0x' + 'f1e2d3c4b5a69788'.repeat(4))
const PUSHED_SMALL = 0x0102030405n
// PUSH1 4 JUMP INVALID, 4: JUMPDEST PUSH32 PUSHED_WORD PUSH1 0 MSTORE, 41: PUSH5 PUSHED_SMALL PUSH1 32 MSTORE, PUSH1 64 PUSH1 0 RETURN
const PUSHES_RETURNED: Hex = `0x600456fe5b7f${PUSHED_WORD.toString(16)}600052${'64' + '0102030405'}602052${'60406000f3'}`

/** Counts microtask turns taken by other work while `work` runs. */
async function microtaskTurns<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0
  let running = true
  const tick = () => {
    if (!running) return
    turns++
    queueMicrotask(tick)
  }
  queueMicrotask(tick)
  try {
    return { result: await work(), turns }
  } finally {
    running = false
  }
}

describe('interpreter patches', () => {
  it('runs opcodes that cannot suspend without yielding, with the same gas', async () => {
    const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
    const sim = new Simulator({ common: commonForChain(source.chainId) })
    const loop: Address = '0x0000000000000000000000000000000000001007'
    const state = sim.openState(source.latest())
    await applyAccountOverrides(state, new Map([[loop, { code: COUNTDOWN as Hex }]]))
    const caller: Address = '0x000000000000000000000000000000000000c0de'
    await sim.call(state, { from: caller, to: loop }) // warm: VM created, code analysed
    const { result, turns } = await microtaskTurns(() => sim.call(state, { from: caller, to: loop }))
    expect(result.status).toBe('success')
    // intrinsic 21,000 + PUSH2 3 + per iteration JUMPDEST 1, PUSH1 3, SWAP1 3, SUB 3, DUP1 3, PUSH1 3, JUMPI 10
    expect(result.gasUsed).toBe(21_000n + 3n + BigInt(ITERATIONS) * 26n)
    expect(turns).toBeLessThan(STEPS / 20)
  })
})

describe('Common answers (2.)', () => {
  it('param, gteHardfork and isActivatedEIP answer as the stock ones through hardfork changes', async () => {
    await applyInterpreterPatches()
    expect(CommonClass.prototype.param).not.toBe(stockCommon.param)
    const common = commonForChain(1n, 'berlin')
    const names = ['callStipendGas', 'stackLimit', 'coldaccountaccessGas', 'sstoreSetGas', 'blobGasPerBlob', 'maxInitCodeSize', 'callNewAccountGas']
    const forks = ['homestead', 'spuriousDragon', 'byzantium', 'london', 'paris', 'shanghai', 'cancun', 'prague']
    const answer = (fn: (...args: never[]) => unknown, ...args: unknown[]) => {
      try {
        return (fn as (...a: unknown[]) => unknown).apply(common, args)
      } catch (err) {
        return `throws ${(err as Error).message}`
      }
    }
    for (const hardfork of ['berlin', 'cancun', 'homestead', 'prague', 'london', 'cancun']) {
      common.setHardfork(hardfork)
      for (let round = 0; round < 2; round++) {
        for (const name of names) expect(answer(common.param, name), `${hardfork} ${name}`).toEqual(answer(stockCommon.param, name))
        for (const fork of forks) expect(common.gteHardfork(fork), `${hardfork} >= ${fork}`).toBe(answer(stockCommon.gteHardfork, fork))
        for (const eip of [1153, 2929, 3855, 4844, 5656, 7702, 6800, 9999]) expect(common.isActivatedEIP(eip), `${hardfork} EIP-${eip}`).toBe(answer(stockCommon.isActivatedEIP, eip))
      }
    }
  })
})

type Analyse = (this: unknown, code: Uint8Array) => object

/** The patched `Interpreter.prototype._getValidJumpDestinations`, called as an interpreter of `vm` would. */
async function analyser(): Promise<(vm: VM, code: Uint8Array) => object> {
  await applyInterpreterPatches()
  const mod = (await import(new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm')).href)) as { Interpreter: { prototype: { _getValidJumpDestinations: Analyse } } }
  const analyse = mod.Interpreter.prototype._getValidJumpDestinations
  return (vm, code) => {
    const opcodes = (vm.evm as unknown as { _opcodeMap: unknown[] })._opcodeMap
    return analyse.call({ common: vm.common, _evm: vm.evm, lookupOpInfo: (op: number) => opcodes[op] }, code)
  }
}

/** Runs `code` in a pooled EVM, with a step listener (counting steps) or none: gas used, steps seen, the returned bytes' hex. */
async function watchedRuns(code: Hex): Promise<(watch: boolean) => Promise<{ gas: bigint; steps: number; returned: string }>> {
  const pool = new VmPool(commonForChain(31337n))
  const state = JournaledState.over(EMPTY_STATE_READER)
  const target = createAddressFromString('0x0000000000000000000000000000000000001007')
  await state.putCode(target, Buffer.from(code.slice(2), 'hex'))
  return (watch) =>
    pool.with(state, async (vm) => {
      let steps = 0
      const listener = () => void steps++
      if (watch) vm.evm.events!.on('step', listener)
      try {
        const result = await vm.evm.runCall({ to: target, gasLimit: 100_000n })
        return { gas: result.execResult.executionGasUsed, steps, returned: Buffer.from(result.execResult.returnValue).toString('hex') }
      } finally {
        vm.evm.events!.off('step', listener)
      }
    })
}

const vmOn = (common: Common) => createVM({ common, stateManager: JournaledState.over(EMPTY_STATE_READER) })

describe('interpreter patches: frames and analyses', () => {
  it('a frame with a step listener runs every step through the stock step (and the same gas)', async () => {
    const run = await watchedRuns(COUNTDOWN)
    // PUSH2, 7 per iteration, STOP
    expect(await run(true)).toMatchObject({ gas: 3n + BigInt(ITERATIONS) * 26n, steps: 1 + STEPS + 1 })
    expect(await run(false)).toMatchObject({ gas: 3n + BigInt(ITERATIONS) * 26n, steps: 0 })
  })

  it("a pooled EVM's message events reach their listeners (plain and callback ones); with none, nothing is built", async () => {
    const common = commonForChain(31337n)
    const pool = new VmPool(common)
    const state = JournaledState.over(EMPTY_STATE_READER)
    const loop = createAddressFromString('0x0000000000000000000000000000000000001007')
    await state.putCode(loop, Buffer.from(COUNTDOWN.slice(2), 'hex'))
    const seen = await pool.with(state, async (vm) => {
      const evm = vm.evm as unknown as { _emit(topic: string, data: unknown): Promise<void> }
      // no listener: one shared, settled answer, not an async function's promise per event
      expect(evm._emit('beforeMessage', {})).toBe(evm._emit('afterMessage', {}))
      const events: string[] = []
      const before = (m: { depth: number }) => void events.push(`before ${m.depth}`)
      const after = (r: { execResult: { executionGasUsed: bigint } }, resolve?: () => void) => {
        events.push(`after ${r.execResult.executionGasUsed}`)
        resolve?.()
      }
      vm.evm.events!.on('beforeMessage', before)
      vm.evm.events!.on('afterMessage', after)
      try {
        await vm.evm.runCall({ to: loop, gasLimit: 100_000n })
      } finally {
        vm.evm.events!.off('beforeMessage', before)
        vm.evm.events!.off('afterMessage', after)
      }
      return events
    })
    expect(seen).toEqual(['before 0', `after ${3 + ITERATIONS * 26}`])
  })

  it('shares a jump analysis between the VMs of one Common and between equal code arrays, not across Commons', async () => {
    const analyse = await analyser()
    const common = commonForChain(31337n)
    const [a, b, other] = await Promise.all([vmOn(common), vmOn(common), vmOn(commonForChain(31337n))])
    const code = Buffer.from(COUNTDOWN.slice(2), 'hex')
    const copy = Uint8Array.from(code)
    const first = analyse(a, code)
    expect(analyse(a, code)).toBe(first)
    expect(analyse(b, code)).toBe(first)
    expect(analyse(b, copy)).toBe(first)
    expect(analyse(other, copy)).not.toBe(first)
    expect(analyse(other, copy)).toEqual(first)
  })

  it("makes the stock loop's opcode entries only when the stock loop reads them, the EVM's entry for each instruction", async () => {
    const analyse = await analyser()
    const vm = await vmOn(commonForChain(31337n))
    const code = Buffer.from(COUNTDOWN.slice(2), 'hex')
    const analysis = analyse(vm, code) as { opcodesCached: unknown[] }
    // an accessor, not an array held from the analysis on (one pointer per code byte per content)
    expect(Object.getOwnPropertyDescriptor(analysis, 'opcodesCached')?.get).toBeTypeOf('function')
    const opcodes = (vm.evm as unknown as { _opcodeMap: unknown[] })._opcodeMap
    const table = analysis.opcodesCached
    expect(analysis.opcodesCached).toBe(table) // made once
    for (let pc = 0; pc < code.length; pc += code[pc] >= 0x60 && code[pc] <= 0x7f ? code[pc] - 0x5e : 1) expect(table[pc]).toBe(opcodes[code[pc]])
  })

  it("makes the stock PUSH handler's words only when read, the stock analysis' own, and gives frames a view of them", async () => {
    const analyse = await analyser()
    const vm = await vmOn(commonForChain(31337n))
    const code = Buffer.from(PUSHES_RETURNED.slice(2), 'hex')
    const analysis = analyse(vm, code) as { pushes: Record<number, bigint>; pushView: Record<number, bigint> }
    // accessors, not a word slot per code byte held from the analysis on
    expect(Object.getOwnPropertyDescriptor(analysis, 'pushes')?.get).toBeTypeOf('function')
    expect(Object.keys(analysis)).not.toContain('pushView')
    const pushes = analysis.pushes
    expect(analysis.pushes).toBe(pushes) // made once
    expect({ ...pushes }).toEqual({ 1: 4n, 6: PUSHED_WORD, 39: 0n, 42: PUSHED_SMALL, 48: 32n, 51: 64n, 53: 0n })
    for (const offset of [1, 6, 42, 48]) expect(analysis.pushView[offset]).toBe(pushes[offset])
  })

  it("a PUSH run by the stock step after the jump analysis (a step listener's frame) pushes the analysis' word", async () => {
    const run = await watchedRuns(PUSHES_RETURNED)
    const returned = PUSHED_WORD.toString(16).padStart(64, '0') + PUSHED_SMALL.toString(16).padStart(64, '0')
    // twice each: the second frame of the code takes its analysis from the first step (17.)
    expect(await run(true)).toMatchObject({ returned, steps: 12 })
    expect(await run(true)).toMatchObject({ returned, steps: 12 })
    expect(await run(false)).toMatchObject({ returned, steps: 0 })
  })

  it('bounds the analyses kept by content: the least recently used go first', async () => {
    const analyse = await analyser()
    const vm = await vmOn(commonForChain(31337n))
    const size = 24_576
    const distinct = (i: number) => {
      const code = new Uint8Array(size)
      code[0] = 0x61 // PUSH2 i: a different content per i
      code[1] = i >> 8
      code[2] = i & 0xff
      return code
    }
    const kept = analyse(vm, distinct(0))
    const evicted = analyse(vm, distinct(1))
    const fill = Math.ceil(SHARED_ANALYSIS_CODE_BYTES / size)
    for (let i = 2; i < fill + 1; i++) {
      analyse(vm, distinct(i))
      if (i % 16 === 0) expect(analyse(vm, distinct(0))).toBe(kept) // used again: stays
    }
    expect(analyse(vm, distinct(0))).toBe(kept)
    expect(analyse(vm, distinct(1))).not.toBe(evicted)
  })
})

describe('a code analysed before runs inline from its first step (17.)', () => {
  // PUSH1 0x80 PUSH1 0x40 MSTORE, PUSH32 w PUSH1 0x20 MSTORE, CALLDATASIZE PUSH1 0 CALLDATALOAD ADD
  // PUSH1 0x60 MSTORE (11 steps before any jump, as Solidity's prologue), then PUSH1 tag JUMP to
  // JUMPDEST, RETURN(0x20, 0x60)
  const WORD = 'ff'.repeat(16) + '0123456789abcdef'.repeat(2)
  const BEFORE_JUMP = '6080604052' + '7f' + WORD + '602052' + '36600035016060' + '52'
  const AFTER_JUMP = '5b' + '60606020f3'
  const tagAt = BEFORE_JUMP.length / 2 + 3 // after PUSH1 tag JUMP
  const CODE = BEFORE_JUMP + '60' + tagAt.toString(16).padStart(2, '0') + '56' + AFTER_JUMP
  const target = createAddressFromString('0x00000000000000000000000000000000000011e1')
  const calldata = Uint8Array.from({ length: 32 }, (_, i) => i + 1)

  async function outcomeOf(vm: VM, gasLimit: bigint): Promise<{ error?: string; gas: bigint; output: string }> {
    const { execResult } = await vm.evm.runCall({ to: target, gasLimit, data: calldata })
    return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, output: Buffer.from(execResult.returnValue).toString('hex') }
  }

  it('a second frame of the same code runs no step through the opcode table before its first jump, with the stock results', async () => {
    const common = commonForChain(31337n)
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putCode(target, Buffer.from(CODE, 'hex'))
    const stock = await createVM({ common: commonForChain(31337n), stateManager: state })
    const expected = await outcomeOf(stock, 100_000n)
    expect(expected.error).toBeUndefined()
    expect(expected.output.slice(0, 64)).toBe(WORD)
    const tableSteps = await new VmPool(common).with(state, async (vm) => {
      // PUSH1's entry counts the PUSH1 steps the loop runs through the opcode table, not inline
      const entry = (vm.evm as unknown as { _opcodeMap: Array<{ opHandler: (...args: unknown[]) => unknown }> })._opcodeMap[0x60]
      const handler = entry.opHandler
      let calls = 0
      entry.opHandler = (...args: unknown[]) => {
        calls++
        return handler(...args)
      }
      const counts: number[] = []
      for (let i = 0; i < 3; i++) {
        const before = calls
        expect(await outcomeOf(vm, 100_000n)).toEqual(expected)
        counts.push(calls - before)
      }
      return counts
    })
    // the first frame runs its 6 PUSH1s up to the jump through the table (no analysis yet), the later ones none
    expect(tableSteps).toEqual([6, 0, 0])
  })

  it('out of gas before the first jump of an analysed code fails as the stock loop does', async () => {
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putCode(target, Buffer.from(CODE, 'hex'))
    const stock = await createVM({ common: commonForChain(31337n), stateManager: state })
    const pool = new VmPool(commonForChain(31337n))
    await pool.with(state, (vm) => outcomeOf(vm, 100_000n)) // analysed
    for (const gasLimit of [0n, 5n, 6n, 20n, 40n, 41n]) {
      const expected = await outcomeOf(stock, gasLimit)
      expect(await pool.with(state, (vm) => outcomeOf(vm, gasLimit)), `gas limit ${gasLimit}`).toEqual(expected)
    }
  })
})

describe('the steps that leave the batch read their entries from their own EVM (18.)', () => {
  // PUSH1 3 JUMP, JUMPDEST, 0x21 (no opcode of the stock table), PUSH1 0 MSTORE, RETURN(0, 32)
  const CODE = '600356' + '5b' + '21' + '600052' + '60206000f3'
  const target = createAddressFromString('0x00000000000000000000000000000000000011e2')

  it("an EVM runs its own table's entry after the jump analysis, though another EVM of its Common made the (shared) analysis", async () => {
    await applyInterpreterPatches()
    const common = commonForChain(31337n)
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putCode(target, Buffer.from(CODE, 'hex'))
    const plain = await createVM({ common, stateManager: state })
    const custom = await createVM({
      common,
      stateManager: state,
      evmOpts: { customOpcodes: [{ opcode: 0x21, opcodeName: 'SEVEN', baseFee: 2, logicFunction: (runState) => runState.stack.push(7n) }] },
    })
    // the plain EVM analyses the code first (the analysis kept for the Common): 0x21 is invalid there
    const first = await plain.evm.runCall({ to: target, gasLimit: 100_000n })
    expect(first.execResult.exceptionError?.error).toBe('invalid opcode')
    // the same analysis in the other EVM, whose table has 0x21: its own opcode runs
    const second = await custom.evm.runCall({ to: target, gasLimit: 100_000n })
    expect(second.execResult.exceptionError).toBeUndefined()
    expect(Buffer.from(second.execResult.returnValue).toString('hex')).toBe((7).toString(16).padStart(64, '0'))
    // and the plain EVM still fails on it, after the other ran it
    expect((await plain.evm.runCall({ to: target, gasLimit: 100_000n })).execResult.exceptionError?.error).toBe('invalid opcode')
  })
})
