/**
 * frame-patches.ts and memory-patches.ts against the stock functions they replace (captured here
 * before the patches are applied):
 * - the Journal's checkpoint/commit: random sequences of checkpoints, commits, reverts, warmed
 *   addresses and slots and touched accounts leave the same warm set and touched set as the stock
 *   journal after every operation;
 * - EVM.runInterpreter, EVM._executeCall, EVM.runCall and Interpreter.call/callStatic: the same
 *   results for calls (success, revert, out of gas, value transfers, static calls, self-calls,
 *   precompiles, empty accounts, children that log, store transiently and revert, a static
 *   child that writes, a child out of gas, a child that creates a contract), `runState`
 *   included when read, and the same beforeMessage/afterMessage events when someone listens;
 * - Memory: random extends, writes and reads give the same bytes and the same store length as
 *   the stock Memory; a frame's buffer goes back to the pool zeroed, and the pool stays bounded;
 *   CALLDATACOPY, CODECOPY and EXTCODECOPY leave the memory and gas of the stock handlers.
 * Gas and results of real contracts are checked against anvil, geth and the state tests elsewhere.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Account, createAddressFromString } from '@ethereumjs/util'
import { createVM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import type { StateReader } from '../../src/chain/types.ts'
import { memoryPoolStats, POOLED_MEMORY_MAX_BYTES, releaseFrameMemory, type PatchedMemory } from '../../src/evm/memory-patches.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'

const evmEntry = import.meta.resolve('@ethereumjs/evm')
type Fn = (...args: unknown[]) => unknown
interface JournalInstance {
  journal: Map<string, Set<string>>
  touched: Set<string>
  journalHeight: number
  checkpoint(): Promise<void>
  commit(): Promise<void>
  revert(): Promise<void>
  addWarmedAddress(address: Uint8Array): void
  addWarmedStorage(address: Uint8Array, slot: Uint8Array): void
  touchAccount(address: string): void
  cleanJournal(): void
}
const { Journal } = (await import(new URL('./journal.js', evmEntry).href)) as { Journal: { new (sm: unknown, common: unknown): JournalInstance; prototype: Record<string, Fn> } }
const { EVM } = (await import(new URL('./evm.js', evmEntry).href)) as { EVM: { prototype: Record<string, Fn> } }
const { Memory } = (await import(new URL('./memory.js', evmEntry).href)) as { Memory: { new (): PatchedMemory & { write(o: number, s: number, v: Uint8Array): void; read(o: number, s: number): Uint8Array }; prototype: Record<string, Fn> } }
const { Interpreter } = (await import(new URL('./interpreter.js', evmEntry).href)) as { Interpreter: { prototype: Record<string, Fn> } }
const stock = {
  baseCall: Interpreter.prototype._baseCall,
  checkpoint: Journal.prototype.checkpoint,
  commit: Journal.prototype.commit,
  runInterpreter: EVM.prototype.runInterpreter,
  executeCall: EVM.prototype._executeCall,
  runCall: EVM.prototype.runCall,
  call: Interpreter.prototype.call,
  callStatic: Interpreter.prototype.callStatic,
  extend: Memory.prototype.extend,
  write: Memory.prototype.write,
}
await applyInterpreterPatches()

const common = commonForChain(31337n)

describe('Journal checkpoint/commit', () => {
  const noopState = { checkpoint: async () => {}, commit: async () => {}, revert: async () => {} }
  const journals = () => {
    const ours = new Journal(noopState, common)
    const theirs = new Journal(noopState, common)
    Object.assign(theirs, { checkpoint: stock.checkpoint, commit: stock.commit })
    return [ours, theirs] as const
  }
  const view = (j: JournalInstance) => ({
    height: j.journalHeight,
    warm: [...j.journal].map(([a, slots]) => `${a}:${[...slots].sort().join(',')}`).sort(),
    touched: [...j.touched].sort(),
  })
  const ADDRESSES = [1, 2, 3].map((n) => new Uint8Array(20).fill(n))
  const op = fc.oneof(
    fc.constant({ kind: 'checkpoint' as const }),
    fc.constant({ kind: 'commit' as const }),
    fc.constant({ kind: 'revert' as const }),
    fc.record({ kind: fc.constant('warm' as const), a: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant('slot' as const), a: fc.integer({ min: 0, max: 2 }), s: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ kind: fc.constant('touch' as const), a: fc.integer({ min: 0, max: 2 }) }),
  )

  it('keeps the stock warm and touched sets through any sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const [ours, theirs] = journals()
        for (const o of ops) {
          for (const j of [ours, theirs]) {
            if (o.kind === 'checkpoint') await j.checkpoint()
            else if (o.kind === 'commit' && j.journalHeight > 0) await j.commit()
            else if (o.kind === 'revert' && j.journalHeight > 0) await j.revert()
            else if (o.kind === 'warm') j.addWarmedAddress(ADDRESSES[o.a])
            else if (o.kind === 'slot') j.addWarmedStorage(ADDRESSES[o.a], new Uint8Array(32).fill(o.s))
            else if (o.kind === 'touch') j.touchAccount(`${o.a}`.repeat(40))
          }
          expect(view(ours)).toEqual(view(theirs))
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('does not grow per call frame when the frames warm nothing new', async () => {
    const [ours, theirs] = journals()
    for (const j of [ours, theirs]) {
      await j.checkpoint()
      j.addWarmedAddress(ADDRESSES[0])
      for (let i = 0; i < 1000; i++) {
        await j.checkpoint()
        await j.commit()
      }
    }
    const length = (j: JournalInstance) => (j as unknown as { journalDiff: unknown[] }).journalDiff.length
    expect(length(theirs)).toBeGreaterThan(2000)
    expect(length(ours)).toBeLessThan(5)
  })
})

describe('EVM.runInterpreter and EVM._executeCall', () => {
  const CALLER = createAddressFromString('0x000000000000000000000000000000000000c0de')
  const A = createAddressFromString('0x00000000000000000000000000000000000000aa')
  const B = createAddressFromString('0x00000000000000000000000000000000000000bb')
  const LOGGER = createAddressFromString('0x00000000000000000000000000000000000000cc')
  const DOOMED = createAddressFromString('0x00000000000000000000000000000000000000dd')
  const KEEPER = createAddressFromString('0x00000000000000000000000000000000000000ef')
  const REVERTER = createAddressFromString('0x00000000000000000000000000000000000000fe')
  const WRITER = createAddressFromString('0x00000000000000000000000000000000000000a1')
  const CREATOR = createAddressFromString('0x00000000000000000000000000000000000000a2')
  const SPINNER = createAddressFromString('0x00000000000000000000000000000000000000a3')
  const push = (n: bigint | number) => '7f' + BigInt(n).toString(16).padStart(64, '0')
  /** CALL(gas, to, value, 0, 32 bytes in, 0, 32 out), then SSTORE(0, success), RETURN 64 bytes of memory */
  const caller = (to: string, value: number) => push(32) + push(0) + push(32) + push(0) + push(value) + push(BigInt(to)) + '5a' + 'f1' + '600055' + push(64) + push(0) + 'f3'
  /** STATICCALL(gas, to, 0, 32 bytes in, 0, 32 out), then SSTORE(0, success), RETURN 64 bytes of memory */
  const staticCaller = (to: string, opcode = 'fa') => push(32) + push(0) + push(32) + push(0) + push(BigInt(to)) + '5a' + opcode + '600055' + push(64) + push(0) + 'f3'
  /** the same by DELEGATECALL: the callee's transient writes are the caller's */
  const delegateCaller = (to: string) => staticCaller(to, 'f4')
  const CODES: Record<string, string> = {
    'returns data': push(0xabcdef) + '600052' + '60206000f3',
    reverts: push(0x1234) + '600052' + '60206000fd',
    'runs out of gas': '5b600056',
    'calls B with value': caller(B.toString(), 7),
    'calls itself': caller(A.toString(), 0),
    'calls the identity precompile': caller('0x04', 0),
    'calls an empty account': caller('0x00000000000000000000000000000000000000ee', 3),
    'calls a contract that logs': caller(LOGGER.toString(), 0),
    'calls a contract that self-destructs': caller(DOOMED.toString(), 0),
    'calls one that logs, then one that self-destructs, then itself': caller(LOGGER.toString(), 0).slice(0, -2) + caller(DOOMED.toString(), 0).slice(0, -2) + caller(A.toString(), 1),
    'stops at once': '00',
    'static-calls B': staticCaller(B.toString()),
    'static-calls a contract that reverts': staticCaller(REVERTER.toString()),
    'static-calls a contract that writes storage': staticCaller(WRITER.toString()),
    'calls a contract that runs out of gas': caller(SPINNER.toString(), 0),
    'calls a contract that creates one and returns its address and code size': caller(CREATOR.toString(), 0),
    'calls a contract that logs, stores transiently and reverts': caller(REVERTER.toString(), 0),
    // then TLOAD(0) into slot 1: 5 from the keeper, 0 after the reverter's write was undone
    'delegates to a contract that stores transiently, then reads it': delegateCaller(KEEPER.toString()).slice(0, -(66 + 66 + 2)) + '60005c600155' + push(64) + push(0) + 'f3',
    'delegates to a contract that logs, stores transiently and reverts, then reads it': delegateCaller(REVERTER.toString()).slice(0, -(66 + 66 + 2)) + '60005c600155' + push(64) + push(0) + 'f3',
  }
  /** LOG1 of 32 bytes of memory with a topic, then STOP */
  const LOGS = push(0xbeef) + '600052' + push(7) + '60206000a1' + '00'
  /** SELFDESTRUCT to the caller */
  const SELF_DESTRUCTS = '33ff'
  /** TSTORE(0, 5), then STOP */
  const KEEPS_TRANSIENT = '600560005d00'
  /** SSTORE(0, 1), then STOP: a static frame must fail at the write */
  const WRITES = '600160005500'
  /**
   * CREATE(0, 22, 10) of init code that deploys the one byte 0xff (MSTORE8, RETURN), then RETURN
   * one word: the new address, its code size (EXTCODESIZE) shifted above it (SHL 160, OR)
   */
  const CREATES = '69' + '60ff60005360016000f3' + '600052' + '600a60166000f0' + '80' + '3b' + '60a0' + '1b' + '17' + '600052' + '60206000f3'
  /** LOG1 as LOGS, TSTORE(0, 1), then REVERT: its log and its transient write must be undone */
  const LOGS_AND_REVERTS = LOGS.slice(0, -2) + '600160005d' + '60006000fd'

  /**
   * A reader that answers what `seeded` holds a macrotask later: every account and code read of
   * the run reaches it and suspends (none is held by the run's overlay until written).
   */
  const slowReader = (seeded: JournaledState): StateReader => {
    const later = <T>(read: () => Promise<T>) => new Promise<void>((resolve) => setImmediate(resolve)).then(read)
    return {
      block: EMPTY_STATE_READER.block,
      getAccount: (address) => later(() => seeded.readAccount(address)),
      getCode: (address) => later(() => seeded.readCode(address)),
      getStorage: (address, slot) => later(() => seeded.readStorage(address, slot)),
    }
  }

  async function run(code: string, patched: boolean, listen = false, suspend = false) {
    const seeded = JournaledState.over(EMPTY_STATE_READER)
    const state = seeded
    await state.putCode(A, Buffer.from(code, 'hex'))
    await state.putCode(KEEPER, Buffer.from(KEEPS_TRANSIENT, 'hex'))
    await state.putCode(REVERTER, Buffer.from(LOGS_AND_REVERTS, 'hex'))
    await state.putCode(B, Buffer.from(CODES['returns data'], 'hex'))
    await state.putCode(LOGGER, Buffer.from(LOGS, 'hex'))
    await state.putCode(DOOMED, Buffer.from(SELF_DESTRUCTS, 'hex'))
    await state.putCode(WRITER, Buffer.from(WRITES, 'hex'))
    await state.putCode(CREATOR, Buffer.from(CREATES, 'hex'))
    await state.putCode(SPINNER, Buffer.from(CODES['runs out of gas'], 'hex'))
    await state.putAccount(A, new Account(0n, 100n))
    // the caller pays the 5 wei it sends (without it every case stopped at 'insufficient balance')
    await state.putAccount(CALLER, new Account(0n, 1_000n))
    return runOn(suspend ? JournaledState.over(slowReader(seeded)) : seeded, patched, listen)
  }

  async function runOn(state: JournaledState, patched: boolean, listen: boolean) {
    let runCalls = 0
    return new VmPool(common).with(state, async (vm) => {
      if (!patched) Object.assign(vm.evm, { runInterpreter: stock.runInterpreter, _executeCall: stock.executeCall, runCall: stock.runCall })
      const ours = { _baseCall: Interpreter.prototype._baseCall, call: Interpreter.prototype.call, callStatic: Interpreter.prototype.callStatic }
      // the Interpreters are made inside the EVM: the stock functions go on the prototype for this run
      if (!patched) Object.assign(Interpreter.prototype, { _baseCall: stock.baseCall, call: stock.call, callStatic: stock.callStatic })
      const messages: string[] = []
      let emits = 0
      const evm = vm.evm as unknown as { _emit(topic: string, data: unknown): Promise<void>; events: NonNullable<typeof vm.evm.events> }
      const emit = evm._emit.bind(evm)
      evm._emit = (topic, data) => {
        emits++
        return emit(topic, data)
      }
      if (listen) {
        evm.events.on('beforeMessage', (m) => messages.push(`before ${m.depth} ${m.to?.toString()} ${m.gasLimit} ${m.value} ${m.isStatic}`))
        evm.events.on('afterMessage', (r) => messages.push(`after ${r.execResult.executionGasUsed} ${r.execResult.exceptionError?.error} ${r.execResult.logs?.length}`))
      }
      const runCall = vm.evm.runCall.bind(vm.evm)
      vm.evm.runCall = (opts) => {
        runCalls++
        return runCall(opts)
      }
      await vm.evm.journal.checkpoint()
      const r = await vm.evm.runCall({ caller: CALLER, to: A, value: 5n, gasLimit: 200_000n }).finally(() => {
        Object.assign(Interpreter.prototype, ours)
      })
      await vm.evm.journal.commit()
      const e = r.execResult
      const runState = e.runState as unknown as Record<string, unknown>
      return {
        gas: e.executionGasUsed,
        left: e.gas,
        refund: e.gasRefund,
        error: e.exceptionError?.error,
        out: Buffer.from(e.returnValue).toString('hex'),
        logs: e.logs?.map((log) => Buffer.from(JSON.stringify(log, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).toString('base64')),
        selfdestructs: [...(e.selfdestruct?.keys() ?? [])],
        runStateKeys: runState === undefined ? [] : Object.keys(runState).sort(),
        runStateGas: runState?.gasLeft,
        balances: await Promise.all([A, B, CALLER].map(async (a) => (await state.getAccount(a))?.balance)),
        slot: Buffer.from(await state.getStorage(A, new Uint8Array(32))).toString('hex'),
        slot1: Buffer.from(await state.getStorage(A, new Uint8Array(32).fill(1, 31))).toString('hex'),
        messages,
        emits,
        runCalls,
      }
    })
  }

  /** whether the code calls CREATOR, i.e. opens a creation frame */
  const callsCreator = (code: string) => code.includes(CREATOR.toString().slice(2))
  it.each(Object.entries(CODES))('a contract that %s: as the stock functions', async (_name, code) => {
    const { emits: ourEmits, runCalls: ourRunCalls, ...ours } = await run(code, true)
    const { emits: stockEmits, runCalls: stockRunCalls, ...theirs } = await run(code, false)
    // a child frame (CALL family) runs as one async function (callFrame), not through runCall
    // (a creation's still does)
    if (callsCreator(code)) expect(ourRunCalls).toBeLessThan(stockRunCalls)
    else expect(ourRunCalls).toBe(1)
    expect(ours.error).not.toBe('insufficient balance')
    expect(ours).toEqual(theirs)
    // a child frame emits nothing nobody listens to (the top frame is the stock runCall's, and so
    // is a creation's)
    if (callsCreator(code)) expect(ourEmits).toBeLessThan(stockEmits)
    else expect(ourEmits).toBe(2)
    expect(stockEmits).toBeGreaterThanOrEqual(2)
  })

  it.each(Object.entries(CODES))('a contract that %s, every state read suspending: as the stock functions', async (_name, code) => {
    const { emits: _ourEmits, runCalls: _ours, ...ours } = await run(code, true, false, true)
    const { emits: _stockEmits, runCalls: _theirs, ...theirs } = await run(code, false, false, true)
    expect(ours.error).not.toBe('insufficient balance')
    expect(ours).toEqual(theirs)
  })

  it.each(Object.entries(CODES))('a contract that %s, with message listeners: the stock events', async (_name, code) => {
    const ours = await run(code, true, true)
    const theirs = await run(code, false, true)
    expect(ours.messages.length).toBeGreaterThanOrEqual(2)
    expect(ours).toEqual(theirs)
  })

  it('the transient, reverting, static-writing, out-of-gas and creating children are what they claim: a kept write is read back, a reverted one is not, its log dropped', async () => {
    const kept = await run(CODES['delegates to a contract that stores transiently, then reads it'], true)
    const reverted = await run(CODES['delegates to a contract that logs, stores transiently and reverts, then reads it'], true)
    expect(kept.slot1).toBe('05')
    expect(kept.slot).toBe('01')
    expect(reverted.slot1).toBe('')
    expect(reverted.slot).toBe('')
    expect(reverted.logs).toEqual([])
    expect((await run(CODES['static-calls B'], true)).out.slice(0, 64)).toBe(BigInt(0xabcdef).toString(16).padStart(64, '0'))
    // a static frame's write and a child out of gas fail (the caller stores 0), the creation succeeds and answers an address
    expect((await run(CODES['static-calls a contract that writes storage'], true)).slot).toBe('')
    expect((await run(CODES['calls a contract that runs out of gas'], true)).slot).toBe('')
    const created = await run(CODES['calls a contract that creates one and returns its address and code size'], true)
    expect(created.slot).toBe('01')
    expect(created.out.slice(0, 24)).toBe('0'.repeat(22) + '01')
    expect(created.out.slice(24, 64)).not.toBe('0'.repeat(40))
  })

  it('Interpreter.call and callStatic hand _baseCall the stock Message and return its promise itself (no async layer of their own)', async () => {
    const env = { address: A, caller: CALLER, isStatic: false, depth: 3, blobVersionedHashes: [new Uint8Array([1])], accessWitness: undefined }
    for (const name of ['call', 'callStatic'] as const) {
      const messages: unknown[] = []
      const answer = Promise.resolve(1n)
      const frame = {
        _env: env,
        _baseCall(msg: unknown) {
          messages.push(msg)
          return answer
        },
      }
      const args = [21_000n, B, name === 'call' ? 9n : 0n, new Uint8Array([1, 2, 3])]
      expect((Interpreter.prototype[name] as Fn).call(frame, ...args)).toBe(answer)
      await (stock[name] as Fn).call(frame, ...args)
      expect(messages).toHaveLength(2)
      expect(messages[0]).toStrictEqual(messages[1])
      expect((messages[0] as { depth: number }).depth).toBe(4)
    }
  })

  async function frameResults(code: string, times: number) {
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putCode(A, Buffer.from(code, 'hex'))
    return new VmPool(common).with(state, async (vm) => {
      const results = []
      for (let i = 0; i < times; i++) results.push((await vm.evm.runCall({ caller: CALLER, to: A, gasLimit: 100_000n })).execResult)
      return results
    })
  }

  it('gives every frame result the same runState accessor, on their class: no closure and no property of its own per result (a closure kept whole frames from the young-generation collector)', async () => {
    const [first, second] = await frameResults(CODES['returns data'], 2)
    const own = (r: object) => Object.getOwnPropertyDescriptor(r, 'runState')
    const inherited = (r: object) => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(r) as object, 'runState')
    expect(Object.getPrototypeOf(first)).toBe(Object.getPrototypeOf(second))
    expect(own(first)).toBeUndefined()
    expect(inherited(first)?.get).toBeTypeOf('function')
    expect(inherited(first)?.set).toBeTypeOf('function')
    // read once, it is the stock snapshot as a data property; written, it holds what was written
    const snapshot = first.runState as unknown as Record<string, unknown>
    expect(snapshot.gasLeft).toBe(first.gas)
    expect(own(first)).toMatchObject({ value: snapshot, writable: true, enumerable: true })
    expect(first.runState).toBe(snapshot)
    second.runState = undefined
    expect(own(second)).toMatchObject({ value: undefined, writable: true, enumerable: true })
    // the other fields are the stock result's own properties
    for (const key of ['logs', 'returnValue', 'selfdestruct', 'createdAddresses', 'exceptionError', 'gas', 'executionGasUsed', 'gasRefund', 'stateGasSpilled']) expect(Object.keys(first)).toContain(key)
  })

  it('starts every frame with one shared empty return data (and code and jump table), not arrays made per frame', async () => {
    const [first, second] = await frameResults(CODES['returns data'], 2)
    const returnBytes = (r: object) => ((r as { runState: { returnBytes: Uint8Array } }).runState.returnBytes)
    expect(returnBytes(first)).toHaveLength(0)
    expect(returnBytes(first)).toBe(returnBytes(second))
  })

  it("starts a frame's memory without a buffer: a frame that uses a little memory reuses a pooled one, a frame that uses none takes none", async () => {
    await frameResults(CODES['returns data'], 1)
    const afterOne = memoryPoolStats()
    expect(afterOne.buffers).toBeGreaterThan(0)
    // with a buffer of its own per frame (the stock 8 KB), each frame would add one to the pool
    await frameResults(CODES['returns data'], 20)
    expect(memoryPoolStats()).toEqual(afterOne)
    await frameResults(CODES['stops at once'], 20)
    expect(memoryPoolStats()).toEqual(afterOne)
  })
})

