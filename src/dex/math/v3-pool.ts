/**
 * UniswapV3Pool.swap's loop as a pure function over a pool snapshot, plus QuoterV2's single-pool
 * quotes on top of it. Integer for integer the same as the contract: the same steps (including
 * the extra step at every bitmap word boundary), the same roundings, the same reverts as thrown
 * AmmMathErrors. Fee growth, protocol fees and the oracle are left out: they do not change the
 * amounts, the price, the tick or the liquidity a swap ends with.
 */
import { MAX_INT256, MAX_UINT128, MIN_INT256 } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { addDelta } from './liquidity-math.ts'
import { assertFeePips, computeSwapStepInto, type SwapStep } from './swap-math.ts'
import { nextInitializedTickWithinOneWordInto, type NextInitializedTick, type TickBitmap } from './tick-bitmap.ts'
import { getSqrtRatioAtTick, getTickAtSqrtRatio, MAX_SQRT_RATIO, MAX_TICK, MIN_SQRT_RATIO, MIN_TICK } from './tick-math.ts'

/** what the swap reads of an initialized tick */
export interface V3TickInfo {
  /** liquidity added when the price crosses the tick going up (int128) */
  readonly liquidityNet: bigint
}

/** the pool state one swap reads: slot0, liquidity, immutables, tick bitmap and ticks */
export interface V3PoolState {
  readonly sqrtPriceX96: bigint
  readonly tick: number
  /** in-range liquidity (uint128) */
  readonly liquidity: bigint
  /** in hundredths of a bip: 500 = 0.05% */
  readonly fee: number
  readonly tickSpacing: number
  readonly bitmap: TickBitmap
  /** every tick whose bitmap bit is set */
  readonly ticks: ReadonlyMap<number, V3TickInfo>
}

export interface V3SwapParams {
  /** true: token0 in, token1 out */
  zeroForOne: boolean
  /** > 0: exact input of that much; < 0: exact output of minus that much (int256) */
  amountSpecified: bigint
  /** stop at this price; default the widest QuoterV2 / SwapRouter use: MIN_SQRT_RATIO + 1 or MAX_SQRT_RATIO - 1 */
  sqrtPriceLimitX96?: bigint
}

export interface V3SwapResult {
  /** pool's token0 balance change: > 0 the pool receives, < 0 the pool pays */
  amount0: bigint
  amount1: bigint
  sqrtPriceX96After: bigint
  tickAfter: number
  liquidityAfter: bigint
  /**
   * initialized ticks the loop crossed (each one a `ticks.cross` and its gas). QuoterV2 reports a
   * different count, see countInitializedTicksCrossed.
   */
  initializedTicksCrossed: number
}

function assertPoolState(pool: V3PoolState): void {
  assertFeePips(pool.fee)
  if (!Number.isInteger(pool.tickSpacing) || pool.tickSpacing <= 0) {
    throw new AmmMathError('INVALID_POOL_STATE', `tickSpacing ${pool.tickSpacing} is not a positive integer`)
  }
  if (pool.liquidity < 0n || pool.liquidity > MAX_UINT128) throw new AmmMathError('INVALID_POOL_STATE', `liquidity ${pool.liquidity} is not a uint128`)
  if (pool.sqrtPriceX96 < MIN_SQRT_RATIO || pool.sqrtPriceX96 >= MAX_SQRT_RATIO) {
    throw new AmmMathError('INVALID_POOL_STATE', `sqrtPriceX96 ${pool.sqrtPriceX96} outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO)`)
  }
  if (!Number.isInteger(pool.tick) || pool.tick < MIN_TICK || pool.tick > MAX_TICK) {
    throw new AmmMathError('INVALID_POOL_STATE', `tick ${pool.tick} is not an int24 tick`)
  }
}

export function toInt256(x: bigint): bigint {
  if (x > MAX_INT256) throw new AmmMathError('OVERFLOW', `${x} does not fit in int256`)
  return x
}

