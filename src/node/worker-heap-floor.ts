/**
 * The V8 old-generation floor of the worker isolates: the size their old generation may reach
 * before their first full collection, so a worker's heap takes its steady size within the first
 * minute instead of following its live data up over several (issue 10, BENCHMARKS.md bench:soak).
 *
 * Why a floor: V8 runs a full collection when the old generation reaches a limit it sets after each
 * one from the live size (x 1.1 to 1.35 for these heap sizes, plus the young generation's capacity),
 * and keeps the pages it committed up to that limit. As the live set grows to its bounded steady
 * size (caches, compiled code) over the first minutes, the limit, the committed pages and so the
 * RSS grow with it, several MB for each MB of live data; with a floor above the steady limit, the
 * committed size is the floor's from the first collections on. The main isolate gets its own floor
 * from `npm start`'s `--initial-old-space-size` (package.json).
 *
 * How: V8 reads `--initial-old-space-size` when it creates an isolate (a non-zero value also sets
 * the floor below which no full collection is started), and the flag is process-wide; worker
 * threads take no V8 flags of their own and their `resourceLimits` have no initial size. So the
 * flag is set to the workers' value just before the pool starts them: every isolate created from
 * then on (the pool's workers, the ones that replace them, and their module-loader threads) gets
 * it; the main isolate, configured at start, keeps the floor of its command line.
 */
import { setFlagsFromString } from 'node:v8'

/** V8 halves the old generation's maximum for its initial size: a floor above that is never used */
export const MAX_WORKER_OLD_SPACE_FLOOR_MB = 128

/**
 * Gives isolates created from now on an old-generation floor of `mb` MB; 0: V8's own sizing (no
 * floor), as without this call.
 * @throws RangeError when `mb` is not a whole number from 0 to MAX_WORKER_OLD_SPACE_FLOOR_MB
 */
export function setWorkerOldSpaceFloor(mb: number): void {
  if (!Number.isInteger(mb) || mb < 0 || mb > MAX_WORKER_OLD_SPACE_FLOOR_MB) {
    throw new RangeError(`the workers' old-space floor must be a whole number of MB from 0 to ${MAX_WORKER_OLD_SPACE_FLOOR_MB}, got ${mb}`)
  }
  setFlagsFromString(`--initial-old-space-size=${mb}`)
}
