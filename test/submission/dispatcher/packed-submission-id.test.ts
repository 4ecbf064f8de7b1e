import { describe, expect, it } from 'vitest'
import { packSubmissionId, unpackSubmissionId } from '../../../src/submission/dispatcher/packed-submission-id.ts'
import type { SubmissionId } from '../../../src/submission/types.ts'

const HASH = `0x${'0123456789abcdef'.repeat(4)}` as const

describe('packed submission ids', () => {
  it('keep each kind and its 32-byte hash in 33 characters, and give the same id back', () => {
    for (const kind of ['private-tx', 'bundle', 'notify'] as const) {
      const id: SubmissionId = `${kind}:${HASH}`
      const packed = packSubmissionId(id)
      expect(packed).toHaveLength(33)
      expect(unpackSubmissionId(packed)).toBe(id)
    }
    // every byte value survives (latin1 is one character per byte)
    const all = `0x${Array.from({ length: 32 }, (_, i) => (i * 8 + 7).toString(16).padStart(2, '0')).join('')}` as const
    expect(unpackSubmissionId(packSubmissionId(`bundle:${all}`))).toBe(`bundle:${all}`)
  })

  it('keep an id of another shape as it is', () => {
    for (const id of [`private-tx:0x${'ab'.repeat(20)}`, `bundle:${HASH.toUpperCase().replace('0X', '0x')}`, `other:${HASH}`] as SubmissionId[]) {
      expect(packSubmissionId(id)).toBe(id)
      expect(unpackSubmissionId(packSubmissionId(id))).toBe(id)
    }
  })
})
