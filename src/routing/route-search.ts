/**
 * The route search: over the pools loaded at one block, the SwapPlan that maximises the output net
 * of gas (valued in tokenOut). Pure and synchronous: no I/O, only the native AMM math.
 *
 * 1. Enumerate the simple paths of 1..maxHops hops from tokenIn to tokenOut (any pool per hop).
 * 2. Quote the paths with the whole amount: the best single path by net output.
 * 3. Split: hand amountIn out over up to maxSplits pool-disjoint paths (split-allocator.ts), chosen
 *    among the paths best with the whole amount and those best at one part's amount.
 * 4. Keep the split only if its net output beats the best single path's.
 * Steps 2 and 3 quote a path only when an upper bound of its output (its pools' current prices less
 * their fees: pools/pool-quote.ts pathOutputBound) leaves it a chance to rank where it would be
 * used (rank-by-bound.ts): the plan is the one quoting every path gives, for fewer quotes where a
 * pair has many pools (several venues).
 * Every expected output in the plan is the exact math's (V2 getAmountOut, the V3 swap loop), and
 * the legs share no pool, so the plan's total is what the legs deliver executed one after another.
 */
import type { Address } from '../chain/types.ts'
import { deriveTokenOutPerEth, gasCostInToken, type Rational } from '../pools/gas-price.ts'
import { buildPoolGraph, enumeratePaths } from '../pools/paths.ts'
import { pathMaxRate, quoteHop, quotePath, rememberingHopQuoter, type HopQuoter, type PathHop, type PathQuote } from '../pools/pool-quote.ts'
import type { PoolProtocol, PoolSnapshot } from '../pools/pools.ts'
import { v4HopGasExtras, v4PlanKey } from '../pools/uniswap-v4.ts'
import { DEFAULT_GAS_MODEL, legGas, planGas, v4ExtrasGas, type GasModel } from './gas-model.ts'
import { boundWithSlack, rankByBound, type Ranked, type RankedItems } from '../pools/rank-by-bound.ts'
import { allocateSplit, type SplitCandidate } from './split-allocator.ts'
import { MAX_HOPS, type PlanHop, type PlanLeg, type SwapPlan } from './swap-plan.ts'
import { BaseError } from '../primitives/base-error.ts'

export interface RouteSearchParams {
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  /** the pool snapshots of one block (discovery + pool-state loader) */
  pools: readonly PoolSnapshot[]
  /** wei per gas the plan will pay: the next block's base fee (plus any tip) */
  gasPriceWei: bigint
  /**
   * price of ETH in tokenOut, both in base units (tokenOut base units per wei); 1/1 for WETH.
   * Default: derived from `pools` through `weth` (pools/gas-price.ts); gas is not valued (gross output
   * is maximised) when neither is given or no pool path links WETH to tokenOut.
   */
  tokenOutPerEth?: Rational
  /** the chain's wrapped native token, to derive tokenOutPerEth */
  weth?: Address
  /** 1..3, default 3 */
  maxHops?: number
  /** most legs in a plan, default 4; 1 disables splitting */
  maxSplits?: number
  /** equal parts of the split allocator, default 30 */
  splitParts?: number
  gasModel?: GasModel
  /** paths enumerated at most (shortest first), default 2,000 */
  maxPaths?: number
  /** paths the split allocator considers, default 16: the best by full-amount net and by marginal price */
  maxSplitCandidates?: number
  /**
   * the hop quotes of this search: default a fresh rememberingHopQuoter, which it asks for every
   * hop but a path's last; a second search over a subset of the same block's snapshots (the exact
   * pools' plan beside a hooked one) passes the first's, so the hops both ask are quoted once (a
   * given quoter is asked for every hop)
   */
  hopQuoter?: HopQuoter
  /**
   * the paths and gas rate preparePaths gives for these `pools`, tokens, `weth`, `maxHops` and
   * `maxPaths` (kept per block by the routing engine: every quote of a pair at a block has the
   * same ones); default: prepared here
   */
  prepared?: PreparedPaths
}

