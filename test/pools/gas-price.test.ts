/**
 * The gas price's rate from the pools: deriveTokenOutPerEth takes the best output of the reference
 * amount over every path of at most two hops, quoting only the paths whose bound can still win
 * (rank-by-bound.ts): the same rate as quoting them all.
 */
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { DEFAULT_REFERENCE_AMOUNT_WEI, deriveTokenOutPerEth } from '../../src/pools/gas-price.ts'
import { buildPoolGraph, enumeratePaths } from '../../src/pools/paths.ts'
import { quotePath } from '../../src/pools/pool-quote.ts'
import { syntheticToken, v2Pool } from '../routing/helpers.ts'

const WETH = syntheticToken(1)
const USD = syntheticToken(2)
const MID = syntheticToken(3)
const E18 = 10n ** 18n

describe('deriveTokenOutPerEth', () => {
  it('is the best output of the reference amount over every path, wherever the best path comes in the pools', () => {
    // three direct pairs at different prices, the dearest first, and a two-hop route
    const pools = [
      v2Pool(WETH, USD, 1_000n * E18, 1_000_000n * E18),
      v2Pool(WETH, USD, 1_000n * E18, 2_000_000n * E18),
      v2Pool(WETH, MID, 1_000n * E18, 1_000n * E18),
      v2Pool(MID, USD, 1_000n * E18, 2_500_000n * E18),
      v2Pool(WETH, USD, 1_000n * E18, 3_000_000n * E18),
    ]
    const graph = buildPoolGraph(pools)
    const outputs = enumeratePaths(graph, WETH as Address, USD as Address, 2).map((path) => quotePath(path, DEFAULT_REFERENCE_AMOUNT_WEI)?.amountOut ?? 0n)
    const best = outputs.reduce((a, b) => (b > a ? b : a))
    expect(outputs.length).toBe(4)
    expect(best).toBeGreaterThan(outputs[0])
    expect(deriveTokenOutPerEth(graph, WETH as Address, USD as Address)).toEqual({ num: best, den: DEFAULT_REFERENCE_AMOUNT_WEI })
  })

  it('is 1/1 for WETH itself and undefined without a path', () => {
    const graph = buildPoolGraph([v2Pool(WETH, MID, E18, E18)])
    expect(deriveTokenOutPerEth(graph, WETH as Address, WETH as Address)).toEqual({ num: 1n, den: 1n })
    expect(deriveTokenOutPerEth(graph, WETH as Address, USD as Address)).toBeUndefined()
  })
})
