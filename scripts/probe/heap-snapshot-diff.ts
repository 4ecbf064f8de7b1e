/**
 * Probe (issue 10, eighteenth session): what grew between two heap snapshots of one isolate, and
 * which holder keeps it. Three tables:
 * - by type and name (the census of scripts/lib/soak-heap-retained.ts --diff): count and self bytes
 *   reachable from the roots in each snapshot;
 * - by holder: every reachable node is charged to the nearest "named" object above it on its first
 *   path from the roots (a class instance or a closure; plain Objects, Arrays, Maps, Sets, arrays
 *   and V8's internal nodes are passed through, because they are what a holder keeps its records
 *   in), with the holder's field it hangs from: `object:LocalBuilder .receipts`. A window that is
 *   full at the first snapshot shows ~0 here however much it churns; one that keeps filling shows
 *   its growth, whatever record type it is made of;
 * - of the nodes allocated after the first snapshot and still reachable in the second (V8 keeps an
 *   object's snapshot id for the isolate's life, and hands out ids in increasing order, so those are
 *   the ids above the first snapshot's highest), the holders that keep the most bytes of them: what
 *   the interval added and something still holds.
 * Then the objects that have a hidden class of their own (a map and descriptor array no other
 * object shares: Node 20's V8 makes one for every object built by a spread followed by more
 * properties), by constructor and first fields; and, for the holders that grew most, the path
 * from the roots to the newest node charged to each.
 *
 * Snapshots: `SOAK_SERVICE_NODE_ARGS=--heapsnapshot-signal=SIGUSR2` and `kill -USR2 <service pid>`
 * (main isolate), scripts/probe/worker-heap-snapshots.ts (workers). Both must be of the same isolate
 * of the same process. Run:
 *   node --max-old-space-size=6000 --import tsx scripts/probe/heap-snapshot-diff.ts <before> <after> [rows]
 */
import { breadthFirstTree, graphOf, pathFromRoots, readSnapshot, type SnapshotGraph } from '../lib/soak-heap-retained.ts'

interface Tally {
  count: number
  bytes: number
}

interface SnapshotSummary {
  reachableBytes: number
  /** the highest id of the isolate's own objects (odd ids) */
  maxId: number
  byGroup: Map<string, Tally>
  byHolder: Map<string, Tally>
  /** only the nodes with an id above `newerThan` */
  newByHolder: Map<string, Tally>
  /** the path to the newest node charged to each holder (filled for the holders asked for) */
  newestPath: Map<string, string>
  /** objects whose hidden class (map) no other object shares, by constructor and first fields: the map's and its descriptors' bytes */
  ownMaps: Map<string, Tally>
}

/** object names that are containers of records, not owners of them: charged to whoever holds them */
const CONTAINER_NAMES = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'WeakSet', '(object elements)', '(object properties)', 'system / Context'])
/** node types that are never a holder (V8's internals, code, strings, numbers) */
const HOLDER_TYPES = new Set(['object', 'closure', 'synthetic', 'native'])

function isHolder(graph: SnapshotGraph, i: number): boolean {
  if (!HOLDER_TYPES.has(graph.type(i))) return false
  const name = graph.name(i)
  return !CONTAINER_NAMES.has(name) && !name.startsWith('system / ')
}

/** an element's index names a slot, not a field: all slots of a holder are one row */
const fieldName = (edge: string): string => (/^\[?\d+\]?$/.test(edge) ? '[]' : edge)

/**
 * V8 gives the isolate's own objects odd ids, in increasing order as snapshots first meet them; the
 * embedder's (Node's native) nodes get even ids that need not increase: only odd ids say "newer".
 */
const isHeapObjectId = (id: number): boolean => id % 2 === 1

const add = (map: Map<string, Tally>, key: string, bytes: number): void => {
  const row = map.get(key)
  if (row === undefined) map.set(key, { count: 1, bytes })
  else {
    row.count++
    row.bytes += bytes
  }
}

