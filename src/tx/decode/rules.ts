/**
 * Semantic checks on the decoded fields, before the sender is recovered: the chain id, the
 * signature's ranges (EIP-2 low s) and the protocol's field rules (EIP-2681 nonce, tip within the
 * fee cap, no 256-bit overflow, EIP-7702's destination and authorizations).
 */
import { TxDecodeError } from '../errors.ts'
import type { RawFields } from './fields.ts'
import type { DecodeTransactionOptions, TransactionSignature } from './types.ts'

export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
export const SECP256K1_N_HALF = SECP256K1_N / 2n
const MAX_UINT64 = (1n << 64n) - 1n
const MAX_UINT256 = (1n << 256n) - 1n

export function checkChainId(fields: RawFields, options: DecodeTransactionOptions): void {
  if (fields.chainId === undefined) {
    if (options.allowUnprotectedLegacy === false) {
      throw new TxDecodeError(
        'chain_id',
        `transaction is not replay-protected (legacy v = 27/28 carries no chain id); this service only accepts transactions signed for chain id ${options.chainId} (EIP-155)`,
      )
    }
    return
  }
  if (fields.chainId !== options.chainId) {
    throw new TxDecodeError(
      'chain_id',
      `transaction chain id ${fields.chainId} does not match this service's chain id ${options.chainId}`,
    )
  }
}

export function checkSignatureRange(sig: TransactionSignature): void {
  if (sig.r === 0n || sig.s === 0n) {
    throw new TxDecodeError('signature', 'signature is invalid: r and s must be non-zero')
  }
  if (sig.r >= SECP256K1_N) {
    throw new TxDecodeError('signature', 'signature is invalid: r is not below the secp256k1 curve order')
  }
  if (sig.s > SECP256K1_N_HALF) {
    throw new TxDecodeError(
      'signature',
      'signature is invalid: s is greater than secp256k1n/2 (high-s signatures are forbidden since EIP-2); re-sign with a signer that produces low-s signatures',
    )
  }
}

export function checkFieldRules(fields: RawFields): void {
  if (fields.nonce === MAX_UINT64) {
    throw new TxDecodeError('invalid_fields', 'nonce 2^64-1 is not allowed (EIP-2681)')
  }
  if (fields.maxPriorityFeePerGas > fields.maxFeePerGas) {
    throw new TxDecodeError(
      'invalid_fields',
      `maxPriorityFeePerGas (${fields.maxPriorityFeePerGas}) is greater than maxFeePerGas (${fields.maxFeePerGas}); the tip cannot exceed the fee cap`,
    )
  }
  if (fields.gasLimit * fields.maxFeePerGas > MAX_UINT256) {
    throw new TxDecodeError('invalid_fields', 'gasLimit * fee cap overflows 256 bits')
  }
  if (fields.type === 4) {
    if (fields.to === null) {
      throw new TxDecodeError('invalid_fields', "EIP-7702 transactions cannot create contracts; 'to' is required")
    }
    if (fields.authorizationList.length === 0) {
      throw new TxDecodeError('invalid_fields', 'EIP-7702 transaction has an empty authorization list')
    }
  }
}
