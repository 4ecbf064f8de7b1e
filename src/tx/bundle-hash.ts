/**
 * The bundle hash returned by `eth_sendBundle` (spec 4.2): keccak256 of the bundle's 32-byte
 * transaction hashes concatenated in bundle order, as mev-geth / the Flashbots builder compute it.
 * A single-transaction bundle hashes to keccak256(txHash), not to txHash itself.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'

import type { Hex } from '../chain/types.ts'

const TX_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * @throws RangeError for an empty list (a bundle has at least one transaction)
 * @throws TypeError when an entry is not a 0x-prefixed 32-byte hex string
 */
export function bundleHash(txHashes: readonly Hex[]): Hex {
  if (txHashes.length === 0) throw new RangeError('bundleHash: a bundle must contain at least one transaction hash')
  const joined = new Uint8Array(32 * txHashes.length)
  txHashes.forEach((hash, i) => {
    if (typeof hash !== 'string' || !TX_HASH.test(hash)) {
      throw new TypeError(`bundleHash: entry ${i} is not a 32-byte 0x-prefixed hex hash: ${JSON.stringify(hash)}`)
    }
    joined.set(Buffer.from(hash.slice(2), 'hex'), 32 * i)
  })
  return `0x${Buffer.from(keccak_256(joined)).toString('hex')}`
}
