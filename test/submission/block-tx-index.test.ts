import { describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import { BlockTxIndex } from '../../src/submission/block-tx-index.ts'

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
})
