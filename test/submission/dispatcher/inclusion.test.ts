import { describe, expect, it } from 'vitest'

import type { HeadInfo } from '../../../src/submission/dispatcher-ports.ts'
import { expiredAt, includedEvent, targetingFor } from '../../../src/submission/dispatcher/inclusion.ts'
import type { BundleRelay } from '../../../src/submission/relay-client.ts'
import type { BundleOptions, SubmissionRecord } from '../../../src/submission/types.ts'

const HASH = `0x${'ab'.repeat(32)}` as const

function record(bundleOptions?: BundleOptions): SubmissionRecord {
  return { id: `bundle:${HASH}`, kind: 'bundle', hash: HASH, partnerId: 'p', receivedAt: 0, rawTxs: [], txHashes: [HASH], ...(bundleOptions ? { bundleOptions } : {}) }
}

const head = (number: bigint, timestamp = 1_000n): HeadInfo => ({ number, timestamp })
const relays = [{ name: 'a' }, { name: 'b' }] as BundleRelay[]

describe('targetingFor', () => {
  it('targets the next block through expiryBlocks blocks', () => {
    expect(targetingFor(record(), head(100n), relays, 25n, 7)).toEqual({ type: 'targeting', at: 7, firstBlock: 101n, lastBlock: 125n, relays: ['a', 'b'] })
  })

  it("targets only the partner's blockNumber when it is fixed", () => {
    expect(targetingFor(record({ blockNumber: 150n }), head(100n), relays, 25n, 7)).toMatchObject({ firstBlock: 150n, lastBlock: 150n })
  })
})

describe('expiredAt', () => {
  const targeting = targetingFor(record(), head(100n), relays, 25n, 0)

  it('is undefined before targeting and while the next block is within the last', () => {
    expect(expiredAt(record(), head(100n), undefined, 25n)).toBeUndefined()
    expect(expiredAt(record(), head(124n), targeting, 25n)).toBeUndefined()
  })

  it('says why once the next block is past the last', () => {
    expect(expiredAt(record(), head(125n), targeting, 25n)).toBe('not included by block 125 (25 blocks)')
    const fixed = targetingFor(record({ blockNumber: 150n }), head(100n), relays, 25n, 0)
    expect(expiredAt(record({ blockNumber: 150n }), head(150n), fixed, 25n)).toBe("the bundle's blockNumber 150 has passed without inclusion")
  })

  it('expires at the head whose timestamp reaches maxTimestamp', () => {
    const r = record({ maxTimestamp: 2_000n })
    expect(expiredAt(r, head(101n, 1_999n), targeting, 25n)).toBeUndefined()
    expect(expiredAt(r, head(101n, 2_000n), targeting, 25n)).toBe('maxTimestamp 2000 has passed without inclusion')
  })
})

describe('includedEvent', () => {
  it('carries the backrun only when it was included', () => {
    expect(includedEvent({ status: 'included', blockNumber: 5n, backrunIncluded: false, backrunTxHash: HASH, backrunGrossProfit: 3n }, 9)).toEqual({
      type: 'included',
      at: 9,
      block: 5n,
      backrunIncluded: false,
    })
    expect(includedEvent({ status: 'included', blockNumber: 5n, backrunIncluded: true, backrunTxHash: HASH, backrunGrossProfit: 3n }, 9)).toEqual({
      type: 'included',
      at: 9,
      block: 5n,
      backrunIncluded: true,
      backrunTxHash: HASH,
      backrunGrossProfit: 3n,
    })
  })
})
