/**
 * Node keeps a PerformanceResourceTiming entry for every `fetch` (the relays, an upstream node) in
 * a process-wide buffer of 250 by default, which nothing in the service reads. At the soak's rates
 * it filled only after minutes (h12-rss: 162 entries at minute 3, 251 at minute 10, ~0.4 KB each),
 * one more window that grows after the first minute (issue 10). A buffer of 0 holds none from the
 * start; a PerformanceObserver of 'resource' entries (none in the service) still receives each one.
 */
import { performance } from 'node:perf_hooks'

/** the most resource timings the process keeps (Node's default: 250) */
export const RESOURCE_TIMING_BUFFER_SIZE = 0

export function boundResourceTimings(): void {
  performance.setResourceTimingBufferSize(RESOURCE_TIMING_BUFFER_SIZE)
  performance.clearResourceTimings()
}
