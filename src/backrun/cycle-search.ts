/**
 * The backrun search over pool snapshots: after a user's swap has moved some pools, which cycles
 * of pools through them give back more of a token than they take, with which input, for how much.
 * Pure and synchronous (no I/O, no EVM): native exact math on the snapshots of the state after the
 * user's swap; the winners are verified in the EVM afterwards.
 *
 * Candidate cycles (cycle-enumeration.ts): the directed cycles of two or three pools through at
 * least one moved pool, through any token of the pools given (two pools of one pair; triangles
 * through any third token joined to both tokens of a moved pool), bounded by K pools per token pair
 * and N third tokens per moved pool. Each starts at its preferred token (WETH, else a base token,
 * else the moved pool's).
 *
 * Per cycle:
 *   1. Marginal rate: the product of the hops' spot rates after fee (V2 997·R_out / (1000·R_in),
 *      V3 price·(1 - fee)). No hop ever pays more than its spot rate, so a product <= 1 proves that
 *      no input profits: the cycle is dropped without a quote.
 *   2. Optimal input on the exact integer math (optimal-input.ts): all-V2 cycles in closed form;
 *      cycles with a V3 hop by a bracketed golden-section search around an estimate, the closed
 *      form of the same cycle with every V3 pool replaced by its virtual reserves within the
 *      current tick (exact while no tick is crossed). V3 quotes never read past a snapshot's loaded
 *      ticks (a quote that would is `undefined` and ends the bracket).
 *   3. Cycles are optimized in order of their estimated profit in ETH (the estimate is exact for
 *      all-V2 cycles), those with a V3 hop at most `maxOptimizedCycles` of them, skipped once
 *      `maxCandidates` are found and their estimate is under half the last kept profit.
 *   4. The start token that maximises value: for the best `maxCandidates` cycles, every other
 *      rotation (the same pools, the profit taken in another of the cycle's tokens) is optimized
 *      too, and the rotation whose profit is worth the most wei is kept.
 * Time: the search stops optimizing once `budgetMs` has passed since it began (checked before each
 * optimization; the cycles are taken most promising first, so what is cut is the tail) and says so
 * (`budgetExhausted`). The first `maxCandidates` optimizations and the best cycle's rotations are
 * always made: a loaded machine gets a shorter search, not an empty one.
 *
 * Valuation in ETH (profitWei, profit-valuation.ts): a profit in WETH is its own value; a profit in
 * any other token is worth what selling it for WETH through the best path of at most two hops gives
 * (avoiding the cycle's own pools when another path exists), by the exact math on the same
 * snapshots (the state after the user's swap, which is the state the backrun trades on); undefined
 * when no such path joins WETH and the token.
 */
import type { Address } from '../chain/types.ts'
import { MAX_INT256, Q96, v4SwapFee } from '../dex/math/index.ts'
import type { Rational } from '../pools/gas-price.ts'
import { hasLiquidity } from '../pools/pool-kinds.ts'
import { quotePath, type PathHop } from '../pools/pool-quote.ts'
import { v2FeeBps, type PoolSnapshot } from '../pools/pools.ts'
import { v4KeyZeroForOne, v4PlanKey } from '../pools/uniswap-v4.ts'
import { MAX_HOPS, type PlanHop } from '../routing/swap-plan.ts'
import {
  composeCurves,
  constantProductCurve,
  curveOptimalInput,
  curveOutput,
  DEFAULT_MAX_EVALUATIONS,
  DEFAULT_RELATIVE_TOLERANCE_PPM,
  IDENTITY_CURVE,
  maximizeProfit,
  optimalConstantProductInput,
  v2FeeFraction,
  type HyperbolicCurve,
} from './optimal-input.ts'
import { ProfitValuer, valuationGraph } from './profit-valuation.ts'
import { BackrunSearchError, enumerateBackrunCycles, rotateTo, type BackrunCycle, type CycleBounds } from './cycle-enumeration.ts'

