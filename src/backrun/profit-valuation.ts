/**
 * What a backrun's profit is worth in wei, whatever token it is taken in: the WETH that selling it
 * would give, by the exact native math on the same pool snapshots the search used (the state after
 * the user's swap), through the best path of at most two hops from the token to WETH (the token's
 * pools with WETH, or with a token that has one). A profit in WETH is its own value.
 *
 * Why the sale and not a price: the profit is paid in its token, and the sale is what it can be
 * turned into, fee and price impact included, so the value never flatters a token. A price taken the
 * other way (WETH quoted into the token, as a quote values gas in tokenOut) values the token above
 * its mid price by a pool fee, which would tilt the choice of a cycle's start token toward the token
 * that is not WETH for no gain.
 *
 * The cycle's own pools are left out of the sale when another path exists (`avoid`): they are the
 * ones the user's swap mispriced, and selling through them would count that mispricing twice (a
 * profit in the token the cycle gains would look worth more than the same cycle's profit taken in
 * WETH). Only when every path passes through them are they used.
 *
 * Undefined when no path of at most two hops joins the token to WETH, or the amount cannot be sold
 * (it rounds to nothing, or the pools cannot take it). Pools whose math is only an estimate (a V4
 * hook that may change the swap) are not sold through (valuationGraph).
 *
 * Cost: a token's paths are enumerated once per valuer, with each path's maxRate (pathMaxRate: at
 * least its output per unit of input, for any amount), most promising first. A sale quotes them in
 * that order and stops at the first path whose bound, amount × maxRate, cannot beat the best output
 * already quoted: the answer is the same maximum as quoting every path, in a quote or two where a
 * token has dozens of paths (the search values every cycle it ranks and every candidate).
 */
import type { Address } from '../chain/types.ts'
import { buildPoolGraph, enumeratePaths, type PoolGraph } from '../pools/paths.ts'
import { pathMaxRate, quotePath, type PathHop } from '../pools/pool-quote.ts'
import type { PoolSnapshot } from '../pools/pools.ts'

/** hops from any token to WETH that valuation considers */
export const VALUATION_MAX_HOPS = 2

/**
 * The graph a sale is valued on: every pool but the V4 pools whose hook may change a swap
 * (hookAltersSwap), whose math is only an estimate (a fee the hook overrides would flatter the sale)
 */
export function valuationGraph(pools: readonly PoolSnapshot[]): PoolGraph {
  return buildPoolGraph(pools.filter((p) => !(p.protocol === 'uniswap-v4' && p.hookAltersSwap)))
}

/** a path to WETH with its bound: it never gives more than amountIn × maxRate */
interface SalePath {
  hops: PathHop[]
  maxRate: number
}

export class ProfitValuer {
  /** per token, its paths to WETH, highest maxRate first */
  private readonly paths = new Map<Address, SalePath[]>()

  constructor(
    private readonly graph: PoolGraph,
    private readonly weth: Address,
  ) {}

  /**
   * `amount` of `token` in wei: what selling it for WETH gives, through paths that avoid the pools in
   * `avoid` when there is one; undefined when it cannot be sold
   */
  toWei(token: Address, amount: bigint, avoid?: ReadonlySet<Address>): bigint | undefined {
    return this.value(token, amount, avoid, false)
  }

  /** as toWei, but undefined unless a path avoids every pool in `avoid`: a value independent of those pools */
  toWeiAvoiding(token: Address, amount: bigint, avoid: ReadonlySet<Address>): bigint | undefined {
    return this.value(token, amount, avoid, true)
  }

  /** whether a path from the token to WETH avoids every pool in `avoid` */
  canValueAvoiding(token: Address, avoid: ReadonlySet<Address>): boolean {
    return token === this.weth || this.pathsOf(token).some((path) => avoids(path, avoid))
  }

  private value(token: Address, amount: bigint, avoid: ReadonlySet<Address> | undefined, strict: boolean): bigint | undefined {
    if (token === this.weth) return amount
    const all = this.pathsOf(token)
    const clear = avoid === undefined ? all : all.filter((path) => avoids(path, avoid))
    if (clear.length === 0 && (strict || all.length === 0)) return undefined
    if (amount <= 0n) return 0n
    const amountNumber = Number(amount)
    let best: bigint | undefined
    for (const path of clear.length > 0 ? clear : all) {
      // the paths come highest bound first: once a bound cannot beat the best output, no later path can
      // (the bound is padded far above a double's rounding, as the route search's: pool-quote.ts)
      if (best !== undefined && amountNumber * path.maxRate <= Number(best)) break
      const q = quotePath(path.hops, amount)
      if (q !== undefined && (best === undefined || q.amountOut > best)) best = q.amountOut
    }
    return best
  }

  private pathsOf(token: Address): SalePath[] {
    let paths = this.paths.get(token)
    if (paths === undefined) {
      paths = enumeratePaths(this.graph, token, this.weth, VALUATION_MAX_HOPS).map((hops) => {
        const maxRate = pathMaxRate(hops)
        // an empty pool's rate (0 / 0) bounds nothing: such a path is always quoted
        return { hops, maxRate: Number.isNaN(maxRate) ? Infinity : maxRate }
      })
      // a stable sort: equal bounds keep the enumeration's order
      paths.sort((a, b) => b.maxRate - a.maxRate)
      this.paths.set(token, paths)
    }
    return paths
  }
}

function avoids(path: SalePath, avoid: ReadonlySet<Address>): boolean {
  return path.hops.every((hop) => !avoid.has(hop.pool.address))
}
