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
 * two new ones within 30 s when both were then terminated. Part of why is piscina's rule: a worker
 * that exits after it started but before its READY (sent once this module has settled) counts as
 * failing at start, and piscina then never replaces any worker again (`workerFailsDuringBootstrap`;
 * a standalone piscina pool shows it), while the pool counts a worker as its own from the entry's
 * state-channel offer, before READY: awaiting the collection here (~0.7 s with the machine loaded)
 * widened that window. Two other placements were tried in the ninth session, on a machine loaded
 * enough that the test's budget assertions failed at the base code as well (a replaced worker's
 * cold quote over EVM_MAX_MS's 300 ms), and still lost the test's workers ("timed out waiting for
 * two new workers", which the base code did not): before the entry (its imports preloaded, the
 * collection, then the entry) and once the worker is idle after its first task (register() then
 * blocks the worker's thread ~0.7 s). So it waits until that is understood.
 *
 * The top-level await also makes piscina's first attempt, require(), fail on Node >= 20.19
 * (ERR_REQUIRE_ASYNC_MODULE) before this module runs, so it is loaded by import() as intended.
 */
import { register } from 'tsx/esm/api'

register()
const entry = await import('./worker-entry.ts')

export default entry.default
