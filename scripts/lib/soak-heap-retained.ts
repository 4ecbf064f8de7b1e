/**
 * What each named holder keeps alive in a V8 heap snapshot of the service: the bytes that become
 * unreachable from the roots (weak edges not followed) once every object of that constructor
 * name is taken out of the graph, or that property's edge from each of them (what the property
 * holds that something else also reaches is not counted). This is how the ninth
 * session's table of windows in BENCHMARKS.md (bench:soak) was computed.
 *
 * Run: SOAK_SERVICE_NODE_ARGS=--heapsnapshot-signal=SIGUSR2 npm run bench:soak, `kill -USR2
 * <service pid>` when a snapshot is wanted (the service writes Heap.*.heapsnapshot in its working
 * directory; the pid is in the soak's log), then
 * `node --max-old-space-size=3000 --import tsx scripts/lib/soak-heap-retained.ts <snapshot> LocalBuilder LocalBuilder.receipts BlockTxIndex ...`
 * (`Class.prop`: what that property of each Class holds; a prefix of the edge's name matches, so
 * `ModuleWrap.<symbol node:source_map` is the source maps; `{a,b}`: every object with fields a and b,
 * whatever its constructor). Each holder costs one walk of the graph.
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

export interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

export interface Retained {
  holder: string
  /** objects taken out, or property edges cut */
  count: number
  bytes: number
}

export function retainedBy(snapshot: HeapSnapshot, holders: readonly string[]): { reachableBytes: number; retained: Retained[] } {
  const graph = graphOf(snapshot)
  const all = graph.reach()
  let reachableBytes = 0
  for (let i = 0; i < graph.count; i++) if (all[i] === 1) reachableBytes += graph.selfSize(i)
  const retained = holders.map((holder): Retained => {
    if (holder.startsWith('{')) return retainedByShape(graph, all, holder)
    const dot = holder.indexOf('.')
    const cls = dot < 0 ? holder : holder.slice(0, dot)
    const prop = dot < 0 ? undefined : holder.slice(dot + 1)
    const excluded = new Uint8Array(graph.count)
    const cutEdges = new Set<number>()
    let taken = 0
    for (let i = 0; i < graph.count; i++) {
      if (graph.groupOf(i) !== `object:${cls}`) continue
      if (prop === undefined) {
        excluded[i] = 1
        taken++
        continue
      }
      graph.forEachEdge(i, (_to, edge) => {
        // property and internal edges only (the holder's own fields)
        if (graph.isField(edge) && graph.edgeName(edge).startsWith(prop)) {
          cutEdges.add(edge)
          taken++
        }
      })
    }
    const without = graph.reach(excluded, cutEdges)
    let bytes = 0
    for (let i = 0; i < graph.count; i++) if (all[i] === 1 && without[i] === 0) bytes += graph.selfSize(i)
    return { holder, count: taken, bytes }
  })
  return { reachableBytes, retained }
}

/**
 * `{a,b,c}`: every reachable object that has all these fields, whatever its constructor (plain
 * Objects: a module's records, e.g. `{jumps,pushes,opcodesCached,pushJumps}` for the EVM's shared
 * jump analyses), taken out of the graph together.
 */
function retainedByShape(graph: SnapshotGraph, all: Uint8Array, holder: string): Retained {
  const fields = holder.slice(1, -1).split(',').map((f) => f.trim())
  const excluded = new Uint8Array(graph.count)
  let taken = 0
  for (let i = 0; i < graph.count; i++) {
    if (all[i] === 0 || graph.type(i) !== 'object') continue
    const names = new Set<string>()
    graph.forEachEdge(i, (_to, edge) => names.add(graph.edgeName(edge)))
    if (fields.every((f) => names.has(f))) {
      excluded[i] = 1
      taken++
    }
  }
  const without = graph.reach(excluded)
  let bytes = 0
  for (let i = 0; i < graph.count; i++) if (all[i] === 1 && without[i] === 0) bytes += graph.selfSize(i)
  return { holder, count: taken, bytes }
}

export interface CensusRow {
  /** the node's type and name, `type:name` (strings and code are grouped by type alone) */
  group: string
  count: number
  bytes: number
}

/** node types whose names are their contents (a string's text, a code object's function): grouped by type alone */
const GROUPED_BY_TYPE = new Set(['string', 'concatenated string', 'sliced string', 'code', 'number', 'bigint', 'hidden'])

