/**
 * The quote domain's public face: what the HTTP layer asks and what it gets back. Amounts are
 * bigint here; the server turns them into decimal strings on the wire.
 */
import type { Address, Hex } from '../chain/types.ts'
import { BaseError } from '../primitives/base-error.ts'

export interface QuoteRequest {
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  /** optional: slippage tolerance for minAmountOut, basis points (default 50) */
  slippageBps?: number
  /** optional: who receives tokenOut when the calldata executes (default: the caller, msg.sender) */
  recipient?: Address
  /** optional: the account that will send the transaction; the quote is executed from it (default: a fresh synthetic account) */
  sender?: Address
}

export interface QuoteHop {
  protocol: 'uniswap-v2' | 'uniswap-v3' | 'uniswap-v4'
  /** the pair or pool; a V4 pool's PoolId (32 bytes) */
  pool: Address
  tokenIn: Address
  tokenOut: Address
  /** V3 fee in hundredths of a bip; V2 pairs 3000 */
  fee: number
}

export interface QuoteRoute {
  /** share of amountIn sent down this route */
  amountIn: bigint
  amountOut: bigint
  hops: QuoteHop[]
}

export interface QuoteResult {
  amountOut: bigint
  gas: bigint
  calldata: Hex
  router: Address
  spender: Address
  /** additive fields beyond the spec */
  blockNumber: bigint
  minAmountOut: bigint
  priceImpactBps?: number
  routes: QuoteRoute[]
}

/**
 * NO_ROUTE: no pools join the tokens; AMOUNT_TOO_SMALL: amountIn is dust, the output rounds down
 * to zero on every route (a larger amount is quoted); INSUFFICIENT_LIQUIDITY: the pools on every
 * route are too shallow to take the amount; SAME_TOKEN; NOT_A_TOKEN; SIMULATION_FAILED: the
 * chosen route reverted in the EVM, or an execution was stopped by the execution budget
 * (EVM_MAX_GAS, EVM_MAX_MS; details `budget`: 'gas' | 'time', `limit`).
 */
export type QuoteFailureReason = 'NO_ROUTE' | 'AMOUNT_TOO_SMALL' | 'INSUFFICIENT_LIQUIDITY' | 'SAME_TOKEN' | 'NOT_A_TOKEN' | 'SIMULATION_FAILED'

/** No quote can be produced for a valid request (HTTP 422 QUOTE_ERROR). */
export class QuoteFailedError extends BaseError<Record<string, unknown>> {
  override readonly name = 'QuoteFailedError'
  constructor(
    readonly reason: QuoteFailureReason,
    message: string,
    details: Record<string, unknown> = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, { details, cause: options.cause })
  }
}

export interface QuoteServiceStats {
  /** plans whose calldata was executed in the EVM and answered */
  quotesExecuted: number
  /** executions whose output differed from the route math's (the EVM's figure was answered) */
  mathDisagreements: number
  /** answers served from the per-block answer cache */
  cacheHits: number
}

export interface QuoteService {
  quote(request: QuoteRequest): Promise<QuoteResult>
  /** counters for /metrics, where the implementation keeps them */
  stats?(): QuoteServiceStats
}
