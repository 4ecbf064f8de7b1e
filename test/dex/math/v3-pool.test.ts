import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import {
  AmmMathError,
  buildTickState,
  buildV3Pool,
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
  quoteExactInputSingle,
  quoteExactOutputSingle,
  simulateV3Swap,
  type V3PoolState,
} from '../../../src/dex/math/index.ts'
import { activeLiquidity, encodePriceSqrt, poolFromPositions, randomPoolArb, type RandomPool } from './helpers.ts'

const E18 = 10n ** 18n

function errorOf(f: () => unknown): AmmMathError | undefined {
  try {
    f()
  } catch (error) {
    if (error instanceof AmmMathError) return error
    throw error
  }
  return undefined
}

function build(p: RandomPool): V3PoolState {
  return poolFromPositions(p.fee, p.tickSpacing, p.sqrtPriceX96, p.positions).pool
}

const amountArb = fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 26n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.bigInt({ min: 1n, max: 1000n }))

describe('simulateV3Swap properties', () => {
  it('crossing ticks changes liquidity by their liquidityNet, and leaves the positions\' in-range liquidity', () => {
    fc.assert(
      fc.property(randomPoolArb, fc.boolean(), fc.boolean(), amountArb, (p, zeroForOne, exactIn, amount) => {
        const pool = build(p)
        const r = simulateV3Swap(pool, { zeroForOne, amountSpecified: exactIn ? amount : -amount })

        // every initialized tick between the start and the end was crossed, and only those
        let expectedLiquidity = pool.liquidity
        let crossed = 0
        for (const [tick, { liquidityNet }] of pool.ticks) {
          if (zeroForOne && r.tickAfter < tick && tick <= pool.tick) {
            expectedLiquidity -= liquidityNet
            crossed++
          }
          if (!zeroForOne && pool.tick < tick && tick <= r.tickAfter) {
            expectedLiquidity += liquidityNet
            crossed++
          }
        }
        expect(r.liquidityAfter).toBe(expectedLiquidity)
        expect(r.initializedTicksCrossed).toBe(crossed)
        expect(r.liquidityAfter).toBe(activeLiquidity(p.positions, r.tickAfter))
      }),
      { numRuns: 400 },
    )
  })

  it('moves the price the right way, within the limit, with a tick that matches it', () => {
    fc.assert(
      fc.property(randomPoolArb, fc.boolean(), fc.boolean(), amountArb, (p, zeroForOne, exactIn, amount) => {
        const pool = build(p)
        const limit = zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n
        const r = simulateV3Swap(pool, { zeroForOne, amountSpecified: exactIn ? amount : -amount })
        if (zeroForOne) expect(limit <= r.sqrtPriceX96After && r.sqrtPriceX96After <= pool.sqrtPriceX96).toBe(true)
        else expect(pool.sqrtPriceX96 <= r.sqrtPriceX96After && r.sqrtPriceX96After <= limit).toBe(true)

        // slot0 invariant: the tick of the price, or one below after stopping on a tick crossed downwards
        const priceTick = getTickAtSqrtRatio(r.sqrtPriceX96After)
        const onCrossedBoundary = zeroForOne && r.tickAfter === priceTick - 1 && getSqrtRatioAtTick(priceTick) === r.sqrtPriceX96After
        expect(r.tickAfter === priceTick || onCrossedBoundary).toBe(true)

        // the pool is paid in the input token and pays out the other, never more than specified
        const [paid, received] = zeroForOne ? [r.amount0, r.amount1] : [r.amount1, r.amount0]
        expect(paid >= 0n && received <= 0n).toBe(true)
        if (exactIn) expect(paid <= amount).toBe(true)
        else expect(-received <= amount).toBe(true)
      }),
      { numRuns: 400 },
    )
  })

  it('exact input, then exact output of what came out, agree within rounding', () => {
    fc.assert(
      fc.property(randomPoolArb, fc.boolean(), amountArb, (p, zeroForOne, amountIn) => {
        const pool = build(p)
        const forward = simulateV3Swap(pool, { zeroForOne, amountSpecified: amountIn })
        const [paid, received] = zeroForOne ? [forward.amount0, forward.amount1] : [forward.amount1, forward.amount0]
        const amountOut = -received
        // only a fully filled swap with some output is a fair comparison
        fc.pre(paid === amountIn && amountOut > 0n)

        const back = simulateV3Swap(pool, { zeroForOne, amountSpecified: -amountOut })
        const [paidBack, receivedBack] = zeroForOne ? [back.amount0, back.amount1] : [back.amount1, back.amount0]
        // the exact-output swap delivers exactly that output, and paying its input buys at least that output again
        expect(-receivedBack).toBe(amountOut)
        expect(quoteExactInputSingle(pool, zeroForOne, paidBack) >= amountOut).toBe(true)
        expect(quoteExactOutputSingle(pool, zeroForOne, amountOut)).toBe(paidBack)
        // Both directions round against the trader, on different quantities, so the exact-output input
        // can exceed amountIn when one wei of output is worth a lot of input (tiny liquidity: asking
        // for every last wei of a range pushes the price to its end). One wei less never costs more.
        if (amountOut > 1n) expect(quoteExactOutputSingle(pool, zeroForOne, amountOut - 1n) <= amountIn).toBe(true)
      }),
      { numRuns: 400 },
    )
  })

  it('exact output can cost more than the exact input that produced it: a recorded case', () => {
    // 1e6 liquidity on [-250000, 0]: 270720948637 token0 buy 999995 token1, but buying exactly 999995
    // takes the price to the range's end and costs 270877413427
    const { pool } = poolFromPositions(10000, 200, 1n << 96n, [{ tickLower: -250000, tickUpper: 0, liquidity: 1_000_000n }])
    expect(quoteExactInputSingle(pool, true, 270720948637n)).toBe(999995n)
    expect(quoteExactOutputSingle(pool, true, 999995n)).toBe(270877413427n)
    expect(quoteExactOutputSingle(pool, true, 999994n) <= 270720948637n).toBe(true)
  })

  it('more input never buys less output', () => {
    fc.assert(
      fc.property(randomPoolArb, fc.boolean(), amountArb, amountArb, (p, zeroForOne, a, b) => {
        const pool = build(p)
        const [small, large] = a < b ? [a, b] : [b, a]
        const out = (x: bigint) => {
          const r = simulateV3Swap(pool, { zeroForOne, amountSpecified: x })
          return zeroForOne ? -r.amount1 : -r.amount0
        }
        expect(out(small) <= out(large)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})

describe('simulateV3Swap behaviour at the edges', () => {
  // medium fee, 1:1, one position [-600, 600] (tick spacing 60)
  const { pool } = poolFromPositions(3000, 60, encodePriceSqrt(1n, 1n), [{ tickLower: -600, tickUpper: 600, liquidity: 10n * E18 }])

  it("reverts 'AS' for a zero amount and 'SPL' for a limit on the wrong side", () => {
    expect(errorOf(() => simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 0n }))).toMatchObject({ reason: 'ZERO_AMOUNT', revert: 'AS' })
    expect(errorOf(() => simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 1n, sqrtPriceLimitX96: pool.sqrtPriceX96 }))).toMatchObject({ revert: 'SPL' })
    expect(errorOf(() => simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 1n, sqrtPriceLimitX96: MIN_SQRT_RATIO }))).toMatchObject({ revert: 'SPL' })
    expect(errorOf(() => simulateV3Swap(pool, { zeroForOne: false, amountSpecified: 1n, sqrtPriceLimitX96: MAX_SQRT_RATIO }))).toMatchObject({ revert: 'SPL' })
    expect(errorOf(() => simulateV3Swap(pool, { zeroForOne: false, amountSpecified: 1n << 255n }))).toMatchObject({ reason: 'INVALID_INPUT' })
  })

  it('stops at the price limit and reports the partial fill', () => {
    const limit = getSqrtRatioAtTick(-300)
    const r = simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 10n * E18, sqrtPriceLimitX96: limit })
    expect(r.sqrtPriceX96After).toBe(limit)
    expect(r.tickAfter).toBe(-300)
    expect(r.amount0 < 10n * E18).toBe(true)
    // QuoterV2 returns the partial output for exact input
    expect(quoteExactInputSingle(pool, true, 10n * E18, limit)).toBe(-r.amount1)
    // a zero limit means none, as in QuoterV2
    expect(quoteExactInputSingle(pool, true, E18, 0n)).toBe(quoteExactInputSingle(pool, true, E18))
  })

  it('crosses out of the position into zero liquidity and runs to the limit', () => {
    const r = simulateV3Swap(pool, { zeroForOne: false, amountSpecified: 100n * E18 })
    expect(r.liquidityAfter).toBe(0n)
    expect(r.initializedTicksCrossed).toBe(1)
    expect(r.sqrtPriceX96After).toBe(MAX_SQRT_RATIO - 1n)
    expect(r.tickAfter).toBe(887271)
  })

  it('QuoterV2: exact output beyond the liquidity fails, a swap through nothing fails', () => {
    expect(errorOf(() => quoteExactOutputSingle(pool, true, 100n * E18))).toMatchObject({ reason: 'INSUFFICIENT_LIQUIDITY' })
    // with a price limit QuoterV2 does not insist on the full amount
    const limit = getSqrtRatioAtTick(-300)
    expect(quoteExactOutputSingle(pool, true, 100n * E18, limit)).toBe(simulateV3Swap(pool, { zeroForOne: true, amountSpecified: -100n * E18, sqrtPriceLimitX96: limit }).amount0)
    const { pool: empty } = poolFromPositions(3000, 60, encodePriceSqrt(1n, 1n), [{ tickLower: 600, tickUpper: 1200, liquidity: E18 }])
    expect(errorOf(() => quoteExactInputSingle(empty, true, E18))).toMatchObject({ reason: 'ZERO_SWAP' })
    expect(errorOf(() => quoteExactInputSingle(pool, true, -1n))).toMatchObject({ reason: 'INVALID_INPUT' })
  })

  it('refuses a bitmap bit without its tick, and liquidity going negative', () => {
    const { bitmap } = buildTickState([{ tick: -600, liquidityNet: 0n }], 60)
    const broken: V3PoolState = { ...pool, bitmap, ticks: new Map() }
    expect(errorOf(() => simulateV3Swap(broken, { zeroForOne: true, amountSpecified: 100n * E18 }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    const inconsistent: V3PoolState = { ...pool, ticks: new Map([[-600, { liquidityNet: 20n * E18 }], [600, { liquidityNet: -10n * E18 }]]) }
    expect(errorOf(() => simulateV3Swap(inconsistent, { zeroForOne: true, amountSpecified: 100n * E18 }))).toMatchObject({ revert: 'LS' })
  })

  it('rejects an impossible pool snapshot', () => {
    expect(errorOf(() => simulateV3Swap({ ...pool, fee: 1_000_000 }, { zeroForOne: true, amountSpecified: 1n }))).toMatchObject({ reason: 'INVALID_INPUT' })
    expect(errorOf(() => simulateV3Swap({ ...pool, tickSpacing: 0 }, { zeroForOne: true, amountSpecified: 1n }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => simulateV3Swap({ ...pool, liquidity: -1n }, { zeroForOne: true, amountSpecified: 1n }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
  })
})

describe('buildV3Pool / buildTickState', () => {
  const spec = { sqrtPriceX96: 1n << 96n, tick: 0, liquidity: E18, fee: 500, initializedTicks: [{ tick: -10, liquidityNet: E18 }, { tick: 10, liquidityNet: -E18 }] }

  it('derives the tick spacing from the fee tier and sets one bitmap bit per tick', () => {
    const pool = buildV3Pool(spec)
    expect(pool.tickSpacing).toBe(10)
    // compressed -1 is bit 255 of word -1; compressed 1 is bit 1 of word 0
    expect(pool.bitmap).toEqual(new Map([[-1, 1n << 255n], [0, 2n]]))
    expect(pool.ticks.get(-10)).toEqual({ liquidityNet: E18 })
  })

  it('keeps ticks initialized with a zero liquidityNet', () => {
    const { bitmap, ticks } = buildTickState([{ tick: 0, liquidityNet: 0n }], 60)
    expect(bitmap).toEqual(new Map([[0, 1n]]))
    expect(ticks.get(0)).toEqual({ liquidityNet: 0n })
  })

  it('refuses what no pool can hold', () => {
    expect(errorOf(() => buildV3Pool({ ...spec, initializedTicks: [{ tick: 5, liquidityNet: 0n }] }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => buildV3Pool({ ...spec, initializedTicks: [{ tick: 10, liquidityNet: 0n }, { tick: 10, liquidityNet: 0n }] }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => buildV3Pool({ ...spec, initializedTicks: [{ tick: 10, liquidityNet: 1n << 127n }] }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => buildV3Pool({ ...spec, initializedTicks: [{ tick: 887280, liquidityNet: 0n }] }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => buildV3Pool({ ...spec, tick: 5 }))).toMatchObject({ reason: 'INVALID_POOL_STATE' })
    expect(errorOf(() => buildV3Pool({ ...spec, fee: 1234 }))).toMatchObject({ reason: 'INVALID_INPUT' })
  })

  it('accepts the tick one below a price sitting exactly on a crossed tick', () => {
    expect(buildV3Pool({ ...spec, tick: -1 }).tick).toBe(-1)
  })
})
