/**
 * Latency of an open-loop run by time since the last new head (bench:quote's fixed-rate run): on a
 * new block the workers' L1 turns over, pool states are read again and the answer cache is empty,
 * so the requests just after a head are where a tail would come from. The head is seen through the
 * answers: a block number's first answer marks it, at that request's scheduled time (at 100
 * requests/s within 10 ms of the switch). Requests before the run's first head change are left out
 * (their head's age is unknown).
 */
import { summarize, type LatencySummary } from './stats.ts'

export interface HeadSample {
  /** when the request was due, ms after the run's start */
  scheduledMs: number
  latencyMs: number
  /** the block its answer was computed on */
  blockNumber: bigint
}

export interface HeadPhase {
  /** requests due this long after a new head, ms: [from, to) */
  from_ms: number
  to_ms: number
  count: number
  p50_ms: number
  p99_ms: number
  max_ms: number
}

/** the phases reported: the first quarter second, the rest of the first second, the rest */
export const HEAD_PHASE_EDGES_MS = [0, 250, 1000, Number.POSITIVE_INFINITY] as const

/** Heads seen in the run (after its first block) and the latency per phase since the last one. */
export function latencyByHead(samples: readonly HeadSample[]): { heads: number; phases: HeadPhase[] } {
  const byTime = [...samples].sort((a, b) => a.scheduledMs - b.scheduledMs)
  const headTimes: number[] = []
  let latest: bigint | undefined
  for (const s of byTime) {
    if (latest !== undefined && s.blockNumber > latest) headTimes.push(s.scheduledMs)
    if (latest === undefined || s.blockNumber > latest) latest = s.blockNumber
  }
  const buckets: number[][] = HEAD_PHASE_EDGES_MS.slice(1).map(() => [])
  let h = -1
  for (const s of byTime) {
    while (h + 1 < headTimes.length && headTimes[h + 1] <= s.scheduledMs) h++
    if (h < 0) continue
    const since = s.scheduledMs - headTimes[h]
    const k = HEAD_PHASE_EDGES_MS.findIndex((edge, i) => i > 0 && since < edge) - 1
    buckets[k].push(s.latencyMs)
  }
  const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : x)
  const phases = buckets.map((latencies, k) => {
    const sum = summarize(latencies)
    return { from_ms: HEAD_PHASE_EDGES_MS[k], to_ms: HEAD_PHASE_EDGES_MS[k + 1], count: sum.count, p50_ms: round(sum.p50), p99_ms: round(sum.p99), max_ms: round(sum.max ?? Number.NaN) }
  })
  return { heads: headTimes.length, phases }
}

/**
 * Latency of the requests due within `windowMs` after a head against the others, with the heads'
 * times given (bench:soak reads them from its builder rather than from the answers: an
 * eth_backrun or a submission's answer names no block). Requests before the first head are left
 * out, as above.
 */
export function latencyAfterHeads(samples: readonly Pick<HeadSample, 'scheduledMs' | 'latencyMs'>[], headTimes: readonly number[], windowMs: number): { after: LatencySummary; rest: LatencySummary } {
  const heads = [...headTimes].sort((a, b) => a - b)
  const after: number[] = []
  const rest: number[] = []
  for (const s of samples) {
    let last: number | undefined
    for (const h of heads) {
      if (h > s.scheduledMs) break
      last = h
    }
    if (last === undefined) continue
    ;(s.scheduledMs - last < windowMs ? after : rest).push(s.latencyMs)
  }
  return { after: summarize(after), rest: summarize(rest) }
}
