/**
 * Which isolate's heap grows under bench:soak, from the service's `--trace-gc` output: per isolate
 * (the main thread, each pool worker, the module-loader threads tsx starts beside each of them) and
 * per minute of the isolate's own clock, its full collections' live heap after them and the heap
 * V8 held committed. Live data that grows is a cache filling or a leak; a committed heap that grows
 * over a flat live heap is V8 sizing its heap (the next collection's limit follows the live size).
 *
 * Run: SOAK_SERVICE_NODE_ARGS=--trace-gc SOAK_SERVICE_STDOUT=gc.txt npm run bench:soak, then
 * `npx tsx scripts/lib/soak-gc-trace.ts gc.txt [from minute]` (--trace-gc-verbose lines, if any, are
 * skipped). Each isolate's line ends with its live heap's slope after full collections from that
 * minute of its clock (2 unless given): what bench:soak's RSS slope cannot separate per isolate.
 * Times are from each isolate's start: a worker replaced during the run is a new isolate.
 * With --trace-deopt beside them, the deoptimizations per minute and per function (deoptsByMinute);
 * with --trace-opt, the optimizing compilations the same way (optimizationsByMinute).
 *
 * With `--trace-gc-verbose` beside `--trace-gc` (SOAK_SERVICE_NODE_ARGS="--trace-gc
 * --trace-gc-verbose"), each minute also gets the heap's spaces as its last collection of that
 * minute left them (used / committed: new space, old space, code, large objects) and the
 * ArrayBuffers' backing stores: which part of a committed heap grows, the young generation V8
 * sizes by its survival rate or the old space it sizes from the live heap, and what lies outside
 * the heap.
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

export interface IsolateMinute {
  minute: number
  collections: number
  /** heap in use after each full collection (mark-compact), MB, in order */
  liveAfterFull: number[]
  /** the most V8 held committed at any collection of the minute, MB */
  committedMax: number
  /** with --trace-gc-verbose: the spaces after the minute's last collection */
  spaces?: HeapSpaces
  /**
   * with --trace-gc-verbose: old space right after each full collection, MB. Pages left with no
   * live object are released by then, so committed over used is fragmentation: free space inside
   * pages that still hold live objects, which V8 compacts only up to 4 MB of per collection
   */
  oldAfterFull: SpaceUse[]
  /** each full collection's pause on the isolate's thread, ms */
  fullPausesMs: number[]
}

/** A heap's spaces as --trace-gc-verbose prints them after a collection, MB. */
export interface HeapSpaces {
  newSpace?: SpaceUse
  oldSpace?: SpaceUse
  codeSpace?: SpaceUse
  largeObjects?: SpaceUse
  newLargeObjects?: SpaceUse
  all?: SpaceUse
  /** ArrayBuffers' backing stores, outside the V8 heap */
  backingStores?: number
  /** external memory the embedder reported (Node's buffers and handles) */
  external?: number
}

export interface SpaceUse {
  /** after the minute's last collection */
  used: number
  committed: number
  /** the most this space held committed after any of the minute's collections */
  committedMax: number
}

type SpaceKey = 'newSpace' | 'oldSpace' | 'codeSpace' | 'largeObjects' | 'newLargeObjects' | 'all'

const SPACE_KEYS: Readonly<Record<string, SpaceKey>> = {
  'New space': 'newSpace',
  'Old space': 'oldSpace',
  'Code space': 'codeSpace',
  'Large object space': 'largeObjects',
  'New large object space': 'newLargeObjects',
  'All spaces': 'all',
}

export interface IsolateTrace {
  /** V8's isolate address, as --trace-gc prints it */
  isolate: string
  collections: number
  minutes: IsolateMinute[]
  /** every full collection: when (ms of the isolate's clock) and the heap in use after it, MB */
  fulls: Array<{ ms: number; live: number }>
}

