/**
 * A worker thread terminated while it hashes leaves the process alive (src/crypto/keccak.ts in
 * WebAssembly). The `keccak` package's native binding, which it replaced, aborted the process at
 * the first such terminate in 5 runs of 5 ("FATAL ERROR: Error::Error napi_create_reference",
 * 2026-11-28): the pool terminates a hung worker's thread and every thread when it closes. Run in a
 * child process (support/terminate-native-threads.mjs), so that an abort fails this test instead
 * of the test runner.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SCRIPT = fileURLToPath(new URL('../support/terminate-native-threads.mjs', import.meta.url))

describe('terminating a thread inside a hash', () => {
  it('sixteen threads terminated while hashing a KiB in a loop: the process lives and exits 0', () => {
    const child = spawnSync(process.execPath, [SCRIPT, 'keccak', '16'], { encoding: 'utf8', timeout: 120_000 })
    expect(child.signal, child.stderr).toBeNull()
    expect(child.status, child.stderr).toBe(0)
    expect(JSON.parse(child.stdout.trim().split('\n').at(-1)!)).toEqual({ mode: 'keccak', terminated: 16 })
  }, 150_000)
})