/** What a search derives from the pools alone, whatever the amount: its paths and its gas rate. */
export interface PreparedPaths {
  paths: PathHop[][]
  /** tokenOut base units per wei (RouteSearchParams.tokenOutPerEth's default); undefined without weth or a path from it */
  tokenOutPerEth: Rational | undefined
}

/** The paths from tokenIn to tokenOut through `pools` (shortest first, at most maxPaths) and the gas rate derived from them. */
export function preparePaths(pools: readonly PoolSnapshot[], tokenIn: Address, tokenOut: Address, weth: Address | undefined, maxHops: number, maxPaths: number): PreparedPaths {
  const graph = buildPoolGraph(pools)
  const paths = enumeratePaths(graph, tokenIn, tokenOut, maxHops, maxPaths)
  return { paths, tokenOutPerEth: paths.length === 0 || weth === undefined ? undefined : deriveTokenOutPerEth(graph, weth, tokenOut) }
}

/** A plan with the search's estimates beside it. */
export interface RoutedPlan extends SwapPlan {
  /** the gas model's estimate; the EVM gives the exact figure when the calldata is simulated */
  estimatedGas: bigint
  /** estimatedGas × gasPriceWei in tokenOut (0 when gas could not be valued) */
  gasCostInTokenOut: bigint
  /** expectedAmountOut - gasCostInTokenOut: what the search maximised */
  netAmountOut: bigint
  /** the rate gas was valued at; undefined when it could not be derived */
  tokenOutPerEth?: Rational
  /** the best single path's net output, which the plan never falls below; undefined when no single path can take the whole amount */
  bestSinglePathNetAmountOut?: bigint
}

/** The search's parameters are out of range (amountIn not positive, maxHops outside 1..MAX_HOPS, ...). */
export class RouteSearchError extends BaseError {
  override readonly name = 'RouteSearchError'
}

/**
 * What a search's paths share: how they are quoted, and how gas is valued. A class with methods,
 * not an object of closures made per search: in the service's workers those closures were compiled
 * by TurboFan again and again, a new closure each time once a full collection had dropped the last
 * one's code (scripts/probe/recompile-trace.ts, session 21); a method is one function for the
 * module's life.
 */
class SearchContext {
  /** tokenOut per gas, as a double (0 when gas cannot be valued) */
  readonly valuePerGas: number

  constructor(
    readonly model: GasModel,
    readonly hopQuoter: HopQuoter,
    /**
     * a path's last hop: the search's own hop memo is never asked it again. Two paths share a last
     * hop with the same input only by coincidence (their other hops differ, so do the amounts they
     * hand it), and the same path at the same amount is the candidate's own memo's; so with a memo
     * of its own, no other search reading it, the search quotes last hops directly: ~40% of its
     * hop asks (single-hop paths among them) without a Map lookup and insert each (h17-quote)
     */
    readonly lastHopQuoter: HopQuoter,
    /** the rate gas is valued at; undefined when it cannot be valued */
    readonly rate: Rational | undefined,
    private readonly gasPriceWei: bigint,
  ) {
    this.valuePerGas = rate === undefined ? 0 : (Number(gasPriceWei) * Number(rate.num)) / Number(rate.den)
  }

  /** gas in tokenOut, rounded down (0 when gas cannot be valued) */
  value(gas: bigint): bigint {
    return this.rate === undefined ? 0n : gasCostInToken(gas, this.gasPriceWei, this.rate)
  }

  /** the legs' exact outcome as a plan: undefined when a leg cannot take its amount */
  evaluate(legs: ReadonlyArray<{ candidate: Candidate; amountIn: bigint }>): Evaluated | undefined {
    const out: Evaluated['legs'] = []
    let amountOut = 0n
    for (const { candidate, amountIn: legIn } of legs) {
      const q = candidate.quote(legIn)
      if (q === undefined) return undefined
      out.push({ path: candidate.path, protocols: candidate.protocols, extraGas: candidate.extraGas, amountIn: legIn, amountOut: q.amountOut, ticksCrossed: q.ticksCrossed })
      amountOut += q.amountOut
    }
    const gas = planGas(this.model, out)
    const gasCost = this.value(gas)
    return { legs: out, amountOut, gas, gasCost, net: amountOut - gasCost }
  }
}