// [pid:0xisolate]   1234 ms: Mark-Compact 88.7 (123.9) -> 64.1 (124.6) MB, 12.34 / 0.00 ms ...
const EVENT = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Minor Mark-Sweep)\s+([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB,\s+([\d.]+)/

// [pid:0xisolate] Old space,              used:   2476 KB, available:      7 KB, committed:   2528 KB
const SPACE = /^\[\d+:(0x[0-9a-f]+)\] (New space|Old space|Code space|Large object space|New large object space|All spaces),\s+used:\s+(\d+) KB, available:\s+\d+ KB, committed:\s+(\d+) KB/
// [pid:0xisolate] Backing store memory:   1165 KB  /  External memory reported:     10 KB
const OUTSIDE = /^\[\d+:(0x[0-9a-f]+)\] (Backing store memory|External memory reported):\s+(\d+) KB/

const kbToMb = (kb: string): number => Number(kb) / 1024

/** The trace's collections grouped by isolate (in order of their first line) and minute. */
export function summarizeGcTrace(text: string): IsolateTrace[] {
  const isolates = new Map<string, IsolateTrace>()
  /** each isolate's minute of its latest collection: its verbose lines follow that collection's line */
  const current = new Map<string, IsolateMinute>()
  /** the isolates whose latest collection was a full one */
  const afterFull = new Set<string>()
  for (const line of text.split('\n')) {
    const space = SPACE.exec(line)
    if (space !== null) {
      const entry = current.get(space[1]!)
      const key = SPACE_KEYS[space[2]!]
      if (entry !== undefined && key !== undefined) {
        const spaces = (entry.spaces ??= {})
        const committed = kbToMb(space[4]!)
        spaces[key] = { used: kbToMb(space[3]!), committed, committedMax: Math.max(committed, spaces[key]?.committedMax ?? 0) }
        if (key === 'oldSpace' && afterFull.has(space[1]!)) entry.oldAfterFull.push({ used: kbToMb(space[3]!), committed, committedMax: committed })
      }
      continue
    }
    const outside = OUTSIDE.exec(line)
    if (outside !== null) {
      const entry = current.get(outside[1]!)
      if (entry !== undefined) (entry.spaces ??= {})[outside[2] === 'Backing store memory' ? 'backingStores' : 'external'] = kbToMb(outside[3]!)
      continue
    }
    const m = EVENT.exec(line)
    if (m === null) continue
    const [, isolate, ms, kind, , committedBefore, liveAfter, committedAfter, pauseMs] = m
    let trace = isolates.get(isolate)
    if (trace === undefined) {
      trace = { isolate, collections: 0, minutes: [], fulls: [] }
      isolates.set(isolate, trace)
    }
    const minute = Math.floor(Number(ms) / 60_000)
    let entry = trace.minutes.find((e) => e.minute === minute)
    if (entry === undefined) {
      entry = { minute, collections: 0, liveAfterFull: [], committedMax: 0, oldAfterFull: [], fullPausesMs: [] }
      trace.minutes.push(entry)
    }
    current.set(isolate, entry)
    trace.collections++
    entry.collections++
    if (kind.startsWith('Mark-Compact')) afterFull.add(isolate)
    else afterFull.delete(isolate)
    if (kind.startsWith('Mark-Compact')) {
      entry.liveAfterFull.push(Number(liveAfter))
      entry.fullPausesMs.push(Number(pauseMs))
      trace.fulls.push({ ms: Number(ms), live: Number(liveAfter) })
    }
    entry.committedMax = Math.max(entry.committedMax, Number(committedBefore), Number(committedAfter))
  }
  return [...isolates.values()]
}

/** The events of a --trace-deopt or --trace-opt trace: per minute and per function, all isolates together. */
export interface DeoptSummary {
  /** events per minute (index = minute) */
  perMinute: number[]
  /**
   * per function name (`(anonymous)` for none), the most first, with the minute of its first event
   * and how many of its events fell in minute `LATE_FROM_MINUTE` or later
   */
  byFunction: Array<{ name: string; count: number; fromMinute: number; late: number }>
}

/** the minute from which an event is counted as late: the soak's first minute or two are the program warming up */
export const LATE_FROM_MINUTE = 2

// [bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x… <JSFunction name (sfi = 0x…)>, …
const DEOPT = /^\[bailout \(kind: [\w-]+, reason: [^)]*\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >]*) ?\(sfi/
// [completed optimizing 0x… <JSFunction name (sfi = 0x…)> (target TURBOFAN)] (or "… (target TURBOFAN) OSR]")
const OPTIMIZED = /^\[completed optimizing 0x[0-9a-f]+ <JSFunction ([^ >]*) ?\(sfi/

/**
 * Deoptimizations counted by minute and by function, from --trace-deopt's lines in the same file as
 * --trace-gc's (SOAK_SERVICE_NODE_ARGS="--trace-gc --trace-deopt"). A deoptimization line names no
 * isolate and carries no time: each is put in the minute of the collection printed last before it
 * (any isolate's: the clocks differ by the workers' start, a second or two). A function that keeps
 * deoptimizing after the first minutes is optimized code compiled again and again (code space that
 * grows while compilation never settles); a few in the first minutes are the program warming up.
 */
export function deoptsByMinute(text: string): DeoptSummary {
  return eventsByMinute(text, DEOPT)
}

/**
 * TurboFan compilations finished (OSR ones too), counted as deoptsByMinute counts deoptimizations,
 * from --trace-opt's lines (SOAK_SERVICE_NODE_ARGS="--trace-gc --trace-opt"). Why: V8's code space
 * that grows after the first minutes is either functions reaching the optimizing tier for the first
 * time (a warm-up: many names, once each, fewer every minute) or the same functions compiled again
 * and again (a loop: the same names every minute, with deoptimizations or code flushed between).
 */
export function optimizationsByMinute(text: string): DeoptSummary {
  return eventsByMinute(text, OPTIMIZED)
}

function eventsByMinute(text: string, pattern: RegExp): DeoptSummary {
  const perMinute: number[] = []
  const byFunction = new Map<string, { count: number; fromMinute: number; late: number }>()
  let minute = 0
  for (const line of text.split('\n')) {
    const event = EVENT.exec(line)
    if (event !== null) {
      minute = Math.floor(Number(event[2]) / 60_000)
      continue
    }
    const d = pattern.exec(line)
    if (d === null) continue
    perMinute[minute] = (perMinute[minute] ?? 0) + 1
    const name = d[1] === '' ? '(anonymous)' : d[1]!
    const f = byFunction.get(name) ?? { count: 0, fromMinute: minute, late: 0 }
    f.count++
    if (minute >= LATE_FROM_MINUTE) f.late++
    byFunction.set(name, f)
  }
  for (let i = 0; i < perMinute.length; i++) perMinute[i] ??= 0
  return { perMinute, byFunction: [...byFunction.entries()].map(([name, f]) => ({ name, ...f })).sort((a, b) => b.count - a.count) }
}

/**
 * The live heap's slope, MB a minute: least squares over the full collections from `fromMinute` of
 * the isolate's clock on (undefined with fewer than 3 of them). A cache that fills or a leak shows
 * here; the committed heap's sawtooth does not.
 */
export function liveSlopeMbPerMin(trace: IsolateTrace, fromMinute: number): number | undefined {
  const points = trace.fulls.filter((f) => f.ms >= fromMinute * 60_000).map((f) => ({ x: f.ms / 60_000, y: f.live }))
  if (points.length < 3) return undefined
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length
  const my = points.reduce((s, p) => s + p.y, 0) / points.length
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0)
  if (sxx === 0) return undefined
  return points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx
}

function spacesText(spaces: HeapSpaces): string {
  const use = (name: string, u: SpaceUse | undefined): string => (u === undefined ? '' : `${name} ${u.used.toFixed(1)}/${u.committed.toFixed(1)}`)
  const parts = [
    use('new', spaces.newSpace),
    use('old', spaces.oldSpace),
    use('code', spaces.codeSpace),
    use('large', spaces.largeObjects),
    use('new large', spaces.newLargeObjects),
    use('all', spaces.all),
  ].filter((p) => p !== '')
  const outside = [
    spaces.backingStores === undefined ? '' : `backing stores ${spaces.backingStores.toFixed(1)}`,
    spaces.external === undefined ? '' : `external ${spaces.external.toFixed(1)}`,
  ].filter((p) => p !== '')
  return `after the minute's last collection, used/committed MB: ${parts.join(', ')}${outside.length === 0 ? '' : `; outside the heap, MB: ${outside.join(', ')}`}`
}

/**
 * How much each space's committed size (its most within a minute) changed from minute `fromMinute`
 * to the isolate's last complete minute (the trace's last minute is cut short by the end of the
 * run), with --trace-gc-verbose; undefined without it or without both minutes.
 */
export function committedGrowth(trace: IsolateTrace, fromMinute: number): { from: number; to: number; bySpace: Partial<Record<SpaceKey, number>> } | undefined {
  const complete = trace.minutes.slice(0, -1).filter((m) => m.spaces !== undefined)
  const first = complete.find((m) => m.minute === fromMinute)
  const last = complete.at(-1)
  if (first === undefined || last === undefined || last.minute <= first.minute) return undefined
  const bySpace: Partial<Record<SpaceKey, number>> = {}
  for (const key of Object.values(SPACE_KEYS)) {
    const a = first.spaces?.[key]
    const b = last.spaces?.[key]
    if (a !== undefined && b !== undefined) bySpace[key] = b.committedMax - a.committedMax
  }
  return { from: first.minute, to: last.minute, bySpace }
}

function print(traces: readonly IsolateTrace[], fromMinute: number): void {
  for (const t of traces) {
    const slope = liveSlopeMbPerMin(t, fromMinute)
    const slopeText = slope === undefined ? '' : `; live after full collections from minute ${fromMinute}: ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MB/min`
    console.log(`isolate ${t.isolate}: ${t.collections} collections${slopeText}`)
    const growth = committedGrowth(t, fromMinute)
    if (growth !== undefined) {
      const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`
      const parts = Object.entries(growth.bySpace).map(([k, v]) => `${k} ${signed(v)}`)
      console.log(`  committed (each minute's most) from minute ${growth.from} to ${growth.to}, MB: ${parts.join(', ')}`)
    }
    for (const m of t.minutes) {
      const live = m.liveAfterFull.length === 0 ? '-' : m.liveAfterFull.map((x) => x.toFixed(1)).join(', ')
      const pauses = m.fullPausesMs.length === 0 ? '' : ` (their pauses ${m.fullPausesMs.reduce((a, b) => a + b, 0).toFixed(0)} ms)`
      console.log(`  minute ${m.minute}: ${m.collections} collections; live after full ones ${live} MB${pauses}; committed at most ${m.committedMax.toFixed(1)} MB`)
      if (m.spaces !== undefined) console.log(`    ${spacesText(m.spaces)}`)
      if (m.oldAfterFull.length > 0) console.log(`    old space right after each full collection, used/committed MB: ${m.oldAfterFull.map((u) => `${u.used.toFixed(0)}/${u.committed.toFixed(0)}`).join(', ')}`)
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: npx tsx scripts/lib/soak-gc-trace.ts <the service stdout with --trace-gc> [slope from minute, 2]')
    process.exit(2)
  }
  const text = readFileSync(file, 'utf8')
  print(summarizeGcTrace(text), Number(process.argv[3] ?? 2))
  const deopts = deoptsByMinute(text)
  if (deopts.byFunction.length > 0) {
    console.log(`deoptimizations per minute (--trace-deopt, all isolates): ${deopts.perMinute.join(', ')}`)
    const late = deopts.byFunction.filter((f) => f.fromMinute >= 2).slice(0, 10)
    console.log(`most deoptimized functions: ${deopts.byFunction.slice(0, 10).map((f) => `${f.name} ${f.count}`).join(', ')}`)
    if (late.length > 0) console.log(`first deoptimized from minute 2 on: ${late.map((f) => `${f.name} ${f.count}`).join(', ')}`)
  }
  const optimized = optimizationsByMinute(text)
  if (optimized.byFunction.length > 0) {
    const late = optimized.byFunction.filter((f) => f.late > 0)
    const again = late.filter((f) => f.late >= 2).sort((a, b) => b.late - a.late)
    console.log(`optimizing compilations per minute (--trace-opt, all isolates): ${optimized.perMinute.join(', ')}`)
    console.log(`from minute ${LATE_FROM_MINUTE} on: ${late.reduce((n, f) => n + f.late, 0)} compilations of ${late.length} functions, ${late.filter((f) => f.fromMinute >= LATE_FROM_MINUTE).length} of them compiled for the first time then`)
    if (again.length > 0) console.log(`compiled twice or more from minute ${LATE_FROM_MINUTE} on: ${again.slice(0, 15).map((f) => `${f.name} ${f.late}`).join(', ')}`)
  }
}
