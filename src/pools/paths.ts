/**
 * The pool graph (tokens as nodes, one edge per pool and direction) and the simple paths through
 * it: 1..maxHops hops from tokenIn to tokenOut, never visiting a token twice, each hop over any
 * pool of its pair (V2 or any V3 fee tier), so two paths with the same tokens but different pools
 * are different paths.
 */
import type { Address } from '../chain/types.ts'
import { hasLiquidity } from './pool-kinds.ts'
import type { PathHop } from './pool-quote.ts'
import type { PoolSnapshot } from './pools.ts'

export type PoolGraph = ReadonlyMap<Address, readonly PathHop[]>

export function buildPoolGraph(pools: readonly PoolSnapshot[]): PoolGraph {
  const graph = new Map<Address, PathHop[]>()
  const seen = new Set<Address>()
  const add = (hop: PathHop) => {
    let edges = graph.get(hop.tokenIn)
    if (edges === undefined) graph.set(hop.tokenIn, (edges = []))
    edges.push(hop)
  }
  for (const pool of pools) {
    if (seen.has(pool.address) || !hasLiquidity(pool)) continue
    seen.add(pool.address)
    add({ pool, tokenIn: pool.token0, tokenOut: pool.token1, zeroForOne: true })
    add({ pool, tokenIn: pool.token1, tokenOut: pool.token0, zeroForOne: false })
  }
  return graph
}

/** every simple path of 1..maxHops hops, shortest first; at most `maxPaths` of them */
export function enumeratePaths(graph: PoolGraph, tokenIn: Address, tokenOut: Address, maxHops: number, maxPaths = Number.POSITIVE_INFINITY): PathHop[][] {
  if (tokenIn === tokenOut || maxHops < 1) return []
  const walk: PathWalk = { graph, tokenOut, maxHops, byLength: Array.from({ length: maxHops + 1 }, () => []), visited: new Set<Address>([tokenIn]), stack: [] }
  walkFrom(walk, tokenIn)
  return walk.byLength.flat().slice(0, maxPaths)
}

/**
 * One enumeration's state, handed to a module-level walk rather than captured by a closure made
 * per call: the closure was compiled by TurboFan again for each new block's enumeration in the
 * service's workers (scripts/probe/recompile-trace.ts, session 21)
 */
interface PathWalk {
  readonly graph: PoolGraph
  readonly tokenOut: Address
  readonly maxHops: number
  /** the paths found, by their number of hops */
  readonly byLength: PathHop[][][]
  readonly visited: Set<Address>
  /** the hops of the path being walked */
  readonly stack: PathHop[]
}

function walkFrom(walk: PathWalk, token: Address): void {
  const { visited, stack } = walk
  for (const hop of walk.graph.get(token) ?? []) {
    if (visited.has(hop.tokenOut)) continue
    stack.push(hop)
    if (hop.tokenOut === walk.tokenOut) walk.byLength[stack.length].push([...stack])
    else if (stack.length < walk.maxHops) {
      visited.add(hop.tokenOut)
      walkFrom(walk, hop.tokenOut)
      visited.delete(hop.tokenOut)
    }
    stack.pop()
  }
}