/** Count and self size of the nodes reachable from the roots (weak edges not followed), by type and name. */
export function census(snapshot: HeapSnapshot): Map<string, CensusRow> {
  const graph = graphOf(snapshot)
  const seen = graph.reach()
  const rows = new Map<string, CensusRow>()
  for (let i = 0; i < graph.count; i++) {
    if (seen[i] === 0) continue
    const group = graph.groupOf(i)
    const row = rows.get(group) ?? { group, count: 0, bytes: 0 }
    row.count++
    row.bytes += graph.selfSize(i)
    rows.set(group, row)
  }
  return rows
}

/**
 * The first path from the roots (breadth first, weak edges not followed) to each of the `limit`
 * newest nodes (highest ids: allocated last) of `group`: which holder keeps what grew.
 */
export function pathsTo(snapshot: HeapSnapshot, group: string, limit: number): string[] {
  return pathsWhere(snapshot, limit, (graph, i) => (graph.groupOf(i) === group ? graph.id(i) : undefined))
}

/** The first path from the roots to each of the `limit` largest single nodes (self size): the big arrays and strings, and who holds them. */
export function pathsToLargest(snapshot: HeapSnapshot, limit: number): string[] {
  return pathsWhere(snapshot, limit, (graph, i) => graph.selfSize(i))
}

/** Paths to the `limit` reachable nodes with the highest rank (undefined: not a candidate). */
function pathsWhere(snapshot: HeapSnapshot, limit: number, rank: (graph: SnapshotGraph, i: number) => number | undefined): string[] {
  const graph = graphOf(snapshot)
  const { parent, parentEdge, seen } = breadthFirstTree(graph)
  const matches: Array<{ node: number; rank: number }> = []
  for (let i = 0; i < graph.count; i++) {
    const r = seen[i] === 1 ? rank(graph, i) : undefined
    if (r !== undefined) matches.push({ node: i, rank: r })
  }
  matches.sort((a, b) => b.rank - a.rank)
  return matches.slice(0, limit).map(({ node }) => pathFromRoots(graph, parent, parentEdge, node))
}

export interface BreadthFirstTree {
  /** each reachable node's parent on its first (shortest) path from the roots; -1 for the root and unreached nodes */
  parent: Int32Array
  /** the edge from that parent */
  parentEdge: Int32Array
  /** 1 where the roots reach the node (weak edges not followed) */
  seen: Uint8Array
}

/** The first path from the roots to every reachable node (breadth first, weak edges not followed). */
export function breadthFirstTree(graph: SnapshotGraph): BreadthFirstTree {
  const parent = new Int32Array(graph.count).fill(-1)
  const parentEdge = new Int32Array(graph.count).fill(-1)
  const seen = new Uint8Array(graph.count)
  const queue = new Int32Array(graph.count)
  let head = 0
  let tail = 0
  queue[tail++] = 0
  seen[0] = 1
  while (head < tail) {
    const i = queue[head++]!
    graph.forEachEdge(i, (to, edge) => {
      if (seen[to] === 1) return
      seen[to] = 1
      parent[to] = i
      parentEdge[to] = edge
      queue[tail++] = to
    })
  }
  return { parent, parentEdge, seen }
}

/** A node's path from the roots along the tree, as `group --edge-->` steps (at most 40), ending with the node and its size. */
export function pathFromRoots(graph: SnapshotGraph, parent: Int32Array, parentEdge: Int32Array, node: number): string {
  const steps: string[] = []
  for (let i = node; parent[i] !== -1 && steps.length < 40; i = parent[i]!) steps.push(`${graph.groupOf(parent[i]!)} --${graph.edgeName(parentEdge[i]!)}-->`)
  return `${steps.reverse().join(' ')} ${graph.groupOf(node)} (${graph.selfSize(node)} B)`
}

export type SnapshotGraph = ReturnType<typeof graphOf>

