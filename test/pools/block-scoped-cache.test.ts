import { describe, expect, it } from 'vitest'

import type { Address, BlockStateDiff, StateReader } from '../../src/chain/types.ts'
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

describe('BlockScopedCache.carried: the parent block\'s entry at a head that did not touch its contracts', () => {
  const POOL = '0x00000000000000000000000000000000000000aa' as Address
  const OTHER = '0x00000000000000000000000000000000000000bb' as Address
  const PARENT = `0x${'11'.repeat(32)}` as const
  const head = (diff: BlockStateDiff | undefined, number = 8n): StateReader =>
    ({ block: { number, hash: `0x${'22'.repeat(32)}` }, stateDiff: () => diff }) as unknown as StateReader
  const changed = (over: Partial<Extract<BlockStateDiff, { kind: 'changed' }>> = {}): BlockStateDiff => ({ kind: 'changed', parentHash: PARENT, accounts: [], storage: [], clearedStorage: [], ...over })
  const cache = new BlockScopedCache<string>()
  cache.set(`7:${PARENT}`, 'k', 'parent value')

  it('carries when the block wrote none of them', () => {
    expect(cache.carried(head(changed({ accounts: [OTHER], storage: [[OTHER, [1n]]] })), 'k', [POOL])).toBe('parent value')
  })

  it('not when the block changed one of them: its account, a slot, or all its storage', () => {
    expect(cache.carried(head(changed({ accounts: [POOL] })), 'k', [OTHER, POOL])).toBeUndefined()
    expect(cache.carried(head(changed({ storage: [[POOL, [8n]]] })), 'k', [POOL])).toBeUndefined()
    expect(cache.carried(head(changed({ clearedStorage: [POOL] })), 'k', [POOL])).toBeUndefined()
  })

  it('not without a full diff (a fork head names only keys it re-read), a parent entry, or a parent at all', () => {
    expect(cache.carried(head(undefined), 'k', [POOL])).toBeUndefined()
    expect(cache.carried(head({ kind: 'unchanged', parentHash: PARENT, accounts: [POOL], storage: [] }), 'k', [POOL])).toBeUndefined()
    expect(cache.carried(head(changed()), 'other key', [POOL])).toBeUndefined()
    expect(cache.carried(head(changed({ parentHash: `0x${'33'.repeat(32)}` })), 'k', [POOL])).toBeUndefined()
    expect(cache.carried(head(changed(), 0n), 'k', [POOL])).toBeUndefined()
  })
})
