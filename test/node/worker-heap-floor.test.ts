/**
 * The workers' V8 old-generation floor (WORKER_OLD_SPACE_FLOOR_MB, src/node/worker-heap-floor.ts):
 * an isolate started after the floor is set runs no full collection while its old generation is
 * below it (so its committed heap takes its steady size at once instead of following its live data
 * up), one started with the floor at 0 collects as V8 sizes it; out-of-range values are refused.
 */
import { Worker } from 'node:worker_threads'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.ts'
import { loadConfig } from '../../src/node/config.ts'
import { MAX_WORKER_OLD_SPACE_FLOOR_MB, setWorkerOldSpaceFloor } from '../../src/node/worker-heap-floor.ts'

/**
 * A worker that promotes ~30 MB of garbage into its old generation (chunks of small objects that
 * live through two scavenges, at most 4 chunks, ~2 MB, alive at once) and answers how many full
 * collections it ran meanwhile.
 */
const CHURN = `
const { PerformanceObserver, constants } = require('node:perf_hooks')
const { parentPort } = require('node:worker_threads')
let full = 0
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++
})
observer.observe({ entryTypes: ['gc'] })
const alive = []
for (let i = 0; i < 40; i++) {
  const chunk = []
  for (let j = 0; j < 20000; j++) chunk.push({ i, j })
  alive.push(chunk)
  if (alive.length > 4) alive.shift()
}
setTimeout(() => { observer.disconnect(); parentPort.postMessage(full) }, 50)
`

async function fullCollectionsOfAChurningWorker(): Promise<number> {
  // the pool's workers' old-space limit (src/workers/worker-pool.ts)
  const worker = new Worker(CHURN, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } })
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
  } finally {
    await worker.terminate()
  }
}

afterAll(() => setWorkerOldSpaceFloor(0))

describe('setWorkerOldSpaceFloor', () => {
  it('a worker started after a 64 MB floor runs no full collection below it; with the floor at 0 it does', async () => {
    setWorkerOldSpaceFloor(0)
    expect(await fullCollectionsOfAChurningWorker()).toBeGreaterThan(0)
    setWorkerOldSpaceFloor(64)
    expect(await fullCollectionsOfAChurningWorker()).toBe(0)
  })

  it.each([-1, MAX_WORKER_OLD_SPACE_FLOOR_MB + 1, 1.5, Number.NaN])('refuses %s MB', (mb) => {
    expect(() => setWorkerOldSpaceFloor(mb)).toThrow(RangeError)
  })
})

describe('WORKER_OLD_SPACE_FLOOR_MB', () => {
  it('defaults to 64 MB, takes 0 (V8 sizes the workers alone) up to 128', () => {
    expect(loadConfig({}).workers.oldSpaceFloorMb).toBe(64)
    expect(loadConfig({ WORKER_OLD_SPACE_FLOOR_MB: '0' }).workers.oldSpaceFloorMb).toBe(0)
    expect(loadConfig({ WORKER_OLD_SPACE_FLOOR_MB: '128' }).workers.oldSpaceFloorMb).toBe(128)
  })

  it.each(['-1', '129', '64.5', 'lots'])('refuses WORKER_OLD_SPACE_FLOOR_MB=%j, naming it', (value) => {
    let err: unknown
    try {
      loadConfig({ WORKER_OLD_SPACE_FLOOR_MB: value })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).problems.some((p) => p.startsWith('WORKER_OLD_SPACE_FLOOR_MB='))).toBe(true)
  })
})