export function graphOf(snapshot: HeapSnapshot) {
  const meta = snapshot.snapshot.meta
  const nf = meta.node_fields.length
  const nef = meta.edge_fields.length
  const [types] = meta.node_types
  const [edgeTypes] = meta.edge_types
  const { nodes: N, edges: E, strings: S } = snapshot
  const iType = meta.node_fields.indexOf('type')
  const iName = meta.node_fields.indexOf('name')
  const iId = meta.node_fields.indexOf('id')
  const iSize = meta.node_fields.indexOf('self_size')
  const iEdges = meta.node_fields.indexOf('edge_count')
  const eType = meta.edge_fields.indexOf('type')
  const eName = meta.edge_fields.indexOf('name_or_index')
  const eTo = meta.edge_fields.indexOf('to_node')
  const weak = edgeTypes.indexOf('weak')
  const fields = new Set([edgeTypes.indexOf('property'), edgeTypes.indexOf('internal')])
  const byName = new Set([...fields, edgeTypes.indexOf('context'), edgeTypes.indexOf('shortcut')])
  const count = N.length / nf
  const firstEdge = new Uint32Array(count + 1)
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e
    e += N[i * nf + iEdges] * nef
    firstEdge[i + 1] = e
  }
  const forEachEdge = (i: number, visit: (to: number, edge: number) => void): void => {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += nef) if (E[e + eType] !== weak) visit(E[e + eTo] / nf, e)
  }
  return {
    count,
    forEachEdge,
    id: (i: number): number => N[i * nf + iId],
    type: (i: number): string => types[N[i * nf + iType]],
    name: (i: number): string => S[N[i * nf + iName]],
    selfSize: (i: number): number => N[i * nf + iSize],
    groupOf: (i: number): string => {
      const type = types[N[i * nf + iType]]
      return GROUPED_BY_TYPE.has(type) ? type : `${type}:${S[N[i * nf + iName]]}`
    },
    edgeName: (e: number): string => (byName.has(E[e + eType]) ? String(S[E[e + eName]]) : `[${E[e + eName]}]`),
    /** a property or internal edge: one of the holder's own fields */
    isField: (e: number): boolean => fields.has(E[e + eType]),
    /** what the roots reach (weak edges not followed), without the excluded nodes and the cut edges */
    reach: (excluded?: Uint8Array, cutEdges?: ReadonlySet<number>): Uint8Array => {
      const seen = new Uint8Array(count)
      const stack = [0]
      seen[0] = 1
      while (stack.length > 0) {
        forEachEdge(stack.pop()!, (to, edge) => {
          if (seen[to] === 1 || excluded?.[to] === 1 || cutEdges?.has(edge) === true) return
          seen[to] = 1
          stack.push(to)
        })
      }
      return seen
    },
  }
}

export function readSnapshot(file: string): HeapSnapshot {
  return JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const mb = (bytes: number) => (bytes / 1e6).toFixed(3)
  const [mode, ...rest] = process.argv.slice(2)
  if (mode === '--diff' && rest.length >= 2) {
    // what grew between two snapshots of one isolate, by type and name (top 30 by bytes gained)
    const before = census(readSnapshot(rest[0]!))
    const after = census(readSnapshot(rest[1]!))
    const groups = new Set([...before.keys(), ...after.keys()])
    const total = (rows: Map<string, CensusRow>) => [...rows.values()].reduce((sum, r) => sum + r.bytes, 0)
    console.log(`reachable ${mb(total(before))} -> ${mb(total(after))} MB`)
    const diff = [...groups].map((group) => {
      const a = before.get(group) ?? { group, count: 0, bytes: 0 }
      const b = after.get(group) ?? { group, count: 0, bytes: 0 }
      return { group, count: b.count - a.count, bytes: b.bytes - a.bytes, countAfter: b.count, bytesAfter: b.bytes }
    })
    diff.sort((x, y) => y.bytes - x.bytes)
    for (const d of diff.slice(0, Number(rest[2] ?? 30))) console.log(`${d.bytes >= 0 ? '+' : ''}${mb(d.bytes)} MB ${d.count >= 0 ? '+' : ''}${d.count} ${d.group} (now ${d.countAfter}, ${mb(d.bytesAfter)} MB)`)
    process.exit(0)
  }
  if (mode === '--paths' && rest.length >= 2) {
    // how the newest nodes of a group are reached from the roots
    for (const path of pathsTo(readSnapshot(rest[0]!), rest[1]!, Number(rest[2] ?? 5))) console.log(path)
    process.exit(0)
  }
  if (mode === '--largest' && rest.length >= 1) {
    for (const path of pathsToLargest(readSnapshot(rest[0]!), Number(rest[1] ?? 10))) console.log(path)
    process.exit(0)
  }
  const [file, ...holders] = process.argv.slice(2)
  if (file === undefined || holders.length === 0) {
    console.error('usage: node --max-old-space-size=3000 --import tsx scripts/lib/soak-heap-retained.ts <snapshot> <Class | Class.property>...')
    console.error('       ... soak-heap-retained.ts --diff <before> <after> [rows]   (what grew, by type and name)')
    console.error('       ... soak-heap-retained.ts --paths <snapshot> <type:name> [n]   (how its newest n are reached)')
    console.error('       ... soak-heap-retained.ts --largest <snapshot> [n]   (the n largest nodes and how they are reached)')
    process.exit(2)
  }
  const { reachableBytes, retained } = retainedBy(readSnapshot(file), holders)
  console.log(`reachable ${mb(reachableBytes)} MB`)
  for (const r of retained) console.log(`${r.holder} x${r.count}: retains ${mb(r.bytes)} MB`)
}
