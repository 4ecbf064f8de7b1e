/**
 * Plans through pools the search cannot model exactly: V4 pools whose hook may change a swap's
 * amounts or fee (src/pools/uniswap-v4-hooks.ts). The search ranks them with an estimate (the V3
 * loop at slot0's fee), so the quote executes such a plan and the best plan without those pools
 * and answers the better of the two by output net of gas, valued as the search values it: the
 * estimate may rank a pool too high, never makes the answer worse than the exact pools' best.
 * The hooked plan is executed first: when it beats even the exact plan's expected output, the
 * exact plan is not executed (it could not win).
 */
import { gasCostInToken } from '../pools/gas-price.ts'
import type { RoutedPlan } from '../routing/route-search.ts'
import type { SwapPlan } from '../routing/swap-plan.ts'

export { planHasEstimatedHops } from '../routing/swap-plan.ts'

/** An executed plan: what the EVM gave. */
export interface ExecutedPlan {
  amountOut: bigint
  gasUsed: bigint
}

/**
 * true when `estimated`'s execution is worth more than any execution of `exact` can be: its output
 * net of its gas above the exact plan's whole expected output. The exact pools' math is exact (the
 * EVM gives what it expects: src/quote's differential tests), and gas only subtracts, so the exact
 * plan's executed net is at most its expected output: executing it could not change the answer.
 * Strictly above, so that a tie still goes to the exact plan (exactExecutionIsBetter).
 */
export function estimatedExecutionBeatsExactPlan(estimated: ExecutedPlan, exact: SwapPlan, plan: RoutedPlan, gasPriceWei: bigint): boolean {
  return net(estimated, plan, gasPriceWei) > exact.expectedAmountOut
}

/** output less gas at the plan's gas price and rate (output alone when gas cannot be valued) */
function net(executed: ExecutedPlan, plan: RoutedPlan, gasPriceWei: bigint): bigint {
  const rate = plan.tokenOutPerEth
  return executed.amountOut - (rate === undefined ? 0n : gasCostInToken(executed.gasUsed, gasPriceWei, rate))
}

/**
 * true when `exact`'s execution is worth more than `estimated`'s: more output net of gas at the
 * plans' gas price and rate (output alone when gas cannot be valued), ties to the exact plan
 */
export function exactExecutionIsBetter(estimated: ExecutedPlan, exact: ExecutedPlan, plan: RoutedPlan, gasPriceWei: bigint): boolean {
  return net(exact, plan, gasPriceWei) >= net(estimated, plan, gasPriceWei)
}
