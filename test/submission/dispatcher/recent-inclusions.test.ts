import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import { describe, expect, it } from 'vitest'

import { RecentInclusions } from '../../../src/submission/dispatcher/recent-inclusions.ts'
import { submissionId, type SubmissionId } from '../../../src/submission/types.ts'

setFlagsFromString('--expose_gc')
const gc = runInNewContext('gc') as () => void

const id = (n: number | bigint): SubmissionId => submissionId('private-tx', `0x${BigInt(n).toString(16).padStart(64, '0')}`)
/** ids whose first 4 hash bytes (the index's key) are the same: every one lands in the same index cell */
const colliding = (n: number): SubmissionId => submissionId('bundle', `0x${'ab'.repeat(4)}${n.toString(16).padStart(56, '0')}`)

describe('RecentInclusions', () => {
  it('hands back the inclusions above the ancestor, once', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 10 })
    recent.add(id(1), 100n)
    recent.add(id(2), 101n)
    recent.add(id(3), 102n)
    expect(recent.takeAbove(100n)).toEqual([
      { id: id(2), block: 101n },
      { id: id(3), block: 102n },
    ])
    expect(recent.takeAbove(100n)).toEqual([])
    expect(recent.size).toBe(1)
  })

  it('is bounded: windowBlocks behind the head, and maxEntries (the oldest go first)', () => {
    const recent = new RecentInclusions({ windowBlocks: 2, maxEntries: 3 })
    for (let i = 0; i < 5; i++) recent.add(id(i), 100n + BigInt(i))
    expect(recent.size).toBe(3)
    expect(recent.takeAbove(-1n).map((e) => e.block)).toEqual([102n, 103n, 104n])
    for (let i = 0; i < 3; i++) recent.add(id(i), 100n + BigInt(i))
    recent.forgetBefore(103n)
    expect(recent.takeAbove(-1n).map((e) => e.block)).toEqual([101n, 102n])
  })

  it('at capacity and past it: each add forgets the oldest entry, the others stay findable', () => {
    // colliding ids: the forgotten ones leave the index without hiding the others
    const recent = new RecentInclusions({ windowBlocks: 1_000, maxEntries: 4 })
    for (let i = 0; i < 4; i++) recent.add(colliding(i), 10n + BigInt(i))
    expect(recent.size).toBe(4)
    for (let i = 4; i < 11; i++) {
      recent.add(colliding(i), 10n + BigInt(i))
      expect(recent.size).toBe(4)
    }
    // adding a held id again moves it, it is not a fifth entry
    recent.add(colliding(8), 30n)
    expect(recent.size).toBe(4)
    // the last four, in the order they were added
    expect(recent.takeAbove(-1n)).toEqual([[7, 17n], [9, 19n], [10, 20n], [8, 30n]].map(([i, block]) => ({ id: colliding(Number(i)), block })))
    expect(recent.size).toBe(0)
  })

  it('an id added again is held once, at its latest block (a re-opened submission included again)', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 3 })
    recent.add(id(1), 100n)
    recent.add(id(2), 100n)
    recent.add(id(1), 105n)
    expect(recent.size).toBe(2)
    // the freed slot does not count: two more fit before the oldest (id 2) is forgotten
    recent.add(id(3), 106n)
    expect(recent.size).toBe(3)
    expect(recent.takeAbove(99n)).toEqual([
      { id: id(2), block: 100n },
      { id: id(1), block: 105n },
      { id: id(3), block: 106n },
    ])
  })

  it('keeps every kind and ids of another shape (held as text, under the same bound)', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 3 })
    const odd = 'notify:0xABC' as SubmissionId
    recent.add(submissionId('notify', `0x${'11'.repeat(32)}`), 1n)
    recent.add(odd, 2n)
    recent.add(odd, 3n)
    expect(recent.size).toBe(2)
    recent.add(id(7), 4n)
    recent.add(id(8), 5n)
    expect(recent.size).toBe(3)
    expect(recent.takeAbove(0n)).toEqual([
      { id: odd, block: 3n },
      { id: id(7), block: 4n },
      { id: id(8), block: 5n },
    ])
  })

  it('its index stays exact under collisions, removals and the bound (against a Map doing the same)', () => {
    const recent = new RecentInclusions({ windowBlocks: 8, maxEntries: 16 })
    const model = new Map<SubmissionId, bigint>()
    // a fixed pseudo-random sequence (xorshift32; no Math.random: the test is the same every run)
    let seed = 2_463_534_242
    const next = (n: number) => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    let head = 100n
    let taken = 0
    let evicted = 0
    for (let step = 0; step < 20_000; step++) {
      const roll = next(20)
      if (roll < 14) {
        // half of them in one index cell
        const key = next(2) === 0 ? colliding(next(20)) : id(next(20))
        const block = head - BigInt(next(4))
        recent.add(key, block)
        model.delete(key)
        model.set(key, block)
        if (model.size > 16) {
          model.delete(model.keys().next().value as SubmissionId)
          evicted++
        }
      } else if (roll < 18) {
        head += 1n
        recent.forgetBefore(head)
        for (const [key, block] of model) if (block < head - 8n) model.delete(key)
      } else {
        const floor = head - BigInt(next(6))
        const expected = [...model].filter(([, block]) => block > floor).map(([key, block]) => ({ id: key, block }))
        for (const { id: key } of expected) model.delete(key)
        expect(recent.takeAbove(floor)).toEqual(expected)
        taken += expected.length
      }
      expect(recent.size).toBe(model.size)
    }
    // every path was taken many times
    expect(taken).toBeGreaterThan(1_000)
    expect(evicted).toBeGreaterThan(100)
    expect(recent.takeAbove(-1n)).toEqual([...model].map(([key, block]) => ({ id: key, block })))
  })

  it('holds its memory from the start: filling 10,000 slots (its default bound) adds no heap; ~70 bytes a slot in all', () => {
    const fill = (recent: RecentInclusions) => {
      // ids made as the dispatcher makes them (a fresh string each), 160 a block as under bench:soak
      for (let i = 0; i < 10_000; i++) recent.add(id(0xabcdef0000n + BigInt(i) * 7919n), 1_000n + BigInt(Math.floor(i / 160)))
    }
    // once on another window before measuring the fill: the code's compilation and feedback are not the window's
    fill(new RecentInclusions({ windowBlocks: 64, maxEntries: 10_000 }))
    // the least growth of three fills, each window kept alive: in the full suite one measurement once read
    // 209,448 bytes (an allocation of the test runner's between the two gc()s, not the window's); memory the
    // window takes per slot as it fills (10,000 slots) would show in every one of the three
    const windows: RecentInclusions[] = []
    let growth = Number.POSITIVE_INFINITY
    for (let round = 0; round < 3; round++) {
      const window = new RecentInclusions({ windowBlocks: 64, maxEntries: 10_000 })
      windows.push(window)
      gc()
      const warm = process.memoryUsage()
      fill(window)
      gc()
      const full = process.memoryUsage()
      // another window's buffers may be released in between: they can only lower arrayBuffers
      growth = Math.min(growth, full.heapUsed - warm.heapUsed + Math.max(0, full.arrayBuffers - warm.arrayBuffers))
    }
    const recent = windows[2]
    const perSlot = recent.bytesAllocated / 10_000
    console.log(`RecentInclusions: ${perSlot.toFixed(1)} bytes per slot allocated up front, ${growth} bytes more when full`)
    expect(recent.size).toBe(10_000)
    // the Map it replaces held ~113 bytes an entry, allocated as it filled
    expect(perSlot).toBeGreaterThan(60)
    expect(perSlot).toBeLessThan(80)
    expect(growth).toBeLessThan(32 * 1024)
    // and every id comes back as it went in
    const back = recent.takeAbove(1_000n + 61n)
    expect(back[0]).toEqual({ id: id(0xabcdef0000n + 9_920n * 7919n), block: 1_062n })
  })

  it('refuses a block number beyond 2^53 - 1 (kept as a number)', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 10 })
    expect(() => recent.add(id(1), 2n ** 53n)).toThrow(RangeError)
    expect(recent.size).toBe(0)
  })

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new RecentInclusions({ windowBlocks: 0, maxEntries: 1 })).toThrow(RangeError)
    expect(() => new RecentInclusions({ windowBlocks: 1, maxEntries: 1.5 })).toThrow(RangeError)
  })
})
