/**
 * npx tsx scripts/bench-math.ts
 * Micro-benchmark of the native AMM math (src/dex/math): microseconds per call for the building
 * blocks, a V2 quote, and V3 exact-input quotes crossing k initialized ticks. Single thread, after
 * warm-up; figures vary with the machine, compare them run to run.
 */
import {
  buildV3Pool,
  computeSwapStep,
  getAmountOut,
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  quoteExactInputSingle,
  quoteExactOutputSingle,
  simulateV3Swap,
  type V3PoolState,
} from '../src/dex/math/index.ts'

function bench(label: string, fn: () => unknown, minMs = 300): number {
  for (let i = 0; i < 200; i++) fn() // warm-up: let the JIT settle
  let iterations = 0
  const start = process.hrtime.bigint()
  let elapsed = 0n
  while (elapsed < BigInt(minMs) * 1_000_000n) {
    for (let i = 0; i < 100; i++) fn()
    iterations += 100
    elapsed = process.hrtime.bigint() - start
  }
  const us = Number(elapsed) / 1000 / iterations
  console.log(`${label.padEnd(64)} ${us.toFixed(2).padStart(9)} µs`)
  return us
}

const E18 = 10n ** 18n

// a 0.05% pool at tick 0 with an initialized tick every 10 ticks (one position per pair), plenty of liquidity
const ticks: Array<{ tick: number; liquidityNet: bigint }> = []
for (let t = -20000; t <= 20000; t += 10) if (t !== 0) ticks.push({ tick: t, liquidityNet: t < 0 ? E18 : -E18 })
const dense: V3PoolState = buildV3Pool({ sqrtPriceX96: getSqrtRatioAtTick(5), tick: 5, liquidity: 2000n * E18, fee: 500, initializedTicks: ticks })

/** exact input into `pool` that crosses about k initialized ticks (found by bisection on the amount) */
function amountCrossing(pool: V3PoolState, zeroForOne: boolean, k: number): bigint {
  let lo = 1n
  let hi = 10n ** 30n
  while (lo < hi) {
    const mid = (lo + hi) / 2n
    const crossed = simulateV3Swap(pool, { zeroForOne, amountSpecified: mid }).initializedTicksCrossed
    if (crossed < k) lo = mid + 1n
    else hi = mid
  }
  // a little past the k-th tick so the last step is a partial one, as in a real quote
  return lo + lo / 1000n
}

console.log('building blocks')
bench('getSqrtRatioAtTick, memo hit', () => getSqrtRatioAtTick(-123457))
// cycling through more distinct ticks than the memo holds: mostly misses
let coldTick = -400_000
bench('getSqrtRatioAtTick, memo miss', () => getSqrtRatioAtTick((coldTick = coldTick >= 400_000 ? -400_000 : coldTick + 7)))
bench('getTickAtSqrtRatio', () => getTickAtSqrtRatio(28437325270877025820973479874632004n))
bench('computeSwapStep (exact in, partial)', () => computeSwapStep(1n << 96n, getSqrtRatioAtTick(-600), 10n ** 24n, E18, 3000))
bench('V2 getAmountOut', () => getAmountOut(10n ** 22n, 6770398782322527849696614n, 5124813135806900540214n))

console.log('\nV3 quotes, dense pool (initialized tick every 10, spacing 10)')
for (const k of [0, 1, 2, 5, 10, 20, 50, 100]) {
  const amount = amountCrossing(dense, true, k)
  const crossed = simulateV3Swap(dense, { zeroForOne: true, amountSpecified: amount }).initializedTicksCrossed
  bench(`quoteExactInputSingle crossing ${crossed} ticks`, () => quoteExactInputSingle(dense, true, amount))
}
const outAmount = quoteExactInputSingle(dense, true, amountCrossing(dense, true, 10))
bench('quoteExactOutputSingle crossing ~10 ticks', () => quoteExactOutputSingle(dense, true, outAmount))

console.log('\nV3 quotes, sparse pool (two ticks, swap walks empty bitmap words)')
const sparse = buildV3Pool({
  sqrtPriceX96: getSqrtRatioAtTick(0),
  tick: 0,
  liquidity: 10n ** 24n,
  fee: 3000,
  initializedTicks: [
    { tick: -887220, liquidityNet: 10n ** 24n },
    { tick: 887220, liquidityNet: -(10n ** 24n) },
  ],
})
for (const wordsToWalk of [1, 10, 50]) {
  const target = getSqrtRatioAtTick(-wordsToWalk * 256 * 60 + 30)
  const r = simulateV3Swap(sparse, { zeroForOne: true, amountSpecified: (1n << 255n) - 1n, sqrtPriceLimitX96: target })
  const amount = r.amount0
  bench(`quoteExactInputSingle through ~${wordsToWalk} empty words (tick ${r.tickAfter})`, () => quoteExactInputSingle(sparse, true, amount))
}
