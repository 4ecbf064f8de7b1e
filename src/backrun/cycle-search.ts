/**
 * The backrun search over pool snapshots: after a user's swap has moved some pools, which cycles
 * of pools through them give back more of a token than they take, with which input, for how much.
 * Pure and synchronous (no I/O, no EVM): native exact math on the snapshots of the state after the
 * user's swap; the winners are verified in the EVM afterwards.
 *
 * Candidate cycles are the directed cycles through at least one moved pool:
 *   - two pools of one pair (V2 against V3, one V3 fee tier against another, V2 against V2);
 *   - with maxHops 3, triangles A -> B -> C -> A of three pools of three different pairs, at most
 *     one of A, B, C outside the base tokens and WETH (a triangle "through the base tokens").
 * Both directions of every cycle are candidates. A cycle starts and ends at the token its profit is
 * taken in: WETH when the cycle holds it, else the first base token (in `baseTokens` order) it
 * holds, else each of its tokens in turn (the best-valued rotation is kept).
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
 *   3. Cycles with a V3 hop are optimized in order of their estimated profit in ETH, at most
 *      `maxOptimizedCycles` of them, stopping early once `maxCandidates` are found and the next
 *      estimate is under half the last kept profit.
 *
 * Valuation in ETH (profitWei): a profit in WETH is its own value. A profit in another token is
 * divided by the token's price in ETH from the same snapshots, `deriveTokenOutPerEth` of
 * pools/gas-price.ts: 0.1 WETH quoted to the token through its best path of at most two hops,
 * rate = output / input in base units (the fee and a small price impact included, so a token
 * profit is valued slightly above its mid price). profitWei = floor(profit · den / num); undefined
 * when no path of at most two hops joins WETH and the token. The rate is taken on the state after
 * the user's swap, which is the state the backrun trades on.
 */
import type { Address } from '../chain/types.ts'
import { MAX_INT256, Q96 } from '../dex/math/index.ts'
import { deriveTokenOutPerEth, type Rational } from '../pools/gas-price.ts'
import { buildPoolGraph, type PoolGraph } from '../pools/paths.ts'
import { hasLiquidity } from '../pools/pool-kinds.ts'
import { quotePath, type PathHop } from '../pools/pool-quote.ts'
import { v2FeeBps, type PoolSnapshot } from '../pools/pools.ts'
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
import { BaseError } from '../primitives/base-error.ts'

export interface BackrunSearchParams {
  /** snapshots of the pools in the state after the user's swap */
  pools: readonly PoolSnapshot[]
  /** the pools the user's swap moved (the emitters of its Swap events), in any case */
  movedPools: readonly Address[]
  weth: Address
  /** tokens a triangle may pass through (WETH counts as one whether listed or not) */
  baseTokens: readonly Address[]
  /** candidates returned, best first; default 5 */
  maxCandidates?: number
  /** 2: pairs of pools only; 3 (default, the most): triangles too */
  maxHops?: number
  /** cycles with a V3 hop optimized at most (all-V2 cycles are closed form and always are); default 12 */
  maxOptimizedCycles?: number
  /** see MaximizeProfitOptions.relativeTolerancePpm; default 100 */
  relativeTolerancePpm?: number
  /** profit evaluations per cycle at most; default 96 */
  maxEvaluationsPerCycle?: number
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
  /** expectedProfit in wei (see the module comment); undefined when startToken cannot be priced */
  profitWei: bigint | undefined
  /** exact quotes of the whole cycle made to find amountIn (for benchmarking) */
  quoteEvaluations: number
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
}

/** a directed cycle, rotated to start at its profit token */
export interface BackrunCycle {
  startToken: Address
  hops: PathHop[]
  /** the same for every rotation of one directed cycle */
  key: string
}

export class BackrunSearchError extends BaseError {
  override readonly name = 'BackrunSearchError'
}

const lower = (a: Address): Address => a.toLowerCase() as Address
const DEFAULT_MAX_CANDIDATES = 5
const DEFAULT_MAX_OPTIMIZED_CYCLES = 12
const FEE_PIPS = 1_000_000n
const Q192 = Q96 * Q96

// ------------------------------------------------------------------ cycles

/**
 * Rotation-invariant identity of a directed cycle, from numeric hop ids (pool index · 2 + direction):
 * the ids rotated to start at the smallest (ids of a simple cycle are distinct).
 */
function cycleKey(ids: readonly number[]): string {
  let min = 0
  for (let i = 1; i < ids.length; i++) if (ids[i] < ids[min]) min = i
  let key = ''
  for (let i = 0; i < ids.length; i++) key += `${ids[(min + i) % ids.length]},`
  return key
}

function rotateTo(hops: readonly PathHop[], start: Address): PathHop[] {
  const i = hops.findIndex((h) => h.tokenIn === start)
  return [...hops.slice(i), ...hops.slice(0, i)]
}

/** the tokens a cycle may start at, by the profit-token preference */
function startTokens(hops: readonly PathHop[], weth: Address, baseTokens: readonly Address[]): Address[] {
  const tokens = hops.map((h) => h.tokenIn)
  if (tokens.includes(weth)) return [weth]
  const base = baseTokens.find((t) => tokens.includes(t))
  return base !== undefined ? [base] : tokens
}

