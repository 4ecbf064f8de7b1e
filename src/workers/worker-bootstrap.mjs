/**
 * What piscina loads in each worker thread: plain JavaScript, because it runs before anything can
 * load TypeScript. It registers tsx's ESM hooks for this thread, then imports the worker's entry
 * (worker-entry.ts) as ES modules.
 *
 * Why not `execArgv: ['--import', 'tsx']`: on Node 20, tsx registers its ESM hooks on the main
 * thread only (module.register in workers is left to Node >= 21), so a worker started that way
 * loads .ts files through tsx's CommonJS hook: the whole domain is compiled to CommonJS, gets the
 * CommonJS builds of @ethereumjs, and the interpreter patches (src/evm/interpreter-patches.ts,
 * which patch the ES module build through import.meta.resolve) no longer apply. tsx's API registers
 * the ESM hooks in a worker on Node 20 as well.
 *
 * Its loader isolate's start-up heap is not collected here (loader-gc.ts, as the main thread does):
 * with it, test/workers/hung-worker.test.ts's workers replaced after a hang were not followed by
 * two new ones within 30 s when both were then terminated (not understood yet: run in a later turn
 * instead of awaited here it failed the same way; the same sequence outside piscina works. A
 * worker terminated while blocked in register()'s synchronous wait for its loader thread is one
 * suspect), so it waits for that to be found.
 *
 * The top-level await also makes piscina's first attempt, require(), fail on Node >= 20.19
 * (ERR_REQUIRE_ASYNC_MODULE) before this module runs, so it is loaded by import() as intended.
 */
import { register } from 'tsx/esm/api'

register()
const entry = await import('./worker-entry.ts')

export default entry.default
