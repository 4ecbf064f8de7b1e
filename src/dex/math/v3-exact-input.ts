/**
 * Exact-input swaps of one V3 pool state, for the route search's quotes: the same loop and the
 * same figures as simulateV3Swap (v3-pool.ts), with what every quote of the state repeats kept.
 *
 * A route search quotes each pool at tens of amounts (the whole amount, each multiple of a split
 * part), and every quote of a pool in one direction starts with the same steps: from the pool's
 * price towards the same next tick, with the same liquidity. A step the amount carries all the
 * way to its target (a "full" step) gives figures that do not depend on the amount (its input to
 * reach the target, its fee, its output, the state after it); only the last step, which stops
 * inside its range, does. So the steps' targets, their input to the target and the full steps'
 * figures are kept per (state, direction), and a quote walks them: one multiplication per step
 * to see whether the amount carries it, then the one partial step computed by the loop itself.
 * On the devnet nearly every quote is a single partial step; it is spared the next-tick search,
 * the tick's price, one of its wide divisions and the final price's tick, which a quote never reads.
 *
 * Bounded: the steps are kept beside the state (a WeakMap: they go with the snapshot) and there
 * are at most as many as a swap through the state's loaded ticks can take (a step per initialized
 * tick and per bitmap word, up to the price limit).
 */
import { FEE_PIPS_DENOMINATOR, MAX_INT256 } from './constants.ts'
import { computeSwapStepInto, v3AmountInToTarget, type SwapStep } from './swap-math.ts'
import type { NextInitializedTick } from './tick-bitmap.ts'
import { getTickAtSqrtRatio } from './tick-math.ts'
import {
  assertSwapInputs,
  checkedAddInt256,
  crossTick,
  defaultSqrtPriceLimit,
  runV3SwapLoop,
  simulateV3Swap,
  toInt256,
  v3StepTarget,
  v3SwapStart,
  type V3PoolState,
  type V3StepTarget,
  type V3SwapCursor,
} from './v3-pool.ts'

/** What an exact-input swap gives: the input it used (less than asked when it stopped at the limit), its output and the initialized ticks it crossed. */
export interface V3ExactInput {
  amountUsed: bigint
  amountOut: bigint
  initializedTicksCrossed: number
}

/** one step of the walk: where it goes from the state it starts in, and, once an amount carried it through, what it gives */
interface KeptStep extends V3StepTarget {
  amountInToTarget: bigint
  /**
   * the least amount that carries the step to its target: computeSwapStep's test, floor(amount x
   * (1e6 - fee) / 1e6) >= amountInToTarget, holds for an integer amount exactly when amount >=
   * ceil(amountInToTarget x 1e6 / (1e6 - fee)) (1e6 - fee > 0): one comparison per step and quote
   * instead of a multiplication and a division
   */
  carryFrom: bigint
  /** amountIn + feeAmount and amountOut of the step carried to its target, and the state after it */
  full?: { spent: bigint; amountOut: bigint; sqrtPriceX96: bigint; tick: number; liquidity: bigint; crossed: number }
}

interface Walk {
  sqrtPriceLimitX96: bigint
  fee: bigint
  steps: KeptStep[]
}

const walksByState = new WeakMap<V3PoolState, [Walk | undefined, Walk | undefined]>()

/**
 * simulateV3Swap's exact-input figures (amountIn > 0): used input, output, ticks crossed. The
 * same errors where it throws (an invalid state or limit, a math revert on the way).
 */
export function v3ExactInput(pool: V3PoolState, zeroForOne: boolean, amountIn: bigint, sqrtPriceLimitX96: bigint | undefined): V3ExactInput {
  const limit = sqrtPriceLimitX96 ?? defaultSqrtPriceLimit(zeroForOne)
  if (amountIn <= 0n || amountIn > MAX_INT256) return viaSimulation(pool, zeroForOne, amountIn, limit)
  const walk = walkOf(pool, zeroForOne, limit)
  // a limit other than the one the state's steps were kept for: the loop alone
  if (walk.sqrtPriceLimitX96 !== limit) return viaSimulation(pool, zeroForOne, amountIn, limit)

  const cur = v3SwapStart(pool, amountIn)
  for (let i = 0; cur.amountSpecifiedRemaining !== 0n && cur.sqrtPriceX96 !== limit; i++) {
    const step = walk.steps[i] ?? keepStep(walk, i, pool, cur, zeroForOne)
    // computeSwapStep's test: the amount less its fee reaches the target
    if (cur.amountSpecifiedRemaining > 0n && cur.amountSpecifiedRemaining >= step.carryFrom) {
      const full = (step.full ??= fullStep(step, pool, cur, zeroForOne, walk.fee))
      cur.amountSpecifiedRemaining -= full.spent
      cur.amountCalculated = checkedAddInt256(cur.amountCalculated, -full.amountOut)
      cur.sqrtPriceX96 = full.sqrtPriceX96
      cur.tick = full.tick
      cur.liquidity = full.liquidity
      cur.initializedTicksCrossed = full.crossed
      continue
    }
    // the step that stops inside its range (and any after it): the loop itself, from here
    runV3SwapLoop(cur, pool, zeroForOne, true, walk.fee, limit, false, step)
    break
  }
  return { amountUsed: amountIn - cur.amountSpecifiedRemaining, amountOut: -cur.amountCalculated, initializedTicksCrossed: cur.initializedTicksCrossed }
}

