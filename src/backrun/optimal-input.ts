/**
 * The input that maximizes a cycle's profit, profit(x) = cycleOut(x) - x, in exact integers.
 *
 * Two methods:
 *
 * - Chains of constant-product hops (V2 pairs): closed form. A hop x -> m·x·R_out / (s·R_in + m·x)
 *   (getAmountOut, m/s = 997/1000) is a hyperbola num·x / (den + slope·x), and a chain of them is
 *   one too: composing (n1, d1, s1) then (n2, d2, s2) gives (n1·n2, d1·d2, d2·s1 + n1·s2). Its
 *   profit peaks where out'(x) = num·den / (den + slope·x)² = 1, at x* = (√(num·den) - den) / slope,
 *   rounded with an integer square root. The exact integer profit is a sawtooth around that curve
 *   (see optimalConstantProductInput): it is climbed from x* over "tooth starts" with the exact
 *   math, and the result is certified when possible: rounding only ever lowers an output, so
 *   floor(out(x)) - x bounds the exact profit at x from above, and the inputs where that bound
 *   beats the best profit found form an interval (a quadratic inequality). An empty interval proves
 *   the best profit is the global maximum over every input; a short one is scanned, which proves
 *   it too; a long one is left and the result is a local maximum. (On the devnet's pools and in
 *   random tests the result is certified, hence exact, in every case tried.)
 *
 * - Anything else (V3 hops, mixed cycles): `maximizeProfit`, a bracketed search on the exact integer
 *   profit. It brackets the maximum (growing geometrically around a guess, or doubling from a small
 *   amount), then narrows the bracket golden-section style on bigint until it is narrower than a
 *   relative tolerance or a few integers (all of which are then evaluated). An input the cycle cannot
 *   take (`undefined`: past a V3 pool's loaded ticks, beyond its liquidity, a V2 output of zero) counts
 *   as the worst possible profit, so such a region ends the bracket. Every evaluation is memoised, and
 *   their number is bounded.
 *
 * The real profit of an AMM cycle is concave in the input (every hop's output is concave and
 * increasing), so the bracket holds the maximum. The integer profit is concave only up to its
 * rounding: a sawtooth whose teeth are one base unit of the coarsest intermediate token, valued in
 * the start token (~3e8 wei for a unit of a 6-decimal dollar, ~2e11 wei for a satoshi at 20 ETH per
 * BTC). The bracketed search may end up to one tooth below the best integer; the V2 closed form
 * does not.
 */
import { getAmountOut, isAmmMathError, MAX_INT256 } from '../dex/math/index.ts'

/** the exact profit of the cycle for an input, or undefined when the cycle cannot take that input */
export type ProfitFunction = (amountIn: bigint) => bigint | undefined

export interface ProfitMaximum {
  amountIn: bigint
  /** profitFn(amountIn), the largest profit found */
  profit: bigint
  /** calls of the profit function (each distinct input once) */
  evaluations: number
}

export interface MaximizeProfitOptions {
  /** an estimate of the optimal input (> 0): the bracket grows geometrically around it */
  guess?: bigint
  /** without a guess, where the doubling bracket starts; default 1 */
  start?: bigint
  /** the largest input considered; default 2^255 - 1 */
  maxAmount?: bigint
  /**
   * stop narrowing once the bracket is narrower than this many millionths of the best input;
   * default 100 (the profit lost is of the order of the tolerance squared: ~1e-8 of the profit).
   * 0: narrow down to single integers.
   */
  relativeTolerancePpm?: number
  /** the most evaluations of the profit function; default 96 */
  maxEvaluations?: number
}

export const DEFAULT_RELATIVE_TOLERANCE_PPM = 100
export const DEFAULT_MAX_EVALUATIONS = 96
/** brackets at most this wide (in integers) are finished by evaluating every integer inside */
const EXHAUSTIVE_WIDTH = 8n
/**
 * the bracket around a guess starts at guess ± guess / 2^GUESS_SPREAD_SHIFT, or narrower with a
 * relative tolerance: ± half of it, so that a guess at the optimum (the backrun search's estimate
 * is, whenever no tick is crossed) is confirmed in three evaluations, the bracket already narrower
 * than the tolerance. A guess further off costs a few more doublings of the spread than from the
 * wider start.
 */
const GUESS_SPREAD_SHIFT = 10n

