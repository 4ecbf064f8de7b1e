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
  const byLength: PathHop[][][] = Array.from({ length: maxHops + 1 }, () => [])
  if (tokenIn === tokenOut || maxHops < 1) return []
  const visited = new Set<Address>([tokenIn])
  const stack: PathHop[] = []
  const walk = (token: Address) => {
    for (const hop of graph.get(token) ?? []) {
      if (visited.has(hop.tokenOut)) continue
      stack.push(hop)
      if (hop.tokenOut === tokenOut) byLength[stack.length].push([...stack])
      else if (stack.length < maxHops) {
        visited.add(hop.tokenOut)
        walk(hop.tokenOut)
        visited.delete(hop.tokenOut)
      }
      stack.pop()
    }
  }
  walk(tokenIn)
  return byLength.flat().slice(0, maxPaths)
}