/**
 * What a path's candidate knows whatever the amount: its protocols, pools, V4 extras, fixed gas and
 * maxRate depend only on the path's pool snapshots and the gas model. The routing engine hands every
 * quote of a pair at a block the same path arrays (PreparedPaths), so these are computed once per
 * path and model, not once per search (192 paths for a pair on five venues: ~10% of a search's CPU
 * when made per search). Kept beside the path array (weakly: they go with it).
 */
interface PathFacts {
  readonly protocols: PoolProtocol[]
  readonly extraGas: bigint
  readonly pools: string[]
  readonly maxRate: number
  readonly fixedGas: bigint
  /** the plan's base gas and fixedGas, as a double (singleNetBound) */
  readonly planFixedGas: number
}

/** every path's facts for a paths array and model: one lookup per search, not two per path */
const pathFactsByModel = new WeakMap<GasModel, WeakMap<readonly PathHop[][], PathFacts[]>>()

function pathFacts(paths: readonly PathHop[][], model: GasModel): PathFacts[] {
  let byPaths = pathFactsByModel.get(model)
  if (byPaths === undefined) pathFactsByModel.set(model, (byPaths = new WeakMap()))
  let facts = byPaths.get(paths)
  if (facts === undefined) {
    facts = new Array<PathFacts>(paths.length)
    for (let i = 0; i < paths.length; i++) facts[i] = factsOfPath(paths[i], model)
    byPaths.set(paths, facts)
  }
  return facts
}

/** a path's facts (loops, not map/flatMap with closures made per path: SearchContext says why) */
function factsOfPath(path: readonly PathHop[], model: GasModel): PathFacts {
  const protocols: PoolProtocol[] = []
  const pools: string[] = []
  const v4Extras: Array<ReturnType<typeof v4HopGasExtras>> = []
  for (const h of path) {
    protocols.push(h.pool.protocol)
    pools.push(h.pool.address)
    if (h.pool.protocol === 'uniswap-v4') v4Extras.push(v4HopGasExtras(h.pool))
  }
  const extraGas = v4ExtrasGas(model, v4Extras)
  const fixedGas = legGas(model, protocols, 0, extraGas)
  return { protocols, extraGas, pools, maxRate: pathMaxRate(path), fixedGas, planFixedGas: Number(model.base + fixedGas) }
}

/**
 * One path as the search and the split allocator see it. A class, not an object of closures: a
 * search makes one per path (192 for a pair on five venues), and every closure made per path costs
 * its allocation and, under tsx, a name set on it.
 */
class Candidate implements SplitCandidate {
  readonly protocols: PoolProtocol[]
  /** its V4 hops' hook calls and native wrapping */
  readonly extraGas: bigint
  readonly pools: string[]
  /** at least quote(amount).amountOut / amount, for any amount (pools/pool-quote.ts pathMaxRate) */
  readonly maxRate: number
  /** the gas of its hops and leg, without ticks crossed */
  readonly fixedGas: bigint
  private readonly planFixedGas: number
  private fixedCostMemo: bigint | undefined
  /** the single-path pass, the candidate ranking and the allocator ask for the same amounts (made at the first quote: most paths are never quoted) */
  private memo: Map<bigint, PathQuote | null> | undefined

  constructor(
    readonly path: PathHop[],
    facts: PathFacts,
    private readonly search: SearchContext,
  ) {
    this.protocols = facts.protocols
    this.extraGas = facts.extraGas
    this.pools = facts.pools
    this.maxRate = facts.maxRate
    this.fixedGas = facts.fixedGas
    this.planFixedGas = facts.planFixedGas
  }

  get fixedCost(): bigint {
    return (this.fixedCostMemo ??= this.search.value(this.fixedGas))
  }

  /**
   * at least the net output of the path as a plan of its own with `amountIn` (a double padded for
   * its rounding): its output's bound less the gas of the plan without ticks crossed
   */
  singleNetBound(amountIn: number): number {
    const out = amountIn * this.maxRate
    const gas = this.planFixedGas * this.search.valuePerGas
    return boundWithSlack(out - gas, out, gas)
  }

