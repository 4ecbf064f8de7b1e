/**
 * v3ExactInput against simulateV3Swap: the same used input, output and ticks crossed (or the same
 * error) for every amount, in any order of amounts over one state, with and without a price limit;
 * and the kept steps are what later quotes walk (a crossed tick is read once per state).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { AmmMathError, defaultSqrtPriceLimit, getSqrtRatioAtTick, simulateV3Swap, v3AmountInToTarget, v3ExactInput, v3StepTarget, type V3PoolState, type V3TickInfo } from '../../../src/dex/math/index.ts'
import { poolFromPositions, randomPoolArb, type RandomPool } from './helpers.ts'

function build(p: RandomPool): V3PoolState {
  return poolFromPositions(p.fee, p.tickSpacing, p.sqrtPriceX96, p.positions).pool
}

/** simulateV3Swap's figures as v3ExactInput gives them, or the error's code */
function bySimulation(pool: V3PoolState, zeroForOne: boolean, amountIn: bigint, limit: bigint | undefined): unknown {
  try {
    const r = simulateV3Swap(pool, { zeroForOne, amountSpecified: amountIn, sqrtPriceLimitX96: limit })
    const [amountUsed, calculated] = zeroForOne ? [r.amount0, r.amount1] : [r.amount1, r.amount0]
    return { amountUsed, amountOut: -calculated, initializedTicksCrossed: r.initializedTicksCrossed }
  } catch (err) {
    if (err instanceof AmmMathError) return err.reason
    throw err
  }
}

function byWalk(pool: V3PoolState, zeroForOne: boolean, amountIn: bigint, limit: bigint | undefined): unknown {
  try {
    return v3ExactInput(pool, zeroForOne, amountIn, limit)
  } catch (err) {
    if (err instanceof AmmMathError) return err.reason
    throw err
  }
}

/**
 * amounts at the edge of carrying the first step to its target: its input to the target, that input
 * grossed up by the fee (where the amount less its fee just reaches it), and a few wei either side
 */
function firstStepEdges(pool: V3PoolState, zeroForOne: boolean): bigint[] {
  const t = v3StepTarget({ tickNext: 0, initialized: false, sqrtPriceNextX96: 0n, target: 0n, amountInToTarget: undefined }, { tick: 0, initialized: false }, pool, pool.tick, zeroForOne, defaultSqrtPriceLimit(zeroForOne))
  const toTarget = v3AmountInToTarget(pool.sqrtPriceX96, t.target, pool.liquidity)
  const gross = (toTarget * 1_000_000n) / (1_000_000n - BigInt(pool.fee))
  return [-2n, -1n, 0n, 1n, 2n, 3n].flatMap((d) => [toTarget + d, gross + d]).filter((a) => a > 0n)
}

const amountArb = fc.oneof(fc.bigInt({ min: 1n, max: 10n ** 26n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.bigInt({ min: 1n, max: 1000n }))

describe('v3ExactInput', () => {
  it('property: the figures of simulateV3Swap for every amount, in any order over one state, with or without a limit', () => {
    fc.assert(
      fc.property(
        randomPoolArb,
        fc.boolean(),
        fc.array(amountArb, { minLength: 1, maxLength: 8 }),
        // a limit some ticks away (one a swap can reach), none, or one on the wrong side
        fc.oneof(fc.constant(undefined), fc.integer({ min: -3000, max: 3000 })),
        (p, zeroForOne, amounts, limitTicks) => {
          const pool = build(p)
          const limit = limitTicks === undefined ? undefined : getSqrtRatioAtTick(Math.max(-887272, Math.min(887272, pool.tick + limitTicks)))
          // twice over: the second pass walks the steps the first kept
          const edges = limit === undefined ? firstStepEdges(pool, zeroForOne) : []
          for (const amountIn of [...amounts, ...edges, ...amounts.reverse(), ...edges, 0n, -5n]) {
            expect(byWalk(pool, zeroForOne, amountIn, limit)).toEqual(bySimulation(pool, zeroForOne, amountIn, limit))
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('a state quoted with two limits in one direction: each quote its own limit', () => {
    const pool = build({ fee: 3000, tickSpacing: 60, sqrtPriceX96: getSqrtRatioAtTick(30), positions: [{ tickLower: -6000, tickUpper: 6000, liquidity: 10n ** 20n }] })
    const near = getSqrtRatioAtTick(-120)
    for (const limit of [near, undefined, near]) {
      for (const amountIn of [10n ** 15n, 10n ** 18n, 10n ** 21n]) expect(byWalk(pool, true, amountIn, limit)).toEqual(bySimulation(pool, true, amountIn, limit))
    }
  })

  it('walks the kept steps: a tick crossed by a quote is read once for the state, not once per quote', () => {
    // two positions, so that a large swap crosses initialized ticks
    const built = build({
      fee: 500,
      tickSpacing: 10,
      sqrtPriceX96: getSqrtRatioAtTick(5),
      positions: [
        { tickLower: -200, tickUpper: 200, liquidity: 10n ** 18n },
        { tickLower: -4000, tickUpper: 4000, liquidity: 10n ** 19n },
      ],
    })
    let reads = 0
    const ticks = new Map<number, V3TickInfo>(built.ticks)
    const counted = Object.assign(Object.create(ticks) as Map<number, V3TickInfo>, {
      get: (tick: number) => {
        reads++
        return ticks.get(tick)
      },
    })
    const pool: V3PoolState = { ...built, ticks: counted }
    const first = v3ExactInput(pool, true, 10n ** 18n, undefined)
    expect(first.initializedTicksCrossed).toBeGreaterThan(0)
    expect(reads).toBe(first.initializedTicksCrossed)
    for (const amountIn of [10n ** 18n + 1n, 10n ** 18n + 2n, 10n ** 18n]) {
      expect(v3ExactInput(pool, true, amountIn, undefined)).toEqual(bySimulation(built, true, amountIn, undefined))
    }
    expect(reads).toBe(first.initializedTicksCrossed)
  })
})
