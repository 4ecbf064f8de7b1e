/**
 * The split allocator as it was before its memo and pool checks became arrays (h14-route, 2026-11-27,
 * at a71abd5): Maps keyed by amount and candidate, a Set of used pools checked per step. Kept as
 * the reference the allocator must equal allocation for allocation (split-allocator.test.ts): the
 * rewrite was for CPU only, every answer must stay the same.
 */
import type { AllocatedLeg, Allocation, LegOutcome, SplitCandidate, SplitOptions } from '../../src/routing/split-allocator.ts'

interface Memo {
  readonly values: Map<bigint, LegOutcome | null>
}

/**
 * The best allocation by net: the greedy-and-prune allocations and every leg alone with the whole
 * amount, so it is never worse than the best single leg. Undefined when nothing can place the
 * whole amount (every leg runs out of liquidity).
 */
export function referenceAllocateSplit(candidates: readonly SplitCandidate[], amountIn: bigint, options: SplitOptions): Allocation | undefined {
  if (amountIn <= 0n || candidates.length === 0) return undefined
  const memos: Memo[] = candidates.map(() => ({ values: new Map() }))
  const evaluate = (c: number, amount: bigint): LegOutcome | undefined => {
    if (amount === 0n) return ZERO_OUTCOME
    const memo = memos[c].values
    let v = memo.get(amount)
    if (v === undefined) {
      v = candidates[c].evaluate(amount) ?? null
      memo.set(amount, v)
    }
    return v ?? undefined
  }
  const parts = BigInt(Math.max(1, Math.floor(options.parts)))
  const maxSplits = Math.max(1, Math.floor(options.maxSplits))

  // every leg alone with the whole amount: the split has to beat the best of these
  let best: Allocation | undefined
  candidates.forEach((candidate, c) => {
    const outcome = evaluate(c, amountIn)
    if (outcome === undefined) return
    const single: Allocation = { legs: [{ candidate: c, amountIn, outcome }], amountOut: outcome.amountOut, net: outcome.amountOut - outcome.variableCost - candidate.fixedCost }
    if (best === undefined || single.net > best.net) best = single
  })

  // the prune loop, as a reduce (the same leg: the first of the least)
  for (let allocation = greedy(candidates, evaluate, candidates.map((_, i) => i), amountIn, parts, maxSplits); allocation !== undefined; ) {
    if (best === undefined || allocation.net > best.net) best = allocation
    if (allocation.legs.length <= 1) break
    const worst = allocation.legs.reduce((w, leg) => (legNet(candidates, leg) < legNet(candidates, w) ? leg : w))
    allocation = greedy(candidates, evaluate, allocation.legs.filter((l) => l !== worst).map((l) => l.candidate), amountIn, parts, maxSplits)
  }
  return best
}

const ZERO_OUTCOME: LegOutcome = { amountOut: 0n, variableCost: 0n }

function legNet(candidates: readonly SplitCandidate[], leg: AllocatedLeg): bigint {
  return leg.outcome.amountOut - leg.outcome.variableCost - candidates[leg.candidate].fixedCost
}

function greedy(
  candidates: readonly SplitCandidate[],
  evaluate: (c: number, amount: bigint) => LegOutcome | undefined,
  allowed: readonly number[],
  amountIn: bigint,
  requestedParts: bigint,
  maxSplits: number,
): Allocation | undefined {
  // never a part of zero: an amount smaller than the part count is cut into units
  const parts = amountIn < requestedParts ? amountIn : requestedParts
  const part = amountIn / parts
  const remainder = amountIn - part * parts
  const taken = new Map<number, bigint>() // candidate -> parts taken, in activation order
  const usedPools = new Set<string>()
  // each candidate's gain from one part more (null: it cannot take one more): it changes only when
  // the candidate takes a part, so a step computes one gain, not one per candidate
  const gains = new Map<number, bigint | null>()
  const gainOf = (c: number, k: bigint): bigint | null => {
    const next = evaluate(c, (k + 1n) * part)
    if (next === undefined) return null
    const current = evaluate(c, k * part)
    if (current === undefined) return null
    return next.amountOut - next.variableCost - (current.amountOut - current.variableCost)
  }

  for (let step = 0n; step < parts; step++) {
    let chosen = -1
    let bestGain = 0n
    for (const c of allowed) {
      const k = taken.get(c) ?? 0n
      if (k === 0n && (taken.size >= maxSplits || candidates[c].pools.some((p) => usedPools.has(p)))) continue
      let gain = gains.get(c)
      if (gain === undefined) gains.set(c, (gain = gainOf(c, k)))
      if (gain === null) continue
      if (chosen < 0 || gain > bestGain) {
        chosen = c
        bestGain = gain
      }
    }
    if (chosen < 0) return undefined
    const k = taken.get(chosen) ?? 0n
    if (k === 0n) for (const p of candidates[chosen].pools) usedPools.add(p)
    taken.set(chosen, k + 1n)
    gains.delete(chosen)
  }

  // the indivisible remainder (< parts units) goes where it adds most
  const legs: AllocatedLeg[] = []
  let remainderLeg = -1
  if (remainder > 0n) {
    let bestGain = 0n
    for (const [c, k] of taken) {
      const withRest = evaluate(c, k * part + remainder)
      const without = evaluate(c, k * part)
      if (withRest === undefined || without === undefined) continue
      const gain = withRest.amountOut - withRest.variableCost - (without.amountOut - without.variableCost)
      if (remainderLeg < 0 || gain > bestGain) {
        remainderLeg = c
        bestGain = gain
      }
    }
    if (remainderLeg < 0) return undefined
  }
  let amountOut = 0n
  let net = 0n
  let allocated = 0n
  for (const [c, k] of taken) {
    const legIn = k * part + (c === remainderLeg ? remainder : 0n)
    const outcome = evaluate(c, legIn)
    if (outcome === undefined) return undefined
    legs.push({ candidate: c, amountIn: legIn, outcome })
    amountOut += outcome.amountOut
    net += outcome.amountOut - outcome.variableCost - candidates[c].fixedCost
    allocated += legIn
  }
  if (allocated !== amountIn) throw new Error(`split allocator lost input: allocated ${allocated} of ${amountIn}`)
  return { legs, amountOut, net }
}
