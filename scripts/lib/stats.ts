/** Latency summaries for the benchmark scripts. */
export function percentile(sortedMs: readonly number[], q: number): number {
  if (sortedMs.length === 0) return Number.NaN
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil(q * sortedMs.length) - 1))
  return sortedMs[index]
}

export interface LatencySummary {
  count: number
  p50: number
  p99: number
  mean: number
  max: number
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b)
  const sum = sorted.reduce((a, b) => a + b, 0)
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), mean: sum / sorted.length, max: sorted[sorted.length - 1] }
}
