/**
 * Uniswap/v3-core's own pool swap tests (UniswapV3Pool.swaps.spec.ts and its snapshot, see
 * fixtures/corpora/amm-quotes/NOTICE): 15 pools x 12 swaps, exact input and exact output, price
 * limits, zero-liquidity gaps, the extreme prices. Each result must equal what the contract
 * recorded: both balance changes and the final tick, or the same revert.
 */
import { describe, expect, it } from 'vitest'

import { AmmMathError, simulateV3Swap } from '../../../src/dex/math/index.ts'
import { encodePriceSqrt, poolFromPositions, readFixture } from './helpers.ts'

type PriceSpec = { encodePriceSqrt: [string, string] } | { sqrtPriceX96: string }

interface SwapCase {
  name: string
  zeroForOne: boolean
  amountSpecified: string
  sqrtPriceLimit?: PriceSpec
}

type SwapOutcome = { amount0Delta: string; amount1Delta: string; tickAfter: number } | { swapError: string }

interface PoolCase {
  description: string
  fee: number
  tickSpacing: number
  startingPrice: PriceSpec
  positions: Array<{ tickLower: number; tickUpper: number; liquidity: string }>
  amount0Before: string
  amount1Before: string
  tickBefore: number
  results: Record<string, SwapOutcome>
}

interface Snapshots {
  swapCases: SwapCase[]
  pools: PoolCase[]
}

const snapshots = readFixture<Snapshots>('v3_core_pool_swap_snapshots.json')

function priceOf(spec: PriceSpec): bigint {
  return 'sqrtPriceX96' in spec ? BigInt(spec.sqrtPriceX96) : encodePriceSqrt(BigInt(spec.encodePriceSqrt[0]), BigInt(spec.encodePriceSqrt[1]))
}

describe('v3-core UniswapV3Pool swap snapshots', () => {
  it('covers 15 pools x 12 swaps', () => {
    expect(snapshots.pools).toHaveLength(15)
    expect(snapshots.swapCases).toHaveLength(12)
    for (const p of snapshots.pools) expect(Object.keys(p.results).sort()).toEqual(snapshots.swapCases.map((c) => c.name).sort())
  })

  for (const poolCase of snapshots.pools) {
    describe(poolCase.description, () => {
      const positions = poolCase.positions.map((p) => ({ ...p, liquidity: BigInt(p.liquidity) }))
      const { pool, amount0, amount1 } = poolFromPositions(poolCase.fee, poolCase.tickSpacing, priceOf(poolCase.startingPrice), positions)

      it('is reconstructed exactly: tick and minted amounts as recorded', () => {
        expect(pool.tick).toBe(poolCase.tickBefore)
        expect(amount0).toBe(BigInt(poolCase.amount0Before))
        expect(amount1).toBe(BigInt(poolCase.amount1Before))
      })

      for (const swapCase of snapshots.swapCases) {
        const expected = poolCase.results[swapCase.name]
        it(swapCase.name, () => {
          const run = () =>
            simulateV3Swap(pool, {
              zeroForOne: swapCase.zeroForOne,
              amountSpecified: BigInt(swapCase.amountSpecified),
              sqrtPriceLimitX96: swapCase.sqrtPriceLimit === undefined ? undefined : priceOf(swapCase.sqrtPriceLimit),
            })
          if ('swapError' in expected) {
            expect(run).toThrow(AmmMathError)
            try {
              run()
            } catch (error) {
              expect((error as AmmMathError).revert).toBe(expected.swapError)
            }
            return
          }
          const result = run()
          expect({ amount0: result.amount0, amount1: result.amount1, tickAfter: result.tickAfter }).toEqual({
            amount0: BigInt(expected.amount0Delta),
            amount1: BigInt(expected.amount1Delta),
            tickAfter: expected.tickAfter,
          })
        })
      }
    })
  }
})