/** value order with undefined (an input the cycle cannot take) below everything */
function above(a: bigint | undefined, b: bigint | undefined): boolean {
  return a !== undefined && (b === undefined || a > b)
}

/**
 * The input in [1, maxAmount] with the largest profit, for a profit that is (nearly) concave in the
 * input; undefined when no input tried could be taken at all. The best profit may be <= 0: the
 * caller decides what to keep.
 */
export function maximizeProfit(profitFn: ProfitFunction, options: MaximizeProfitOptions = {}): ProfitMaximum | undefined {
  const maxAmount = options.maxAmount ?? MAX_INT256
  const maxEvaluations = options.maxEvaluations ?? DEFAULT_MAX_EVALUATIONS
  const tolerancePpm = BigInt(Math.max(0, Math.floor(options.relativeTolerancePpm ?? DEFAULT_RELATIVE_TOLERANCE_PPM)))
  if (maxAmount < 1n || maxEvaluations < 1) return undefined

  const memo = new Map<bigint, bigint | undefined>()
  // the best input evaluated so far (ties: the smaller input)
  const best: { x: bigint; value: bigint | undefined } = { x: 0n, value: undefined }
  const budgetLeft = () => memo.size < maxEvaluations
  /** x = 0 is the empty trade: profit 0, never evaluated */
  const f = (x: bigint): bigint | undefined => {
    if (x === 0n) return 0n
    if (x < 0n || x > maxAmount) return undefined
    if (memo.has(x)) return memo.get(x)
    const v = profitFn(x)
    memo.set(x, v)
    if (above(v, best.value) || (v !== undefined && v === best.value && x < best.x)) {
      best.x = x
      best.value = v
    }
    return v
  }
  const clamp = (x: bigint) => (x > maxAmount ? maxAmount : x < 1n ? 1n : x)

  // ---- bracket: lo < m < hi with the maximum in [lo, hi] and m the best point evaluated inside
  const bracket =
    options.guess !== undefined && options.guess > 0n
      ? (bracketAroundGuess(f, clamp(options.guess), maxAmount, tolerancePpm, budgetLeft) ?? bracketByDoubling(f, clamp(options.start ?? 1n), maxAmount, clamp, budgetLeft))
      : bracketByDoubling(f, clamp(options.start ?? 1n), maxAmount, clamp, budgetLeft)
  if (bracket === undefined || best.value === undefined) return undefined
  let { lo, m, hi, vm } = bracket

  // ---- narrow: probe the larger side at the golden ratio, keep the better point inside
  while (budgetLeft() && hi - lo > 2n) {
    const width = hi - lo
    if (tolerancePpm > 0n && width * 1_000_000n <= m * tolerancePpm) break
    if (width <= EXHAUSTIVE_WIDTH) {
      for (let x = lo + 1n; x < hi && budgetLeft(); x++) f(x)
      break
    }
    let x: bigint
    if (m - lo >= hi - m) {
      x = m - ((m - lo) * 382n) / 1000n
      if (x >= m) x = m - 1n
      if (x <= lo) x = lo + 1n
    } else {
      x = m + ((hi - m) * 382n) / 1000n
      if (x <= m) x = m + 1n
      if (x >= hi) x = hi - 1n
    }
    const vx = f(x)
    if (x < m) {
      if (above(vx, vm)) {
        hi = m
        m = x
        vm = vx
      } else lo = x
    } else if (above(vx, vm)) {
      lo = m
      m = x
      vm = vx
    } else hi = x
  }
  return { amountIn: best.x, profit: best.value, evaluations: memo.size }
}

interface Bracket {
  lo: bigint
  m: bigint
  hi: bigint
  vm: bigint | undefined
}

type Evaluate = (x: bigint) => bigint | undefined

