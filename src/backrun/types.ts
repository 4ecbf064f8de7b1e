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
  /** the cycle, for logs and the partner's curiosity; a V4 hop's pool is its PoolId, beside its PoolManager and tick spacing */
  hops: BackrunHop[]
  amountIn: bigint
  blockNumber: bigint
}

/** One hop of a found backrun's cycle. */
export interface BackrunHop {
  protocol: 'uniswap-v2' | 'uniswap-v3' | 'uniswap-v4'
  /** the pair or pool; for a V4 pool its PoolId (32 bytes) */
  pool: Address
  tokenIn: Address
  tokenOut: Address
  /** hundredths of a bip */
  fee: number
  /** V4 hops only: the PoolManager holding the pool and the key's tick spacing */
  v4?: { poolManager: Address; tickSpacing: number }
}

/** Decimals of BackrunFound.netProfitUsd. */
export const USD_DECIMALS = 6

export interface BackrunService {
  /** null: the user's call reverts, or no backrun nets more than the configured minimum */
  backrun(request: BackrunRequest): Promise<BackrunFound | null>
}
