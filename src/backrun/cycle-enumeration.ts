/**
 * The candidate cycles of a backrun: every directed cycle of two or three pools through at least
 * one pool the user's swap moved, through any token (not only the base tokens), with explicit bounds
 * so that a token with many pools cannot blow the search up.
 *
 * For a moved pool joining A and B, in both directions:
 *   - two pools: A -> B over the moved pool, B -> A over another pool of the same pair;
 *   - three pools: A -> B over the moved pool, B -> C, C -> A, for every third token C that has a
 *     pool with A and a pool with B (C may be any token the pools hold: WBTC as well as WETH).
 * Bounds:
 *   - `maxPoolsPerPair` (K): of one token pair's pools, the moved ones always take part, then the
 *     deepest others up to K in all. Depth is the pool's reserve of the pair's token0 (V2) or its
 *     virtual reserve at the current price (V3), comparable within a pair;
 *   - `maxThirdTokens` (N): per moved pool, at most N third tokens, WETH and the base tokens first
 *     (in `baseTokens` order), then the others by the depth of the legs they need: the deepest A/C
 *     pool's reserve of A times the deepest B/C pool's reserve of B (units A·B, the same for every C,
 *     so the products compare), largest first. A triangle is as deep as its shallowest leg.
 * So a moved pool yields at most 2·(K - 1) two-pool cycles and 2·N·K² triangles, however many pools
 * the tokens have.
 *
 * A directed cycle is returned once, rotated to its preferred start token: WETH when it holds it,
 * else the first base token it holds, else the moved pool's token it was found from. The search
 * values the other rotations of its best cycles too (cycle-search.ts): the preferred start token
 * is where to begin, not a restriction.
 */
import type { Address } from '../chain/types.ts'
import { Q96 } from '../dex/math/index.ts'
import type { PathHop } from '../pools/pool-quote.ts'
import { poolPairKey, type PoolSnapshot } from '../pools/pools.ts'
import { hasLiquidity } from '../pools/pool-kinds.ts'
import { buildPoolGraph } from '../pools/paths.ts'
import { BaseError } from '../primitives/base-error.ts'
import { MAX_HOPS } from '../routing/swap-plan.ts'

/** Every Uniswap pool of one pair: the V2 pair and the four V3 fee tiers. */
export const DEFAULT_MAX_POOLS_PER_PAIR = 5
/** Third tokens of triangles per moved pool. */
export const DEFAULT_MAX_THIRD_TOKENS = 16

export interface CycleBounds {
  /** 2: pairs of pools only; 3 (default, the most): triangles too */
  maxHops?: number
  /** K: pools of one token pair taking part (moved pools always do); default 5 */
  maxPoolsPerPair?: number
  /** N: third tokens of triangles per moved pool; default 16 */
  maxThirdTokens?: number
}

/** a directed cycle, rotated to start at its start token */
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

function checkBound(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new BackrunSearchError(`${name} must be an integer from ${min} to ${max}, not ${value}`)
}

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

/** the cycle's hops rotated to start where `start` goes in */
export function rotateTo(hops: readonly PathHop[], start: Address): PathHop[] {
  const i = hops.findIndex((h) => h.tokenIn === start)
  if (i < 0) throw new BackrunSearchError(`the cycle does not hold ${start}`)
  return [...hops.slice(i), ...hops.slice(0, i)]
}

/** the preferred start token: WETH, else the first base token the cycle holds, else the token it was found from */
function preferredStart(hops: readonly PathHop[], weth: Address, baseTokens: readonly Address[]): Address {
  const tokens = hops.map((h) => h.tokenIn)
  if (tokens.includes(weth)) return weth
  return baseTokens.find((t) => tokens.includes(t)) ?? tokens[0]
}

/** the pool's depth in its token0: the V2 reserve, or the V3 virtual reserve at the current price */
export function poolDepth0(pool: PoolSnapshot): bigint {
  if (pool.protocol === 'uniswap-v2') return pool.reserve0
  const { liquidity, sqrtPriceX96 } = pool.state
  return sqrtPriceX96 > 0n ? (liquidity * Q96) / sqrtPriceX96 : 0n
}

/** the pool's depth in `token` (one of its two) */
function depthIn(pool: PoolSnapshot, token: Address): bigint {
  if (token === pool.token0) return poolDepth0(pool)
  if (pool.protocol === 'uniswap-v2') return pool.reserve1
  return (pool.state.liquidity * pool.state.sqrtPriceX96) / Q96
}

/**
 * Every directed cycle of 2..maxHops pools through at least one moved pool, within the bounds, each
 * once, rotated to its preferred start token (see the module comment). Pools without liquidity and
 * repeated addresses are ignored.
 */
