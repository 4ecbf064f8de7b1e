/**
 * word-memory.ts: MLOAD and MSTORE of the pooled EVMs read and write every word as the stock
 * handlers do (zero, small, address-sized, full-width words; aligned, unaligned and overlapping
 * offsets; across the 8 KiB growth of memory and the high-water mark of memory-patches.ts), and the
 * memory gas of a word access is the stock `subMemUsage`'s, inside and past paid memory.
 */
import { describe, expect, it } from 'vitest'
import { Common, Hardfork, Mainnet } from '@ethereumjs/common'
import { paramsEVM } from '@ethereumjs/evm'
import { bigIntToBytes, bytesToBigInt, createAddressFromString, setLengthLeft } from '@ethereumjs/util'
import { createVM, type VM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'
import { emptyMemory, extendMemory, writeMemory } from '../../src/evm/memory-patches.ts'
import { loadSyncGasHandlers, type GasRunState } from '../../src/evm/sync-gas.ts'
import { VmPool } from '../../src/evm/vm-pool.ts'
import { bytesOfWord, readWord, shortBytesOfWord, withinPaidMemory, wordOfShortBytes, writeWord, type WordMemory } from '../../src/evm/word-memory.ts'

const evmEntry = import.meta.resolve('@ethereumjs/evm')
const { Memory } = (await import(new URL('./memory.js', evmEntry).href)) as { Memory: new () => { read(o: number, s: number, avoidCopy?: boolean): Uint8Array; write(o: number, s: number, v: Uint8Array): void; _store: Uint8Array } }
const { subMemUsage } = (await import(new URL('./opcodes/util.js', evmEntry).href)) as { subMemUsage(rs: object, offset: bigint, length: bigint, common: Common): bigint }

/** A deterministic stream of words of every size class. */
function* words(count: number): Generator<bigint> {
  const fixed = [0n, 1n, 0xfn, 0x10n, 0xffn, 0x100n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 128n, 2n ** 160n - 1n, 2n ** 192n, 2n ** 255n + 3n, 2n ** 256n - 1n]
  yield* fixed
  let x = 0x9e3779b97f4a7c15f39cc0605cedc834n
  for (let i = fixed.length; i < count; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 256n
    yield x >> BigInt((i * 37) % 256) // from full width down to a few bits
  }
}

const memoryOf = () => emptyMemory(Memory) as WordMemory

describe('word-memory: readWord and writeWord', () => {
  it('write what the stock Memory.write of the padded bytes writes, and read what its read gives', () => {
    const ours = memoryOf()
    ours.extend = extendMemory
    const stock = new Memory()
    const offsets = [0, 1, 7, 31, 32, 33, 8160, 8161, 8190, 12_345, 16_352, 40_000]
    let i = 0
    for (const word of words(200)) {
      const offset = offsets[i++ % offsets.length] + (i % 5)
      writeWord(ours, offset, word)
      stock.write(offset, 32, setLengthLeft(bigIntToBytes(word), 32))
      expect(readWord(ours, offset)).toBe(word)
      expect(ours._high).toBeGreaterThanOrEqual(offset + 32)
    }
    const size = Math.max(ours._store.length, stock._store.length)
    ours.extend(0, size)
    stock.read(0, size)
    expect(Buffer.from(ours._store).equals(Buffer.from(stock._store))).toBe(true)
    // every offset, written or not, reads as the stock read (with its growth) reads
    for (const offset of [0, 5, 31, 8170, 40_010, 48_000, 60_000]) {
      expect(readWord(ours, offset)).toBe(bytesToBigInt(stock.read(offset, 32, true)))
      expect(ours._store.length).toBe(stock._store.length)
    }
  })

  it('words of every bit length, 0 to 256 (each size class of writeWord and wordAt and its edges), over memory of 0xff bytes', () => {
    const ours = memoryOf()
    ours.extend = extendMemory
    const stock = new Memory()
    const dirty = new Uint8Array(64 * 1024).fill(0xff)
    writeMemory.call(ours, 0, dirty.length, dirty)
    stock.write(0, dirty.length, dirty)
    let offset = 0
    for (let bits = 0n; bits <= 256n; bits++) {
      // 2^bits - 1 (all ones up to that length) and 2^bits (one bit at it), and one with a middle byte set
      for (const word of [2n ** bits - 1n, 2n ** bits, 2n ** bits + 2n ** (bits / 2n)]) {
        if (word >= 2n ** 256n) continue
        offset += 37
        writeWord(ours, offset, word)
        stock.write(offset, 32, setLengthLeft(bigIntToBytes(word), 32))
        expect(Buffer.from(ours._store.subarray(offset, offset + 32)).toString('hex'), `word 2^${bits} class`).toBe(Buffer.from(stock._store.subarray(offset, offset + 32)).toString('hex'))
        expect(readWord(ours, offset), `word 2^${bits} class`).toBe(word)
      }
    }
    // the bytes around the words as the stock memory has them (no write past a word's 32 bytes)
    expect(Buffer.from(ours._store.subarray(0, offset + 64)).equals(Buffer.from(stock._store.subarray(0, offset + 64)))).toBe(true)
  })

  it('a write below the high-water mark leaves it; one past it raises it to the end of the word', () => {
    const memory = memoryOf()
    memory.extend = extendMemory
    writeMemory.call(memory, 100, 4, Uint8Array.of(1, 2, 3, 4))
    expect(memory._high).toBe(104)
    writeWord(memory, 10, 5n)
    expect(memory._high).toBe(104)
    writeWord(memory, 90, 2n ** 256n - 1n)
    expect(memory._high).toBe(122)
    expect(readWord(memory, 90)).toBe(2n ** 256n - 1n)
  })
})

describe('word-memory: the gas of a word access', () => {
  const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun, params: paramsEVM })

  function runState(top: bigint[], memoryWordCount: bigint): GasRunState & { stack: { _store: bigint[]; _len: number } } {
    const store = [...top].reverse()
    return {
      stack: { _store: store, _len: store.length, peek: (n = 1) => store.slice(-n).reverse() } as never,
      env: {},
      interpreter: { getReturnDataSize: () => 0n },
      memoryWordCount,
      highestMemCost: memoryWordCount * 3n + (memoryWordCount * memoryWordCount) / 512n,
    }
  }

  it('MLOAD, MSTORE and MSTORE8 cost what subMemUsage charges, and leave the run state as it does', async () => {
    const handlers = await loadSyncGasHandlers()
    const cases: Array<[number, bigint]> = [[0x51, 32n], [0x52, 32n], [0x53, 1n]]
    const offsets = [0n, 1n, 31n, 32n, 33n, 63n, 64n, 95n, 96n, 1000n, 2n ** 20n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 40n + 7n]
    for (const [op, width] of cases) {
      for (const words of [0n, 1n, 2n, 3n, 4n, 40n]) {
        for (const offset of offsets) {
          const ours = runState([offset, 9n], words)
          const stock = runState([offset, 9n], words)
          const expected = 3n + subMemUsage(stock, offset, width, common)
          expect(handlers.get(op)!(ours, 3n, common), `op ${op} words ${words} offset ${offset}`).toBe(expected)
          expect([ours.memoryWordCount, ours.highestMemCost]).toEqual([stock.memoryWordCount, stock.highestMemCost])
        }
      }
    }
  })

  it('decides only what it can: an empty stack or an offset past 2^32 go to subMemUsage', () => {
    expect(withinPaidMemory(runState([], 1n), 32)).toBeUndefined()
    expect(withinPaidMemory(runState([2n ** 32n], 2n ** 30n), 32)).toBeUndefined()
    expect(withinPaidMemory(runState([32n], 2n), 32)).toBe(true)
    expect(withinPaidMemory(runState([33n], 2n), 32)).toBe(false)
    expect(withinPaidMemory(runState([63n], 2n), 1)).toBe(true)
    expect(withinPaidMemory(runState([64n], 2n), 1)).toBe(false)
  })
})

