/**
 * The ethereumjs Common for a chain: which hardfork rules apply. Pinned explicitly, because
 * ethereumjs and anvil default to different forks and gas differs between them.
 */
import type { KZG } from '@ethereumjs/util'
import { Common, Mainnet, createCommonFromGethGenesis, createCustomCommon, type GethGenesis } from '@ethereumjs/common'
import { CUSTOM_CRYPTO } from '../crypto/ecrecover.ts'

export const DEFAULT_HARDFORK = 'prague'

export function commonForChain(chainId: bigint, hardfork: string = DEFAULT_HARDFORK): Common {
  if (chainId === 1n) return new Common({ chain: Mainnet, hardfork, customCrypto: CUSTOM_CRYPTO })
  return createCustomCommon({ chainId: Number(chainId), name: `chain-${chainId}` }, Mainnet, { hardfork, customCrypto: CUSTOM_CRYPTO })
}

/**
 * A Common built from a go-ethereum genesis config, with the hardfork chosen for the given block
 * (fork blocks and fork timestamps both honoured).
 */
export function commonFromGethGenesis(genesis: GethGenesis, block: { number: bigint; timestamp: bigint }): Common {
  const common = createCommonFromGethGenesis(genesis, { chain: 'custom', customCrypto: { ...CUSTOM_CRYPTO, kzg: BLOB_PROOFS_UNSUPPORTED } })
  common.setHardforkBy({ blockNumber: block.number, timestamp: block.timestamp })
  return common
}

/**
 * ethereumjs refuses to even decode a blob (type 3) transaction without a KZG implementation.
 * A canonical blob transaction (as included in a block, without its sidecar) needs none to execute:
 * the blob versioned hashes are plain fields. Any attempt to verify a sidecar fails loudly.
 */
const unsupported = (): never => {
  throw new Error('blob sidecar verification is not supported: this service executes canonical blob transactions only')
}
const BLOB_PROOFS_UNSUPPORTED: KZG = {
  blobToKzgCommitment: unsupported,
  computeBlobProof: unsupported,
  verifyProof: unsupported,
  verifyBlobProofBatch: unsupported,
  computeCells: unsupported,
  computeCellsAndProofs: unsupported,
  recoverCellsAndProofs: unsupported,
  verifyCellKzgProofBatch: unsupported,
}