function viaSimulation(pool: V3PoolState, zeroForOne: boolean, amountIn: bigint, limit: bigint): V3ExactInput {
  const r = simulateV3Swap(pool, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
  const [amountUsed, calculated] = zeroForOne ? [r.amount0, r.amount1] : [r.amount1, r.amount0]
  return { amountUsed, amountOut: -calculated, initializedTicksCrossed: r.initializedTicksCrossed }
}

/** the state's kept steps in this direction, made (and the state and limit checked) at its first quote */
function walkOf(pool: V3PoolState, zeroForOne: boolean, limit: bigint): Walk {
  let walks = walksByState.get(pool)
  const kept = walks?.[zeroForOne ? 0 : 1]
  if (kept !== undefined) return kept
  // simulateV3Swap checks these on every call; a state or limit that fails throws here every time
  assertSwapInputs(pool, zeroForOne, 1n, limit)
  const walk: Walk = { sqrtPriceLimitX96: limit, fee: BigInt(pool.fee), steps: [] }
  if (walks === undefined) walksByState.set(pool, (walks = [undefined, undefined]))
  walks[zeroForOne ? 0 : 1] = walk
  return walk
}

const scratchNext: NextInitializedTick = { tick: 0, initialized: false }

/** step i's target from the state the walk reached (the state after step i - 1 carried through) */
function keepStep(walk: Walk, i: number, pool: V3PoolState, cur: V3SwapCursor, zeroForOne: boolean): KeptStep {
  const t = v3StepTarget({ tickNext: 0, initialized: false, sqrtPriceNextX96: 0n, target: 0n, amountInToTarget: undefined }, scratchNext, pool, cur.tick, zeroForOne, walk.sqrtPriceLimitX96)
  const amountInToTarget = v3AmountInToTarget(cur.sqrtPriceX96, t.target, cur.liquidity)
  const feeComplement = FEE_PIPS_DENOMINATOR - walk.fee
  const scaled = amountInToTarget * FEE_PIPS_DENOMINATOR
  const carryFrom = scaled / feeComplement + (scaled % feeComplement === 0n ? 0n : 1n)
  const step: KeptStep = { ...t, amountInToTarget, carryFrom }
  walk.steps[i] = step
  return step
}

/** the loop's step carried to its target from `cur`, and the state after it (as the loop leaves it) */
function fullStep(step: KeptStep, pool: V3PoolState, cur: V3SwapCursor, zeroForOne: boolean, fee: bigint): NonNullable<KeptStep['full']> {
  const s: SwapStep = computeSwapStepInto({ sqrtRatioNextX96: 0n, amountIn: 0n, amountOut: 0n, feeAmount: 0n }, cur.sqrtPriceX96, step.target, cur.liquidity, cur.amountSpecifiedRemaining, fee, step.amountInToTarget)
  const after: V3SwapCursor = { ...cur, sqrtPriceX96: s.sqrtRatioNextX96 }
  if (after.sqrtPriceX96 === step.sqrtPriceNextX96) {
    if (step.initialized) crossTick(after, pool, step.tickNext, zeroForOne)
    after.tick = zeroForOne ? step.tickNext - 1 : step.tickNext
  } else if (after.sqrtPriceX96 !== cur.sqrtPriceX96) {
    after.tick = getTickAtSqrtRatio(after.sqrtPriceX96)
  }
  return { spent: toInt256(s.amountIn + s.feeAmount), amountOut: toInt256(s.amountOut), sqrtPriceX96: after.sqrtPriceX96, tick: after.tick, liquidity: after.liquidity, crossed: after.initializedTicksCrossed }
}