describe('MLOAD and MSTORE in a pooled EVM', () => {
  const push32 = (v: bigint) => '7f' + v.toString(16).padStart(64, '0')

  /** Stores every word at an offset (overlapping ones) and loads it back, loads words at other offsets, returns all memory. */
  function program(): string {
    const storeAt = [0, 7, 14, 31, 64, 8170, 8191, 20_000, 100]
    const loadAt = [0, 3, 7, 30, 64, 90, 8160, 8180, 8200, 19_990, 30_000]
    let code = ''
    let i = 0
    for (const word of words(60)) {
      // stored, then loaded back at once into the results area
      const offset = push32(BigInt(storeAt[i % storeAt.length] + 11 * i))
      code += push32(word) + offset + '52' + offset + '51' + push32(BigInt(50_000 + 32 * i++)) + '52'
    }
    loadAt.forEach((offset, j) => (code += push32(BigInt(offset)) + '51' + push32(BigInt(40_000 + 32 * j)) + '52'))
    return code + '59' + '6000' + 'f3' // MSIZE PUSH1 0 RETURN
  }

  it('give the stock handlers\' memory, results and gas', async () => {
    const target = createAddressFromString('0x000000000000000000000000000000000000057e')
    const code = Buffer.from(program(), 'hex')
    const run = async (pooled: boolean) => {
      const state = JournaledState.over(EMPTY_STATE_READER)
      await state.putCode(target, code)
      const exec = async (vm: VM) => {
        const { execResult } = await vm.evm.runCall({ to: target, gasLimit: 10_000_000n })
        return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed, memory: Buffer.from(execResult.returnValue).toString('hex') }
      }
      // a VM outside the pool keeps the stock opcode handlers (patchEvmInstance is the pool's); a
      // Common each, as jump analyses (and the opcode entries they cache) are shared per Common
      const common = commonForChain(31337n)
      return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
    }
    const stock = await run(false)
    expect(stock.error).toBeUndefined()
    expect(stock.memory.length).toBeGreaterThan(2 * 40_000)
    expect(await run(true)).toEqual(stock)
  })

  it('an access past 2^32 runs out of gas as in the stock EVM', async () => {
    const target = createAddressFromString('0x000000000000000000000000000000000000057f')
    const run = async (pooled: boolean, code: string) => {
      const state = JournaledState.over(EMPTY_STATE_READER)
      await state.putCode(target, Buffer.from(code, 'hex'))
      const exec = async (vm: VM) => {
        const { execResult } = await vm.evm.runCall({ to: target, gasLimit: 1_000_000n })
        return { error: execResult.exceptionError?.error, gas: execResult.executionGasUsed }
      }
      const common = commonForChain(31337n)
      return pooled ? new VmPool(common).with(state, exec) : exec(await createVM({ common, stateManager: state }))
    }
    for (const code of [push32(2n ** 32n) + '51', push32(1n) + push32(2n ** 255n) + '52', '51', '600152']) {
      const stock = await run(false, code)
      expect(stock.error).toBeDefined()
      expect(await run(true, code)).toEqual(stock)
    }
  })
})