export { BackrunSearchError, enumerateBackrunCycles, rotateTo, poolDepth0, DEFAULT_MAX_POOLS_PER_PAIR, DEFAULT_MAX_THIRD_TOKENS } from './cycle-enumeration.ts'
export type { BackrunCycle, CycleBounds } from './cycle-enumeration.ts'

export interface BackrunSearchParams {
  /** snapshots of the pools in the state after the user's swap */
  pools: readonly PoolSnapshot[]
  /** the pools the user's swap moved (the emitters of its Swap events), in any case */
  movedPools: readonly Address[]
  weth: Address
  /** the preferred start tokens after WETH, and the first third tokens of triangles, in this order */
  baseTokens: readonly Address[]
  /** candidates returned, best first; default 5 */
  maxCandidates?: number
  /** 2: pairs of pools only; 3 (default, the most): triangles too */
  maxHops?: number
  /** K: pools of one token pair in the cycles (moved pools always); default 5 */
  maxPoolsPerPair?: number
  /** N: third tokens of triangles per moved pool; default 16 */
  maxThirdTokens?: number
  /** optimizing stops once this many milliseconds have passed since the search began; default 20 */
  budgetMs?: number
  /** the clock of the budget, milliseconds; default performance.now */
  now?: () => number
  /** cycles with a V3 hop optimized at most (all-V2 cycles are closed form and always are); default 12 */
  maxOptimizedCycles?: number
  /** see MaximizeProfitOptions.relativeTolerancePpm; default 100 */
  relativeTolerancePpm?: number
  /** profit evaluations per cycle at most; default 96 */
  maxEvaluationsPerCycle?: number
  /**
   * how profits are valued in wei: searchValuer(pools, weth), made here when not given. A caller
   * that values the executed profits afterwards passes its own, so that the paths to WETH are
   * enumerated and bounded once per request
   */
  valuer?: ProfitValuer
}

export type BackrunMethod = 'closed-form' | 'bracketed'

export interface BackrunCandidate {
  /** the token the cycle starts and ends in, and its profit is counted in */
  startToken: Address
  /** the cycle, from startToken back to it */
  hops: PlanHop[]
  amountIn: bigint
  /** what the cycle returns for amountIn, by the native exact math */
  expectedOut: bigint
  /** expectedOut - amountIn, in startToken (> 0) */
  expectedProfit: bigint
  /** expectedProfit in wei: what selling it for WETH gives (see the module comment); undefined when startToken cannot be valued */
  profitWei: bigint | undefined
  /** exact quotes of the whole cycle made to find amountIn (for benchmarking) */
  quoteEvaluations: number
  /**
   * initialized ticks the cycle's V3 and V4 swaps cross for amountIn, by the native math (0 for an
   * all-V2 cycle): what its gas estimate counts (backrun-gas.ts)
   */
  ticksCrossed: number
  method: BackrunMethod
  /** closed form only: the profit is proven to be the largest over every input */
  certified?: boolean
}

export interface BackrunSearchResult {
  /** best first, by profitWei (candidates that cannot be valued last) */
  candidates: BackrunCandidate[]
  /** directed cycles through a moved pool, one per direction (before choosing start tokens) */
  cycles: number
  /** of those, the ones whose marginal rate is above 1 */
  profitableAtMargin: number
  /** cycle rotations whose optimal input was searched */
  optimized: number
  /** exact cycle quotes over the whole search */
  quoteEvaluations: number
  /** other rotations of the best cycles optimized to choose their start token */
  rotationsTried: number
  /** the time budget ran out: some cycles or rotations were not optimized */
  budgetExhausted: boolean
}

const lower = (a: Address): Address => a.toLowerCase() as Address
const DEFAULT_MAX_CANDIDATES = 5
const DEFAULT_MAX_OPTIMIZED_CYCLES = 12
/** the native search takes ~1-3 ms on the devnet; the budget bounds a pathological pool set */
export const DEFAULT_SEARCH_BUDGET_MS = 20
const FEE_PIPS = 1_000_000n
const Q192 = Q96 * Q96

// ------------------------------------------------------------------ marginal rates and estimates

