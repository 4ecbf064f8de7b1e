/**
 * Valuing gas in the output token, so plans can be compared by output net of gas.
 *
 * The rate (`tokenOutPerEth`) is the price of ETH in tokenOut with both in base units, as a
 * rational: tokenOut base units per wei. 1/1 when tokenOut is WETH; for USDC at 3000 USD/ETH it
 * is 3000e6 / 1e18. It is derived from the same pools the search uses:
 * a reference amount of WETH (default 0.1 ETH) is quoted through the best path of at most two
 * hops to tokenOut, and the rate is output / input: the marginal price through the deepest route,
 * fee included, with a price impact negligible at that size.
 */
import type { Address } from '../chain/types.ts'
import { enumeratePaths, type PoolGraph } from './paths.ts'
import { pathMaxRate, quotePath, type PathHop } from './pool-quote.ts'
import { boundWithSlack, rankByBound, type RankedItems } from './rank-by-bound.ts'

export interface Rational {
  num: bigint
  den: bigint
}

export const ONE: Rational = Object.freeze({ num: 1n, den: 1n })

export const DEFAULT_REFERENCE_AMOUNT_WEI = 10n ** 17n

/** gas × gasPriceWei wei, in tokenOut base units at `tokenOutPerEth`, rounded down */
export function gasCostInToken(gas: bigint, gasPriceWei: bigint, tokenOutPerEth: Rational): bigint {
  if (tokenOutPerEth.den <= 0n) throw new RangeError('tokenOutPerEth: the denominator must be positive')
  return (gas * gasPriceWei * tokenOutPerEth.num) / tokenOutPerEth.den
}

/**
 * tokenOut base units per wei, from the pools; undefined when no path of at most `maxHops` hops
 * takes the reference amount of WETH to tokenOut.
 */
export function deriveTokenOutPerEth(graph: PoolGraph, weth: Address, tokenOut: Address, referenceAmountWei = DEFAULT_REFERENCE_AMOUNT_WEI, maxHops = 2): Rational | undefined {
  if (tokenOut === weth) return ONE
  const paths = enumeratePaths(graph, weth, tokenOut, maxHops)
  // the best output alone is read: a path whose rate bound cannot reach it is not quoted
  const [best] = rankByBound(paths.length, 1, new ReferenceOutputs(paths, referenceAmountWei))
  return best === undefined ? undefined : { num: best.value, den: referenceAmountWei }
}

/** the paths ranked by their output of the reference amount (a class, not closures made per call: rank-by-bound.ts) */
class ReferenceOutputs implements RankedItems {
  private readonly reference: number

  constructor(
    private readonly paths: readonly PathHop[][],
    private readonly referenceAmountWei: bigint,
  ) {
    this.reference = Number(referenceAmountWei)
  }

  bound(i: number): number {
    const out = this.reference * pathMaxRate(this.paths[i])
    return boundWithSlack(out, out)
  }

  value(i: number): bigint | undefined {
    return quotePath(this.paths[i], this.referenceAmountWei)?.amountOut
  }
}
