/**
 * Addresses of the contracts the service routes through: from the devnet registry in devnet mode,
 * from configuration in fork mode (parsed and required by loadConfig).
 */
import { readFileSync } from 'node:fs'
import type { ChainContracts, ServiceConfig } from '../config.ts'
import { normalizeAddress } from '../chain/quantity.ts'
import type { Venue } from '../pools/pools.ts'
import { parseVenues, uniswapV2Venue, uniswapV3Venue } from '../pools/venues.ts'

export type { ChainContracts } from '../config.ts'

interface DevnetRegistryFile {
  weth: string
  tokens?: Array<{ address: string }>
  baseTokens: Array<{ address: string }>
  v2: { factory: string }
  v3: { factory: string }
  /** every venue, in the VENUES format (src/pools/venues.ts) */
  venues?: unknown[]
  ethUsdFeed: { address: string }
  extensions?: Record<string, string | { address: string }>
  backrun?: { executor: string; beneficiary: string }
}

export const ROUTER_EXTENSION_LABEL = 'swap-plan-router'

function requireEntry(value: string | undefined, name: string, registryPath: string): string {
  if (value === undefined) throw new Error(`the devnet registry ${registryPath} has no ${name} (run npm run build:devnet)`)
  return value
}

export function devnetContracts(registryPath: string): ChainContracts {
  const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as DevnetRegistryFile
  const routerEntry = registry.extensions?.[ROUTER_EXTENSION_LABEL]
  if (routerEntry === undefined) throw new Error(`the devnet registry ${registryPath} has no ${ROUTER_EXTENSION_LABEL} (run npm run build:devnet)`)
  return {
    router: normalizeAddress(typeof routerEntry === 'string' ? routerEntry : routerEntry.address),
    weth: normalizeAddress(registry.weth),
    venues: registryVenues(registry),
    baseTokens: registry.baseTokens.map((t) => normalizeAddress(t.address)),
    ethUsdFeed: normalizeAddress(registry.ethUsdFeed.address),
    backrunExecutor: normalizeAddress(requireEntry(registry.backrun?.executor, 'backrun.executor', registryPath)),
    listedTokens: (registry.tokens ?? []).map((t) => normalizeAddress(t.address)),
  }
}

/** the registry's venues; a registry from before venues: Uniswap's own at its v2 and v3 factories */
function registryVenues(registry: DevnetRegistryFile): Venue[] {
  if (registry.venues !== undefined) return parseVenues(JSON.stringify(registry.venues))
  return [uniswapV2Venue(normalizeAddress(registry.v2.factory)), uniswapV3Venue(normalizeAddress(registry.v3.factory))]
}

export function resolveChainContracts(config: ServiceConfig): ChainContracts {
  if (config.chain.mode === 'devnet') return devnetContracts(config.devnet.registryPath)
  const contracts = config.chain.contracts
  return { ...contracts, venues: [...contracts.venues], baseTokens: [...contracts.baseTokens] }
}