/** the hop's spot rate after fee (tokenOut per tokenIn in base units), an upper bound of every marginal rate it gives */
export function spotRate(hop: PathHop): Rational {
  const pool = hop.pool
  if (pool.protocol === 'uniswap-v2') {
    const [rin, rout] = hop.zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
    const { numerator, denominator } = v2FeeFraction(v2FeeBps(pool))
    return { num: numerator * rout, den: denominator * rin }
  }
  const keep = FEE_PIPS - BigInt(swapFeePips(hop))
  const p = pool.state.sqrtPriceX96 * pool.state.sqrtPriceX96
  return stateZeroForOne(hop) ? { num: p * keep, den: Q192 * FEE_PIPS } : { num: Q192 * keep, den: p * FEE_PIPS }
}

/**
 * The hop's direction in the pool's state (price, virtual reserves): the hop's own, but for a V4
 * key of native ETH whose WETH sorts above its other currency, where the key's currency0 (ETH) is
 * the hop's token1 (v4KeyZeroForOne)
 */
function stateZeroForOne(hop: PathHop): boolean {
  return hop.pool.protocol === 'uniswap-v4' ? v4KeyZeroForOne(hop.pool, hop.zeroForOne) : hop.zeroForOne
}

/**
 * The fee a V3 or V4 hop's swap charges, in pips: a V3 pool's tier; for a V4 pool its LP fee with
 * the direction's protocol fee on top (what quoteV4 applies).
 */
function swapFeePips(hop: PathHop): number {
  const pool = hop.pool
  if (pool.protocol === 'uniswap-v4') return v4SwapFee(pool.slot0.protocolFee, pool.slot0.lpFee, stateZeroForOne(hop))
  return pool.fee
}

/** the product of the hops' spot rates after fee: above 1 is necessary for any profit */
export function cycleMarginalRate(hops: readonly PathHop[], rateOf: (hop: PathHop) => Rational = spotRate): Rational {
  let num = 1n
  let den = 1n
  for (const hop of hops) {
    const r = rateOf(hop)
    num *= r.num
    den *= r.den
  }
  return { num, den }
}

/** the hop as a constant-product curve: V2 reserves, or V3 virtual reserves at the current price; undefined without liquidity */
function hopCurve(hop: PathHop): HyperbolicCurve | undefined {
  const pool = hop.pool
  if (pool.protocol === 'uniswap-v2') {
    const [rin, rout] = hop.zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
    if (rin <= 0n || rout <= 0n) return undefined
    const { numerator, denominator } = v2FeeFraction(v2FeeBps(pool))
    return constantProductCurve(rin, rout, numerator, denominator)
  }
  const { liquidity, sqrtPriceX96 } = pool.state
  if (liquidity <= 0n) return undefined
  const r0 = (liquidity * Q96) / sqrtPriceX96
  const r1 = (liquidity * sqrtPriceX96) / Q96
  if (r0 <= 0n || r1 <= 0n) return undefined
  const [rin, rout] = stateZeroForOne(hop) ? [r0, r1] : [r1, r0]
  return constantProductCurve(rin, rout, FEE_PIPS - BigInt(swapFeePips(hop)), FEE_PIPS)
}

interface CycleEstimate {
  /** the curve's optimal input (>= 1) */
  amountIn: bigint
  /** the curve's profit there */
  profit: bigint
}

function estimateCycle(hops: readonly PathHop[]): CycleEstimate | undefined {
  let curve = IDENTITY_CURVE
  for (const hop of hops) {
    const c = hopCurve(hop)
    if (c === undefined) return undefined
    curve = composeCurves(curve, c)
  }
  const x = curveOptimalInput(curve)
  if (x === undefined) return undefined
  const amountIn = x < 1n ? 1n : x
  return { amountIn, profit: curveOutput(curve, amountIn) - amountIn }
}

