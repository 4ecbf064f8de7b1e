import { bytesToHex, setLengthLeft, bigIntToBytes } from '@ethereumjs/util'
import { describe, expect, it } from 'vitest'
import { TransientStorage } from '../../node_modules/@ethereumjs/evm/dist/esm/transientStorage.js'
import {
  TRANSIENT_KEY_MEMO_MAX_ENTRIES,
  transientKey,
  transientKeyMemoSize,
  transientStorageHandlers,
  type TransientRunState,
} from '../../src/evm/transient-storage-opcodes.ts'

const ADDRESS = { toString: () => '0x00000000000000000000000000000000000000aa' }

function runState(storage: unknown, stack: bigint[], isStatic = false): TransientRunState & { items: bigint[] } {
  const items = [...stack]
  return {
    items,
    stack: {
      pop: () => items.pop()!,
      popN: (n: number) => items.splice(items.length - n, n).reverse(),
      push: (v: bigint) => void items.push(v),
    },
    interpreter: { isStatic: () => isStatic, _evm: { transientStorage: storage }, _env: { address: ADDRESS } },
  }
}

const failingStock = { tload: () => { throw new Error('stock tload') }, tstore: () => { throw new Error('stock tstore') } }

describe('TLOAD and TSTORE without byte round trips', () => {
  it('make the stock key of every slot', () => {
    for (const key of [0n, 1n, 0xffn, 1n << 255n, (1n << 256n) - 1n, 0x1234_5678_9abc_def0n]) {
      expect(transientKey(key)).toBe(bytesToHex(setLengthLeft(bigIntToBytes(key), 32)))
    }
  })

  it('remember at most their bound of keys, each the stock key of its own slot, again after it was pushed out', () => {
    const stockKey = (key: bigint) => bytesToHex(setLengthLeft(bigIntToBytes(key), 32))
    // slots equal in their low 64 bits (as V8 hashes a bigint) and apart above them
    const slot = (i: number) => (BigInt(i) << 192n) | 0xdead_beefn
    for (let i = 0; i < TRANSIENT_KEY_MEMO_MAX_ENTRIES + 100; i++) {
      expect(transientKey(slot(i))).toBe(stockKey(slot(i)))
      expect(transientKeyMemoSize()).toBeLessThanOrEqual(TRANSIENT_KEY_MEMO_MAX_ENTRIES)
    }
    expect(transientKeyMemoSize()).toBe(TRANSIENT_KEY_MEMO_MAX_ENTRIES)
    for (const i of [0, 1, 50, TRANSIENT_KEY_MEMO_MAX_ENTRIES + 99]) {
      expect(transientKey(slot(i))).toBe(stockKey(slot(i)))
      expect(transientKey(slot(i))).toBe(stockKey(slot(i)))
    }
  })

  it('store and load as the stock TransientStorage does, through checkpoints and reverts', () => {
    const ours = new TransientStorage()
    const stock = new TransientStorage()
    const { tload, tstore } = transientStorageHandlers(failingStock)
    const key = (1n << 200n) + 7n
    // TSTORE pops [key, value] with the key on top
    tstore(runState(ours, [5n, key]), undefined)
    stock.put(ADDRESS as never, setLengthLeft(bigIntToBytes(key), 32), bigIntToBytes(5n))
    expect(ours.toJSON()).toEqual(stock.toJSON())
    for (const s of [ours, stock]) s.checkpoint()
    tstore(runState(ours, [0n, key]), undefined)
    stock.put(ADDRESS as never, setLengthLeft(bigIntToBytes(key), 32), Uint8Array.from([]))
    expect(ours.toJSON()).toEqual(stock.toJSON())
    const zero = runState(ours, [key])
    tload(zero, undefined)
    expect(zero.items).toEqual([0n])
    for (const s of [ours, stock]) s.revert()
    expect(ours.toJSON()).toEqual(stock.toJSON())
    const five = runState(ours, [key])
    tload(five, undefined)
    expect(five.items).toEqual([5n])
    const unset = runState(ours, [key + 1n])
    tload(unset, undefined)
    expect(unset.items).toEqual([0n])
  })

  it('leave a static TSTORE and an unknown transient storage to the stock handlers', () => {
    const { tload, tstore } = transientStorageHandlers(failingStock)
    expect(() => tstore(runState(new TransientStorage(), [1n, 1n], true), undefined)).toThrow('stock tstore')
    expect(() => tload(runState({}, [1n]), undefined)).toThrow('stock tload')
  })
})
