/**
 * A full garbage collection from a test, for tests that hold what must be freed with WeakRefs:
 * gc exposed at run time (vitest's workers do not start with --expose-gc).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose_gc')
const gc = runInNewContext('gc') as () => void

/** A macrotask turn, then a full collection, twice: WeakRef targets read in a job stay alive until it ends. */
export async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0))
  gc()
  await new Promise((resolve) => setTimeout(resolve, 0))
  gc()
}
