/**
 * The module-loader isolate gives back its start-up heap when asked: a child node process started
 * as `npm start` starts the service (`--import tsx`) loads the service's whole module graph, then
 * collects its loader isolate's garbage and prints what the loader isolate measured. Without the
 * collection that isolate keeps ~48 MB committed for the first 1.5-2 minutes.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { LoaderCollection } from '../../src/workers/loader-gc.ts'

const run = promisify(execFile)
const root = new URL('../../', import.meta.url)

describe('collectLoaderIsolateGarbage', () => {
  it('shrinks the loader isolate of a process run through tsx to its live heap', async () => {
    const script = `
      await import(${JSON.stringify(new URL('src/node/start.ts', root).href)})
      const { collectLoaderIsolateGarbage } = await import(${JSON.stringify(new URL('src/workers/loader-gc.ts', root).href)})
      console.log(JSON.stringify(await collectLoaderIsolateGarbage(10_000)))`
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, timeout: 60_000 })
    const collected = JSON.parse(stdout.trim().split('\n').at(-1)!) as LoaderCollection | null
    expect(collected).not.toBeNull()
    // compiling ~hundreds of modules leaves the loader isolate's young generation grown: ~40-50 MB
    expect(collected!.committedBeforeMb).toBeGreaterThan(30)
    expect(collected!.committedAfterMb).toBeLessThan(collected!.committedBeforeMb / 2)
  }, 90_000)
})
