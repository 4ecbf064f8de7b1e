/**
 * src/tx/decode/minimum-gas.ts answers what ethereumjs' tx.getMinimumGasLimit() answers: on every
 * fixture and on generated transactions of every accepted type (calldata heavy in zeros or not,
 * contract creations, access lists, authorizations), at every hardfork ethereumjs knows from Berlin
 * on, the ones whose rules it leaves to ethereumjs (Amsterdam) included.
 */
import { readFileSync } from 'node:fs'

import { Hardfork } from '@ethereumjs/common'
import { type TypedTransaction, createTx, createTxFromRLP } from '@ethereumjs/tx'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { decodeSignedTransaction } from '../../../src/tx/decode-transaction.ts'
import { resolveCommon } from '../../../src/tx/decode/common.ts'
import { envelope } from '../../../src/tx/decode/envelope.ts'
import { decodeFields } from '../../../src/tx/decode/fields.ts'
import { minimumGasLimit, modelsMinimumGas } from '../../../src/tx/decode/minimum-gas.ts'

const fixtures = JSON.parse(readFileSync('fixtures/txs/transactions.json', 'utf8')) as { chainId: number; transactions: Array<{ raw: string }> }
const chainId = BigInt(fixtures.chainId)
const HARDFORKS = [Hardfork.Berlin, Hardfork.London, Hardfork.Paris, Hardfork.Shanghai, Hardfork.Cancun, Hardfork.Prague, Hardfork.Osaka, Hardfork.Bpo1, Hardfork.Bpo2, Hardfork.Amsterdam]
const KEY = new Uint8Array(32).fill(7)

/** ours and ethereumjs' minimum gas for `bytes` decoded at `hardfork` */
function both(bytes: Uint8Array, hardfork: string): { ours: bigint; ethereumjs: bigint } {
  const common = resolveCommon({ chainId, hardfork })
  const tx = createTxFromRLP(bytes, { common })
  const { type, payload } = envelope(bytes, common)
  return { ours: minimumGasLimit(decodeFields(type, payload), tx), ethereumjs: tx.getMinimumGasLimit() }
}

const hexBytes = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}` as const

describe('minimumGasLimit', () => {
  it('models every hardfork up to Osaka and leaves Amsterdam (EIP-2780, 7976, 7981, 8037) to ethereumjs', () => {
    for (const hardfork of [Hardfork.Cancun, Hardfork.Prague, Hardfork.Osaka, Hardfork.Bpo2]) expect(modelsMinimumGas(resolveCommon({ chainId, hardfork }))).toBe(true)
    expect(modelsMinimumGas(resolveCommon({ chainId, hardfork: Hardfork.Amsterdam }))).toBe(false)
  })

  it('every fixture, at every hardfork: the same value as ethereumjs', () => {
    let compared = 0
    for (const hardfork of HARDFORKS) {
      for (const f of fixtures.transactions) {
        const bytes = Buffer.from(f.raw.slice(2), 'hex')
        let answer: { ours: bigint; ethereumjs: bigint }
        try {
          answer = both(bytes, hardfork)
        } catch {
          continue // a type this hardfork does not have
        }
        expect(answer.ours, `${hardfork} ${f.raw.slice(0, 20)}`).toBe(answer.ethereumjs)
        compared++
      }
    }
    expect(compared).toBeGreaterThan(fixtures.transactions.length * 5)
  })

  it('generated transactions of every type, creations, access lists and authorizations: the same value as ethereumjs', () => {
    const data = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })), { maxLength: 600 }).map((a) => Uint8Array.from(a))
    const address = fc.uint8Array({ minLength: 20, maxLength: 20 })
    const accessList = fc.array(fc.tuple(address, fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 3 })), { maxLength: 3 })
    const authorizations = fc.array(fc.tuple(address, fc.nat(5)), { minLength: 1, maxLength: 3 })
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 2, 4), data, fc.boolean(), accessList, authorizations, fc.constantFrom(...HARDFORKS), (type, input, create, list, auths, hardfork) => {
        const common = resolveCommon({ chainId, hardfork })
        if ((type === 4 && !common.isActivatedEIP(7702)) || (type === 2 && !common.isActivatedEIP(1559))) return
        const to = create && type !== 4 ? undefined : hexBytes(new Uint8Array(20).fill(9))
        const txData: Record<string, unknown> = { type, chainId, nonce: 1n, gasLimit: 10_000_000n, gasPrice: type < 2 ? 10n : undefined, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, to, value: 1n, data: hexBytes(input) }
        if (type !== 0) txData.accessList = list.map(([a, keys]) => ({ address: hexBytes(a), storageKeys: keys.map(hexBytes) }))
        if (type === 4) txData.authorizationList = auths.map(([a, nonce]) => ({ chainId: '0x1', address: hexBytes(a), nonce: `0x${nonce.toString(16)}`, yParity: '0x1', r: '0x01', s: '0x01' }))
        if (type < 2) {
          delete txData.maxFeePerGas
          delete txData.maxPriorityFeePerGas
        }
        const signed = (createTx(txData as never, { common, allowUnlimitedInitCodeSize: true }) as TypedTransaction).sign(KEY)
        const answer = both(signed.serialize(), hardfork)
        expect(answer.ours).toBe(answer.ethereumjs)
      }),
      { numRuns: 300 },
    )
  })

  it('a gas limit one below the minimum is refused by the decode, the minimum itself accepted', () => {
    const common = resolveCommon({ chainId })
    const data = hexBytes(Uint8Array.from({ length: 400 }, (_, i) => (i % 3 === 0 ? 0 : i % 256)))
    const base = { type: 2, chainId, nonce: 0n, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, to: hexBytes(new Uint8Array(20).fill(1)), data }
    const minimum = createTx({ ...base, gasLimit: 1_000_000n } as never, { common }).getMinimumGasLimit()
    const at = (gasLimit: bigint) => (createTx({ ...base, gasLimit } as never, { common }) as TypedTransaction).sign(KEY).serialize()
    expect(decodeSignedTransaction(at(minimum), { chainId }).gasLimit).toBe(minimum)
    expect(() => decodeSignedTransaction(at(minimum - 1n), { chainId })).toThrow(/below the .* gas this transaction needs/)
  })
})
