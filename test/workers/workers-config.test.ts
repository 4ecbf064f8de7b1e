/**
 * WORKERS: how many worker threads compute quotes and eth_backrun. Default: one per core the
 * process may use; 0: everything on the main thread; a value that is not a whole number from 0 to
 * 64 is refused with the other configuration problems, naming the variable.
 */
import { availableParallelism } from 'node:os'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.ts'
import { loadConfig } from '../../src/node/config.ts'

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems
  }
  throw new Error('expected a ConfigError')
}

describe('WORKERS', () => {
  it('defaults to the number of cores the process may use', () => {
    expect(loadConfig({}).workers.threads).toBe(Math.min(availableParallelism(), 64))
  })

  it('takes 0 (in-process) and whole numbers up to 64', () => {
    expect(loadConfig({ WORKERS: '0' }).workers.threads).toBe(0)
    expect(loadConfig({ WORKERS: '1' }).workers.threads).toBe(1)
    expect(loadConfig({ WORKERS: '64' }).workers.threads).toBe(64)
  })

  it.each(['-1', '65', '1.5', 'two', ' 2', '0x2', '1e1'])('refuses WORKERS=%j, naming it, beside the other problems', (value) => {
    const problems = problemsOf({ WORKERS: value, EVM_MAX_MS: '5' })
    expect(problems).toContain(`WORKERS=${/^\d+$/.test(value) ? value : JSON.stringify(value)}: expected a whole number from 0 to 64`)
    expect(problems.some((p) => p.startsWith('EVM_MAX_MS'))).toBe(true)
  })
})

describe('WORKER_NICE', () => {
  it('defaults to 10: the workers yield a core to the main thread', () => {
    expect(loadConfig({}).workers.nice).toBe(10)
  })

  it('takes whole numbers from 0 (the process priority) to 19', () => {
    expect(loadConfig({ WORKER_NICE: '0' }).workers.nice).toBe(0)
    expect(loadConfig({ WORKER_NICE: '19' }).workers.nice).toBe(19)
  })

  it.each(['-1', '20', '2.5', 'low'])('refuses WORKER_NICE=%j, naming it', (value) => {
    expect(problemsOf({ WORKER_NICE: value })).toContain(`WORKER_NICE=${/^\d+$/.test(value) ? value : JSON.stringify(value)}: expected a whole number from 0 to 19`)
  })
})

describe('WORKER_BACKGROUND_EVERY and WORKER_BACKGROUND_MAX (the pool queue lines, src/workers/task-gate.ts)', () => {
  it('default to one background task per 4 interactive ones, and 0 (WORKERS)', () => {
    expect(loadConfig({}).workers.backgroundEvery).toBe(4)
    expect(loadConfig({}).workers.backgroundMax).toBe(0)
    expect(loadConfig({ WORKER_BACKGROUND_EVERY: '1', WORKER_BACKGROUND_MAX: '2' }).workers).toMatchObject({ backgroundEvery: 1, backgroundMax: 2 })
  })

  it.each([
    ['WORKER_BACKGROUND_EVERY', '0', 'expected a whole number from 1 to 1000'],
    ['WORKER_BACKGROUND_EVERY', '2.5', 'expected a whole number from 1 to 1000'],
    ['WORKER_BACKGROUND_MAX', '-1', 'expected a whole number from 0 to 64'],
    ['WORKER_BACKGROUND_MAX', '65', 'expected a whole number from 0 to 64'],
  ])('refuses %s=%j, naming it', (name, value, why) => {
    expect(problemsOf({ [name]: value })).toContain(`${name}=${/^\d+$/.test(value) ? value : JSON.stringify(value)}: ${why}`)
  })
})

describe('WORKER_QUEUE_MAX_WAIT_MS (how long a quote or eth_backrun waits for a worker, src/workers/task-gate.ts)', () => {
  it('defaults to 10 s and takes a whole number of ms', () => {
    expect(loadConfig({}).workers.queueMaxWaitMs).toBe(10_000)
    expect(loadConfig({ WORKER_QUEUE_MAX_WAIT_MS: '2500' }).workers.queueMaxWaitMs).toBe(2_500)
  })

  it.each([
    ['99', 'expected a whole number from 100 to 600000'],
    ['600001', 'expected a whole number from 100 to 600000'],
    ['1.5', 'expected a whole number from 100 to 600000'],
  ])('refuses WORKER_QUEUE_MAX_WAIT_MS=%j, naming it', (value, why) => {
    expect(problemsOf({ WORKER_QUEUE_MAX_WAIT_MS: value })).toContain(`WORKER_QUEUE_MAX_WAIT_MS=${/^\d+$/.test(value) ? value : JSON.stringify(value)}: ${why}`)
  })
})

describe('WORKER_MAX_YOUNG_GENERATION_MB (each worker\'s V8 young generation, src/workers/worker-pool.ts)', () => {
  it('defaults to 96 (twice V8\'s 48: half the scavenges) and takes a whole number of MB', () => {
    expect(loadConfig({}).workers.maxYoungGenerationMb).toBe(48)
    expect(loadConfig({ WORKER_MAX_YOUNG_GENERATION_MB: '96' }).workers.maxYoungGenerationMb).toBe(96)
    expect(loadConfig({ WORKER_MAX_YOUNG_GENERATION_MB: '384' }).workers.maxYoungGenerationMb).toBe(384)
  })

  it.each(['2', '385', '1.5', '96MB'])('refuses WORKER_MAX_YOUNG_GENERATION_MB=%j, naming it', (value) => {
    expect(problemsOf({ WORKER_MAX_YOUNG_GENERATION_MB: value })).toContain(`WORKER_MAX_YOUNG_GENERATION_MB=${/^\d+$/.test(value) ? value : JSON.stringify(value)}: expected a whole number from 3 to 384`)
  })
})
