/**
 * Exact-input quotes on pool snapshots with the exact native math, each pool by its kind
 * (uniswap-v2.ts: getAmountOut; uniswap-v3.ts: the pool's swap loop). A quote is `undefined` when
 * the pool cannot take the whole amount: a V2 output of zero (the pair would revert), a V3 swap
 * that would run past the loaded ticks (it stops at the coverage bound and fills partly), or any
 * revert of the math.
 */
import type { Address } from '../chain/types.ts'
import { RATE_PADDING } from '../dex/math/index.ts'
import type { HopQuote } from './pool-kind.ts'
import { poolKind } from './pool-kinds.ts'
import type { PoolSnapshot } from './pools.ts'

export interface PathHop {
  pool: PoolSnapshot
  tokenIn: Address
  tokenOut: Address
  zeroForOne: boolean
}

export interface PathQuote {
  amountOut: bigint
  ticksCrossed: number
}

export type HopQuoter = (pool: PoolSnapshot, zeroForOne: boolean, amountIn: bigint) => HopQuote | undefined

export function quoteHop(pool: PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  return poolKind(pool.protocol).quote(pool, zeroForOne, amountIn)
}

/**
 * quoteHop remembering its answers, for one search over one block's snapshots: the paths of a
 * route search share their first hops (and the paths through one pool pair their first two), and
 * ask them the same amounts (the whole amount, each multiple of a split part). The math is pure,
 * so a remembered answer is the answer. Grows with the search (one entry per pool, direction and
 * amount asked): made per search and dropped with it.
 */
export function rememberingHopQuoter(): HopQuoter {
  // a map per pool and direction: the amount as asked is the key (no negated bigint per ask)
  const zeroForOneAnswers = new Map<PoolSnapshot, Map<bigint, HopQuote | null>>()
  const oneForZeroAnswers = new Map<PoolSnapshot, Map<bigint, HopQuote | null>>()
  return (pool, zeroForOne, amountIn) => {
    const answers = zeroForOne ? zeroForOneAnswers : oneForZeroAnswers
    let byAmount = answers.get(pool)
    if (byAmount === undefined) {
      byAmount = new Map()
      answers.set(pool, byAmount)
    }
    let q = byAmount.get(amountIn)
    if (q === undefined) {
      q = quoteHop(pool, zeroForOne, amountIn) ?? null
      byAmount.set(amountIn, q)
    }
    return q ?? undefined
  }
}

/**
 * amountIn through every hop in turn; undefined when a hop cannot take what it is given. The last
 * hop is asked of `lastHop` (default `quote`): a search whose hop memo no other search reads
 * quotes it directly (route-search.ts).
 */
export function quotePath(hops: readonly PathHop[], amountIn: bigint, quote: HopQuoter = quoteHop, lastHop: HopQuoter = quote): PathQuote | undefined {
  let amount = amountIn
  let ticksCrossed = 0
  const last = hops.length - 1
  for (let i = 0; i <= last; i++) {
    const hop = hops[i]
    const q = (i === last ? lastHop : quote)(hop.pool, hop.zeroForOne, amount)
    if (q === undefined) return undefined
    amount = q.amountOut
    ticksCrossed += q.ticksCrossed
  }
  return { amountOut: amount, ticksCrossed }
}

/**
 * at least quotePath's output per unit of input, for any amount: the product of the hops' maxRate
 * (each hop gives at most its input times its rate), rounded up like them
 */
export function pathMaxRate(hops: readonly PathHop[]): number {
  let rate = RATE_PADDING
  for (const hop of hops) rate *= poolKind(hop.pool.protocol).maxRate(hop.pool, hop.zeroForOne) * RATE_PADDING
  return rate
}

/**
 * Why `quotePath` has no quote for `amountIn`: `zero-output` when every hop up to the failing one
 * takes its whole input and the failing hop's output rounds down to zero (a larger amount would
 * go through: the input is dust for this path), `no-liquidity` for any other failure (an empty
 * reserve, a V3 swap that runs out of liquidity or loaded ticks, a revert of the math).
 * undefined when the path does quote.
 */
export function pathFailure(hops: readonly PathHop[], amountIn: bigint): 'zero-output' | 'no-liquidity' | undefined {
  let amount = amountIn
  for (const hop of hops) {
    const q = quoteHop(hop.pool, hop.zeroForOne, amount)
    if (q !== undefined) {
      amount = q.amountOut
      continue
    }
    return poolKind(hop.pool.protocol).roundsToZero(hop.pool, hop.zeroForOne, amount) ? 'zero-output' : 'no-liquidity'
  }
  return undefined
}
