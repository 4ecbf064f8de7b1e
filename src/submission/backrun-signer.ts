/**
 * The searcher account's signing port, as the planner and the searcher key pool both see it. Its
 * own file so the pool (below the planner) does not import the planner for it.
 */
import type { Address, Hex } from '../chain/types.ts'

/** What the planner asks the signer to sign: an EIP-1559 call with value 0 and an empty access list. */
export interface BackrunTransactionRequest {
  chainId: bigint
  nonce: bigint
  to: Address
  data: Hex
  gasLimit: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
}

/** The searcher account that signs backrun transactions. */
export interface BackrunTransactionSigner {
  /** the searcher address (any case) */
  readonly address: Address
  /** @returns the raw signed EIP-1559 transaction, 0x-hex */
  signTransaction(request: BackrunTransactionRequest): Promise<Hex>
}
