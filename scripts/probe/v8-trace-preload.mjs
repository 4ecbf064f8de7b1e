/**
 * Preload for scripts/probe/inline-deopts.ts and pg-scavenge-phases.ts (node --import): sets the V8 flags in PROBE_V8_FLAGS
 * (space separated, e.g. "--trace-opt --trace-deopt-verbose") with v8.setFlagsFromString, so that
 * they reach a service started as `npm start` starts it (its worker threads share the process'
 * flags), and writes "@@mark <seconds since start>" on stdout every PROBE_MARK_MS (default 5,000):
 * V8's trace lines carry no time, the marks place them.
 */
import v8 from 'node:v8'
import { isMainThread } from 'node:worker_threads'

if (isMainThread) {
  for (const flag of (process.env.PROBE_V8_FLAGS ?? '').split(' ').filter((f) => f !== '')) v8.setFlagsFromString(flag)
  const started = Date.now()
  setInterval(() => process.stdout.write(`@@mark ${((Date.now() - started) / 1000).toFixed(1)}\n`), Number(process.env.PROBE_MARK_MS ?? 5000)).unref()
}
