/**
 * Splitting an input amount across legs (independent paths) to maximise output net of gas.
 *
 * Greedy increments: amountIn is cut into `parts` equal parts, and each part in turn goes to the
 * leg whose output, net of the gas that grows with the amount (V3 ticks crossed), rises most when
 * it takes one more part. Every leg's output is concave in its input (constant-product and
 * concentrated-liquidity swaps both give less per unit as the amount grows, and a path composes
 * increasing concave functions), so this is the optimal allocation up to one part's granularity,
 * for the gross output.
 *
 * A leg's fixed gas (its hops and router call) would make the first part of every new leg look
 * bad, so the greedy ignores it; instead the legs are then pruned: the leg contributing least net
 * of its full gas is dropped and its parts handed out again among the rest, down to one leg, and
 * the best of these allocations wins.
 *
 * Legs sharing a pool would interact (the second sees the price the first left), so a split never
 * uses two legs with a pool in common: each leg's expected output is then exact on its own.
 */

export interface LegOutcome {
  amountOut: bigint
  /** gas cost, in output units, that depends on the amount (V3 ticks crossed) */
  variableCost: bigint
}

export interface SplitCandidate {
  /** identities of the pools the leg swaps through */
  pools: readonly string[]
  /** gas cost, in output units, paid whenever the leg is used (router call, hops) */
  fixedCost: bigint
  /** exact outcome of sending `amountIn` down the leg; undefined when it cannot take that much */
  evaluate(amountIn: bigint): LegOutcome | undefined
}

export interface SplitOptions {
  /** equal parts amountIn is cut into (e.g. 20..50) */
  parts: number
  /** most legs in one allocation */
  maxSplits: number
}

export interface AllocatedLeg {
  /** index into the candidates */
  candidate: number
  amountIn: bigint
  outcome: LegOutcome
}

export interface Allocation {
  legs: AllocatedLeg[]
  /** Σ amountOut */
  amountOut: bigint
  /** Σ (amountOut - variableCost - fixedCost): output net of the legs' gas (the plan's base gas excluded) */
  net: bigint
}

/**
 * One allocateSplit call's view of a candidate: its outcomes memoised (every greedy run and prune
 * asks the same multiples of the part), and which other candidates share a pool with it.
 * Arrays indexed by part count instead of maps keyed by bigint amounts: the greedy's steps are
 * ~30 x the candidates x (legs - 1) prunes, each a memo lookup and a pool-conflict check, which
 * were ~15% of a route search's CPU as Map/Set lookups and a closure per check.
 */
class LegMemo {
  /** outcome at amount k x part: undefined not yet asked, null cannot take it */
  private readonly atParts: Array<LegOutcome | null | undefined> = []
  /** outcome at any other amount (the whole amount, a leg with the remainder) */
  private readonly atAmount = new Map<bigint, LegOutcome | null>()
  /** indices of the other candidates that share a pool with this one */
  conflicts: number[] = []

  constructor(readonly candidate: SplitCandidate) {}

  at(amount: bigint): LegOutcome | undefined {
    if (amount === 0n) return ZERO_OUTCOME
    let v = this.atAmount.get(amount)
    if (v === undefined) {
      v = this.candidate.evaluate(amount) ?? null
      this.atAmount.set(amount, v)
    }
    return v ?? undefined
  }

  /**
   * the outcome at k parts (k >= 0). Asked of the candidate, not of `at`: a multiple of the part is
   * an amount `at` is asked only when it is the whole amount (no remainder), so its map would
   * hold every multiple for at most one hit, a Map lookup and insert per part count (the route
   * search's candidates keep their own memo per amount)
   */
  atPart(k: number, part: bigint): LegOutcome | undefined {
    if (k === 0) return ZERO_OUTCOME
    let v = this.atParts[k]
    if (v === undefined) {
      v = this.candidate.evaluate(BigInt(k) * part) ?? null
      this.atParts[k] = v
    }
    return v ?? undefined
  }
}

/**
 * The best allocation by net: the greedy-and-prune allocations and every leg alone with the whole
 * amount, so it is never worse than the best single leg. Undefined when nothing can place the
 * whole amount (every leg runs out of liquidity).
 */
export function allocateSplit(candidates: readonly SplitCandidate[], amountIn: bigint, options: SplitOptions): Allocation | undefined {
  if (amountIn <= 0n || candidates.length === 0) return undefined
  const legs = candidates.map((c) => new LegMemo(c))
  markConflicts(legs)
  const requestedParts = BigInt(Math.max(1, Math.floor(options.parts)))
  const maxSplits = Math.max(1, Math.floor(options.maxSplits))
  // never a part of zero: an amount smaller than the part count is cut into units
  const parts = amountIn < requestedParts ? amountIn : requestedParts
  const part = amountIn / parts

  // every leg alone with the whole amount: the split has to beat the best of these
  let best: Allocation | undefined
  legs.forEach((leg, c) => {
    const outcome = leg.at(amountIn)
    if (outcome === undefined) return
    const single: Allocation = { legs: [{ candidate: c, amountIn, outcome }], amountOut: outcome.amountOut, net: outcome.amountOut - outcome.variableCost - leg.candidate.fixedCost }
    if (best === undefined || single.net > best.net) best = single
  })

  let allocation = greedy(legs, candidates.map((_, i) => i), amountIn, Number(parts), part, maxSplits)
  while (allocation !== undefined) {
    if (best === undefined || allocation.net > best.net) best = allocation
    if (allocation.legs.length <= 1) break
    // prune the leg that contributes least once its fixed gas is counted
    let worst = allocation.legs[0]
    for (const leg of allocation.legs) if (legNet(candidates, leg) < legNet(candidates, worst)) worst = leg
    const rest = allocation.legs.filter((l) => l !== worst).map((l) => l.candidate)
    allocation = greedy(legs, rest, amountIn, Number(parts), part, maxSplits)
  }
  return best
}

