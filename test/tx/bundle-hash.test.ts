import { readFileSync } from 'node:fs'

import { concat, keccak256 } from 'viem'
import { describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import { bundleHash } from '../../src/tx/bundle-hash.ts'
import { decodeSignedTransaction } from '../../src/tx/decode-transaction.ts'

interface BundleVectors {
  documented_example: { txHashes: Hex[]; bundleHash: Hex }
  derived_examples_NOT_upstream: Array<{ note: string; txs: Hex[]; txHashes: Hex[]; bundleHash: Hex }>
}

const vectors = JSON.parse(
  readFileSync(new URL('../../fixtures/corpora/bundle-hash/bundle_hash_vectors.json', import.meta.url), 'utf8'),
) as BundleVectors

describe('bundleHash', () => {
  it('matches the documented Flashbots eth_callBundle example', () => {
    const { txHashes, bundleHash: expected } = vectors.documented_example
    expect(bundleHash(txHashes)).toBe(expected)
  })

  it('has derived examples to check', () => {
    expect(vectors.derived_examples_NOT_upstream.length).toBeGreaterThanOrEqual(3)
  })

  for (const example of vectors.derived_examples_NOT_upstream) {
    it(`derived example from raw txs: ${example.note}`, () => {
      // the raw txs are mainnet ethereum/tests vectors
      const hashes = example.txs.map((raw) => decodeSignedTransaction(raw, { chainId: 1n }).hash)
      expect(hashes).toEqual(example.txHashes)
      expect(bundleHash(hashes)).toBe(example.bundleHash)
    })
  }

  it('a single-transaction bundle is keccak256(txHash), not the tx hash itself', () => {
    const single = vectors.derived_examples_NOT_upstream.find((e) => e.txHashes.length === 1)
    expect(single).toBeDefined()
    const [txHash] = single!.txHashes
    expect(bundleHash([txHash])).toBe(keccak256(txHash))
    expect(bundleHash([txHash])).not.toBe(txHash)
  })

  it('is keccak256 of the concatenation, in bundle order', () => {
    const { txHashes } = vectors.documented_example
    expect(bundleHash(txHashes)).toBe(keccak256(concat(txHashes)))
    expect(bundleHash([...txHashes].reverse())).not.toBe(bundleHash(txHashes))
  })

  it('accepts uppercase hex digits and returns lowercase', () => {
    const { txHashes, bundleHash: expected } = vectors.documented_example
    const upper = txHashes.map((h) => `0x${h.slice(2).toUpperCase()}` as Hex)
    expect(bundleHash(upper)).toBe(expected)
  })

  it('throws for an empty list', () => {
    expect(() => bundleHash([])).toThrow(RangeError)
  })

  it('throws for an entry that is not a 32-byte hash', () => {
    const good = vectors.documented_example.txHashes[0]
    expect(() => bundleHash([good, '0x1234'])).toThrow(TypeError)
    expect(() => bundleHash([good.slice(2) as Hex])).toThrow(TypeError)
    expect(() => bundleHash([`${good}00` as Hex])).toThrow(TypeError)
  })
})