/** a small first input for the doubling bracket: ~1e-6 of the first hop's (virtual) reserve in */
function startAmount(hop: PathHop): bigint {
  const pool = hop.pool
  let reserveIn: bigint
  if (pool.protocol === 'uniswap-v2') reserveIn = hop.zeroForOne ? pool.reserve0 : pool.reserve1
  else {
    const { liquidity, sqrtPriceX96 } = pool.state
    reserveIn = stateZeroForOne(hop) ? (liquidity * Q96) / sqrtPriceX96 : (liquidity * sqrtPriceX96) / Q96
  }
  const s = reserveIn >> 20n
  return s > 0n ? s : 1n
}

// ------------------------------------------------------------------ search

/** the valuer of a search over `pools`: sales through the pools with liquidity (profit-valuation.ts) */
export function searchValuer(pools: readonly PoolSnapshot[], weth: Address): ProfitValuer {
  return new ProfitValuer(valuationGraph(pools.filter(hasLiquidity)), lower(weth))
}

/** the cycle's pools, which valuing its profit avoids (profit-valuation.ts) */
export function poolsOfCycle(cycle: { hops: ReadonlyArray<{ pool: PoolSnapshot | Address }> }): Set<Address> {
  return new Set(cycle.hops.map((h) => (typeof h.pool === 'string' ? h.pool : h.pool.address)))
}

/**
 * a path hop as a plan hop (what the backrun encoder takes): a V4 hop names its PoolManager, tick
 * spacing, hooks, whether its key holds native ETH where the hop holds WETH, and whether its hook
 * makes the hop's amounts an estimate (hookAltersSwap)
 */
export function toPlanHop(hop: PathHop): PlanHop {
  const pool = hop.pool
  const plan: PlanHop = { protocol: pool.protocol, pool: pool.address, tokenIn: hop.tokenIn, tokenOut: hop.tokenOut, fee: pool.fee, zeroForOne: hop.zeroForOne }
  // a V4 hop swaps in its PoolManager on the key built from the tokens, fee, tick spacing and hooks
  if (pool.protocol === 'uniswap-v4') plan.v4 = v4PlanKey(pool)
  return plan
}

/**
 * the cycle crosses a V4 pool whose hook may change a swap's amounts or fee (beforeSwap, return
 * deltas): its expected profit is an estimate, only its execution in the EVM gives the profit
 */
export function cycleHasEstimatedHops(hops: readonly PlanHop[]): boolean {
  return hops.some((hop) => hop.v4?.hookAltersSwap === true)
}

interface Optimized {
  amountIn: bigint
  profit: bigint
  evaluations: number
  ticksCrossed: number
  method: BackrunMethod
  certified?: boolean
}

function optimizeCycle(cycle: BackrunCycle, estimate: CycleEstimate | undefined, tolerancePpm: number, maxEvaluations: number): Optimized | undefined {
  const hops = cycle.hops
  if (hops.every((h) => h.pool.protocol === 'uniswap-v2')) {
    const v2 = hops.map((h) => {
      const pool = h.pool as Extract<PoolSnapshot, { protocol: 'uniswap-v2' }>
      return h.zeroForOne
        ? { reserveIn: pool.reserve0, reserveOut: pool.reserve1, feeBps: v2FeeBps(pool) }
        : { reserveIn: pool.reserve1, reserveOut: pool.reserve0, feeBps: v2FeeBps(pool) }
    })
    const r = optimalConstantProductInput(v2)
    return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit, evaluations: r.evaluations, ticksCrossed: 0, method: 'closed-form', certified: r.certified }
  }
  // each input is quoted once (maximizeProfit remembers its evaluations): its ticks crossed with it
  const ticks = new Map<bigint, number>()
  const profitFn = (x: bigint): bigint | undefined => {
    const q = quotePath(hops, x)
    if (q === undefined) return undefined
    ticks.set(x, q.ticksCrossed)
    return q.amountOut - x
  }
  const r = maximizeProfit(profitFn, {
    guess: estimate?.amountIn,
    start: startAmount(hops[0]),
    maxAmount: MAX_INT256,
    relativeTolerancePpm: tolerancePpm,
    maxEvaluations,
  })
  return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit, evaluations: r.evaluations, ticksCrossed: ticks.get(r.amountIn) ?? 0, method: 'bracketed' }
}

