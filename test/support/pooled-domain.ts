/**
 * The domain opened with a worker pool, and beside it the engines WORKERS=0 builds
 * (src/node/domain.ts) over the very same chain: what the tests comparing the pool's answers with
 * the main thread's need.
 */
import type { ServiceConfig } from '../../src/config.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { buildEngines, engineSettings, type Engines } from '../../src/workers/engines.ts'

export async function openPooledBesideInProcess(env: Record<string, string>): Promise<{ config: ServiceConfig; domain: DomainServices; inProcess: Engines }> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env })
  const domain = await openDomainServices(config, { log: { warn: () => {} } })
  const inProcess = buildEngines(domain.chain, engineSettings(config, domain.contracts), { warn: () => {} })
  return { config, domain, inProcess }
}
