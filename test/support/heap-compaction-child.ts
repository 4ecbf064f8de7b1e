/**
 * Child of test/node/heap-compaction.test.ts (run with --expose-gc): fragments old space the way a
 * long-running service does (pages that keep some live objects among dead ones), optionally turns
 * full compaction on with setFullCompaction (argv[2] === 'on'), runs one full collection and prints
 * old space's used and committed bytes after it as one JSON line.
 */
import { getHeapSpaceStatistics } from 'node:v8'
import { setFullCompaction } from '../../src/node/heap-compaction.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc')
// ~20 MB of small objects, promoted to old space by two full collections
const kept: Array<{ a: number; b: string } | null> = []
for (let i = 0; i < 200_000; i++) kept.push({ a: i, b: `s${i}` })
gc()
gc()
// every other one dies: each page keeps about half its bytes live, too many for V8's default
// heuristics to move them (a page must be mostly free to be compacted)
for (let i = 0; i < kept.length; i += 2) kept[i] = null
if (process.argv[2] === 'on') setFullCompaction(true)
gc()
const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!
console.log(JSON.stringify({ used: old.space_used_size, committed: old.space_size, kept: kept.length }))
