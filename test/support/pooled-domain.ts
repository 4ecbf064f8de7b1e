/**
 * The domain opened with a worker pool, and beside it the engines WORKERS=0 builds
 * (src/node/domain.ts) over the very same chain: what the tests comparing the pool's answers with
 * the main thread's need; and the domain with a pool of its own, for the tests of the pool itself.
 */
import type { ServiceConfig } from '../../src/config.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { buildEngines, engineSettings, type Engines } from '../../src/workers/engines.ts'
import { WorkerPool, type WorkerPoolOptions } from '../../src/workers/worker-pool.ts'

export async function openPooledBesideInProcess(env: Record<string, string>): Promise<{ config: ServiceConfig; domain: DomainServices; inProcess: Engines }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env })
  const domain = await openDomainServices(config, { log: { warn: () => {} } })
  const inProcess = buildEngines(domain.chain, engineSettings(config, domain.contracts), { warn: () => {} })
  return { config, domain, inProcess }
}

/** A pool's options without what the domain supplies (its chain and engine settings); its log is quiet unless given. */
export type PoolOverDomainOptions = Omit<WorkerPoolOptions, 'chain' | 'engines' | 'log'> & { log?: WorkerPoolOptions['log'] }

/** A worker pool over `domain`'s chain with the engines `config` gives its workers (not awaited: see `ready()`). */
export function poolOverDomain(config: ServiceConfig, domain: DomainServices, options: PoolOverDomainOptions): WorkerPool {
  return new WorkerPool({ log: { warn: () => {} }, ...options, chain: domain.chain, engines: engineSettings(config, domain.contracts) })
}

/**
 * The domain as WORKERS=0 opens it on the embedded devnet, and a pool of its own over the same
 * chain, ready: what the tests of the pool itself need. Both are closed again when the pool fails
 * to start.
 */
export async function openDomainWithPool(options: PoolOverDomainOptions): Promise<{ config: ServiceConfig; domain: DomainServices; pool: WorkerPool }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' })
  const domain = await openDomainServices(config, { log: { warn: () => {} } })
  const pool = poolOverDomain(config, domain, options)
  try {
    await pool.ready()
  } catch (err) {
    await pool.close()
    await domain.close()
    throw err
  }
  return { config, domain, pool }
}
