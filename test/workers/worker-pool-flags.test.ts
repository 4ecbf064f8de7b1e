/**
 * The flags a worker thread inherits from its process: none but V8's CPU profiler's, so that a
 * service started with --cpu-prof (scripts/profile-quote.ts) writes one profile per worker too.
 */
import { describe, expect, it } from 'vitest'
import { cpuProfilerFlags } from '../../src/workers/worker-pool.ts'

describe('cpuProfilerFlags', () => {
  it('passes --cpu-prof with its directory and interval on, and nothing else', () => {
    expect(cpuProfilerFlags(['--import', 'tsx', '--max-old-space-size=384', '--cpu-prof', '--cpu-prof-dir=/tmp/p', '--cpu-prof-interval=500'])).toEqual(['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--cpu-prof-interval=500'])
  })

  it('passes nothing when the process is not profiled, and never the file name (one per thread)', () => {
    expect(cpuProfilerFlags(['--import', 'tsx', '--cpu-prof-dir=/tmp/p'])).toEqual([])
    expect(cpuProfilerFlags(['--cpu-prof', '--cpu-prof-name=main.cpuprofile'])).toEqual(['--cpu-prof'])
  })
})
