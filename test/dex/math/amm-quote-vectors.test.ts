/**
 * Real-pool vectors (tycho-simulation's unit tests, see fixtures/corpora/amm-quotes/NOTICE):
 * every V2 and V3 expected amount must come out to the wei.
 */
import { describe, expect, it } from 'vitest'

import {
  buildV3Pool,
  getAmountIn,
  getAmountOut,
  getTickAtSqrtRatio,
  quoteExactInputSingle,
  quoteExactOutputSingle,
  simulateV3Swap,
  tickSpacingForFee,
  type V3PoolState,
} from '../../../src/dex/math/index.ts'
import { readFixture } from './helpers.ts'

interface V2Case {
  name: string
  reserveIn: string
  reserveOut: string
  amountIn: string
  expectedAmountOut: string
  feeBps: number
}

interface V3PoolVector {
  name: string
  state: {
    liquidity: string
    sqrtPriceX96: string
    fee: number
    tickSpacing: number
    tick: number
    ticks: Array<{ index: number; liquidityNet: string }>
  }
  cases: Array<{ amountIn: string; zeroForOne: boolean; expectedAmountOut: string }>
}

interface Vectors {
  _about: string
  v2_cases: V2Case[]
  v3_pools: V3PoolVector[]
}

const vectors = readFixture<Vectors>('tycho_uniswap_quote_vectors.json')

function poolOf(vector: V3PoolVector): V3PoolState {
  const { state } = vector
  return buildV3Pool({
    sqrtPriceX96: BigInt(state.sqrtPriceX96),
    tick: state.tick,
    liquidity: BigInt(state.liquidity),
    fee: state.fee,
    // the file states the spacing; the upstream tests derive it from the fee tier
    tickSpacing: tickSpacingForFee(state.fee),
    initializedTicks: state.ticks.map((t) => ({ tick: t.index, liquidityNet: BigInt(t.liquidityNet) })),
  })
}

describe('tycho-simulation quote vectors', () => {
  it('has the cases the NOTICE describes', () => {
    expect(vectors.v2_cases).toHaveLength(2)
    expect(vectors.v3_pools.map((p) => p.cases.length)).toEqual([1, 10])
  })

  describe('Uniswap V2 getAmountOut', () => {
    for (const c of vectors.v2_cases) {
      it(`${c.name}: ${c.amountIn} in -> ${c.expectedAmountOut} out`, () => {
        const amountOut = getAmountOut(BigInt(c.amountIn), BigInt(c.reserveIn), BigInt(c.reserveOut), c.feeBps)
        expect(amountOut).toBe(BigInt(c.expectedAmountOut))
        // and getAmountIn of that output asks for no more than was paid
        expect(getAmountIn(amountOut, BigInt(c.reserveIn), BigInt(c.reserveOut), c.feeBps) <= BigInt(c.amountIn)).toBe(true)
      })
    }
  })

  for (const vector of vectors.v3_pools) {
    describe(`Uniswap V3 ${vector.name}`, () => {
      const pool = poolOf(vector)

      it('states the tick spacing of its fee tier and a tick consistent with its price', () => {
        expect(vector.state.tickSpacing).toBe(tickSpacingForFee(vector.state.fee))
        expect(getTickAtSqrtRatio(pool.sqrtPriceX96)).toBe(pool.tick)
      })

      for (const c of vector.cases) {
        const direction = c.zeroForOne ? 'token0 -> token1' : 'token1 -> token0'
        it(`${direction}: ${c.amountIn} in -> ${c.expectedAmountOut} out`, () => {
          const amountIn = BigInt(c.amountIn)
          const expected = BigInt(c.expectedAmountOut)
          expect(quoteExactInputSingle(pool, c.zeroForOne, amountIn)).toBe(expected)

          const swap = simulateV3Swap(pool, { zeroForOne: c.zeroForOne, amountSpecified: amountIn })
          // the whole input is used (no price limit hit) and the pool pays exactly the expected amount
          expect(c.zeroForOne ? swap.amount0 : swap.amount1).toBe(amountIn)
          expect(c.zeroForOne ? swap.amount1 : swap.amount0).toBe(-expected)

          // the exact-output path: buying the same output costs at most the input, and that input buys it
          const amountInForExpected = quoteExactOutputSingle(pool, c.zeroForOne, expected)
          expect(amountInForExpected <= amountIn).toBe(true)
          expect(quoteExactInputSingle(pool, c.zeroForOne, amountInForExpected) >= expected).toBe(true)
        })
      }
    })
  }
})
