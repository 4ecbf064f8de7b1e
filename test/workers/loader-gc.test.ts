/**
 * When the module-loader isolate's collection is asked for: only where tsx's hooks run, since
 * registering a hook elsewhere would start a loader isolate that was not there.
 */
import { describe, expect, it } from 'vitest'
import { runsUnderTsxLoader } from '../../src/workers/loader-gc.ts'

describe('runsUnderTsxLoader', () => {
  it('is true for npm start (--import tsx), the tsx CLI and NODE_OPTIONS', () => {
    expect(runsUnderTsxLoader(['--max-old-space-size=384', '--import', 'tsx'], '')).toBe(true)
    expect(runsUnderTsxLoader(['--import=tsx'], '')).toBe(true)
    expect(runsUnderTsxLoader(['--require', '/w/node_modules/tsx/dist/preflight.cjs', '--import', 'file:///w/node_modules/tsx/dist/loader.mjs'], '')).toBe(true)
    expect(runsUnderTsxLoader([], '--enable-source-maps --import tsx/esm')).toBe(true)
  })

  it('is false for plain node, and for arguments that only look like it', () => {
    expect(runsUnderTsxLoader([], '')).toBe(false)
    expect(runsUnderTsxLoader(['--max-old-space-size=384', '--import', './tsx-less.mjs', 'notsx'], '--title=tsxapp')).toBe(false)
  })
})