/** LowGasSafeMath's checked int256 add */
export function checkedAddInt256(a: bigint, b: bigint): bigint {
  const z = a + b
  if (z > MAX_INT256 || z < MIN_INT256) throw new AmmMathError('OVERFLOW', 'amountCalculated overflows int256')
  return z
}

/** UniswapV3Pool.swap's SwapState: what its loop carries from step to step */
export interface V3SwapCursor {
  amountSpecifiedRemaining: bigint
  amountCalculated: bigint
  sqrtPriceX96: bigint
  tick: number
  liquidity: bigint
  initializedTicksCrossed: number
}

/**
 * Where a step swaps towards: the next initialized tick within one bitmap word (or the word's last
 * tick), its price, and the target (that price, or the limit if that comes first). For an exact
 * input, `amountInToTarget` is the step's input (fee excluded, rounded up) to reach the target.
 */
export interface V3StepTarget {
  tickNext: number
  initialized: boolean
  sqrtPriceNextX96: bigint
  target: bigint
  amountInToTarget: bigint | undefined
}

/** the price limit a swap defaults to: the widest QuoterV2 and SwapRouter use */
export function defaultSqrtPriceLimit(zeroForOne: boolean): bigint {
  return zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n
}

/** the pool, the amount and the limit checked as UniswapV3Pool.swap checks them (throws where it reverts) */
export function assertSwapInputs(pool: V3PoolState, zeroForOne: boolean, amountSpecified: bigint, sqrtPriceLimitX96: bigint): void {
  assertPoolState(pool)
  if (amountSpecified > MAX_INT256 || amountSpecified < MIN_INT256) throw new AmmMathError('INVALID_INPUT', 'amountSpecified is not an int256')
  if (amountSpecified === 0n) throw new AmmMathError('ZERO_AMOUNT', 'amountSpecified is zero', 'AS')
  const limitValid = zeroForOne
    ? sqrtPriceLimitX96 < pool.sqrtPriceX96 && sqrtPriceLimitX96 > MIN_SQRT_RATIO
    : sqrtPriceLimitX96 > pool.sqrtPriceX96 && sqrtPriceLimitX96 < MAX_SQRT_RATIO
  if (!limitValid) throw new AmmMathError('PRICE_LIMIT', `sqrtPriceLimitX96 ${sqrtPriceLimitX96} is on the wrong side of the price or out of range`, 'SPL')
}

/** the target of the step that starts at `tick` (the swap loop's first lines), written into `out` */
export function v3StepTarget(out: V3StepTarget, next: NextInitializedTick, pool: V3PoolState, tick: number, zeroForOne: boolean, sqrtPriceLimitX96: bigint): V3StepTarget {
  nextInitializedTickWithinOneWordInto(next, pool.bitmap, tick, pool.tickSpacing, zeroForOne)
  // the bitmap does not know the tick bounds
  const tickNext = next.tick < MIN_TICK ? MIN_TICK : next.tick > MAX_TICK ? MAX_TICK : next.tick
  const sqrtPriceNextX96 = getSqrtRatioAtTick(tickNext)
  out.tickNext = tickNext
  out.initialized = next.initialized
  out.sqrtPriceNextX96 = sqrtPriceNextX96
  // swap towards the next tick, or the limit if that comes first
  out.target = (zeroForOne ? sqrtPriceNextX96 < sqrtPriceLimitX96 : sqrtPriceNextX96 > sqrtPriceLimitX96) ? sqrtPriceLimitX96 : sqrtPriceNextX96
  out.amountInToTarget = undefined
  return out
}

/**
 * the records every step of a swap writes into: one set for the module, not three objects per swap
 * (a route search runs the loop for each of its hundreds of V3 quotes); the loop is synchronous and
 * calls nothing that could run another swap before it returns, so no two swaps share them at once
 */
const loopRecords: { next: NextInitializedTick; step: SwapStep; own: V3StepTarget } = {
  next: { tick: 0, initialized: false },
  step: { sqrtRatioNextX96: 0n, amountIn: 0n, amountOut: 0n, feeAmount: 0n },
  own: { tickNext: 0, initialized: false, sqrtPriceNextX96: 0n, target: 0n, amountInToTarget: undefined },
}

