import { describe, expect, it } from 'vitest'

import { decodeBlock } from '../../../src/chain/fork/rpc-decode.ts'

const HASH_A = `0x${'Ab'.repeat(32)}`
const HASH_B = `0x${'0c'.repeat(32)}`
const header = {
  number: '0x10',
  hash: `0x${'11'.repeat(32)}`,
  timestamp: '0x6553f100',
  gasLimit: '0x1c9c380',
  gasUsed: '0x5208',
  miner: `0x${'22'.repeat(20)}`,
  mixHash: `0x${'33'.repeat(32)}`,
  baseFeePerGas: '0x3b9aca00',
}

describe('decodeBlock: the transaction hashes of an eth_getBlockByNumber(n, false) answer', () => {
  it('keeps the hashes, lower case, in block order', () => {
    expect(decodeBlock({ ...header, transactions: [HASH_A, HASH_B] }, 'eth_getBlockByNumber', '0x10').transactionHashes).toEqual([HASH_A.toLowerCase(), HASH_B])
    expect(decodeBlock({ ...header, transactions: [] }, 'eth_getBlockByNumber', '0x10').transactionHashes).toEqual([])
  })

  it('leaves them unknown when the answer has bodies, no list, or something else', () => {
    for (const transactions of [undefined, [{ hash: HASH_A }], ['0x12'], 'x']) {
      const block = decodeBlock({ ...header, ...(transactions === undefined ? {} : { transactions }) }, 'eth_getBlockByNumber', '0x10')
      expect(block.transactionHashes).toBeUndefined()
      expect(block.number).toBe(16n)
    }
  })
})
