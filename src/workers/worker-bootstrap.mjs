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
 * Its loader isolate's start-up heap is collected by worker-entry.ts once the worker has warmed up
 * (loader-gc.ts), not here: the warm-up still loads modules (the interpreter patches' imports),
 * and until READY a worker lost here is one piscina counts as failing at start (see
 * worker-pool.ts on why the pool then renews piscina's instance).
 *
 * The top-level await also makes piscina's first attempt, require(), fail on Node >= 20.19
 * (ERR_REQUIRE_ASYNC_MODULE) before this module runs, so it is loaded by import() as intended.
 */
import { register } from 'tsx/esm/api'

register()
const entry = await import('./worker-entry.ts')

export default entry.default