/**
 * Every directed cycle of 2..maxHops pools through at least one moved pool, both directions, each
 * rotated to its start token (a cycle without WETH or a base token once per token). Pools without
 * liquidity and repeated addresses are ignored.
 */
export function enumerateBackrunCycles(
  pools: readonly PoolSnapshot[],
  movedPools: readonly Address[],
  weth: Address,
  baseTokens: readonly Address[],
  maxHops: number = MAX_HOPS,
): BackrunCycle[] {
  if (!Number.isInteger(maxHops) || maxHops < 2 || maxHops > MAX_HOPS) throw new BackrunSearchError(`maxHops must be 2 or 3, not ${maxHops}`)
  const wethL = lower(weth)
  const bases = baseTokens.map(lower)
  const baseSet = new Set<Address>([wethL, ...bases])
  const graph = buildPoolGraph(pools)
  const moved = new Set(movedPools.map(lower))

  const index = new Map<PoolSnapshot, number>()
  const idOf = (hop: PathHop): number => {
    let i = index.get(hop.pool)
    if (i === undefined) index.set(hop.pool, (i = index.size))
    return i * 2 + (hop.zeroForOne ? 1 : 0)
  }
  const seen = new Set<string>()
  const out: BackrunCycle[] = []
  const add = (hops: PathHop[]) => {
    const key = cycleKey(hops.map(idOf))
    if (seen.has(key)) return
    seen.add(key)
    for (const start of startTokens(hops, wethL, bases)) out.push({ startToken: start, hops: rotateTo(hops, start), key })
  }

  for (const edges of graph.values()) {
    for (const first of edges) {
      if (!moved.has(first.pool.address)) continue
      const a = first.tokenIn
      const b = first.tokenOut
      for (const second of graph.get(b) ?? []) {
        if (second.pool.address === first.pool.address) continue
        if (second.tokenOut === a) {
          add([first, second])
          continue
        }
        if (maxHops < 3) continue
        const c = second.tokenOut
        // through the base tokens: at most one token of the triangle outside them
        const outside = (baseSet.has(a) ? 0 : 1) + (baseSet.has(b) ? 0 : 1) + (baseSet.has(c) ? 0 : 1)
        if (outside > 1) continue
        for (const third of graph.get(c) ?? []) {
          if (third.tokenOut !== a) continue
          add([first, second, third])
        }
      }
    }
  }
  return out
}

// ------------------------------------------------------------------ marginal rates and estimates

/** the hop's spot rate after fee (tokenOut per tokenIn in base units), an upper bound of every marginal rate it gives */
export function spotRate(hop: PathHop): Rational {
  const pool = hop.pool
  if (pool.protocol === 'uniswap-v2') {
    const [rin, rout] = hop.zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
    const { numerator, denominator } = v2FeeFraction(v2FeeBps(pool))
    return { num: numerator * rout, den: denominator * rin }
  }
  const keep = FEE_PIPS - BigInt(pool.fee)
  const p = pool.state.sqrtPriceX96 * pool.state.sqrtPriceX96
  return hop.zeroForOne ? { num: p * keep, den: Q192 * FEE_PIPS } : { num: Q192 * keep, den: p * FEE_PIPS }
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
  const [rin, rout] = hop.zeroForOne ? [r0, r1] : [r1, r0]
  return constantProductCurve(rin, rout, FEE_PIPS - BigInt(pool.fee), FEE_PIPS)
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
    reserveIn = hop.zeroForOne ? (liquidity * Q96) / sqrtPriceX96 : (liquidity * sqrtPriceX96) / Q96
  }
  const s = reserveIn >> 20n
  return s > 0n ? s : 1n
}

// ------------------------------------------------------------------ valuation

/** values amounts of any token in wei by deriveTokenOutPerEth on the snapshots, one rate per token */
class WeiValuer {
  private readonly rates = new Map<Address, Rational | undefined>()
  private graph: PoolGraph | undefined

  constructor(
    private readonly pools: readonly PoolSnapshot[],
    private readonly weth: Address,
  ) {}

  /** token base units per wei */
  rate(token: Address): Rational | undefined {
    if (token === this.weth) return { num: 1n, den: 1n }
    if (!this.rates.has(token)) {
      this.graph ??= buildPoolGraph(this.pools)
      this.rates.set(token, deriveTokenOutPerEth(this.graph, this.weth, token))
    }
    return this.rates.get(token)
  }

  toWei(token: Address, amount: bigint): bigint | undefined {
    if (token === this.weth) return amount
    const r = this.rate(token)
    return r === undefined || r.num <= 0n ? undefined : (amount * r.den) / r.num
  }
}

// ------------------------------------------------------------------ search

function toPlanHop(hop: PathHop): PlanHop {
  return { protocol: hop.pool.protocol, pool: hop.pool.address, tokenIn: hop.tokenIn, tokenOut: hop.tokenOut, fee: hop.pool.fee, zeroForOne: hop.zeroForOne }
}