/**
 * UniswapV3Pool.swap's loop from `cur` (checked inputs: assertSwapInputs; `exactInput`: the swap's
 * amountSpecified was positive), stepping until the
 * amount is used up or the price reaches the limit. `first`: the first step's target when the
 * caller knows it (v3-exact-input.ts keeps the steps every quote of a pool starts with). Without
 * `wantTickAtEnd`, the tick of the price a final step stops inside is not computed (a quote never
 * reads it; nothing else changes).
 */
export function runV3SwapLoop(cur: V3SwapCursor, pool: V3PoolState, zeroForOne: boolean, exactInput: boolean, fee: bigint, sqrtPriceLimitX96: bigint, wantTickAtEnd: boolean, first?: V3StepTarget): void {
  const { next, step, own } = loopRecords
  let target: V3StepTarget | undefined = first

  // continue while input / output remains and the price limit is not reached
  while (cur.amountSpecifiedRemaining !== 0n && cur.sqrtPriceX96 !== sqrtPriceLimitX96) {
    const sqrtPriceStartX96 = cur.sqrtPriceX96
    const t = target ?? v3StepTarget(own, next, pool, cur.tick, zeroForOne, sqrtPriceLimitX96)
    target = undefined
    computeSwapStepInto(step, sqrtPriceStartX96, t.target, cur.liquidity, cur.amountSpecifiedRemaining, fee, t.amountInToTarget, false)
    cur.sqrtPriceX96 = step.sqrtRatioNextX96

    // the loop reads a step's input and fee only as their sum (computeSwapStepInto's splitSpent);
    // the contract's `amountSpecifiedRemaining -= / +=` is unchecked int256, but a step never
    // takes more than remains, so it stays between 0 and amountSpecified and plain bigint matches
    if (exactInput) {
      cur.amountSpecifiedRemaining -= toInt256(step.amountIn + step.feeAmount)
      cur.amountCalculated = checkedAddInt256(cur.amountCalculated, -toInt256(step.amountOut))
    } else {
      cur.amountSpecifiedRemaining += toInt256(step.amountOut)
      cur.amountCalculated = checkedAddInt256(cur.amountCalculated, toInt256(step.amountIn + step.feeAmount))
    }

    if (cur.sqrtPriceX96 === t.sqrtPriceNextX96) {
      // reached the next tick: cross it if initialized
      if (t.initialized) crossTick(cur, pool, t.tickNext, zeroForOne)
      cur.tick = zeroForOne ? t.tickNext - 1 : t.tickNext
    } else if (cur.sqrtPriceX96 !== sqrtPriceStartX96 && (wantTickAtEnd || cur.amountSpecifiedRemaining !== 0n)) {
      // recompute unless the price did not move (we may sit on a lower tick boundary already crossed)
      cur.tick = getTickAtSqrtRatio(cur.sqrtPriceX96)
    }
  }
}

/** Tick.cross: the tick's liquidityNet applied to the in-range liquidity (with the opposite sign moving left) */
export function crossTick(cur: V3SwapCursor, pool: V3PoolState, tick: number, zeroForOne: boolean): void {
  const info = pool.ticks.get(tick)
  if (info === undefined) throw new AmmMathError('INVALID_POOL_STATE', `tick ${tick} is set in the bitmap but missing from ticks`)
  cur.liquidity = addDelta(cur.liquidity, zeroForOne ? -info.liquidityNet : info.liquidityNet)
  cur.initializedTicksCrossed++
}

/** the cursor of a swap that has not started */
export function v3SwapStart(pool: V3PoolState, amountSpecified: bigint): V3SwapCursor {
  return { amountSpecifiedRemaining: amountSpecified, amountCalculated: 0n, sqrtPriceX96: pool.sqrtPriceX96, tick: pool.tick, liquidity: pool.liquidity, initializedTicksCrossed: 0 }
}