/** One snapshot read into its tallies; the graph is dropped on return (a main-isolate snapshot is ~1 GB parsed). */
export function summarize(file: string, newerThan: number, pathsFor: ReadonlySet<string>): SnapshotSummary {
  const graph = graphOf(readSnapshot(file))
  const { parent, parentEdge, seen } = breadthFirstTree(graph)
  // holderKey[i]: index into keys of the holder field node i hangs from (-1: not yet known)
  const keys: string[] = []
  const keyIndex = new Map<string, number>()
  const holderKey = new Int32Array(graph.count).fill(-1)
  const keyOf = (key: string): number => {
    let k = keyIndex.get(key)
    if (k === undefined) {
      k = keys.length
      keys.push(key)
      keyIndex.set(key, k)
    }
    return k
  }
  const rootKey = keyOf('(root)')
  holderKey[0] = rootKey
  const chain: number[] = []
  const summary: SnapshotSummary = { reachableBytes: 0, maxId: 0, byGroup: new Map(), byHolder: new Map(), newByHolder: new Map(), newestPath: new Map(), ownMaps: new Map() }
  // map node -> the one object using it, or -2 once a second one does
  const mapUser = new Map<number, number>()
  const newest = new Map<string, { id: number; node: number }>()
  for (let i = 0; i < graph.count; i++) {
    if (seen[i] === 0) continue
    // walk up until a node whose key is known, then give the walked chain its key top-down
    chain.length = 0
    let at = i
    while (holderKey[at] === -1) {
      chain.push(at)
      at = parent[at]!
    }
    for (let c = chain.length - 1; c >= 0; c--) {
      const node = chain[c]!
      const up = parent[node]!
      holderKey[node] = isHolder(graph, up) ? keyOf(`${graph.groupOf(up)} .${fieldName(graph.edgeName(parentEdge[node]!))}`) : holderKey[up]!
    }
    const bytes = graph.selfSize(i)
    const id = graph.id(i)
    const key = keys[holderKey[i]!]!
    summary.reachableBytes += bytes
    if (isHeapObjectId(id) && id > summary.maxId) summary.maxId = id
    add(summary.byGroup, graph.groupOf(i), bytes)
    if (graph.type(i) === 'object' || graph.type(i) === 'closure') {
      graph.forEachEdge(i, (to, edge) => {
        if (graph.edgeName(edge) === 'map' && graph.type(to) === 'object shape') mapUser.set(to, mapUser.has(to) ? -2 : i)
      })
    }
    add(summary.byHolder, key, bytes)
    if (isHeapObjectId(id) && id > newerThan) {
      add(summary.newByHolder, key, bytes)
      if (pathsFor.has(key) && (newest.get(key)?.id ?? -1) < id) newest.set(key, { id, node: i })
    }
  }
  for (const [key, { node }] of newest) summary.newestPath.set(key, pathFromRoots(graph, parent, parentEdge, node))
  for (const [map, user] of mapUser) if (user >= 0) addOwnMap(graph, summary.ownMaps, map, user)
  return summary
}

/**
 * One object with a hidden class of its own (Node 20's V8 makes one for every object built by a
 * spread followed by more properties, `{ ...a, b }`): charged by its constructor and first fields,
 * with the bytes of its map and descriptor array (allocated in old space).
 */
function addOwnMap(graph: SnapshotGraph, rows: Map<string, Tally>, map: number, user: number): void {
  const fields: string[] = []
  graph.forEachEdge(user, (_to, edge) => {
    const name = graph.edgeName(edge)
    if (graph.isField(edge) && !['map', 'properties', 'elements', '__proto__'].includes(name) && !name.startsWith('[')) fields.push(name)
  })
  let bytes = graph.selfSize(map)
  graph.forEachEdge(map, (to, edge) => {
    if (graph.edgeName(edge) === 'descriptors') bytes += graph.selfSize(to)
  })
  add(rows, `${graph.groupOf(user)} {${fields.slice(0, 5).join(',')}${fields.length > 5 ? ',...' : ''}}`, bytes)
}

interface Change {
  key: string
  count: number
  bytes: number
  countAfter: number
  bytesAfter: number
}