export function enumerateBackrunCycles(
  pools: readonly PoolSnapshot[],
  movedPools: readonly Address[],
  weth: Address,
  baseTokens: readonly Address[],
  bounds: CycleBounds | number = {},
): BackrunCycle[] {
  const b: CycleBounds = typeof bounds === 'number' ? { maxHops: bounds } : bounds
  const maxHops = b.maxHops ?? MAX_HOPS
  const maxPoolsPerPair = b.maxPoolsPerPair ?? DEFAULT_MAX_POOLS_PER_PAIR
  const maxThirdTokens = b.maxThirdTokens ?? DEFAULT_MAX_THIRD_TOKENS
  if (!Number.isInteger(maxHops) || maxHops < 2 || maxHops > MAX_HOPS) throw new BackrunSearchError(`maxHops must be 2 or 3, not ${maxHops}`)
  checkBound('maxPoolsPerPair', maxPoolsPerPair, 1)
  checkBound('maxThirdTokens', maxThirdTokens, 0)
  const wethL = lower(weth)
  const bases = baseTokens.map(lower)
  const moved = new Set(movedPools.map(lower))

  // 1. the pools that take part: per pair, the moved ones, then the deepest up to K
  const byPair = new Map<string, PoolSnapshot[]>()
  const seen = new Set<Address>()
  for (const pool of pools) {
    if (seen.has(pool.address) || !hasLiquidity(pool)) continue
    seen.add(pool.address)
    const key = poolPairKey(pool.token0, pool.token1)
    const group = byPair.get(key)
    if (group === undefined) byPair.set(key, [pool])
    else group.push(pool)
  }
  const kept: PoolSnapshot[] = []
  for (const group of byPair.values()) {
    const deepest = group
      .filter((p) => !moved.has(p.address))
      .sort((x, y) => {
        const dx = poolDepth0(x)
        const dy = poolDepth0(y)
        return dx > dy ? -1 : dx < dy ? 1 : x.address < y.address ? -1 : 1
      })
    const movedHere = group.filter((p) => moved.has(p.address))
    kept.push(...movedHere, ...deepest.slice(0, Math.max(0, maxPoolsPerPair - movedHere.length)))
  }
  const graph = buildPoolGraph(kept)

  const index = new Map<PoolSnapshot, number>()
  const idOf = (hop: PathHop): number => {
    let i = index.get(hop.pool)
    if (i === undefined) index.set(hop.pool, (i = index.size))
    return i * 2 + (hop.zeroForOne ? 1 : 0)
  }
  const found = new Set<string>()
  const out: BackrunCycle[] = []
  const add = (hops: PathHop[]) => {
    const key = cycleKey(hops.map(idOf))
    if (found.has(key)) return
    found.add(key)
    const start = preferredStart(hops, wethL, bases)
    out.push({ startToken: start, hops: rotateTo(hops, start), key })
  }
  /** hops from `from` to `to`, over the kept pools */
  const hopsBetween = (from: Address, to: Address): PathHop[] => (graph.get(from) ?? []).filter((h) => h.tokenOut === to)

  for (const edges of graph.values()) {
    for (const first of edges) {
      if (!moved.has(first.pool.address)) continue
      const a = first.tokenIn
      const bTok = first.tokenOut
      for (const back of hopsBetween(bTok, a)) if (back.pool !== first.pool) add([first, back])
      if (maxHops < 3 || maxThirdTokens === 0) continue
      for (const c of thirdTokens(graph, a, bTok, wethL, bases, maxThirdTokens)) {
        for (const second of hopsBetween(bTok, c)) for (const third of hopsBetween(c, a)) add([first, second, third])
      }
    }
  }
  return out
}

/** the third tokens of triangles over a pool of (a, b), bounded and ordered as the module comment says */
function thirdTokens(graph: ReturnType<typeof buildPoolGraph>, a: Address, b: Address, weth: Address, bases: readonly Address[], max: number): Address[] {
  const fromA = new Map<Address, bigint>()
  for (const hop of graph.get(a) ?? []) {
    const d = depthIn(hop.pool, a)
    if ((fromA.get(hop.tokenOut) ?? -1n) < d) fromA.set(hop.tokenOut, d)
  }
  const ranked: Array<{ token: Address; rank: number; depth: bigint }> = []
  const preferred = [weth, ...bases]
  const bestFromB = new Map<Address, bigint>()
  for (const hop of graph.get(b) ?? []) {
    const c = hop.tokenOut
    if (c === a || !fromA.has(c)) continue
    const d = depthIn(hop.pool, b)
    if ((bestFromB.get(c) ?? -1n) < d) bestFromB.set(c, d)
  }
  for (const [c, depthB] of bestFromB) {
    const p = preferred.indexOf(c)
    ranked.push({ token: c, rank: p < 0 ? preferred.length : p, depth: (fromA.get(c) ?? 0n) * depthB })
  }
  ranked.sort((x, y) => x.rank - y.rank || (x.depth > y.depth ? -1 : x.depth < y.depth ? 1 : x.token < y.token ? -1 : 1))
  return ranked.slice(0, max).map((r) => r.token)
}
