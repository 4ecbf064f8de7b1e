/**
 * TickMath (v3-core): price <-> tick, bit-exact. sqrtPriceX96 = sqrt(1.0001^tick) * 2^96.
 * getSqrtRatioAtTick multiplies Q128.128 magic constants for each set bit of |tick|;
 * getTickAtSqrtRatio takes a 14-bit binary logarithm and corrects by one evaluation of
 * getSqrtRatioAtTick. Both are ported line for line because routes are verified in the EVM and
 * a one-wei difference in a price is a different swap result.
 */
import { MAX_UINT256 } from './constants.ts'
import { AmmMathError } from './errors.ts'
import { mostSignificantBit } from './bit-math.ts'

export const MIN_TICK = -887272
export const MAX_TICK = 887272
/** getSqrtRatioAtTick(MIN_TICK) */
export const MIN_SQRT_RATIO = 4295128739n
/** getSqrtRatioAtTick(MAX_TICK) */
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n

/** 1/sqrt(1.0001)^(2^i) as Q128.128, for bit i = 1..19 of |tick| (bit 0 seeds the product) */
const RATIO_FACTORS: readonly bigint[] = [
  0xfff97272373d413259a46990580e213an,
  0xfff2e50f5f656932ef12357cf3c7fdccn,
  0xffe5caca7e10e4e61c3624eaa0941cd0n,
  0xffcb9843d60f6159c9db58835c926644n,
  0xff973b41fa98c081472e6896dfb254c0n,
  0xff2ea16466c96a3843ec78b326b52861n,
  0xfe5dee046a99a2a811c461f1969c3053n,
  0xfcbe86c7900a88aedcffc83b479aa3a4n,
  0xf987a7253ac413176f2b074cf7815e54n,
  0xf3392b0822b70005940c7a398e4b70f3n,
  0xe7159475a2c29b7443b29c7fa6e889d9n,
  0xd097f3bdfd2022b8845ad8f792aa5825n,
  0xa9f746462d870fdf8a65dc1f90e061e5n,
  0x70d869a156d2a1b890bb3df62baf32f7n,
  0x31be135f97d08fd981231505542fcfa6n,
  0x9aa508b5b7a84e1c677de54f3e99bc9n,
  0x5d6af8dedb81196699c329225ee604n,
  0x2216e584f5fa1ea926041bedfe98n,
  0x48a170391f7dc42444e8fa2n,
]
const BIT0_FACTOR = 0xfffcb933bd6fad37aa2d162d1a594001n
const ONE_Q128 = 0x100000000000000000000000000000000n
const LOW_32_BITS = 0xffffffffn

/**
 * Memo of getSqrtRatioAtTick. Route and backrun searches quote the same pools over and over, and
 * every swap step needs the ratio of a tick (an initialized tick or a word boundary), so the same
 * few thousand ticks recur; a lookup is ~25x cheaper than the 20 wide multiplications. Bounded:
 * emptied when full rather than tracking recency, which keeps the hit path to one Map.get.
 */
const SQRT_RATIO_CACHE = new Map<number, bigint>()
const SQRT_RATIO_CACHE_LIMIT = 1 << 16

/** sqrt(1.0001^tick) as Q64.96, rounded up (so getTickAtSqrtRatio of the result is `tick`) */
export function getSqrtRatioAtTick(tick: number): bigint {
  const cached = SQRT_RATIO_CACHE.get(tick)
  if (cached !== undefined) return cached
  const ratio = computeSqrtRatioAtTick(tick)
  if (SQRT_RATIO_CACHE.size >= SQRT_RATIO_CACHE_LIMIT) SQRT_RATIO_CACHE.clear()
  SQRT_RATIO_CACHE.set(tick, ratio)
  return ratio
}

function computeSqrtRatioAtTick(tick: number): bigint {
  if (!Number.isInteger(tick)) throw new AmmMathError('INVALID_INPUT', `getSqrtRatioAtTick: tick ${tick} is not an integer`)
  const absTick = tick < 0 ? -tick : tick
  if (absTick > MAX_TICK) throw new AmmMathError('TICK_OUT_OF_RANGE', `getSqrtRatioAtTick: |${tick}| > MAX_TICK`, 'T')

  let ratio = (absTick & 1) !== 0 ? BIT0_FACTOR : ONE_Q128
  // |tick| < 2^20, so plain number bit tests pick the factors; only the products are bigint
  for (let i = 0; i < 19; i++) {
    if ((absTick & (2 << i)) !== 0) ratio = (ratio * RATIO_FACTORS[i]) >> 128n
  }
  if (tick > 0) ratio = MAX_UINT256 / ratio

  // Q128.128 -> Q128.96, rounding up; always fits in 160 bits given the tick bound
  return (ratio & LOW_32_BITS) === 0n ? ratio >> 32n : (ratio >> 32n) + 1n
}

