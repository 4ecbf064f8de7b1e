/**
 * How much each isolate of the service promotes under bench:soak, from `--trace-gc-nvp` output: per
 * isolate (main thread, each pool worker, tsx's loader threads) and per minute of the isolate's own
 * clock, the bytes it allocated, the bytes its collections promoted into old space (what survived two
 * scavenges, or was young and alive at a mark-compact), and with --trace-gc-verbose old space's
 * used/committed size right after each mark-compact (committed over used is its holes then: pages
 * with no live object are already released). nvp's own `holes_size_after` is not used: at the end of
 * a mark-compact's pause its pages are not swept yet, so their free lists are nearly empty. Promoted garbage dies in old space and leaves holes there that only
 * a compacting collection gives back, which is why old space's committed size creeps above its live
 * part under load (BENCHMARKS "h15-heap"): promoting less is what shrinks that creep at its source.
 *
 * Run: SOAK_SERVICE_NODE_ARGS="--trace-gc-nvp --trace-gc-verbose" SOAK_SERVICE_STDOUT=gc.txt npm run
 * bench:soak, then `npx tsx scripts/lib/soak-gc-nvp.ts gc.txt [from minute, 1] [requests/s]`: with
 * the rate, also the promoted bytes per request of the load (all kinds together: the main isolate
 * serves every request; the workers' share is per task of theirs, see the soak's task_times).
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

export interface NvpMinute {
  minute: number
  scavenges: number
  markCompacts: number
  /** bytes allocated in the minute (the sum of each collection's `allocated`), MB */
  allocatedMb: number
  /** bytes promoted into old space by the minute's collections, MB */
  promotedMb: number
  /** with --trace-gc-verbose: old space right after each mark-compact of the minute, MB */
  oldAfterMarkCompact: Array<{ used: number; committed: number }>
  /** the heap's size (all spaces, used) right after each mark-compact, MB */
  sizeAfterMarkCompactMb: number[]
  /** the minute's scavenge pauses, ms */
  scavengePauseMs: number
  /** the minute's mark-compact pauses, ms */
  markCompactPauseMs: number
}

export interface NvpIsolate {
  isolate: string
  minutes: NvpMinute[]
}

// [pid:0xisolate]   1234 ms: pause=1.2 mutator=3.4 gc=s ... allocated=123 promoted=45 ...
const NVP = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: pause=([\d.]+) .*?\bgc=(s|mc|ms|mmc)\b(.*)$/
// [pid:0xisolate] Old space,              used:   2476 KB, available:      7 KB, committed:   2528 KB
const OLD_SPACE = /^\[\d+:(0x[0-9a-f]+)\] Old space,\s+used:\s+(\d+) KB, available:\s+\d+ KB, committed:\s+(\d+) KB/

function field(rest: string, name: string): number {
  const m = new RegExp(`\\b${name}=(\\d+)`).exec(rest)
  return m === null ? 0 : Number(m[1])
}

const MB = 1024 * 1024

/** The trace's collections grouped by isolate (in order of their first line) and minute of its clock. */
export function summarizeNvp(text: string): NvpIsolate[] {
  const isolates = new Map<string, NvpIsolate>()
  /** per isolate, its minute whose last collection was a mark-compact (the verbose lines that follow are its) */
  const afterMarkCompact = new Map<string, NvpMinute>()
  for (const line of text.split('\n')) {
    const old = OLD_SPACE.exec(line)
    if (old !== null) {
      afterMarkCompact.get(old[1]!)?.oldAfterMarkCompact.push({ used: Number(old[2]) / 1024, committed: Number(old[3]) / 1024 })
      afterMarkCompact.delete(old[1]!)
      continue
    }
    const m = NVP.exec(line)
    if (m === null) continue
    const [, address, ms, pause, kind, rest] = m
    let isolate = isolates.get(address!)
    if (isolate === undefined) {
      isolate = { isolate: address!, minutes: [] }
      isolates.set(address!, isolate)
    }
    const minute = Math.floor(Number(ms) / 60_000)
    let entry = isolate.minutes.at(-1)
    if (entry === undefined || entry.minute !== minute) {
      entry = { minute, scavenges: 0, markCompacts: 0, allocatedMb: 0, promotedMb: 0, oldAfterMarkCompact: [], sizeAfterMarkCompactMb: [], scavengePauseMs: 0, markCompactPauseMs: 0 }
      isolate.minutes.push(entry)
    }
    entry.allocatedMb += field(rest!, 'allocated') / MB
    entry.promotedMb += field(rest!, 'promoted') / MB
    if (kind === 'mc') {
      entry.markCompacts++
      entry.markCompactPauseMs += Number(pause)
      entry.sizeAfterMarkCompactMb.push(field(rest!, 'total_size_after') / MB)
      afterMarkCompact.set(address!, entry)
    } else {
      afterMarkCompact.delete(address!)
      entry.scavenges++
      entry.scavengePauseMs += Number(pause)
    }
  }
  return [...isolates.values()]
}

