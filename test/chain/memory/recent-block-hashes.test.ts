import { describe, expect, it } from 'vitest'
import { RecentBlockHashes } from '../../../src/chain/memory/recent-block-hashes.ts'
import type { Hex } from '../../../src/chain/types.ts'

const hashOf = (n: bigint): Hex => `0x${(n + 0xabcn).toString(16).padStart(64, '0')}`

describe('RecentBlockHashes', () => {
  it('holds a block and the 256 before it, and every older record keeps its own view', () => {
    const records = [RecentBlockHashes.of({ number: 0n, hash: hashOf(0n) })]
    for (let n = 1n; n <= 400n; n++) records.push(records.at(-1)!.extend({ number: n, hash: hashOf(n) }))
    const newest = records[400]
    expect(newest.size).toBe(257)
    for (let n = 144n; n <= 400n; n++) expect(newest.get(n)).toBe(hashOf(n))
    expect(newest.get(143n)).toBeUndefined()
    expect(newest.get(401n)).toBeUndefined()
    // the record of block 10 is untouched by the 390 blocks after it
    expect(records[10].get(0n)).toBe(hashOf(0n))
    expect(records[10].get(10n)).toBe(hashOf(10n))
    expect(records[10].get(11n)).toBeUndefined()
  })

  it('refuses a block that does not follow', () => {
    expect(() => RecentBlockHashes.of({ number: 5n, hash: hashOf(5n) }).extend({ number: 7n, hash: hashOf(7n) })).toThrow(RangeError)
  })
})
