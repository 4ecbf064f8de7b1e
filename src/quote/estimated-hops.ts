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

/** hooked hops (pool, direction) whose last outcome EstimateRecord keeps; past it the record starts over */
export const MAX_RECORDED_HOOKED_HOPS = 4_096

/**
 * Whether the estimate of a hooked hop gave the EVM's output the last time a plan through it was
 * executed (a hook that only overrides the fee with what slot0 shows, one direction of the devnet's
 * directional-fee hook, does so every time). Only a guess at which execution to start with: a plan
 * whose hooked hops all held is executed at once with the minimum its estimate sets (one execution
 * when the estimate holds again), any other first without a minimum (and once more with the
 * minimum its output sets). The answer is the same either way; only the executions it costs differ.
 * Bounded: MAX_RECORDED_HOOKED_HOPS entries, then cleared.
 */
export class EstimateRecord {
  private readonly held = new Map<string, boolean>()

  get size(): number {
    return this.held.size
  }

  /** every hooked hop of the plan held its estimate the last time (false when one was never executed) */
  likelyExact(plan: SwapPlan): boolean {
    const keys = hookedHopKeys(plan)
    return keys.length > 0 && keys.every((k) => this.held.get(k) === true)
  }

  /** the plan's execution gave its expected output (`exact`) or not */
  record(plan: SwapPlan, exact: boolean): void {
    for (const key of hookedHopKeys(plan)) {
      if (!this.held.has(key) && this.held.size >= MAX_RECORDED_HOOKED_HOPS) this.held.clear()
      this.held.set(key, exact)
    }
  }
}

/**
 * loops, not flatMap/filter/map with arrow functions: those closures, made per call, were compiled
 * by TurboFan again and again in the service's workers (scripts/probe/recompile-trace.ts, session 21)
 */
function hookedHopKeys(plan: SwapPlan): string[] {
  const keys: string[] = []
  for (const leg of plan.legs) {
    for (const hop of leg.hops) {
      if (hop.v4?.hookAltersSwap === true) keys.push(`${hop.pool}:${hop.zeroForOne ? 1 : 0}`)
    }
  }
  return keys
}