/** Totals over the isolate's minutes from `fromMinute` up to its last complete one (the last is cut by the run's end). */
export function nvpTotals(isolate: NvpIsolate, fromMinute: number): { minutes: number; allocatedMb: number; promotedMb: number; scavenges: number; markCompacts: number } {
  const complete = isolate.minutes.slice(0, -1).filter((m) => m.minute >= fromMinute)
  return {
    minutes: complete.length,
    allocatedMb: complete.reduce((s, m) => s + m.allocatedMb, 0),
    promotedMb: complete.reduce((s, m) => s + m.promotedMb, 0),
    scavenges: complete.reduce((s, m) => s + m.scavenges, 0),
    markCompacts: complete.reduce((s, m) => s + m.markCompacts, 0),
  }
}

function print(isolates: readonly NvpIsolate[], fromMinute: number, rate: number | undefined): void {
  for (const iso of isolates) {
    const t = nvpTotals(iso, fromMinute)
    if (t.minutes === 0) {
      console.log(`isolate ${iso.isolate}: fewer than two minutes of collections`)
      continue
    }
    const perMin = (x: number): string => (x / t.minutes).toFixed(2)
    const perRequest = rate === undefined ? '' : `; promoted per request ${((t.promotedMb * MB) / (rate * 60 * t.minutes) / 1024).toFixed(2)} KB, allocated per request ${((t.allocatedMb * MB) / (rate * 60 * t.minutes) / 1024).toFixed(1)} KB`
    console.log(
      `isolate ${iso.isolate}: minutes ${fromMinute}-${fromMinute + t.minutes - 1}: allocated ${perMin(t.allocatedMb)} MB/min, promoted ${perMin(t.promotedMb)} MB/min (${((100 * t.promotedMb) / Math.max(t.allocatedMb, 1e-9)).toFixed(2)}%), scavenges ${perMin(t.scavenges)}/min, mark-compacts ${perMin(t.markCompacts)}/min${perRequest}`,
    )
    for (const m of iso.minutes) {
      const old = m.oldAfterMarkCompact.length === 0 ? '' : `, old space used/committed ${m.oldAfterMarkCompact.map((u) => `${u.used.toFixed(0)}/${u.committed.toFixed(0)}`).join(', ')}`
      const mc = m.markCompacts === 0 ? '' : `; after mark-compacts heap MB ${m.sizeAfterMarkCompactMb.map((x) => x.toFixed(0)).join(', ')}${old} (pauses ${m.markCompactPauseMs.toFixed(0)} ms)`
      console.log(`  minute ${m.minute}: ${m.scavenges} scavenges (${m.scavengePauseMs.toFixed(0)} ms), allocated ${m.allocatedMb.toFixed(1)} MB, promoted ${m.promotedMb.toFixed(2)} MB${mc}`)
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: npx tsx scripts/lib/soak-gc-nvp.ts <the service stdout with --trace-gc-nvp> [from minute, 1] [requests/s]')
    process.exit(2)
  }
  const rate = process.argv[4] === undefined ? undefined : Number(process.argv[4])
  print(summarizeNvp(readFileSync(file, 'utf8')), Number(process.argv[3] ?? 1), rate)
}