interface Optimized {
  amountIn: bigint
  profit: bigint
  evaluations: number
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
    return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit, evaluations: r.evaluations, method: 'closed-form', certified: r.certified }
  }
  const profitFn = (x: bigint): bigint | undefined => {
    const q = quotePath(hops, x)
    return q === undefined ? undefined : q.amountOut - x
  }
  const r = maximizeProfit(profitFn, {
    guess: estimate?.amountIn,
    start: startAmount(hops[0]),
    maxAmount: MAX_INT256,
    relativeTolerancePpm: tolerancePpm,
    maxEvaluations,
  })
  return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit, evaluations: r.evaluations, method: 'bracketed' }
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
  if (!Number.isInteger(maxCandidates) || maxCandidates < 0) throw new BackrunSearchError(`maxCandidates must be a non-negative integer, not ${maxCandidates}`)
  const weth = lower(params.weth)
  const pools = params.pools.filter(hasLiquidity)
  const all = enumerateBackrunCycles(pools, params.movedPools, weth, params.baseTokens, params.maxHops ?? MAX_HOPS)

  // 1. the marginal rate, once per directed cycle (it does not depend on the rotation)
  const marginal = new Map<string, boolean>()
  // graph edges are shared by the cycles: one spot rate per pool and direction
  const rates = new Map<PathHop, Rational>()
  const rateOf = (hop: PathHop): Rational => {
    let r = rates.get(hop)
    if (r === undefined) rates.set(hop, (r = spotRate(hop)))
    return r
  }
  for (const c of all) {
    if (marginal.has(c.key)) continue
    const r = cycleMarginalRate(c.hops, rateOf)
    marginal.set(c.key, r.num > r.den)
  }
  const live = all.filter((c) => marginal.get(c.key) === true)
  const result: BackrunSearchResult = {
    candidates: [],
    cycles: marginal.size,
    profitableAtMargin: [...marginal.values()].filter(Boolean).length,
    optimized: 0,
    quoteEvaluations: 0,
  }
  if (live.length === 0 || maxCandidates === 0) return result

  const valuer = new WeiValuer(pools, weth)
  const found: BackrunCandidate[] = []
  /** each candidate's directed cycle, to keep one rotation per cycle */
  const keys = new Map<BackrunCandidate, string>()
  const run = (cycle: BackrunCycle, estimate: CycleEstimate | undefined) => {
    const r = optimizeCycle(cycle, estimate, tolerancePpm, maxEvaluations)
    result.optimized++
    result.quoteEvaluations += r?.evaluations ?? 0
    if (r === undefined || r.profit <= 0n) return
    found.push({
      startToken: cycle.startToken,
      hops: cycle.hops.map(toPlanHop),
      amountIn: r.amountIn,
      expectedOut: r.amountIn + r.profit,
      expectedProfit: r.profit,
      profitWei: valuer.toWei(cycle.startToken, r.profit),
      quoteEvaluations: r.evaluations,
      method: r.method,
      ...(r.certified === undefined ? {} : { certified: r.certified }),
    })
    keys.set(found[found.length - 1], cycle.key)
  }

  // 2. all-V2 cycles: closed form, cheap enough to do them all
  const mixed: Array<{ cycle: BackrunCycle; estimate: CycleEstimate | undefined; estimateWei: bigint | undefined }> = []
  for (const cycle of live) {
    if (cycle.hops.every((h) => h.pool.protocol === 'uniswap-v2')) run(cycle, undefined)
    else {
      const estimate = estimateCycle(cycle.hops)
      mixed.push({ cycle, estimate, estimateWei: estimate === undefined ? undefined : valuer.toWei(cycle.startToken, estimate.profit) })
    }
  }

  // 3. cycles with a V3 hop: most promising first, bounded
  mixed.sort((a, b) => {
    if (a.estimateWei !== undefined && b.estimateWei !== undefined) return a.estimateWei > b.estimateWei ? -1 : a.estimateWei < b.estimateWei ? 1 : 0
    return a.estimateWei !== undefined ? -1 : b.estimateWei !== undefined ? 1 : 0
  })
  let optimizedMixed = 0
  for (const entry of mixed) {
    if (optimizedMixed >= maxOptimized) break
    if (found.length >= maxCandidates && entry.estimateWei !== undefined) {
      const kth = [...found].sort(byValue)[maxCandidates - 1].profitWei
      if (kth !== undefined && entry.estimateWei * 2n < kth) break
    }
    run(entry.cycle, entry.estimate)
    optimizedMixed++
  }

  // 4. a cycle tried from several start tokens: keep its best-valued rotation (all when none can be valued)
  const byKey = new Map<string, BackrunCandidate[]>()
  for (const c of found) {
    const key = keys.get(c) ?? ''
    const group = byKey.get(key)
    if (group === undefined) byKey.set(key, [c])
    else group.push(c)
  }
  const kept: BackrunCandidate[] = []
  for (const group of byKey.values()) {
    const valued = group.filter((c) => c.profitWei !== undefined)
    if (valued.length === 0) kept.push(...group)
    else kept.push([...valued].sort(byValue)[0])
  }
  result.candidates = kept.sort(byValue).slice(0, maxCandidates)
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
