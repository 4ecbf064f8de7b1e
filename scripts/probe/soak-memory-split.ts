/**
 * npx tsx scripts/probe/soak-memory-split.ts <gc trace> <soak log> [from minute]
 *
 * Where bench:soak's RSS slope comes from (issue 10), from one run made with
 * SOAK_SERVICE_NODE_ARGS="--trace-gc --trace-gc-verbose" SOAK_SERVICE_STDOUT=<gc trace> and its
 * output saved as <soak log> (its last line, the JSON, gives `memory_parts_by_minute_mb`: the
 * service's resident memory by part from /proc/<pid>/smaps at the end of each minute of the load,
 * scripts/lib/memory-parts.ts). Per minute: every isolate's committed heap summed (the main
 * thread's, the workers', the loader isolates'), split by space, their live heaps after the
 * minute's last collection, the ArrayBuffers' backing stores, beside smaps' v8_heap, malloc,
 * other_anon and files; then each series' least-squares slope from `from minute` (default 2) to
 * the last complete minute. Isolates' minutes are of their own clocks (a worker starts a second or
 * two after the main thread): a minute's sum mixes clocks that far apart. Last line: one JSON object.
 */
import { readFileSync } from 'node:fs'
import { summarizeGcTrace, type HeapSpaces } from '../lib/soak-gc-trace.ts'

const [tracePath, logPath, fromArg] = process.argv.slice(2)
if (tracePath === undefined || logPath === undefined) throw new Error('usage: soak-memory-split.ts <gc trace> <soak log> [from minute]')
const FROM = Number(fromArg ?? 2)

const traces = summarizeGcTrace(readFileSync(tracePath, 'utf8'))
const lastLine = readFileSync(logPath, 'utf8').trim().split('\n').at(-1) ?? '{}'
const parts = (JSON.parse(lastLine) as { memory_parts_by_minute_mb?: Array<Record<string, number> | null> }).memory_parts_by_minute_mb ?? []

type Series = 'committed' | 'old' | 'code' | 'large' | 'new' | 'live' | 'backing' | 'v8_heap' | 'malloc' | 'other_anon' | 'files'
const rows: Array<Partial<Record<Series, number>> & { minute: number }> = []
// the trace's last minute of each isolate is cut short by the end of the load: minutes before the smaps' count only
for (let minute = 0; minute < parts.length; minute++) {
  const row: Partial<Record<Series, number>> & { minute: number } = { minute }
  const add = (key: Series, value: number | undefined): void => {
    if (value !== undefined) row[key] = (row[key] ?? 0) + value
  }
  for (const t of traces) {
    // an isolate quiet this minute (no collection) keeps the spaces of its last minute with one
    const spaces: HeapSpaces | undefined = t.minutes.filter((m) => m.minute <= minute && m.spaces !== undefined).at(-1)?.spaces
    if (spaces === undefined) continue
    add('committed', spaces.all?.committed)
    add('old', spaces.oldSpace?.committed)
    add('code', spaces.codeSpace?.committed)
    add('large', spaces.largeObjects?.committed)
    add('new', spaces.newSpace?.committed)
    add('live', spaces.all?.used)
    add('backing', spaces.backingStores)
  }
  const smaps = parts[minute]
  if (smaps !== null && smaps !== undefined) for (const key of ['v8_heap', 'malloc', 'other_anon', 'files'] as const) row[key] = smaps[key]
  rows.push(row)
}

const series: Series[] = ['committed', 'old', 'code', 'large', 'new', 'live', 'backing', 'v8_heap', 'malloc', 'other_anon', 'files']
console.log(`minute  ${series.join('  ')}`)
for (const row of rows) console.log(`${String(row.minute).padStart(6)}  ${series.map((s) => (row[s] === undefined ? '-' : row[s]!.toFixed(1))).join('  ')}`)

function slope(points: Array<{ x: number; y: number }>): number | undefined {
  if (points.length < 2) return undefined
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length
  const my = points.reduce((s, p) => s + p.y, 0) / points.length
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0)
  return sxx === 0 ? undefined : points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx
}
const slopes: Partial<Record<Series, number>> = {}
for (const s of series) {
  const points = rows.filter((r) => r.minute >= FROM && r[s] !== undefined).map((r) => ({ x: r.minute, y: r[s]! }))
  const v = slope(points)
  if (v !== undefined) slopes[s] = Math.round(v * 100) / 100
}
console.log(`slopes from minute ${FROM}, MB/min: ${Object.entries(slopes).map(([k, v]) => `${k} ${v >= 0 ? '+' : ''}${v}`).join(', ')}`)
console.log(JSON.stringify({ from_minute: FROM, isolates: traces.length, slopes_mb_per_min: slopes }))
