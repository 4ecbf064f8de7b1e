/**
 * Tests and benchmarks start the service as `npm start` does: the start script's environment
 * (MALLOC_ARENA_MAX) and node arguments (the old-space bound), read from package.json.
 */
import { describe, expect, it } from 'vitest'
import { startScriptEnv, startScriptNodeArgs } from './service-process.ts'

describe("the start script's words", () => {
  it('gives the environment before node apart from the node arguments', () => {
    expect(startScriptEnv()).toEqual({ MALLOC_ARENA_MAX: '2' })
    expect(startScriptNodeArgs()).toEqual(['--max-old-space-size=384', '--import', 'tsx', 'src/main.ts'])
  })
})