/** grow lo < guess < hi geometrically towards the side that rises, until both ends are no better */
function bracketAroundGuess(f: Evaluate, guess: bigint, maxAmount: bigint, tolerancePpm: bigint, budgetLeft: () => boolean): Bracket | undefined {
  let m = guess
  let vm = f(m)
  // a guess past what the cycle can take (the pool's loaded ticks, its liquidity): come back
  while (vm === undefined && m > 1n && budgetLeft()) {
    m /= 2n
    vm = f(m)
  }
  if (vm === undefined) return undefined
  let w = m >> GUESS_SPREAD_SHIFT
  const halfTolerance = (m * tolerancePpm) / 2_000_000n
  if (tolerancePpm > 0n && halfTolerance < w) w = halfTolerance
  if (w < 1n) w = 1n
  let lo = m - w
  let hi = m + w > maxAmount ? maxAmount : m + w
  while (budgetLeft()) {
    if (hi > m) {
      const vhi = f(hi)
      // >= as in the doubling: a tie at integer scale is rounding, not the top
      if (vhi !== undefined && (vm === undefined || vhi >= vm)) {
        // still rising (or flat) to the right
        lo = m
        m = hi
        vm = vhi
        w *= 2n
        hi = m + w > maxAmount ? maxAmount : m + w
        continue
      }
    }
    if (lo > 0n) {
      const vlo = f(lo)
      if (above(vlo, vm)) {
        // rising to the left
        hi = m
        m = lo
        vm = vlo
        w *= 2n
        lo = m - w < 0n ? 0n : m - w
        continue
      }
    }
    break
  }
  return { lo, m, hi, vm }
}

/** start, 2·start, 4·start, ... while the profit does not fall; the bracket is the last three */
function bracketByDoubling(f: Evaluate, start: bigint, maxAmount: bigint, clamp: (x: bigint) => bigint, budgetLeft: () => boolean): Bracket | undefined {
  let x = start
  let prev = 0n
  let v = f(x)
  // too small to come out of every hop (a V2 output rounding to zero): grow until it does
  while (v === undefined && x < maxAmount && budgetLeft()) {
    prev = x
    x = clamp(x * 2n)
    v = f(x)
  }
  if (v === undefined) return undefined
  while (budgetLeft() && x < maxAmount) {
    const next = clamp(x * 2n)
    const vn = f(next)
    // >=: the integer profit is flat at tiny inputs (rounding); keep going through plateaus
    if (vn !== undefined && vn >= v) {
      prev = x
      x = next
      v = vn
      continue
    }
    return { lo: prev, m: x, hi: next, vm: v }
  }
  return { lo: prev, m: x, hi: x, vm: v }
}

// ------------------------------------------------------------------ constant-product chains

/** out(x) = num·x / (den + slope·x): one constant-product hop with its fee, or a chain of them */
export interface HyperbolicCurve {
  num: bigint
  den: bigint
  slope: bigint
}

export const IDENTITY_CURVE: HyperbolicCurve = Object.freeze({ num: 1n, den: 1n, slope: 0n })

/**
 * A constant-product hop keeping feeNumerator / feeDenominator of the input (997 / 1000 for a V2
 * pair; (1e6 - fee) / 1e6 for a V3 pool within its current tick range, on its virtual reserves).
 */
export function constantProductCurve(reserveIn: bigint, reserveOut: bigint, feeNumerator: bigint, feeDenominator: bigint): HyperbolicCurve {
  return { num: feeNumerator * reserveOut, den: feeDenominator * reserveIn, slope: feeNumerator }
}

/** `first` then `second` */
export function composeCurves(first: HyperbolicCurve, second: HyperbolicCurve): HyperbolicCurve {
  return { num: first.num * second.num, den: first.den * second.den, slope: second.den * first.slope + first.num * second.slope }
}

/** floor(curve(x)) */
export function curveOutput(curve: HyperbolicCurve, x: bigint): bigint {
  return (curve.num * x) / (curve.den + curve.slope * x)
}

/** floor(√n) */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError('isqrt of a negative number')
  if (n < 2n) return n
  // start above the root: 2^ceil(bits/2)
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2))
  for (;;) {
    const y = (x + n / x) >> 1n
    if (y >= x) return x
    x = y
  }
}

/**
 * floor of the real input maximizing curve(x) - x: (√(num·den) - den) / slope; undefined when the
 * curve's marginal rate at zero (num / den) is not above 1 (no input profits) or it has no slope.
 */
export function curveOptimalInput(curve: HyperbolicCurve): bigint | undefined {
  if (curve.num <= curve.den || curve.slope <= 0n) return undefined
  return (isqrt(curve.num * curve.den) - curve.den) / curve.slope
}

export interface ConstantProductHop {
  reserveIn: bigint
  reserveOut: bigint
  /** the pair's fee in basis points as getAmountOut takes it; default 30 (Uniswap V2) */
  feeBps?: number
}

export interface ConstantProductOptimum extends ProfitMaximum {
  /** proven to be the largest exact integer profit over every input (see the module comment) */
  certified: boolean
}

