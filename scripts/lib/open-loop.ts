/**
 * An open-loop load generator for the benchmarks: request `i` is due at `start + i / rate`, evenly
 * spaced, and goes out when it is due whatever the earlier ones are doing (a slow answer does not
 * hold the next request back, unlike a closed loop, and there is no burst at the start of each
 * second, unlike autocannon's `overallRate`, which lets every connection spend its per-second
 * budget back to back).
 *
 * Latency is measured per request from its scheduled send time, not from when the generator got
 * round to sending it: a generator that falls behind (its own event loop busy, a timer late) adds
 * its lag to the figures rather than hiding it, and the lag is reported beside them (`sendLag`) so
 * a reader can tell the two apart. No synthetic samples: each latency is one request answered.
 *
 * Bounded: at most `maxInFlight` requests wait for an answer; a request due while that many are
 * outstanding is not sent and counts as a failure (`refused`), so an unanswering service shows up
 * as failures, never as an unbounded pile of sockets in the generator.
 */
import { summarize, type LatencySummary } from './stats.ts'

export interface OpenLoopOptions<T> {
  /** requests per second */
  rate: number
  /** how many requests to send (the run lasts count / rate seconds plus the last answers) */
  count: number
  /** requests waiting for an answer at most; one more due is refused (counted as a failure) */
  maxInFlight: number
  /** sends request `i`; resolves with what the caller wants kept per request, throws on failure */
  send: (i: number) => Promise<T>
}

export interface OpenLoopSample<T> {
  index: number
  /** when it was due, ms after the run's start */
  scheduledMs: number
  /** from when it was due to its whole answer, ms */
  latencyMs: number
  value: T
}

export interface OpenLoopResult<T> {
  /** the answered requests, in order of index */
  samples: Array<OpenLoopSample<T>>
  /** latency summary of the answered requests (from their scheduled send time) */
  latency: LatencySummary
  /** requests that failed: thrown by `send`, plus `refused` */
  failures: number
  /** of which: due while maxInFlight were outstanding, so not sent */
  refused: number
  firstFailure?: string
  /** how late the generator sent requests after their due time, ms (its own timers and event loop) */
  sendLag: LatencySummary
  /** wall time from the first due time to the last answer, s */
  wallSeconds: number
  /** answered requests per second over wallSeconds */
  answeredPerSecond: number
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the open loop (see the file's comment) and resolves when every request sent has settled. */
export async function runOpenLoop<T>(options: OpenLoopOptions<T>): Promise<OpenLoopResult<T>> {
  const { rate, count, maxInFlight, send } = options
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`open loop: rate must be a positive number of requests/s, got ${rate}`)
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`open loop: count must be a non-negative integer, got ${count}`)
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`open loop: maxInFlight must be a positive integer, got ${maxInFlight}`)
  const samples: Array<OpenLoopSample<T>> = []
  const lags: number[] = []
  const pending = new Set<Promise<void>>()
  let failures = 0
  let refused = 0
  let firstFailure: string | undefined
  const start = performance.now()
  for (let i = 0; i < count; i++) {
    const scheduledMs = (i * 1000) / rate
    const wait = start + scheduledMs - performance.now()
    if (wait > 0) await sleep(wait)
    const due = start + scheduledMs
    lags.push(performance.now() - due)
    if (pending.size >= maxInFlight) {
      refused++
      failures++
      firstFailure ??= `request ${i}: ${maxInFlight} requests already in flight`
      continue
    }
    const run: Promise<void> = send(i).then(
      (value) => void samples.push({ index: i, scheduledMs, latencyMs: performance.now() - due, value }),
      (err: unknown) => {
        failures++
        firstFailure ??= `request ${i}: ${err instanceof Error ? `${err.message}${err.cause === undefined ? '' : ` (${String(err.cause)})`}` : String(err)}`
      },
    )
    pending.add(run)
    void run.finally(() => pending.delete(run))
  }
  await Promise.all(pending)
  const wallSeconds = (performance.now() - start) / 1000
  samples.sort((a, b) => a.index - b.index)
  return {
    samples,
    latency: summarize(samples.map((s) => s.latencyMs)),
    failures,
    refused,
    firstFailure,
    sendLag: summarize(lags),
    wallSeconds,
    answeredPerSecond: samples.length / wallSeconds,
  }
}
