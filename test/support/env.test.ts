import { afterEach, describe, expect, it, vi } from 'vitest'

import { loadConfig } from '../../src/node/config.ts'
import { withWorkersFromEnv } from './env.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('withWorkersFromEnv', () => {
  it("passes the test run's WORKERS to a service the test starts in this process", () => {
    vi.stubEnv('WORKERS', '1')
    expect(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })).workers.threads).toBe(1)
    vi.stubEnv('WORKERS', '2')
    expect(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })).workers.threads).toBe(2)
  })

  it('keeps a value the test sets itself, and adds nothing when the run sets none', () => {
    vi.stubEnv('WORKERS', '1')
    expect(withWorkersFromEnv({ WORKERS: '0' })).toEqual({ WORKERS: '0' })
    vi.stubEnv('WORKERS', undefined)
    expect(withWorkersFromEnv({ LOG_LEVEL: 'silent' })).toEqual({ LOG_LEVEL: 'silent' })
  })
})