  /** the exact path quote, memoised per amount */
  quote(amount: bigint): PathQuote | undefined {
    const memo = (this.memo ??= new Map())
    let q = memo.get(amount)
    if (q === undefined) {
      q = quotePath(this.path, amount, this.search.hopQuoter, this.search.lastHopQuoter) ?? null
      memo.set(amount, q)
    }
    return q ?? undefined
  }

  evaluate(amount: bigint) {
    const q = this.quote(amount)
    return q === undefined ? undefined : { amountOut: q.amountOut, variableCost: this.search.value(this.search.model.perV3TickCrossed * BigInt(q.ticksCrossed)) }
  }
}

interface Evaluated {
  legs: Array<{ path: PathHop[]; protocols: PoolProtocol[]; extraGas: bigint; amountIn: bigint; amountOut: bigint; ticksCrossed: number }>
  amountOut: bigint
  gas: bigint
  gasCost: bigint
  net: bigint
}

export const DEFAULT_MAX_SPLITS = 4
export const DEFAULT_SPLIT_PARTS = 30

export function findBestPlan(params: RouteSearchParams): RoutedPlan | undefined {
  const tokenIn = params.tokenIn.toLowerCase() as Address
  const tokenOut = params.tokenOut.toLowerCase() as Address
  const { amountIn, gasPriceWei } = params
  const maxHops = params.maxHops ?? MAX_HOPS
  const maxSplits = params.maxSplits ?? DEFAULT_MAX_SPLITS
  const splitParts = params.splitParts ?? DEFAULT_SPLIT_PARTS
  const model = params.gasModel ?? DEFAULT_GAS_MODEL
  if (amountIn <= 0n) throw new RouteSearchError(`amountIn ${amountIn} is not positive`)
  if (gasPriceWei < 0n) throw new RouteSearchError(`gasPriceWei ${gasPriceWei} is negative`)
  if (!Number.isInteger(maxHops) || maxHops < 1 || maxHops > MAX_HOPS) throw new RouteSearchError(`maxHops ${maxHops} is not within 1..${MAX_HOPS}`)
  if (!Number.isInteger(maxSplits) || maxSplits < 1) throw new RouteSearchError(`maxSplits ${maxSplits} is not a positive integer`)
  if (!Number.isInteger(splitParts) || splitParts < 1) throw new RouteSearchError(`splitParts ${splitParts} is not a positive integer`)
  if (tokenIn === tokenOut) return undefined

  const weth = params.weth?.toLowerCase() as Address | undefined
  // the rate is derived only when it is not given
  const prepared = params.prepared ?? preparePaths(params.pools, tokenIn, tokenOut, params.tokenOutPerEth === undefined ? weth : undefined, maxHops, params.maxPaths ?? 2_000)
  const paths = prepared.paths
  if (paths.length === 0) return undefined
  const rate = params.tokenOutPerEth ?? prepared.tokenOutPerEth

  // 1-2: the paths alone with the whole amount; paths sharing a first hop (or two) ask it the same amounts
  const search = new SearchContext(model, params.hopQuoter ?? rememberingHopQuoter(), params.hopQuoter ?? quoteHop, rate, gasPriceWei)
  const facts = pathFacts(paths, model)
  const candidates = new Array<Candidate>(paths.length)
  for (let i = 0; i < paths.length; i++) candidates[i] = new Candidate(paths[i], facts[i], search)
  // the single-path outcomes read: the best one's alone without splits, every path's when they all
  // go to the split allocator, otherwise the deep routes among its candidates (splitCandidates)
  const maxCandidates = params.maxSplitCandidates ?? 16
  const splitting = maxSplits > 1 && candidates.length > 1
  const fullRanked = !splitting ? 1 : candidates.length <= maxCandidates ? candidates.length : deepCandidates(maxCandidates)
  const singles: Array<Evaluated | undefined> = new Array(candidates.length)
  const wholeAmount = Number(amountIn)
  const bySingleNet = rankByBound(candidates.length, fullRanked, new SingleNets(candidates, search, amountIn, wholeAmount, singles))
  let bestSingle: Evaluated | undefined
  for (const s of singles) {
    if (s !== undefined && (bestSingle === undefined || isBetter(s, bestSingle))) bestSingle = s
  }

  // 3: splits over the most promising paths, unless no plan of two legs or more could net more
  // than the best single path (most of the search's quotes are the allocator's)
  let bestSplit: Evaluated | undefined
  if (splitting && (bestSingle === undefined || splitNetBound(candidates, wholeAmount, model, search) >= Number(bestSingle.net))) {
    const chosen = splitCandidates(candidates, bySingleNet, amountIn, splitParts, maxCandidates)
    const allocation = allocateSplit(chosen, amountIn, { parts: splitParts, maxSplits })
    if (allocation !== undefined && allocation.legs.length > 1) {
      const legs = new Array<{ candidate: Candidate; amountIn: bigint }>(allocation.legs.length)
      for (let l = 0; l < legs.length; l++) legs[l] = { candidate: chosen[allocation.legs[l].candidate], amountIn: allocation.legs[l].amountIn }
      bestSplit = search.evaluate(legs)
    }
  }

  // 4: the split only where it beats the best single path
  const best = bestSplit !== undefined && (bestSingle === undefined || isBetter(bestSplit, bestSingle)) ? bestSplit : bestSingle
  if (best === undefined) return undefined
  if (bestSingle !== undefined && best.net < bestSingle.net) {
    throw new Error(`route search invariant: the chosen plan nets ${best.net}, below the best single path's ${bestSingle.net}`)
  }
  return toPlan(tokenIn, tokenOut, amountIn, best, rate, bestSingle?.net)
}