describe('Memory', () => {
  const memOp = fc.oneof(
    fc.record({ kind: fc.constant('write' as const), offset: fc.integer({ min: 0, max: 40_000 }), size: fc.integer({ min: 1, max: 9_000 }), byte: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant('read' as const), offset: fc.integer({ min: 0, max: 40_000 }), size: fc.integer({ min: 0, max: 9_000 }) }),
    fc.record({ kind: fc.constant('extend' as const), offset: fc.integer({ min: 0, max: 60_000 }), size: fc.integer({ min: 0, max: 9_000 }) }),
    fc.constant({ kind: 'release' as const }),
  )

  it('holds the stock bytes through extends, writes, reads and frames ending (buffers reused)', () => {
    fc.assert(
      fc.property(fc.array(memOp, { maxLength: 40 }), (ops) => {
        let ours = new Memory()
        let theirs = new Memory()
        Object.assign(theirs, { extend: stock.extend, write: stock.write })
        for (const o of ops) {
          if (o.kind === 'release') {
            // the frame ends: its buffer goes back to the pool, the next frame starts afresh
            releaseFrameMemory(ours)
            ours = new Memory()
            theirs = new Memory()
            Object.assign(theirs, { extend: stock.extend, write: stock.write })
            continue
          }
          for (const m of [ours, theirs]) {
            if (o.kind === 'write') m.write(o.offset, o.size, new Uint8Array(o.size).fill(o.byte))
            else if (o.kind === 'extend') m.extend(o.offset, o.size)
          }
          if (o.kind === 'read') expect(Buffer.from(ours.read(o.offset, o.size)).equals(Buffer.from(theirs.read(o.offset, o.size)))).toBe(true)
          expect(ours._store.length).toBe(theirs._store.length)
          expect(Buffer.from(ours._store).equals(Buffer.from(theirs._store))).toBe(true)
        }
      }),
      { numRuns: 300 },
    )
    expect(memoryPoolStats().bytes).toBeLessThanOrEqual(POOLED_MEMORY_MAX_BYTES)
  })

  it('zeroes a returned buffer where it was written, however far memory was expanded, and reuses it all zeros', () => {
    const size = 57_344 // 50,000 bytes in whole 8 KB chunks
    for (let round = 0; round < 3; round++) {
      const m = new Memory()
      m.extend(0, 50_000) // what CALLDATACOPY of 50,000 bytes of 36-byte calldata charges for
      expect(m._store.length).toBe(size)
      expect(m._store.every((b) => b === 0)).toBe(true)
      m.write(round * 1000, 36, new Uint8Array(36).fill(0xee))
      m.write(49_990, 10, new Uint8Array(10).fill(0xdd))
      expect(m._high).toBe(50_000)
      releaseFrameMemory(m)
    }
  })

  it('keeps the pool bounded however many frames end', () => {
    for (let i = 0; i < 2_000; i++) {
      const m = new Memory()
      m.extend(0, 8192 * (1 + (i % 40)))
      m.write(100, 1, new Uint8Array([1]))
      releaseFrameMemory(m)
    }
    expect(memoryPoolStats().bytes).toBeLessThanOrEqual(POOLED_MEMORY_MAX_BYTES)
    expect(memoryPoolStats().buffers).toBeGreaterThan(0)
  })
})