const ZERO_OUTCOME: LegOutcome = { amountOut: 0n, variableCost: 0n }

/** each leg's list of the legs it shares a pool with (once per allocation: at most 16 legs of up to 3 pools) */
function markConflicts(legs: LegMemo[]): void {
  const byPool = new Map<string, number[]>()
  legs.forEach((leg, c) => {
    for (const p of leg.candidate.pools) {
      const users = byPool.get(p)
      if (users === undefined) byPool.set(p, [c])
      else if (users[users.length - 1] !== c) users.push(c)
    }
  })
  for (const users of byPool.values()) {
    for (const a of users) for (const b of users) if (a !== b && !legs[a].conflicts.includes(b)) legs[a].conflicts.push(b)
  }
}

function legNet(candidates: readonly SplitCandidate[], leg: AllocatedLeg): bigint {
  return leg.outcome.amountOut - leg.outcome.variableCost - candidates[leg.candidate].fixedCost
}

/** net of the variable gas at k parts; null when the leg cannot take that much */
function netAtPart(leg: LegMemo, k: number, part: bigint): bigint | null {
  const o = leg.atPart(k, part)
  return o === undefined ? null : netOf(o)
}

function greedy(legs: readonly LegMemo[], allowed: readonly number[], amountIn: bigint, parts: number, part: bigint, maxSplits: number): Allocation | undefined {
  const remainder = amountIn - part * BigInt(parts)
  // parts taken per candidate, and the candidates in the order they took their first part
  const taken: number[] = new Array(legs.length).fill(0)
  const active: number[] = []
  // candidates sharing a pool with an active one: they may not take a first part
  const blocked: boolean[] = new Array(legs.length).fill(false)
  // each candidate's gain from one part more (null: it cannot take one more; undefined: not
  // computed): it changes only when the candidate takes a part, so a step computes one gain, not
  // one per candidate
  const gains: Array<bigint | null | undefined> = new Array(legs.length)

  for (let step = 0; step < parts; step++) {
    let chosen = -1
    let bestGain = 0n
    for (const c of allowed) {
      const k = taken[c]
      if (k === 0 && (active.length >= maxSplits || blocked[c])) continue
      let gain = gains[c]
      if (gain === undefined) {
        const next = netAtPart(legs[c], k + 1, part)
        const current = next === null ? null : netAtPart(legs[c], k, part)
        gains[c] = gain = next === null || current === null ? null : next - current
      }
      if (gain === null) continue
      if (chosen < 0 || gain > bestGain) {
        chosen = c
        bestGain = gain
      }
    }
    if (chosen < 0) return undefined
    if (taken[chosen] === 0) {
      active.push(chosen)
      for (const other of legs[chosen].conflicts) blocked[other] = true
    }
    taken[chosen]++
    gains[chosen] = undefined
  }

  // the indivisible remainder (< parts units) goes where it adds most
  const remainderLeg = remainder > 0n ? remainderTaker(legs, active, taken, part, remainder) : -1
  if (remainder > 0n && remainderLeg < 0) return undefined
  const allocation: Allocation = { legs: [], amountOut: 0n, net: 0n }
  let allocated = 0n
  for (const c of active) {
    const legIn = BigInt(taken[c]) * part + (c === remainderLeg ? remainder : 0n)
    const outcome = c === remainderLeg ? legs[c].at(legIn) : legs[c].atPart(taken[c], part)
    if (outcome === undefined) return undefined
    allocation.legs.push({ candidate: c, amountIn: legIn, outcome })
    allocation.amountOut += outcome.amountOut
    allocation.net += netOf(outcome) - legs[c].candidate.fixedCost
    allocated += legIn
  }
  if (allocated !== amountIn) throw new Error(`split allocator lost input: allocated ${allocated} of ${amountIn}`)
  return allocation
}

function netOf(o: LegOutcome): bigint {
  return o.amountOut - o.variableCost
}

/** the active leg the remainder adds most to (the first of equals); -1 when none can take it */
function remainderTaker(legs: readonly LegMemo[], active: readonly number[], taken: readonly number[], part: bigint, remainder: bigint): number {
  let taker = -1
  let most = 0n
  for (const c of active) {
    const withRest = legs[c].at(BigInt(taken[c]) * part + remainder)
    const without = legs[c].atPart(taken[c], part)
    if (withRest === undefined || without === undefined) continue
    const gain = netOf(withRest) - netOf(without)
    if (taker < 0 || gain > most) [taker, most] = [c, gain]
  }
  return taker
}