/** what turns gas into tokenOut (the search's SearchContext) */
export interface GasValuer {
  value(gas: bigint): bigint
}

/**
 * At least the net output of any plan of two legs or more over `paths` with `amountIn` (a double
 * padded for its rounding; `gas.value` turns gas into tokenOut as the search does): every leg delivers
 * at most its amount times the best path's maxRate, so the legs together at most amountIn times
 * it, and such a plan pays at least the base gas and the fixed gas of the two cheapest legs. Below
 * the best single path's net, no split can be chosen (isBetter: a split must net more, or as much
 * with more output), so findBestPlan does not run the allocator, with its tens of path quotes: the
 * plan is the same.
 */
export function splitNetBound(paths: ReadonlyArray<{ readonly maxRate: number; readonly fixedGas: bigint }>, amountIn: number, model: GasModel, gas: GasValuer): number {
  let maxRate = 0
  let least: bigint | undefined
  let second: bigint | undefined
  for (const c of paths) {
    // a rate that is no number rules nothing out (as a bound in rankByBound)
    if (Number.isNaN(c.maxRate)) return Number.POSITIVE_INFINITY
    if (c.maxRate > maxRate) maxRate = c.maxRate
    if (least === undefined || c.fixedGas < least) {
      second = least
      least = c.fixedGas
    } else if (second === undefined || c.fixedGas < second) {
      second = c.fixedGas
    }
  }
  if (least === undefined || second === undefined) return Number.POSITIVE_INFINITY
  const out = amountIn * maxRate
  const cost = Number(gas.value(model.base + least + second))
  return boundWithSlack(out - cost, out, cost)
}

/** higher net output first, then higher gross, then fewer legs */
function isBetter(a: Evaluated, b: Evaluated): boolean {
  if (a.net !== b.net) return a.net > b.net
  if (a.amountOut !== b.amountOut) return a.amountOut > b.amountOut
  return a.legs.length < b.legs.length
}

/** of `max` split candidates, how many are the best by net output with the whole amount */
function deepCandidates(max: number): number {
  return Math.max(1, Math.ceil(max / 2))
}

