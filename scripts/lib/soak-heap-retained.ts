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
 * `ModuleWrap.<symbol node:source_map` is the source maps). Each holder costs one walk of the graph.
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

interface HeapSnapshot {
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
  const meta = snapshot.snapshot.meta
  const nf = meta.node_fields.length
  const nef = meta.edge_fields.length
  const [types] = meta.node_types
  const [edgeTypes] = meta.edge_types
  const { nodes: N, edges: E, strings: S } = snapshot
  const iType = meta.node_fields.indexOf('type')
  const iName = meta.node_fields.indexOf('name')
  const iSize = meta.node_fields.indexOf('self_size')
  const iEdges = meta.node_fields.indexOf('edge_count')
  const eType = meta.edge_fields.indexOf('type')
  const eName = meta.edge_fields.indexOf('name_or_index')
  const eTo = meta.edge_fields.indexOf('to_node')
  const weak = edgeTypes.indexOf('weak')
  const named = new Set([edgeTypes.indexOf('property'), edgeTypes.indexOf('internal')])
  const count = N.length / nf
  const firstEdge = new Uint32Array(count + 1)
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e
    e += N[i * nf + iEdges] * nef
    firstEdge[i + 1] = e
  }
  const reach = (excluded: Uint8Array, cutEdges: Uint8Array): Uint8Array => {
    const seen = new Uint8Array(count)
    const stack = [0]
    seen[0] = 1
    while (stack.length > 0) {
      const i = stack.pop()!
      for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += nef) {
        if (E[e + eType] === weak || cutEdges[e / nef] === 1) continue
        const to = E[e + eTo] / nf
        if (seen[to] === 1 || excluded[to] === 1) continue
        seen[to] = 1
        stack.push(to)
      }
    }
    return seen
  }
  const all = reach(new Uint8Array(count), new Uint8Array(E.length / nef))
  let reachableBytes = 0
  for (let i = 0; i < count; i++) if (all[i] === 1) reachableBytes += N[i * nf + iSize]
  const retained = holders.map((holder): Retained => {
    const dot = holder.indexOf('.')
    const cls = dot < 0 ? holder : holder.slice(0, dot)
    const prop = dot < 0 ? undefined : holder.slice(dot + 1)
    const excluded = new Uint8Array(count)
    const cutEdges = new Uint8Array(E.length / nef)
    let taken = 0
    for (let i = 0; i < count; i++) {
      if (S[N[i * nf + iName]] !== cls || types[N[i * nf + iType]] !== 'object') continue
      if (prop === undefined) {
        excluded[i] = 1
        taken++
        continue
      }
      for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += nef) {
        if (named.has(E[e + eType]) && String(S[E[e + eName]]).startsWith(prop)) {
          cutEdges[e / nef] = 1
          taken++
        }
      }
    }
    const without = reach(excluded, cutEdges)
    let bytes = 0
    for (let i = 0; i < count; i++) if (all[i] === 1 && without[i] === 0) bytes += N[i * nf + iSize]
    return { holder, count: taken, bytes }
  })
  return { reachableBytes, retained }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, ...holders] = process.argv.slice(2)
  if (file === undefined || holders.length === 0) {
    console.error('usage: node --max-old-space-size=3000 --import tsx scripts/lib/soak-heap-retained.ts <snapshot> <Class | Class.property>...')
    process.exit(2)
  }
  const { reachableBytes, retained } = retainedBy(JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot, holders)
  const mb = (bytes: number) => (bytes / 1e6).toFixed(3)
  console.log(`reachable ${mb(reachableBytes)} MB`)
  for (const r of retained) console.log(`${r.holder} x${r.count}: retains ${mb(r.bytes)} MB`)
}