/** candidates first by profitWei (highest first), unvalued last; ties by the smaller input */
function byValue(a: BackrunCandidate, b: BackrunCandidate): number {
  if (a.profitWei !== undefined && b.profitWei !== undefined) {
    if (a.profitWei !== b.profitWei) return a.profitWei > b.profitWei ? -1 : 1
  } else if (a.profitWei !== undefined) return -1
  else if (b.profitWei !== undefined) return 1
  return a.amountIn < b.amountIn ? -1 : a.amountIn > b.amountIn ? 1 : 0
}

/** the search with its counters; see findBackrunCandidates */
export function searchBackrun(params: BackrunSearchParams): BackrunSearchResult {
  const maxCandidates = params.maxCandidates ?? DEFAULT_MAX_CANDIDATES
  const maxOptimized = params.maxOptimizedCycles ?? DEFAULT_MAX_OPTIMIZED_CYCLES
  const tolerancePpm = params.relativeTolerancePpm ?? DEFAULT_RELATIVE_TOLERANCE_PPM
  const maxEvaluations = params.maxEvaluationsPerCycle ?? DEFAULT_MAX_EVALUATIONS
  const budgetMs = params.budgetMs ?? DEFAULT_SEARCH_BUDGET_MS
  const now = params.now ?? (() => performance.now())
  if (!Number.isInteger(maxCandidates) || maxCandidates < 0) throw new BackrunSearchError(`maxCandidates must be a non-negative integer, not ${maxCandidates}`)
  if (!(budgetMs > 0)) throw new BackrunSearchError(`budgetMs must be positive, not ${budgetMs}`)
  const startedAt = now()
  const weth = lower(params.weth)
  const pools = params.pools.filter(hasLiquidity)
  const bounds: CycleBounds = { maxHops: params.maxHops ?? MAX_HOPS, maxPoolsPerPair: params.maxPoolsPerPair, maxThirdTokens: params.maxThirdTokens }
  const all = enumerateBackrunCycles(pools, params.movedPools, weth, params.baseTokens, bounds)

  // 1. the marginal rate, once per directed cycle
  // graph edges are shared by the cycles: one spot rate per pool and direction
  const rates = new Map<PathHop, Rational>()
  const rateOf = (hop: PathHop): Rational => {
    let r = rates.get(hop)
    if (r === undefined) rates.set(hop, (r = spotRate(hop)))
    return r
  }
  const live = all.filter((c) => {
    const r = cycleMarginalRate(c.hops, rateOf)
    return r.num > r.den
  })
  const result: BackrunSearchResult = {
    candidates: [],
    cycles: all.length,
    profitableAtMargin: live.length,
    optimized: 0,
    quoteEvaluations: 0,
    rotationsTried: 0,
    budgetExhausted: false,
  }
  if (live.length === 0 || maxCandidates === 0) return result

  const valuer = params.valuer ?? searchValuer(pools, weth)
  /**
   * false (and flagged) once the time budget is spent; the first maxCandidates optimizations are
   * always made, so a slow machine gets fewer cycles, never none
   */
  const inBudget = (): boolean => {
    if (result.optimized < maxCandidates || now() - startedAt <= budgetMs) return true
    result.budgetExhausted = true
    return false
  }
  /** the cycle optimized and valued, or undefined when no input profits */
  const optimize = (cycle: BackrunCycle, estimate: CycleEstimate | undefined): BackrunCandidate | undefined => {
    const r = optimizeCycle(cycle, estimate, tolerancePpm, maxEvaluations)
    result.optimized++
    result.quoteEvaluations += r?.evaluations ?? 0
    if (r === undefined || r.profit <= 0n) return undefined
    return {
      startToken: cycle.startToken,
      hops: cycle.hops.map(toPlanHop),
      amountIn: r.amountIn,
      expectedOut: r.amountIn + r.profit,
      expectedProfit: r.profit,
      profitWei: valuer.toWei(cycle.startToken, r.profit, poolsOfCycle(cycle)),
      quoteEvaluations: r.evaluations,
      ticksCrossed: r.ticksCrossed,
      method: r.method,
      ...(r.certified === undefined ? {} : { certified: r.certified }),
    }
  }
  /** the best candidate per directed cycle */
  const found = new Map<string, { cycle: BackrunCycle; candidate: BackrunCandidate }>()
  const run = (cycle: BackrunCycle, estimate: CycleEstimate | undefined) => {
    const candidate = optimize(cycle, estimate)
    if (candidate !== undefined) found.set(cycle.key, { cycle, candidate })
  }
  const isV2Only = (cycle: BackrunCycle) => cycle.hops.every((h) => h.pool.protocol === 'uniswap-v2')

  // 2. every live cycle, most promising first by its estimate in wei (the closed form of its
  // constant-product curve; exact for all-V2 cycles, V3 pools at their virtual reserves): all-V2
  // cycles by the closed form, cycles with a V3 hop by the bracketed search, at most
  // maxOptimizedCycles of those
  const ranked = live.map((cycle) => {
    const estimate = estimateCycle(cycle.hops)
    return { cycle, estimate, estimateWei: estimate === undefined ? undefined : valuer.toWei(cycle.startToken, estimate.profit, poolsOfCycle(cycle)) }
  })
  ranked.sort((a, b) => {
    if (a.estimateWei !== undefined && b.estimateWei !== undefined) return a.estimateWei > b.estimateWei ? -1 : a.estimateWei < b.estimateWei ? 1 : 0
    return a.estimateWei !== undefined ? -1 : b.estimateWei !== undefined ? 1 : 0
  })
  let optimizedMixed = 0
  for (const entry of ranked) {
    if (!inBudget()) break
    if (isV2Only(entry.cycle)) {
      run(entry.cycle, undefined)
      continue
    }
    if (optimizedMixed >= maxOptimized) continue
    if (found.size >= maxCandidates && entry.estimateWei !== undefined) {
      const kth = [...found.values()].map((f) => f.candidate).sort(byValue)[maxCandidates - 1].profitWei
      if (kth !== undefined && entry.estimateWei * 2n < kth) continue
    }
    run(entry.cycle, entry.estimate)
    optimizedMixed++
  }

  // 4. the best cycles' start tokens: every other rotation optimized, and kept when its profit is
  // worth more wei than the current one's, both valued by a sale that avoids the cycle's own pools
  // (a comparison through the pools the cycle trades would favour the token it gains); a rotation
  // whose token cannot be valued that way is never chosen, and any that can beats one that cannot
  const best = [...found.values()].sort((x, y) => byValue(x.candidate, y.candidate)).slice(0, maxCandidates)
  for (const entry of best) {
    const avoid = poolsOfCycle(entry.cycle)
    let current = valuer.toWeiAvoiding(entry.candidate.startToken, entry.candidate.expectedProfit, avoid)
    for (const hop of entry.cycle.hops) {
      if (hop.tokenIn === entry.cycle.startToken || (entry !== best[0] && !inBudget())) continue
      if (!valuer.canValueAvoiding(hop.tokenIn, avoid)) continue
      const hops = rotateTo(entry.cycle.hops, hop.tokenIn)
      const rotation: BackrunCycle = { startToken: hop.tokenIn, hops, key: entry.cycle.key }
      result.rotationsTried++
      const candidate = optimize(rotation, isV2Only(rotation) ? undefined : estimateCycle(hops))
      const value = candidate === undefined ? undefined : valuer.toWeiAvoiding(candidate.startToken, candidate.expectedProfit, avoid)
      if (candidate !== undefined && value !== undefined && (current === undefined || value > current)) {
        entry.candidate = candidate
        current = value
      }
    }
  }
  result.candidates = best.map((e) => e.candidate).sort(byValue)
  return result
}

/**
 * The backrun candidates after a user's swap: profitable cycles through the pools it moved, each
 * with its optimal input by the exact native math, best first by profit in wei. Pure and
 * synchronous; see the module comment for the cycles, the optimization and the valuation.
 */
export function findBackrunCandidates(params: BackrunSearchParams): BackrunCandidate[] {
  return searchBackrun(params).candidates
}
