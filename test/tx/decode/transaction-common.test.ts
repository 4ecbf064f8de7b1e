/**
 * The shared transaction Common (src/tx/decode/transaction-common.ts) changes how the ethereumjs
 * object is built, never what a decode answers: every fixture, and every one-byte corruption of
 * them, decodes to what ethereumjs' own path (a fresh Common copy per transaction, noble's keccak)
 * says, and is refused whenever that path refuses it.
 */
import { readFileSync } from 'node:fs'

import { createTxFromRLP } from '@ethereumjs/tx'
import { keccak_256 } from '@noble/hashes/sha3.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { decodeSignedTransaction } from '../../../src/tx/decode-transaction.ts'
import { resolveCommon } from '../../../src/tx/decode/common.ts'
import { TxDecodeError } from '../../../src/tx/errors.ts'

interface Fixture {
  name: string
  raw: string
  hash: string
  from: string
}

const fixtures = JSON.parse(readFileSync('fixtures/txs/transactions.json', 'utf8')) as { chainId: number; transactions: Fixture[] }
const chainId = BigInt(fixtures.chainId)
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`

/** ethereumjs' own answer for `bytes`: built with a plain copy of the chain's Common, as ethereumjs does by itself */
function reference(bytes: Uint8Array): { hash: string; sender: string; minimumGas: bigint; intrinsicGas: bigint; upfront: bigint; json: unknown } {
  const tx = createTxFromRLP(bytes, { common: resolveCommon({ chainId }) })
  if (hex(tx.serialize()) !== hex(bytes)) throw new Error('not canonical')
  const minimumGas = tx.getMinimumGasLimit()
  if (tx.gasLimit < minimumGas) throw new Error('gas limit below the minimum')
  return {
    hash: hex(keccak_256(bytes)),
    sender: tx.getSenderAddress().toString().toLowerCase(),
    minimumGas,
    intrinsicGas: tx.getIntrinsicGas(),
    upfront: tx.getUpfrontCost(),
    json: tx.toJSON(),
  }
}

function ours(bytes: Uint8Array): ReturnType<typeof reference> {
  const d = decodeSignedTransaction(bytes, { chainId })
  return {
    hash: d.hash,
    sender: d.sender,
    minimumGas: d.tx.getMinimumGasLimit(),
    intrinsicGas: d.tx.getIntrinsicGas(),
    upfront: d.tx.getUpfrontCost(),
    json: d.tx.toJSON(),
  }
}

describe('decoding with the shared transaction Common', () => {
  it('every fixture decodes as ethereumjs decodes it on its own (hash, sender, gas, fields), legacy, 2930 and 1559 alike', () => {
    const types = new Set<number>()
    for (const f of fixtures.transactions) {
      const bytes = Buffer.from(f.raw.slice(2), 'hex')
      const got = ours(bytes)
      expect(got, f.name).toEqual(reference(bytes))
      expect(got.hash).toBe(f.hash)
      expect(got.sender).toBe(f.from.toLowerCase())
      types.add(decodeSignedTransaction(bytes, { chainId }).type)
    }
    expect([...types].sort()).toEqual([0, 1, 2])
  })

  it('a one-byte corruption of a fixture is accepted exactly when ethereumjs accepts it, with the same answers', () => {
    let accepted = 0
    let refused = 0
    fc.assert(
      fc.property(fc.nat(fixtures.transactions.length - 1), fc.nat(), fc.integer({ min: 1, max: 255 }), (which, at, xor) => {
        const bytes = Buffer.from(fixtures.transactions[which].raw.slice(2), 'hex')
        bytes[at % bytes.length] ^= xor
        let expected: ReturnType<typeof reference> | undefined
        try {
          expected = reference(bytes)
        } catch {
          expected = undefined
        }
        if (expected === undefined) {
          refused++
          expect(() => ours(bytes)).toThrow(TxDecodeError)
        } else {
          let got: ReturnType<typeof reference> | TxDecodeError
          try {
            got = ours(bytes)
          } catch (error) {
            // our own rules are stricter than ethereumjs' in places (EIP-2 low s is checked by both;
            // e.g. a non-canonical integer ethereumjs re-encodes differently is caught by both)
            if (!(error instanceof TxDecodeError)) throw error
            got = error
          }
          if (got instanceof TxDecodeError) {
            refused++
            return
          }
          accepted++
          expect(got).toEqual(expected)
        }
      }),
      { numRuns: 600, seed: 9 },
    )
    // the property saw both sides: corruptions of the data or value still carry a recoverable signature
    expect(accepted).toBeGreaterThan(20)
    expect(refused).toBeGreaterThan(20)
  })

  it('a transaction for another chain is refused with the chain id reason, before any Common is involved', () => {
    const typed = fixtures.transactions.find((f) => !f.raw.startsWith('0xf'))!
    try {
      decodeSignedTransaction(typed.raw, { chainId: chainId + 1n })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(TxDecodeError)
      expect((error as TxDecodeError).reason).toBe('chain_id')
    }
  })
})
