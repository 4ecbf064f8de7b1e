/**
 * memory-patches.ts's roundUp: the memory size and the pooled store's size rounded up without a
 * division (V8 deoptimized the batch at the first division with a remainder); it must answer what
 * Math.ceil(n / multiple) * multiple answers for every size memory can have.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { extendMemory, roundUp, type PatchedMemory } from '../../src/evm/memory-patches.ts'

const ceilTimes = (n: number, multiple: number) => Math.ceil(n / multiple) * multiple

describe('memory-patches: roundUp', () => {
  it('answers Math.ceil(n / multiple) * multiple for 0 to 1,000 and around powers of two, by 32 and by 8,192', () => {
    const sizes = Array.from({ length: 1001 }, (_, i) => i)
    for (let p = 5; p <= 52; p++) sizes.push(2 ** p - 1, 2 ** p, 2 ** p + 1, 2 ** p + 31)
    for (const multiple of [32, 8192]) for (const n of sizes) if (n + multiple < 2 ** 53) expect(roundUp(n, multiple), `${n} by ${multiple}`).toBe(ceilTimes(n, multiple))
  })

  it('answers Math.ceil(n / multiple) * multiple for any integer below 2^52', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 52 }), fc.constantFrom(32, 8192), (n, multiple) => roundUp(n, multiple) === ceilTimes(n, multiple)))
  })

  it('extendMemory grows the store to whole words and whole chunks for unaligned ends', () => {
    const memory = { _store: new Uint8Array(0) } as PatchedMemory
    extendMemory.call(memory, 1, 32) // ends at 33: two words, one chunk
    expect(memory._store.length).toBe(8192)
    extendMemory.call(memory, 8161, 32) // ends at 8,193: past the first chunk
    expect(memory._store.length).toBe(16384)
    extendMemory.call(memory, 16352, 32) // ends at 16,384 exactly: no growth
    expect(memory._store.length).toBe(16384)
  })
})
