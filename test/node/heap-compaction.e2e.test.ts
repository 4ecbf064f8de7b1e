/**
 * src/node/heap-compaction.ts's setFullCompaction in a process of its own: V8 reads the flag it sets at
 * each mark-compact, so turned on while the process runs, the next full collection compacts old space
 * fully (issue 10). A child process because the flag is process-wide and the test needs --expose-gc.
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

describe('setFullCompaction, in a process of its own (V8 reads the flag at each mark-compact)', () => {
  const child = fileURLToPath(new URL('../support/heap-compaction-child.ts', import.meta.url))
  const oldSpaceAfterFullGc = (mode: 'on' | 'off'): { used: number; committed: number } =>
    JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', child, mode], { encoding: 'utf8', timeout: 60_000 }).trim().split('\n').at(-1)!) as { used: number; committed: number }

  it('turned on while the process runs, the next full collection leaves old space without the holes V8 keeps by default', () => {
    const off = oldSpaceAfterFullGc('off')
    const on = oldSpaceAfterFullGc('on')
    // by default the half-live pages stay: committed well above used
    expect(off.committed / off.used).toBeGreaterThan(1.3)
    // compacted: the live half moved into as few pages as it fills
    expect(on.committed / on.used).toBeLessThan(1.15)
    expect(off.committed - on.committed).toBeGreaterThan(3 * 2 ** 20)
  }, 120_000)
})
