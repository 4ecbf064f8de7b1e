import { describe, expect, it } from 'vitest'

import { privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'

const signer = (n: number) => privateKeyBackrunSigner(`0x${n.toString(16).padStart(64, '0')}`)

describe('SearcherKeyPool: one backrun per key per block', () => {
  it('gives each submission of a block its own key, and none once every key carries one', () => {
    const pool = new SearcherKeyPool([signer(1), signer(2), signer(3)])
    const a = pool.lease(101n, 'a')
    const b = pool.lease(101n, 'b')
    const c = pool.lease(101n, 'c')
    expect(new Set([a?.address, b?.address, c?.address]).size).toBe(3)
    expect(pool.lease(101n, 'd')).toBeUndefined()
    expect(pool.leased(101n)).toBe(3)
    // another block has all its keys
    expect(pool.lease(102n, 'd')).toBeDefined()
  })

  it('the same submission asking again for the same block keeps its key', () => {
    const pool = new SearcherKeyPool([signer(1), signer(2)])
    const first = pool.lease(101n, 'a')
    pool.lease(101n, 'b')
    expect(pool.lease(101n, 'a')).toBe(first)
  })

  it("a key whose backrun was not planned (released) or whose block was built (pruned) is free again: one backrun's absence never blocks another", () => {
    const pool = new SearcherKeyPool([signer(1)])
    expect(pool.lease(101n, 'a')).toBeDefined()
    expect(pool.lease(101n, 'b')).toBeUndefined()
    pool.release(101n, 'a')
    expect(pool.lease(101n, 'b')).toBeDefined()
    // block 101 built, its backrun included or not: the key serves block 102 for anyone,
    // with the nonce the planner reads from the new head
    pool.pruneThrough(101n)
    expect(pool.leased(101n)).toBe(0)
    expect(pool.lease(102n, 'a')).toBeDefined()
  })

  it('refuses an empty pool and the same account twice', () => {
    expect(() => new SearcherKeyPool([])).toThrow(TypeError)
    expect(() => new SearcherKeyPool([signer(1), signer(1)])).toThrow(/distinct/)
  })
})
