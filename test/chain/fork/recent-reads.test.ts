import { describe, expect, it } from 'vitest'
import { RecentReads } from '../../../src/chain/fork/recent-reads.ts'
import type { Address } from '../../../src/chain/types.ts'

const addr = (i: number): Address => `0x${i.toString(16).padStart(40, '0')}`

describe('RecentReads', () => {
  it('keeps at most maxKeys, dropping the least recently read', () => {
    const recent = new RecentReads({ maxKeys: 3 })
    recent.storage(addr(1), 0n, 10n)
    recent.account(addr(2), 10n)
    recent.storage(addr(3), 7n, 10n)
    recent.storage(addr(1), 0n, 10n) // read again: now the most recent
    recent.account(addr(4), 10n) // evicts addr(2)
    expect(recent.size).toBe(3)
    expect(recent.select(10n)).toEqual({
      accounts: [addr(4)],
      storage: [
        { address: addr(3), slot: 7n },
        { address: addr(1), slot: 0n },
      ],
    })
  })

  it('does not re-fetch keys last read more than maxAgeBlocks before the head', () => {
    const recent = new RecentReads({ maxAgeBlocks: 2 })
    recent.account(addr(1), 5n)
    recent.account(addr(2), 8n)
    recent.storage(addr(2), 1n, 10n)
    expect(recent.select(10n)).toEqual({ accounts: [addr(2)], storage: [{ address: addr(2), slot: 1n }] })
    expect(recent.size).toBe(2)
  })
})
