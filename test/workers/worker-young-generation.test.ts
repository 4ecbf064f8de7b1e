/**
 * WORKER_MAX_YOUNG_GENERATION_MB reaches the workers: each worker's isolate of the domain's pool runs
 * with the young generation the setting gives (Node's Worker.resourceLimits, as the isolate applied
 * them), the old-space bound beside it unchanged; a pool given none leaves it to V8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceConfig } from '../../src/config.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { WORKER_MAX_OLD_GENERATION_MB, type WorkerPool } from '../../src/workers/worker-pool.ts'
import { poolOverDomain } from '../support/pooled-domain.ts'

/** not the default (96) nor V8's own (48): only the setting gives it */
const YOUNG_MB = 24

describe("the workers' young generation", () => {
  let config: ServiceConfig
  let domain: DomainServices
  let unset: WorkerPool | undefined

  beforeAll(async () => {
    config = loadConfig({ LOG_LEVEL: 'silent', WORKERS: '2', WORKER_MAX_YOUNG_GENERATION_MB: String(YOUNG_MB) })
    domain = await openDomainServices(config, { log: { warn: () => {} } })
  }, 120_000)

  afterAll(async () => {
    await unset?.close()
    await domain?.close()
  })

  it('is WORKER_MAX_YOUNG_GENERATION_MB in every worker of the service', () => {
    const limits = domain.workers!.resourceLimits()
    expect(limits).toHaveLength(2)
    for (const l of limits) {
      expect(l.maxYoungGenerationSizeMb).toBe(YOUNG_MB)
      expect(l.maxOldGenerationSizeMb).toBe(WORKER_MAX_OLD_GENERATION_MB)
    }
  })

  it("is V8's own in a pool given none", async () => {
    unset = poolOverDomain(config, domain, { threads: 1 })
    await unset.ready()
    const [limits] = unset.resourceLimits()
    expect(limits?.maxOldGenerationSizeMb).toBe(WORKER_MAX_OLD_GENERATION_MB)
    expect(limits?.maxYoungGenerationSizeMb).not.toBe(YOUNG_MB)
  }, 120_000)
})