describe('bytesOfWord', () => {
  it("gives setLengthLeft(bigIntToBytes(word), 32)'s bytes, new bytes on every call", () => {
    const words = [0n, 1n, 255n, 256n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 160n - 1n, 2n ** 255n, 2n ** 256n - 1n, 0x0123456789abcdefn * 2n ** 128n]
    const made = words.map((word) => bytesOfWord(word))
    // every earlier answer still holds its own word after the later calls (no bytes shared between answers)
    made.forEach((bytes, i) => expect(bytes, `word ${words[i]}`).toEqual(setLengthLeft(bigIntToBytes(words[i]), 32)))
    expect(new Set(made.map((bytes) => bytes.buffer)).size).toBe(words.length)
  })
})

describe('shortBytesOfWord and wordOfShortBytes', () => {
  it("give bigIntToBytes's shortest bytes and bytesToBigInt's word, for words of every size class", () => {
    const all = [...words(400)]
    const made = all.map((word) => shortBytesOfWord(word))
    // every earlier answer still holds its own word after the later calls (no bytes shared between answers)
    made.forEach((bytes, i) => {
      expect(bytes, `word ${all[i]}`).toEqual(bigIntToBytes(all[i]))
      expect(wordOfShortBytes(bytes), `word ${all[i]}`).toBe(all[i])
    })
    // stored values of every length, leading zeros included, and none
    for (const bytes of [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(0, 0, 7), new Uint8Array(32).fill(0xff), Uint8Array.from({ length: 17 }, (_, i) => i)]) {
      expect(wordOfShortBytes(bytes)).toBe(bytes.length === 0 ? 0n : bytesToBigInt(bytes))
    }
    expect(() => wordOfShortBytes(new Uint8Array(33))).toThrow(RangeError)
  })
})