export interface ConstantProductOptions {
  /** the most inputs scanned to certify the maximum; default 256 (real reserves never get that close: their plateau is far wider) */
  plateauScanLimit?: number
  /** the most single steps of the hill climb from the rounded optimum; default 32 */
  maxClimbSteps?: number
}

/** getAmountOut's fee fraction, as its library applies it (v2.ts: 1000 scale for whole tenths of a percent) */
export function v2FeeFraction(feeBps: number): { numerator: bigint; denominator: bigint } {
  return feeBps % 10 === 0 ? { numerator: BigInt(1000 - feeBps / 10), denominator: 1000n } : { numerator: BigInt(10_000 - feeBps), denominator: 10_000n }
}

/** the exact output of a chain of V2 hops, undefined when a hop would give nothing or the math reverts */
export function constantProductChainOutput(hops: readonly ConstantProductHop[], amountIn: bigint): bigint | undefined {
  let amount = amountIn
  for (const hop of hops) {
    if (amount <= 0n || hop.reserveIn <= 0n || hop.reserveOut <= 0n) return undefined
    try {
      amount = getAmountOut(amount, hop.reserveIn, hop.reserveOut, hop.feeBps ?? 30)
    } catch (err) {
      if (isAmmMathError(err)) return undefined
      throw err
    }
  }
  return amount > 0n ? amount : undefined
}

/** the chain's hyperbola, undefined when a reserve is empty */
export function constantProductChainCurve(hops: readonly ConstantProductHop[]): HyperbolicCurve | undefined {
  let curve = IDENTITY_CURVE
  for (const hop of hops) {
    if (hop.reserveIn <= 0n || hop.reserveOut <= 0n) return undefined
    const { numerator, denominator } = v2FeeFraction(hop.feeBps ?? 30)
    curve = composeCurves(curve, constantProductCurve(hop.reserveIn, hop.reserveOut, numerator, denominator))
  }
  return curve
}

/**
 * The integer range of inputs x >= 1 where floor(curve(x)) - x >= t, i.e. num·x >= (x + t)(den + slope·x):
 * slope·x² - (num - den - slope·t)·x + den·t <= 0. undefined when empty.
 */
function improvableRange(curve: HyperbolicCurve, t: bigint): { lo: bigint; hi: bigint } | undefined {
  const { num, den, slope } = curve
  if (t < 1n) return undefined
  const beta = num - den - slope * t
  if (beta <= 0n) return undefined
  const disc = beta * beta - 4n * slope * den * t
  if (disc < 0n) return undefined
  const holds = (x: bigint) => x >= 1n && num * x >= (x + t) * (den + slope * x)
  const root = isqrt(disc)
  const twoA = 2n * slope
  let lo = (beta - root) / twoA
  let hi = (beta + root) / twoA + 1n
  // the square root is floored: the true bounds are within a step or two
  if (lo < 1n) lo = 1n
  while (lo > 1n && holds(lo - 1n)) lo--
  while (lo <= hi && !holds(lo)) lo++
  while (hi >= lo && !holds(hi)) hi--
  while (holds(hi + 1n)) hi++
  return lo <= hi ? { lo, hi } : undefined
}

/**
 * The smallest input whose exact chain output is at least `amountOut`, by the exact inverse of
 * getAmountOut hop by hop from the end (getAmountOut(a) >= b  <=>  a·m·(R_out - b) >= b·s·R_in);
 * undefined when no input can give that much.
 */
export function constantProductChainMinInput(hops: readonly ConstantProductHop[], amountOut: bigint): bigint | undefined {
  let need = amountOut < 1n ? 1n : amountOut
  for (let i = hops.length - 1; i >= 0; i--) {
    const { reserveIn, reserveOut } = hops[i]
    if (reserveIn <= 0n || need >= reserveOut) return undefined
    const { numerator, denominator } = v2FeeFraction(hops[i].feeBps ?? 30)
    const den = numerator * (reserveOut - need)
    need = (need * denominator * reserveIn + den - 1n) / den
  }
  return need
}

/**
 * The most profitable input of a cycle of V2 hops (its output returns to the input token), in
 * closed form then climbed and, when the plateau of candidate inputs is short, certified exactly.
 * undefined when no input profits.
 *
 * The exact profit is a sawtooth: every input between two "tooth starts" gives the same output (an
 * intermediate token coarser than the input token, such as USDC units against wei, does not move),
 * so within a tooth the profit falls as the input grows. Only the tooth starts, the smallest input
 * giving each output, can be optimal; the climb and the certificate scan step from one to the next.
 */
