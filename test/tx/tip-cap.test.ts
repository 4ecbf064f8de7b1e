/**
 * transactionTipCap reads the tip cap from the RLP fields alone, for every type the service takes
 * (legacy and EIP-2930: gasPrice; EIP-1559 and EIP-7702: maxPriorityFeePerGas), the same value the
 * full decode gives; what does not parse gives undefined, never a throw.
 */
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'

import { decodeSignedTransaction, transactionTipCap } from '../../src/tx/index.ts'

const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const to = '0x000000000000000000000000000000000000dEaD'
const decode = (raw: string) => decodeSignedTransaction(raw, { chainId: 1n, hardfork: 'prague' })

describe('transactionTipCap', () => {
  it('legacy (EIP-155): gasPrice', async () => {
    const raw = await account.signTransaction({ type: 'legacy', chainId: 1, nonce: 3, to, gas: 21_000n, gasPrice: 7_000_000_001n })
    expect(transactionTipCap(raw)).toBe(7_000_000_001n)
    expect(transactionTipCap(raw)).toBe(decode(raw).gasTipCap)
  })

  it('EIP-2930: gasPrice', async () => {
    const raw = await account.signTransaction({ type: 'eip2930', chainId: 1, nonce: 0, to, gas: 30_000n, gasPrice: 2n, accessList: [{ address: to, storageKeys: [] }] })
    expect(transactionTipCap(raw)).toBe(2n)
    expect(transactionTipCap(raw)).toBe(decode(raw).gasTipCap)
  })

  it('EIP-1559: maxPriorityFeePerGas, not maxFeePerGas; a zero tip is 0', async () => {
    const raw = await account.signTransaction({ type: 'eip1559', chainId: 1, nonce: 9, to, gas: 21_000n, maxFeePerGas: 90_000_000_000n, maxPriorityFeePerGas: 1_500_000_000n })
    expect(transactionTipCap(raw)).toBe(1_500_000_000n)
    expect(transactionTipCap(raw)).toBe(decode(raw).gasTipCap)
    const zero = await account.signTransaction({ type: 'eip1559', chainId: 1, nonce: 9, to, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n })
    expect(transactionTipCap(zero)).toBe(0n)
  })

  it('EIP-7702: maxPriorityFeePerGas', async () => {
    const authorization = await account.signAuthorization({ chainId: 1, nonce: 1, contractAddress: to })
    const raw = await account.signTransaction({ type: 'eip7702', chainId: 1, nonce: 0, to, gas: 60_000n, maxFeePerGas: 10n, maxPriorityFeePerGas: 4n, authorizationList: [authorization] })
    expect(transactionTipCap(raw)).toBe(4n)
    expect(transactionTipCap(raw)).toBe(decode(raw).gasTipCap)
  })

  it('what does not parse: undefined', async () => {
    const raw = await account.signTransaction({ type: 'eip1559', chainId: 1, nonce: 9, to, gas: 21_000n, maxFeePerGas: 9n, maxPriorityFeePerGas: 1n })
    for (const bad of ['', '0x', '0x0', 'zz', `${raw.slice(0, 20)}`, `0x02${'zz'.repeat(10)}`, '0x80', '0x05c0', '0x02c0', '0xc0', raw.replace(/^0x02/, '0x7f')]) {
      expect(transactionTipCap(bad), bad).toBeUndefined()
    }
  })
})
