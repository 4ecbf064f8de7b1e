/**
 * address-patches.ts against the stock functions it replaces (captured before the patches are
 * applied): Address.toString, EVM.getPrecompile and the journal's warm-address keys give what the
 * stock ones give.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Account, Address, bytesToHex, bytesToUnprefixedHex, createAddressFromString, hexToBytes } from '@ethereumjs/util'
import { createVM } from '@ethereumjs/vm'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { EMPTY_STATE_READER } from '../../src/evm/empty-state.ts'
import { addressOfUnprefixedHex, unprefixedHex } from '../../src/evm/address-patches.ts'
import { applyInterpreterPatches } from '../../src/evm/interpreter-patches.ts'
import { JournaledState } from '../../src/evm/journaled-state.ts'

const evmEntry = import.meta.resolve('@ethereumjs/evm')
interface JournalInstance {
  journal: Map<string, Set<string>>
  journalDiff: Array<[number, Array<Set<string>>]>
  isWarmedAddress(address: Uint8Array): boolean
  addWarmedAddress(address: Uint8Array): void
  addAlwaysWarmAddress(address: string): void
  touchAddress(address: Address): void
  touched: Set<string>
  checkpoint(): Promise<void>
  revert(): Promise<void>
  putAccount(address: Address, account: Account | undefined): Promise<void>
  cleanup(): Promise<void>
}
const { Journal } = (await import(new URL('./journal.js', evmEntry).href)) as {
  Journal: { new (sm: unknown, common: unknown): JournalInstance; prototype: Record<string, unknown> }
}
const { EVM } = (await import(new URL('./evm.js', evmEntry).href)) as { EVM: { prototype: { getPrecompile: (this: unknown, a: unknown) => unknown } } }
const stock = {
  getPrecompile: EVM.prototype.getPrecompile,
  toString: Address.prototype.toString,
  isWarmedAddress: Journal.prototype.isWarmedAddress,
  addWarmedAddress: Journal.prototype.addWarmedAddress,
  touchAddress: Journal.prototype.touchAddress,
  cleanup: Journal.prototype.cleanup as (this: unknown) => Promise<void>,
}
await applyInterpreterPatches()

const common = commonForChain(1n)
const address20 = fc.uint8Array({ minLength: 20, maxLength: 20 })

describe('unprefixedHex', () => {
  it("gives noble's hex for any bytes, views included, asked once or again", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uint8Array({ minLength: 0, maxLength: 40 }), fc.nat(8)), { maxLength: 12 }), (inputs) => {
        for (const [bytes, offset] of inputs) {
          const view = new Uint8Array(bytes.length + offset + 3).subarray(offset, offset + bytes.length)
          view.set(bytes)
          expect(unprefixedHex(view)).toBe(bytesToUnprefixedHex(bytes))
          expect(unprefixedHex(bytes)).toBe(bytesToUnprefixedHex(bytes))
        }
      }),
      { numRuns: 500 },
    )
    // the last address is answered again by content, not by array
    const a = new Uint8Array(20).fill(7)
    const b = new Uint8Array(20).fill(7)
    b[19] = 8
    expect([unprefixedHex(a), unprefixedHex(b), unprefixedHex(a)]).toEqual([bytesToUnprefixedHex(a), bytesToUnprefixedHex(b), bytesToUnprefixedHex(a)])
  })
})

describe('Address.toString', () => {
  it('is patched, and gives the stock hex every time it is asked', () => {
    expect(Address.prototype.toString).not.toBe(stock.toString)
    fc.assert(
      fc.property(address20, (bytes) => {
        const address = new Address(bytes)
        const expected = bytesToHex(bytes)
        expect(stock.toString.call(address)).toBe(expected)
        expect(address.toString()).toBe(expected)
        expect(address.toString()).toBe(expected)
        expect(`${address}`).toBe(expected)
      }),
      { numRuns: 500 },
    )
  })
})

describe('EVM.getPrecompile', () => {
  it('finds the precompiles by Address and by string, and nothing at other addresses, as the stock function', async () => {
    const vm = await createVM({ common, stateManager: JournaledState.over(EMPTY_STATE_READER) })
    const evm = vm.evm as unknown as { getPrecompile(a: Address | string): unknown; precompiles: Map<string, unknown> }
    expect(evm.precompiles.size).toBeGreaterThan(8)
    for (let n = 0; n <= 0x12; n++) {
      const hex = `0x${n.toString(16).padStart(40, '0')}`
      const expected = evm.precompiles.get(hex.slice(2))
      expect(evm.getPrecompile(createAddressFromString(hex))).toBe(expected)
      expect(evm.getPrecompile(hex)).toBe(expected)
      expect(stock.getPrecompile.call(evm, createAddressFromString(hex))).toBe(expected)
    }
    expect(evm.getPrecompile(createAddressFromString('0x0100000000000000000000000000000000000001'))).toBeUndefined()
  })
})

describe("the journal's warm addresses", () => {
  const noopState = { checkpoint: async () => {}, commit: async () => {}, revert: async () => {} }
  const ADDRESSES = [1, 2, 3, 4].map((n) => new Uint8Array(20).fill(n * 0x1f))
  // bytes that are a view into a larger buffer (as `slice` of code or calldata can give)
  const VIEW = new Uint8Array(64).fill(0xab).subarray(7, 27)
  const op = fc.oneof(
    fc.record({ kind: fc.constant('warm' as const), a: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant('ask' as const), a: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant('always' as const), a: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant('touch' as const), a: fc.integer({ min: 0, max: 4 }) }),
    fc.constant({ kind: 'checkpoint' as const }),
    fc.constant({ kind: 'revert' as const }),
  )
  const bytesOf = (a: number) => (a === 4 ? VIEW : ADDRESSES[a])
  // the same Address objects touched again and again, as the EVM does with a frame's addresses
  const touchable = [0, 1, 2, 3, 4].map((a) => new Address(bytesOf(a)))

  it('answers and records as the stock functions through any sequence', async () => {
    expect(Journal.prototype.isWarmedAddress).not.toBe(stock.isWarmedAddress)
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const ours = new Journal(noopState, common)
        const theirs = new Journal(noopState, common)
        Object.assign(theirs, { isWarmedAddress: stock.isWarmedAddress, addWarmedAddress: stock.addWarmedAddress, touchAddress: stock.touchAddress })
        let depth = 0
        for (const o of ops) {
          const answers: boolean[] = []
          for (const j of [ours, theirs]) {
            if (o.kind === 'warm') j.addWarmedAddress(bytesOf(o.a))
            else if (o.kind === 'ask') answers.push(j.isWarmedAddress(bytesOf(o.a)))
            else if (o.kind === 'always') j.addAlwaysWarmAddress(bytesToHex(bytesOf(o.a)))
            else if (o.kind === 'touch') j.touchAddress(touchable[o.a])
            else if (o.kind === 'checkpoint') await j.checkpoint()
            else if (depth > 0) await j.revert()
          }
          if (o.kind === 'checkpoint') depth++
          else if (o.kind === 'revert' && depth > 0) depth--
          if (answers.length > 0) expect(answers[0]).toBe(answers[1])
          expect([...ours.journal.keys()]).toEqual([...theirs.journal.keys()])
          expect([...ours.touched]).toEqual([...theirs.touched])
          expect(ours.journalDiff.map(([h, d]) => [h, [...d[0]]])).toEqual(theirs.journalDiff.map(([h, d]) => [h, [...d[0]]]))
        }
      }),
      { numRuns: 500 },
    )
  })
})

describe('addressOfUnprefixedHex', () => {
  const parse = (hex: string) => new Address(hexToBytes(`0x${hex}`))
  it("gives the Address ethereumjs' hexToBytes gives, with that hex as its toString, for any 20 bytes", () => {
    fc.assert(
      fc.property(address20, (bytes) => {
        const hex = bytesToUnprefixedHex(bytes)
        const address = addressOfUnprefixedHex(hex, parse)
        expect(address).toBeInstanceOf(Address)
        expect(address.bytes).toEqual(bytes)
        // an array of its own: the decoder's pooled buffer is not kept
        expect(address.bytes.byteLength).toBe(address.bytes.buffer.byteLength)
        expect(address.toString()).toBe(bytesToHex(bytes))
        expect(stock.toString.call(address)).toBe(bytesToHex(bytes))
      }),
      { numRuns: 500 },
    )
  })
  it('leaves anything but 40 lowercase hex digits to the parse it is given', () => {
    const parsed: string[] = []
    const spy = (hex: string) => {
      parsed.push(hex)
      return parse(hex.toLowerCase())
    }
    for (const hex of ['AB'.repeat(20), 'ab'.repeat(19), 'ab'.repeat(21), `${'ab'.repeat(19)}zz`]) {
      try {
        addressOfUnprefixedHex(hex, spy)
      } catch {
        // ethereumjs refuses what it refused
      }
    }
    expect(parsed).toEqual(['AB'.repeat(20), 'ab'.repeat(19), 'ab'.repeat(21), `${'ab'.repeat(19)}zz`])
  })
})

describe("the journal's cleanup", () => {
  it('deletes the touched empty accounts and keeps the others, as the stock function', async () => {
    expect(Journal.prototype.cleanup).not.toBe(stock.cleanup)
    const EMPTY = createAddressFromString('0x00000000000000000000000000000000000e0e01')
    const FUNDED = createAddressFromString('0x00000000000000000000000000000000000f0f02')
    const NONCE = createAddressFromString('0x00000000000000000000000000000000000a0a03')
    const UNTOUCHED = createAddressFromString('0x00000000000000000000000000000000000b0b04')
    const outcome = async (cleanup: (this: unknown) => Promise<void>) => {
      const state = JournaledState.over(EMPTY_STATE_READER)
      const journal = new Journal(state, common)
      await journal.putAccount(EMPTY, new Account())
      await journal.putAccount(FUNDED, new Account(0n, 5n))
      await journal.putAccount(NONCE, new Account(1n, 0n))
      await state.putAccount(UNTOUCHED, new Account())
      await cleanup.call(journal)
      const present = await Promise.all([EMPTY, FUNDED, NONCE, UNTOUCHED].map(async (a) => (await state.getAccount(a)) !== undefined))
      return { present, touched: [...journal.touched] }
    }
    const ours = await outcome(Journal.prototype.cleanup as (this: unknown) => Promise<void>)
    expect(ours).toEqual(await outcome(stock.cleanup))
    expect(ours).toEqual({ present: [false, true, true, true], touched: [] })
  })
})