export function optimalConstantProductInput(hops: readonly ConstantProductHop[], options: ConstantProductOptions = {}): ConstantProductOptimum | undefined {
  const curve = constantProductChainCurve(hops)
  if (curve === undefined) return undefined
  const x0 = curveOptimalInput(curve)
  if (x0 === undefined) return undefined
  const scanLimit = Math.max(0, Math.floor(options.plateauScanLimit ?? 256))
  const maxClimb = options.maxClimbSteps ?? 32

  let evaluations = 0
  const outputs = new Map<bigint, bigint | undefined>()
  const output = (x: bigint): bigint | undefined => {
    if (x < 1n) return undefined
    if (outputs.has(x)) return outputs.get(x)
    evaluations++
    const out = constantProductChainOutput(hops, x)
    outputs.set(x, out)
    return out
  }
  const profit = (x: bigint): bigint | undefined => {
    const out = output(x)
    return out === undefined ? undefined : out - x
  }
  const minInput = (out: bigint): bigint | undefined => {
    evaluations++
    return constantProductChainMinInput(hops, out)
  }
  /** the start of x's tooth: the smallest input with the same output (x itself when it cannot be told) */
  const toothStart = (x: bigint): bigint => {
    const out = output(x)
    const t = out === undefined ? undefined : minInput(out)
    return t !== undefined && t >= 1n && t <= x ? t : x
  }
  /**
   * the start of the next tooth: the smallest input giving more ('end' when no input can give more;
   * undefined when it cannot be told, which leaves the result uncertified). Below the smallest input
   * every hop turns into at least one unit, the next tooth is that input.
   */
  const nextTooth = (t: bigint): bigint | 'end' | undefined => {
    const out = output(t)
    const n = minInput(out === undefined ? 1n : out + 1n)
    if (n === undefined) return out === undefined ? undefined : 'end'
    return n > t ? n : undefined
  }

  /**
   * worth scanning: few enough teeth meet [lo, hi] (as few integers, or as few distinct outputs,
   * each tooth having its own). A better tooth found on the way narrows the range, so a range of up
   * to 16 times the limit is tried; the scan itself stops at the limit either way.
   */
  const fewTeeth = (lo: bigint, hi: bigint): boolean => {
    const most = 16n * BigInt(scanLimit)
    if (hi - lo < most) return true
    const outLo = output(toothStart(lo))
    const outHi = output(hi)
    return outLo !== undefined && outHi !== undefined && outHi - outLo < most
  }

  // the real optimum lies in [x0, x0 + 1]: the tooth starts around it, then climb tooth by tooth
  let best = toothStart(x0 < 1n ? 1n : x0)
  for (const x of [x0 - 1n, x0 + 1n, x0 + 2n]) {
    if (x < 1n) continue
    const t = toothStart(x)
    if (above(profit(t), profit(best))) best = t
  }
  for (let step = 0; step < maxClimb; step++) {
    const here = profit(best)
    const right = nextTooth(best)
    const left: bigint | undefined = best > 1n ? toothStart(best - 1n) : undefined
    if (typeof right === 'bigint' && above(profit(right), here)) best = right
    else if (left !== undefined && above(profit(left), here)) best = left
    else break
  }
  const bestProfit = profit(best)

  // certify: every input that could beat max(bestProfit, 0) lies in improvableRange(that + 1), and
  // the best input of any tooth is its start: scan the teeth meeting that range
  let certified = false
  let found = bestProfit === undefined || bestProfit < 0n ? 0n : bestProfit
  let range = improvableRange(curve, found + 1n)
  if (range === undefined) certified = true
  else if (fewTeeth(range.lo, range.hi)) {
    let t: bigint | 'end' | undefined = toothStart(range.lo)
    let scanned = 0
    while (typeof t === 'bigint' && t <= range.hi && scanned < scanLimit) {
      scanned++
      const v = profit(t)
      if (v !== undefined && v > found) {
        found = v
        best = t
        range = improvableRange(curve, v + 1n) ?? { lo: t, hi: t }
      }
      t = nextTooth(t)
    }
    certified = t === 'end' || (typeof t === 'bigint' && t > range.hi)
  }
  // nothing to take
  if (found <= 0n || profit(best) !== found) return undefined
  return { amountIn: best, profit: found, evaluations, certified }
}