const LOG_SQRT10001_FACTOR = 255738958999603826347141n
const TICK_LOW_OFFSET = 3402992956809132418596140100660247210n
const TICK_HIGH_OFFSET = 291339464771989622907027621153398088495n

/** 2 / ln(1.0001): sqrtPriceX96 = 2^96 * 1.0001^(tick / 2), so tick = (ln(sqrtPriceX96) - 96 ln 2) * this */
const TICKS_PER_LN_SQRT_PRICE = 2 / Math.log(1.0001)
const LN_2_POW_96 = 96 * Math.LN2
/**
 * How far from a whole tick (in ticks) a floating-point estimate must fall to be trusted: the
 * estimate's own error is below 1e-8 ticks (a double's relative 1e-16 on a logarithm below 90),
 * and getSqrtRatioAtTick's rounding up to a Q64.96 moves a tick's boundary by less than 5e-6
 * ticks (one unit at the smallest price, 2^32).
 */
const TICK_ESTIMATE_MARGIN = 1e-4

/** the greatest tick whose sqrt ratio is <= sqrtPriceX96 */
export function getTickAtSqrtRatio(sqrtPriceX96: bigint): number {
  // the upper bound is strict: the price can never reach the price at MAX_TICK
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO) {
    throw new AmmMathError('SQRT_PRICE_OUT_OF_RANGE', `getTickAtSqrtRatio: ${sqrtPriceX96} outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO)`, 'R')
  }
  // Route searches ask this at the end of every swap quote (~5% of a quote's CPU in the bigint
  // logarithm below). A price well inside a tick has only one answer, which a double's logarithm
  // finds; a price within TICK_ESTIMATE_MARGIN of a tick's boundary takes the contract's exact path.
  const estimate = (Math.log(Number(sqrtPriceX96)) - LN_2_POW_96) * TICKS_PER_LN_SQRT_PRICE
  const tick = Math.floor(estimate)
  const fraction = estimate - tick
  if (fraction > TICK_ESTIMATE_MARGIN && fraction < 1 - TICK_ESTIMATE_MARGIN) return tick
  return exactTickAtSqrtRatio(sqrtPriceX96)
}

/** getTickAtSqrtRatio as the contract computes it (the caller checked the range) */
function exactTickAtSqrtRatio(sqrtPriceX96: bigint): number {
  const ratio = sqrtPriceX96 << 32n
  const msb = mostSignificantBit(ratio)

  // normalise to a 128-bit mantissa in [2^127, 2^128)
  let r = msb >= 128 ? ratio >> BigInt(msb - 127) : ratio << BigInt(127 - msb)
  // integer part of log2 as Q64.64 (negative below 2^128 = price 1)
  let log2 = BigInt(msb - 128) << 64n

  // 14 fractional bits by repeated squaring, exactly as the assembly blocks: squaring a mantissa in
  // [1, 2) gives [1, 4); a result >= 2 sets the bit and is halved back
  for (let bit = 63n; bit >= 50n; bit--) {
    r = (r * r) >> 127n
    const f = r >> 128n
    // the integer part's low 64 bits are zero, so OR of the fraction bit is an add
    if (f !== 0n) {
      log2 |= 1n << bit
      r >>= 1n
    }
  }

  const logSqrt10001 = log2 * LOG_SQRT10001_FACTOR // Q128.128
  // >> on bigint floors like the EVM's signed arithmetic shift (sar) the Solidity compiles to
  const tickLow = Number((logSqrt10001 - TICK_LOW_OFFSET) >> 128n)
  const tickHigh = Number((logSqrt10001 + TICK_HIGH_OFFSET) >> 128n)

  if (tickLow === tickHigh) return tickLow
  return getSqrtRatioAtTick(tickHigh) <= sqrtPriceX96 ? tickHigh : tickLow
}