function changes(before: Map<string, Tally>, after: Map<string, Tally>): Change[] {
  const zero: Tally = { count: 0, bytes: 0 }
  return [...new Set([...before.keys(), ...after.keys()])].map((key) => {
    const a = before.get(key) ?? zero
    const b = after.get(key) ?? zero
    return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, countAfter: b.count, bytesAfter: b.bytes }
  })
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(3)
const signed = (n: number, text: string) => `${n >= 0 ? '+' : ''}${text}`
const line = (c: Change) => `${signed(c.bytes, mb(c.bytes))} MB ${signed(c.count, String(c.count))}  ${c.key}  (now ${c.countAfter}, ${mb(c.bytesAfter)} MB)`

const [beforeFile, afterFile, rowsArg] = process.argv.slice(2)
if (beforeFile === undefined || afterFile === undefined) {
  console.error('usage: node --max-old-space-size=6000 --import tsx scripts/probe/heap-snapshot-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]')
  process.exit(2)
}
const rows = Number(rowsArg ?? 25)
const before = summarize(beforeFile, Number.MAX_SAFE_INTEGER, new Set())
// the holders worth a path are only known after both are read: read the second twice (cheap next to the analysis of the gap)
const firstPass = summarize(afterFile, before.maxId, new Set())
const grown = changes(before.byHolder, firstPass.byHolder).sort((x, y) => y.bytes - x.bytes)
const newest = [...firstPass.newByHolder].sort((x, y) => y[1].bytes - x[1].bytes)
const pathsFor = new Set([...grown.slice(0, 10).filter((c) => c.bytes > 0).map((c) => c.key), ...newest.slice(0, 10).map(([key]) => key)])
const after = summarize(afterFile, before.maxId, pathsFor)

console.log(`reachable ${mb(before.reachableBytes)} -> ${mb(after.reachableBytes)} MB (${signed(after.reachableBytes - before.reachableBytes, mb(after.reachableBytes - before.reachableBytes))}); ids above ${before.maxId} are new`)
console.log(`\n== by type and name, top ${rows} by bytes gained ==`)
for (const c of changes(before.byGroup, after.byGroup).sort((x, y) => y.bytes - x.bytes).slice(0, rows)) console.log(line(c))
console.log(`\n== by holder (nearest named object or closure above, and its field), top ${rows} by bytes gained ==`)
for (const c of grown.slice(0, rows)) console.log(line(c))
console.log(`\n== by holder, top ${Math.min(rows, 10)} by bytes lost ==`)
for (const c of grown.slice(-Math.min(rows, 10)).reverse()) console.log(line(c))
let newTotal = 0
for (const [, t] of after.newByHolder) newTotal += t.bytes
console.log(`\n== allocated after the first snapshot and still reachable: ${mb(newTotal)} MB; top ${rows} holders ==`)
for (const [key, t] of newest.slice(0, rows)) console.log(`${mb(t.bytes)} MB ${t.count}  ${key}`)
const ownMaps = changes(before.ownMaps, after.ownMaps).sort((x, y) => y.bytesAfter - x.bytesAfter)
const ownTotal = (rows: Map<string, Tally>) => [...rows.values()].reduce((sum, t) => ({ count: sum.count + t.count, bytes: sum.bytes + t.bytes }), { count: 0, bytes: 0 })
const [ownBefore, ownAfter] = [ownTotal(before.ownMaps), ownTotal(after.ownMaps)]
console.log(`\n== objects with a hidden class of their own: ${ownBefore.count} -> ${ownAfter.count}, their maps and descriptor arrays ${mb(ownBefore.bytes)} -> ${mb(ownAfter.bytes)} MB; top ${Math.min(rows, 10)} ==`)
for (const c of ownMaps.slice(0, Math.min(rows, 10))) console.log(line(c))
console.log('\n== path from the roots to the newest node of each holder above (first 10 of each table) ==')
for (const key of pathsFor) console.log(`${key}:\n  ${after.newestPath.get(key) ?? '(no node newer than the first snapshot)'}`)