/**
 * The split allocator's candidates: the paths best by net output with the whole amount (deep
 * routes) and the paths best at one part's amount (the best marginal prices), half each.
 * `byFull`: the single-path pass's ranking by net output with the whole amount (rankByBound: its
 * first deepCandidates(max) entries are exact), read as it is rather than sorted again.
 */
function splitCandidates(candidates: Candidate[], byFull: readonly Ranked[], amountIn: bigint, parts: number, max: number): Candidate[] {
  if (candidates.length <= max) return candidates
  const half = deepCandidates(max)
  const part = amountIn / BigInt(parts) > 0n ? amountIn / BigInt(parts) : 1n
  // the loop below reads at most `max` of them: the paths whose bound leaves no chance are not quoted
  // (a part's net output is its output less the gas of its ticks, so at most the output's bound)
  const byMarginal = rankByBound(candidates.length, max, new PartNets(candidates, part))
  const picked = new Set<number>()
  for (const x of byFull.slice(0, half)) picked.add(x.i)
  for (const x of byMarginal) {
    if (picked.size >= max) break
    picked.add(x.i)
  }
  const indices = [...picked].sort(ascending)
  const chosen = new Array<Candidate>(indices.length)
  for (let j = 0; j < indices.length; j++) chosen[j] = candidates[indices[j]]
  return chosen
}

function ascending(a: number, b: number): number {
  return a - b
}

/**
 * The paths ranked by their net output as a plan of their own with the whole amount, each valued
 * one kept in `singles` (the search reads them all). A class, not two closures made per search:
 * SearchContext says why.
 */
class SingleNets implements RankedItems {
  constructor(
    private readonly candidates: readonly Candidate[],
    private readonly search: SearchContext,
    private readonly amountIn: bigint,
    private readonly wholeAmount: number,
    private readonly singles: Array<Evaluated | undefined>,
  ) {}

  bound(i: number): number {
    return this.candidates[i].singleNetBound(this.wholeAmount)
  }

  value(i: number): bigint | undefined {
    return (this.singles[i] = this.search.evaluate([{ candidate: this.candidates[i], amountIn: this.amountIn }]))?.net
  }
}

/** the paths ranked by one part's output less the gas of its ticks (the best marginal prices): splitCandidates */
class PartNets implements RankedItems {
  private readonly partAsNumber: number

  constructor(
    private readonly candidates: readonly Candidate[],
    private readonly part: bigint,
  ) {
    this.partAsNumber = Number(part)
  }

  bound(i: number): number {
    const out = this.partAsNumber * this.candidates[i].maxRate
    return boundWithSlack(out, out)
  }

  value(i: number): bigint | undefined {
    const o = this.candidates[i].evaluate(this.part)
    return o === undefined ? undefined : o.amountOut - o.variableCost
  }
}

// module-level, not arrow functions inside toPlan: an arrow function is a new closure per call, and
// TurboFan compiled toPlan's again and again in the service's workers (SearchContext says why)
function toPlanLeg(leg: Evaluated['legs'][number]): PlanLeg {
  return { amountIn: leg.amountIn, hops: leg.path.map(toPlanHop), expectedAmountOut: leg.amountOut }
}

function toPlanHop(h: PathHop): PlanHop {
  return {
    protocol: h.pool.protocol,
    pool: h.pool.address,
    tokenIn: h.tokenIn,
    tokenOut: h.tokenOut,
    fee: h.pool.fee,
    zeroForOne: h.zeroForOne,
    ...(h.pool.protocol === 'uniswap-v4' ? { v4: v4PlanKey(h.pool) } : {}),
  }
}

function toPlan(tokenIn: Address, tokenOut: Address, amountIn: bigint, best: Evaluated, rate: Rational | undefined, bestSingleNet: bigint | undefined): RoutedPlan {
  const legs: PlanLeg[] = best.legs.map(toPlanLeg)
  return {
    tokenIn,
    tokenOut,
    amountIn,
    legs,
    expectedAmountOut: best.amountOut,
    estimatedGas: best.gas,
    gasCostInTokenOut: best.gasCost,
    netAmountOut: best.net,
    tokenOutPerEth: rate,
    bestSinglePathNetAmountOut: bestSingleNet,
  }
}