/** UniswapV3Pool.swap without the token transfers: amounts, final price, tick and liquidity */
export function simulateV3Swap(pool: V3PoolState, params: V3SwapParams): V3SwapResult {
  const { zeroForOne, amountSpecified } = params
  const sqrtPriceLimitX96 = params.sqrtPriceLimitX96 ?? defaultSqrtPriceLimit(zeroForOne)
  assertSwapInputs(pool, zeroForOne, amountSpecified, sqrtPriceLimitX96)
  const cur = v3SwapStart(pool, amountSpecified)
  const exactInput = amountSpecified > 0n
  runV3SwapLoop(cur, pool, zeroForOne, exactInput, BigInt(pool.fee), sqrtPriceLimitX96, true)

  const amountUsed = amountSpecified - cur.amountSpecifiedRemaining
  const [amount0, amount1] = zeroForOne === exactInput ? [amountUsed, cur.amountCalculated] : [cur.amountCalculated, amountUsed]
  return { amount0, amount1, sqrtPriceX96After: cur.sqrtPriceX96, tickAfter: cur.tick, liquidityAfter: cur.liquidity, initializedTicksCrossed: cur.initializedTicksCrossed }
}

function quoterPriceLimit(sqrtPriceLimitX96: bigint | undefined): bigint | undefined {
  // QuoterV2 reads a zero limit as "no limit"
  return sqrtPriceLimitX96 === undefined || sqrtPriceLimitX96 === 0n ? undefined : sqrtPriceLimitX96
}

function assertQuoterAmount(amount: bigint, what: string): void {
  if (amount < 0n) throw new AmmMathError('INVALID_INPUT', `${what} is negative`)
  // QuoterV2's SafeCast.toInt256
  if (amount > MAX_INT256) throw new AmmMathError('OVERFLOW', `${what} does not fit in int256`)
}

/** QuoterV2's swap callback: which side the pool asks for and which it pays */
function callbackAmounts(result: V3SwapResult): { amountToPay: bigint; amountReceived: bigint } {
  if (!(result.amount0 > 0n || result.amount1 > 0n)) {
    throw new AmmMathError('ZERO_SWAP', 'the swap moved no tokens (it ran through zero liquidity only)')
  }
  return result.amount0 > 0n
    ? { amountToPay: result.amount0, amountReceived: -result.amount1 }
    : { amountToPay: result.amount1, amountReceived: -result.amount0 }
}

/**
 * QuoterV2.quoteExactInputSingle's amountOut. Like QuoterV2 (and SwapRouter), a swap stopped by
 * the price limit consumes less than amountIn and this returns the partial output; use
 * simulateV3Swap to see how much input was used.
 */
export function quoteExactInputSingle(pool: V3PoolState, zeroForOne: boolean, amountIn: bigint, sqrtPriceLimitX96?: bigint): bigint {
  assertQuoterAmount(amountIn, 'amountIn')
  const result = simulateV3Swap(pool, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: quoterPriceLimit(sqrtPriceLimitX96) })
  return callbackAmounts(result).amountReceived
}

/**
 * QuoterV2.quoteExactOutputSingle's amountIn (fee included). Without a price limit QuoterV2
 * requires the full amountOut to come out; so does this (INSUFFICIENT_LIQUIDITY otherwise).
 */
export function quoteExactOutputSingle(pool: V3PoolState, zeroForOne: boolean, amountOut: bigint, sqrtPriceLimitX96?: bigint): bigint {
  assertQuoterAmount(amountOut, 'amountOut')
  const limit = quoterPriceLimit(sqrtPriceLimitX96)
  const result = simulateV3Swap(pool, { zeroForOne, amountSpecified: -amountOut, sqrtPriceLimitX96: limit })
  const { amountToPay, amountReceived } = callbackAmounts(result)
  if (limit === undefined && amountReceived !== amountOut) {
    throw new AmmMathError('INSUFFICIENT_LIQUIDITY', `the pool can give only ${amountReceived} of the ${amountOut} asked`)
  }
  return amountToPay
}
