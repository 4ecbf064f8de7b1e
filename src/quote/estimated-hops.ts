/**
 * Plans through pools the search cannot model exactly: V4 pools whose hook may change a swap's
 * amounts or fee (src/pools/uniswap-v4-hooks.ts). The search ranks them with an estimate (the V3
 * loop at slot0's fee), so the quote executes such a plan and the best plan without those pools
 * and answers the better of the two by output net of gas, valued as the search values it: the
 * estimate may rank a pool too high, never makes the answer worse than the exact pools' best.
 */
import { gasCostInToken } from '../pools/gas-price.ts'
import type { RoutedPlan } from '../routing/route-search.ts'
import type { SwapPlan } from '../routing/swap-plan.ts'

/** the plan crosses a pool whose expected output is only an estimate */
export function planHasEstimatedHops(plan: SwapPlan): boolean {
  return plan.legs.some((leg) => leg.hops.some((hop) => hop.v4?.hookAltersSwap === true))
}

/** An executed plan: what the EVM gave. */
export interface ExecutedPlan {
  amountOut: bigint
  gasUsed: bigint
}

/**
 * true when `exact`'s execution is worth more than `estimated`'s: more output net of gas at the
 * plans' gas price and rate (output alone when gas cannot be valued), ties to the exact plan
 */
export function exactExecutionIsBetter(estimated: ExecutedPlan, exact: ExecutedPlan, plan: RoutedPlan, gasPriceWei: bigint): boolean {
  const rate = plan.tokenOutPerEth
  const cost = (gas: bigint) => (rate === undefined ? 0n : gasCostInToken(gas, gasPriceWei, rate))
  return exact.amountOut - cost(exact.gasUsed) >= estimated.amountOut - cost(estimated.gasUsed)
}
