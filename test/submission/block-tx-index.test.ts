import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import { describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import { BlockTxIndex } from '../../src/submission/block-tx-index.ts'

setFlagsFromString('--expose_gc')
const gc = runInNewContext('gc') as () => void

const h = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`

/** a chain whose block n holds the hashes given, with reads counted and scripted failures */
function chain(blocks: Record<number, Hex[]>) {
  const reads: bigint[] = []
  const failing = new Set<bigint>()
  const read = async (n: bigint): Promise<readonly Hex[] | null> => {
    reads.push(n)
    if (failing.has(n)) throw new Error('unavailable')
    return blocks[Number(n)] ?? null
  }
  return { reads, failing, read, blocks }
}

describe('BlockTxIndex', () => {
  it('reads the window newest first once, then only each new head', async () => {
    const c = chain({ 8: [h(1)], 9: [], 10: [h(2), h(3)], 11: [h(4)] })
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 3 })
    await index.advance(10n)
    expect(c.reads).toEqual([10n, 9n, 8n])
    expect(index.blockOf(h(1))).toBe(8n)
    expect(index.blockOf(h(3))).toBe(10n)
    expect(index.covers(8n, 10n)).toBe(true)
    await index.advance(11n)
    expect(c.reads).toEqual([10n, 9n, 8n, 11n])
    // block 8 left the window, with its hashes
    expect(index.blockOf(h(1))).toBeUndefined()
    expect(index.covers(8n, 11n)).toBe(false)
    expect(index.covers(9n, 11n)).toBe(true)
    expect(index.size()).toEqual({ blocks: 3, hashes: 3 })
  })

  it('a failed or unknown block is a gap, read again at the next head', async () => {
    const c = chain({ 9: [h(1)], 10: [h(2)] })
    c.failing.add(9n)
    const errors: bigint[] = []
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 2, onError: (n) => errors.push(n) })
    await index.advance(10n)
    expect(errors).toEqual([9n])
    expect(index.covers(9n, 10n)).toBe(false)
    expect(index.covers(10n, 10n)).toBe(true)
    c.failing.clear()
    c.blocks[11] = []
    await index.advance(11n)
    // 9 left the window; 10 is kept, 11 read
    expect(c.reads).toEqual([10n, 9n, 11n])
    expect(index.covers(10n, 11n)).toBe(true)
    // a head the node does not have yet (null) is a gap too
    await index.advance(12n)
    expect(index.covers(11n, 12n)).toBe(false)
  })

  it('the head is read again when announced again: a same-height reorg replaces its hashes', async () => {
    const c = chain({ 10: [h(1)] })
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 1 })
    await index.advance(10n)
    expect(index.blockOf(h(1))).toBe(10n)
    c.blocks[10] = [h(2)]
    await index.advance(10n)
    expect(index.blockOf(h(1))).toBeUndefined()
    expect(index.blockOf(h(2))).toBe(10n)
  })

  it('reads at most maxReadsPerHead blocks per head (default 4); heads are indexed one after another', async () => {
    const d = chain({})
    await new BlockTxIndex({ read: d.read, windowBlocks: 10 }).advance(20n)
    expect(d.reads).toEqual([20n, 19n, 18n, 17n])

    const c = chain({ 1: [], 2: [], 3: [], 4: [], 5: [] })
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 5, maxReadsPerHead: 2 })
    const a = index.advance(5n)
    const b = index.advance(5n)
    await Promise.all([a, b])
    expect(c.reads).toEqual([5n, 4n, 5n, 3n])
    expect(index.covers(1n, 5n)).toBe(false)
    expect(index.covers(3n, 5n)).toBe(true)
  })

  it('a head that comes with its hashes is indexed without a read', async () => {
    const c = chain({ 9: [h(1)] })
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 2 })
    await index.advance(10n, [h(2)])
    expect(c.reads).toEqual([9n])
    expect(index.blockOf(h(2))).toBe(10n)
    expect(index.covers(9n, 10n)).toBe(true)
    // announced again with other hashes (a same-height reorg): replaced
    await index.advance(10n, [h(3)])
    expect(index.blockOf(h(2))).toBeUndefined()
    expect(index.blockOf(h(3))).toBe(10n)
  })

  it('never stays broken: a reader that throws synchronously is a gap, later heads are indexed', async () => {
    let calls = 0
    const errors: bigint[] = []
    const index = new BlockTxIndex({
      read: (n) => {
        calls++
        if (n === 5n) throw new Error('synchronous failure')
        return Promise.resolve([h(Number(n))])
      },
      windowBlocks: 1,
      onError: (n) => errors.push(n),
    })
    await index.advance(5n)
    await index.advance(6n)
    expect(errors).toEqual([5n])
    expect(index.blockOf(h(6))).toBe(6n)
    expect(calls).toBe(2)
  })

  it('ranges wider than the window are never covered; a bad window is refused', () => {
    const index = new BlockTxIndex({ read: async () => [], windowBlocks: 2 })
    expect(index.covers(1n, 3n)).toBe(false)
    expect(() => new BlockTxIndex({ read: async () => [], windowBlocks: 0 })).toThrow(RangeError)
    expect(() => new BlockTxIndex({ read: async () => [], windowBlocks: 2, maxReadsPerHead: 0 })).toThrow(RangeError)
  })

  it('dropAbove forgets the replaced blocks: they are gaps, read again as the new (shorter) chain is indexed', async () => {
    const c = chain({ 8: [h(1)], 9: [h(2)], 10: [h(3)] })
    const index = new BlockTxIndex({ read: c.read, windowBlocks: 4 })
    await index.advance(10n)
    expect(index.blockOf(h(3))).toBe(10n)
    // 9 and 10 replaced; the new chain's 9 holds h(3), and its head is 9
    await index.dropAbove(8n)
    expect(index.blockOf(h(2))).toBeUndefined()
    expect(index.blockOf(h(3))).toBeUndefined()
    expect(index.blockOf(h(1))).toBe(8n)
    expect(index.covers(8n, 9n)).toBe(false)
    c.blocks[9] = [h(3)]
    delete c.blocks[10]
    c.reads.length = 0
    await index.advance(9n)
    expect(c.reads).toEqual([9n, 7n, 6n])
    expect(index.blockOf(h(3))).toBe(9n)
    expect(index.covers(8n, 9n)).toBe(true)
    expect(index.size().blocks).toBe(2)
  })

  it('a block whose hashes do not fit in the free slots is a gap (reported), and the slots come back as blocks leave', async () => {
    const errors: Array<{ block: bigint; message: string }> = []
    const index = new BlockTxIndex({ read: async () => null, windowBlocks: 3, maxHashes: 5, onError: (block, err) => errors.push({ block, message: String(err) }) })
    await index.advance(1n, [h(1), h(2)])
    await index.advance(2n, [h(3), h(4)])
    // two free slots left: block 3's three hashes do not fit
    await index.advance(3n, [h(5), h(6), h(7)])
    expect(index.covers(3n, 3n)).toBe(false)
    expect(index.blockOf(h(5))).toBeUndefined()
    expect(errors).toEqual([{ block: 3n, message: expect.stringContaining('more than the 1 free') as unknown as string }])
    expect(index.size()).toEqual({ blocks: 2, hashes: 4 })
    // block 1 leaves the window at head 4: its two slots are free again
    await index.advance(4n, [h(8), h(9), h(10)])
    expect(index.blockOf(h(1))).toBeUndefined()
    expect(index.blockOf(h(9))).toBe(4n)
    expect(index.size()).toEqual({ blocks: 2, hashes: 5 })
    expect(index.covers(4n, 4n)).toBe(true)
  })

  it('reports a block that does not fit once, though it is read again at every later head while a gap', async () => {
    const errors: bigint[] = []
    const reads: bigint[] = []
    const big = [h(20), h(21), h(22), h(23), h(24)]
    // blocks 3 and 6 carry five hashes each, more than the index's four
    const read = async (n: bigint) => {
      reads.push(n)
      return n === 3n || n === 6n ? big.map((x, i) => (n === 6n ? h(30 + i) : x)) : []
    }
    const index = new BlockTxIndex({ read, windowBlocks: 8, maxHashes: 4, onError: (block) => errors.push(block) })
    for (let head = 1n; head <= 7n; head++) await index.advance(head, head === 3n || head === 6n ? undefined : [])
    // block 3 was read at heads 3 to 7 (a gap each time), block 6 at heads 6 and 7
    expect(reads.filter((n) => n === 3n).length).toBe(5)
    expect(reads.filter((n) => n === 6n).length).toBe(2)
    expect(errors).toEqual([3n, 6n])
    expect(index.covers(3n, 3n)).toBe(false)
  })

  it('a hash in two blocks (a reorg it was not told of) stays found while either block is held', async () => {
    const index = new BlockTxIndex({ read: async () => null, windowBlocks: 3 })
    await index.advance(1n, [h(7), h(1)])
    await index.advance(2n, [h(7)])
    expect(index.blockOf(h(7))).toBeDefined()
    await index.advance(4n, [])
    // block 1 left the window; block 2 still holds the hash
    expect(index.blockOf(h(1))).toBeUndefined()
    expect(index.blockOf(h(7))).toBe(2n)
    // a hash of another shape is never found, and a block carrying one is a gap
    expect(index.blockOf('0x1234' as Hex)).toBeUndefined()
    await index.advance(5n, ['0x12' as Hex])
    expect(index.covers(5n, 5n)).toBe(false)
  })

  it('stays exact under collisions, removals, reorgs and the bound (against a Map doing the same)', async () => {
    const windowBlocks = 6
    const maxHashes = 30
    const index = new BlockTxIndex({ read: async () => null, windowBlocks, maxHashes })
    // the model: what the Map-based index held, with the same bound applied
    const model = new Map<bigint, Hex[]>()
    // a fixed pseudo-random sequence (a 32-bit LCG's high bits; the test is the same every run)
    let state = 12_345
    const next = (n: number) => {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
      return Math.floor((state / 2 ** 32) * n)
    }
    // hashes from a small set, so that blocks share them and probes collide often
    const pool = Array.from({ length: 64 }, (_, i) => h(i * 0x10001))
    let newest = 10n
    let gaps = 0
    let reorgs = 0
    const mismatches: string[] = []
    for (let step = 0; step < 2_000; step++) {
      if (next(10) === 0) {
        const floor = newest - BigInt(next(4))
        await index.dropAbove(floor)
        for (const n of [...model.keys()]) if (n > floor) model.delete(n)
        newest = floor
        reorgs++
        continue
      }
      const head = newest + BigInt(next(3))
      const hashes = Array.from({ length: next(12) }, () => pool[next(pool.length)]!)
      await index.advance(head, hashes)
      if (head > newest) newest = head
      for (const n of [...model.keys()]) if (n <= newest - BigInt(windowBlocks) || n === head) model.delete(n)
      const held = [...model.values()].reduce((sum, list) => sum + list.length, 0)
      if (held + hashes.length <= maxHashes) model.set(head, hashes)
      else gaps++
      // checked without expect() per hash (thousands of calls a step would dominate the run)
      for (const hash of pool) {
        const expected = [...model].filter(([, list]) => list.includes(hash)).map(([n]) => n)
        const found = index.blockOf(hash)
        if (expected.length === 0 ? found !== undefined : found === undefined || !expected.includes(found)) mismatches.push(`step ${step}: ${hash} found in ${found}, held by ${expected.join(',')}`)
      }
      for (let n = newest - BigInt(windowBlocks) + 1n; n <= newest; n++) if (index.covers(n, n) !== model.has(n)) mismatches.push(`step ${step}: block ${n} covered ${!model.has(n)}`)
      const size = index.size()
      if (size.blocks !== model.size || size.hashes !== [...model.values()].reduce((sum, list) => sum + list.length, 0)) mismatches.push(`step ${step}: size ${JSON.stringify(size)}`)
    }
    expect(mismatches.slice(0, 5)).toEqual([])
    // every path was taken many times
    expect(gaps).toBeGreaterThan(50)
    expect(reorgs).toBeGreaterThan(100)
  })

  it('holds its memory from the start: a full window (27 blocks of 600 hashes) adds no heap; ~56 bytes a slot in all', async () => {
    // hashes made as the heads bring them (a fresh string each)
    const blocks = Array.from({ length: 27 }, (_, b) => Array.from({ length: 600 }, (_, i) => `0x${(BigInt(b * 600 + i) * 0x9e3779b97f4a7c15n).toString(16).padStart(64, '0').slice(-64)}` as Hex))
    const fill = async (index: BlockTxIndex) => {
      for (let b = 0; b < 27; b++) await index.advance(BigInt(1_000 + b), blocks[b])
    }
    const index = new BlockTxIndex({ read: async () => null, windowBlocks: 27 })
    // once on another index before measuring the fill: the code's compilation and feedback are not the window's
    await fill(new BlockTxIndex({ read: async () => null, windowBlocks: 27 }))
    gc()
    const warm = process.memoryUsage()
    await fill(index)
    gc()
    const full = process.memoryUsage()
    const perSlot = index.bytesAllocated / 16_384
    const growth = full.heapUsed - warm.heapUsed + Math.max(0, full.arrayBuffers - warm.arrayBuffers)
    console.log(`BlockTxIndex: ${perSlot.toFixed(1)} bytes per slot allocated up front, ${growth} bytes more when full`)
    expect(index.size()).toEqual({ blocks: 27, hashes: 16_200 })
    expect(index.blockOf(blocks[26]![599]!)).toBe(1_026n)
    expect(index.covers(1_000n, 1_026n)).toBe(true)
    // the Map it replaces held ~130 bytes a hash, allocated as it filled (~2 MB at this fill)
    expect(perSlot).toBeGreaterThan(50)
    expect(perSlot).toBeLessThan(70)
    expect(growth).toBeLessThan(32 * 1024)
  })
})
