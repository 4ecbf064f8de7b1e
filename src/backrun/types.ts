/** The backrun domain's public face: what eth_backrun asks and what it gets back (bigint inside). */
import type { Address, Hex } from '../chain/types.ts'

/** The partner's user transaction (spec 2.6), validated. */
export interface BackrunRequest {
  /** the contract the user's transaction calls */
  to: Address
  calldata: Hex
  /** ETH sent with the call, wei */
  value: bigint
  /** the swap's input token; the zero address or 0xeee...e means native ETH (covered by `value`) */
  tokenIn: Address
  amountIn: bigint
}

export interface BackrunFound {
  /** a complete call on `contract`: `contract.call(calldata)` after the user's swap */
  calldata: Hex
  contract: Address
  /** gas of the backrun portion: the backrun executed as its own call right after the user's, less the 21,000 a transaction pays once */
  gas: bigint
  profitToken: Address
  /** the EVM's gross profit, profitToken base units (before any refund to the user) */
  grossProfit: bigint
  /** grossProfit in wei (through the pools when profitToken is not WETH) minus gas x (next base fee + priority fee) */
  netProfitWei: bigint
  /** netProfitWei in USD from the ETH/USD feed, as a fixed-point integer of USD_DECIMALS decimals (truncated toward zero) */
  netProfitUsd: bigint
  /** the cycle, for logs and the partner's curiosity */
  hops: Array<{ protocol: 'uniswap-v2' | 'uniswap-v3'; pool: Address; tokenIn: Address; tokenOut: Address; fee: number }>
  amountIn: bigint
  blockNumber: bigint
}

/** Decimals of BackrunFound.netProfitUsd. */
export const USD_DECIMALS = 6

export interface BackrunService {
  /** null: the user's call reverts, or no backrun nets more than the configured minimum */
  backrun(request: BackrunRequest): Promise<BackrunFound | null>
}
