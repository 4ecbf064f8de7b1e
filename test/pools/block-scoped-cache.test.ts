import { describe, expect, it } from 'vitest'

import { BlockScopedCache } from '../../src/pools/block-scoped-cache.ts'

describe('BlockScopedCache', () => {
  it('keeps only the newest blocks: an old block goes as a whole when a new one arrives', () => {
    const cache = new BlockScopedCache<number>({ blocks: 2 })
    cache.set('1', 'a', 1)
    cache.set('1', 'b', 2)
    cache.set('2', 'a', 3)
    expect(cache.size).toBe(3)
    cache.set('3', 'a', 4)
    expect(cache.get('1', 'a')).toBeUndefined()
    expect(cache.get('1', 'b')).toBeUndefined()
    expect(cache.get('2', 'a')).toBe(3)
    expect(cache.get('3', 'a')).toBe(4)
    expect(cache.size).toBe(2)
  })

  it('bounds the entries of one block, least recently set first out', () => {
    const cache = new BlockScopedCache<number>({ blocks: 1, maxPerBlock: 2 })
    cache.set('1', 'a', 1)
    cache.set('1', 'b', 2)
    cache.set('1', 'a', 3)
    cache.set('1', 'c', 4)
    expect(cache.get('1', 'b')).toBeUndefined()
    expect([cache.get('1', 'a'), cache.get('1', 'c')]).toEqual([3, 4])
    cache.delete('1', 'a')
    expect(cache.size).toBe(1)
  })

  it('holds a flat amount under a steady flow of blocks', () => {
    const cache = new BlockScopedCache<string>({ blocks: 4, maxPerBlock: 100 })
    for (let block = 0; block < 1_000; block++) for (let k = 0; k < 50; k++) cache.set(String(block), String(k), 'x')
    expect(cache.size).toBe(4 * 50)
  })

  it('refuses bad bounds', () => {
    expect(() => new BlockScopedCache({ blocks: 0 })).toThrow(RangeError)
    expect(() => new BlockScopedCache({ maxPerBlock: 0 })).toThrow(RangeError)
  })
})