describe('copy opcodes (memory-patches.ts) against the stock handlers', () => {
  const MAX = 2n ** 256n - 1n
  const push = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')
  const CALLDATA = Buffer.from('00112233445566778899aabbccddeeff'.repeat(2) + 'c0ffee', 'hex') // 35 bytes
  const OTHER = createAddressFromString('0x0000000000000000000000000000000000abcdef')
  const OTHER_CODE = Buffer.from('6001600201' + 'fe'.repeat(40), 'hex') // 45 bytes
  const TARGET = createAddressFromString('0x0000000000000000000000000000000000100c0e')

  /** memory [0, 256) set to 0xff, then the copy, then the whole memory returned */
  function program(op: 0x37 | 0x39 | 0x3c, memOffset: bigint, srcOffset: bigint, length: bigint, from?: bigint): Buffer {
    let code = ''
    for (let w = 0n; w < 8n; w++) code += push(MAX) + push(w * 32n) + '52'
    code += push(length) + push(srcOffset) + push(memOffset)
    if (op === 0x3c) code += push(from ?? 0n)
    code += op.toString(16) + '59' + '6000' + 'f3'
    return Buffer.from(code, 'hex')
  }

  const CASES: Array<[string, bigint, bigint, bigint]> = [
    ['inside the source', 5n, 3n, 20n],
    ['straddling the source end, over 0xff memory', 3n, 20n, 100n],
    ['entirely past the source end', 64n, 200n, 64n],
    ['a source offset beyond 2^64', 1n, 2n ** 200n, 40n],
    ['growing memory past its 256 bytes', 250n, 0n, 70n],
    ['a large copy, mostly zeros', 100n, 10n, 50_000n],
    ['nothing (length 0, offsets huge)', MAX, MAX, 0n],
  ]

  async function run(patched: boolean, code: Buffer) {
    const state = JournaledState.over(EMPTY_STATE_READER)
    await state.putCode(TARGET, code)
    await state.putCode(OTHER, OTHER_CODE)
    const exec = async (vm: Awaited<ReturnType<typeof createVM>>) => {
      const r = await vm.evm.runCall({ to: TARGET, caller: createAddressFromString('0x000000000000000000000000000000000000c0de'), data: CALLDATA, gasLimit: 10_000_000n })
      return { out: Buffer.from(r.execResult.returnValue).toString('hex'), gas: r.execResult.executionGasUsed, error: r.execResult.exceptionError?.error }
    }
    if (patched) return new VmPool(common).with(state, exec)
    // a VM outside the pool keeps the stock opcode handlers (patchEvmInstance is the pool's)
    await applyInterpreterPatches()
    return exec(await createVM({ common, stateManager: state }))
  }

  for (const [op, name] of [[0x37, 'CALLDATACOPY'], [0x39, 'CODECOPY'], [0x3c, 'EXTCODECOPY']] as const) {
    it.each(CASES)(`${name}: %s`, async (_label, memOffset, srcOffset, length) => {
      const code = program(op, memOffset, srcOffset, length, BigInt(OTHER.toString()))
      const stock = await run(false, code)
      const ours = await run(true, code)
      expect(stock.error).toBeUndefined()
      expect(ours).toEqual(stock)
    })
  }

  it('EXTCODECOPY of an account without code copies zeros', async () => {
    const code = program(0x3c, 0n, 0n, 64n, 0xdeadn)
    const ours = await run(true, code)
    expect(ours).toEqual(await run(false, code))
    expect(ours.out.slice(0, 128)).toBe('00'.repeat(64))
  })
})
