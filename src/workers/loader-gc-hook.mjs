/**
 * A module-loader hook that loads nothing: registered once a thread has imported its module graph,
 * its `initialize` runs in that thread's module-loader isolate (the thread tsx's ESM hooks run in)
 * and collects that isolate's garbage with a memory-reducing full collection.
 *
 * Why: compiling the graph leaves each loader isolate with ~48 MB committed (its young generation
 * grown to the maximum) over ~14 MB live, and V8's memory reducer only gives it back 1.5-2 minutes
 * after start; a service with two workers has three such isolates, ~100 MB of RSS that falls in
 * the middle of a soak instead of at start. Plain JavaScript, because it runs in the loader thread.
 *
 * `v8.queryObjects` is the one public call that makes V8 collect all available garbage (it runs
 * `CollectAllAvailableGarbage`, the reduce-memory mark-compacts that also shrink the young
 * generation) without --expose-gc; its experimental warning is silenced for this one call.
 */
import { getHeapStatistics, queryObjects } from 'node:v8'

const committedMb = () => Math.round((getHeapStatistics().total_heap_size / 2 ** 20) * 10) / 10

/** @param {{ port: import('node:worker_threads').MessagePort }} data */
export function initialize(data) {
  const before = committedMb()
  const emitWarning = process.emitWarning
  process.emitWarning = () => undefined
  try {
    queryObjects(Object, { format: 'count' })
  } finally {
    process.emitWarning = emitWarning
  }
  data.port.postMessage({ committedBeforeMb: before, committedAfterMb: committedMb() })
  data.port.close()
}
