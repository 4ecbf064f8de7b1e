/**
 * Which line of the pool's queue the dispatcher's simulations take: a new submission's first
 * simulation is urgent, a re-simulation background work; each kind takes places of its own share,
 * so a head's burst of re-simulations waiting for theirs never holds a first simulation. The pool
 * here records the calls (the lines themselves are task-gate.test.ts's).
 */
import { describe, expect, it } from 'vitest'
import type { StateReader } from '../../src/chain/types.ts'
import type { SimulationInput } from '../../src/submission/dispatcher-ports.ts'
import { Limiter } from '../../src/submission/limiter.ts'
import { pooledSubmissionSimulator } from '../../src/workers/pooled-submission-simulator.ts'
import type { RunOptions, WorkerPool } from '../../src/workers/worker-pool.ts'

const RAW = '0x02f86b0180843b9aca00850c92a69c0082520894000000000000000000000000000000000000dead0180c001a0' as const

function recordingPool() {
  const runs: Array<{ kind: string; priority: RunOptions['priority'] }> = []
  const releases: Array<() => void> = []
  const pool = {
    pinLatest: () => ({}) as StateReader,
    run: (kind: string, _request: unknown, _reader: StateReader, options: RunOptions) => {
      runs.push({ kind, priority: options.priority })
      return new Promise((resolve) => releases.push(() => resolve({ success: true })))
    },
  }
  return { pool: pool as unknown as WorkerPool, runs, releases }
}

const input = (again: boolean | undefined): SimulationInput => ({
  id: 'x' as SimulationInput['id'],
  kind: 'private-tx',
  rawTxs: [RAW],
  get userTxs(): never {
    throw new Error('the pooled simulator sends the stored bytes')
  },
  signal: new AbortController().signal,
  ...(again === undefined ? {} : { again }),
})

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('pooledSubmissionSimulator', () => {
  it('a first simulation is urgent, a re-simulation background; each waits for a place of its own share only', async () => {
    const { pool, runs, releases } = recordingPool()
    const simulate = pooledSubmissionSimulator(pool, new Limiter(1), new Limiter(1))
    const resim1 = simulate(input(true))
    const resim2 = simulate(input(true))
    await turn()
    // the re-simulations' one place is taken: the second waits for it
    expect(runs).toEqual([{ kind: 'simulate', priority: 'background' }])
    // a first simulation does not wait behind them; a second one waits for the first's place
    const first = simulate(input(undefined))
    const second = simulate(input(false))
    await turn()
    expect(runs.map((r) => r.priority)).toEqual(['background', 'urgent'])
    for (const release of releases.splice(0)) release()
    await Promise.all([resim1, first])
    await turn()
    expect(runs.map((r) => r.priority).sort()).toEqual(['background', 'background', 'urgent', 'urgent'])
    releases.splice(0).forEach((release) => release())
    await expect(Promise.all([resim2, second])).resolves.toEqual([{ success: true }, { success: true }])
  })
})
