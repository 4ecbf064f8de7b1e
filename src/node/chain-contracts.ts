/**
 * Addresses of the contracts the service routes through: from the devnet registry in devnet mode,
 * from configuration in fork mode (parsed and required by loadConfig).
 */
import { readFileSync } from 'node:fs'
import type { ChainContracts, ServiceConfig } from '../config.ts'
import { normalizeAddress } from '../chain/quantity.ts'
import type { Venue } from '../pools/pools.ts'
import { parseVenues, uniswapV2Venue, uniswapV3Venue, venueContract } from '../pools/venues.ts'

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

/**
 * The devnet's contracts from its registry. `venues`: only those of the registry's venues (matched
 * by protocol and factory, answered as the registry describes them, in the order given); every one by
 * default.
 * @throws Error when a venue of `venues` is not one of the registry's: the devnet's router and
 *   backrun contract were deployed with the registry's venues and accept no other pool
 */
export function devnetContracts(registryPath: string, venues?: readonly Venue[]): ChainContracts {
  const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as DevnetRegistryFile
  const routerEntry = registry.extensions?.[ROUTER_EXTENSION_LABEL]
  if (routerEntry === undefined) throw new Error(`the devnet registry ${registryPath} has no ${ROUTER_EXTENSION_LABEL} (run npm run build:devnet)`)
  return {
    router: normalizeAddress(typeof routerEntry === 'string' ? routerEntry : routerEntry.address),
    weth: normalizeAddress(registry.weth),
    venues: venues === undefined ? registryVenues(registry) : pickVenues(registryVenues(registry), venues, registryPath),
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

function pickVenues(registered: readonly Venue[], wanted: readonly Venue[], registryPath: string): Venue[] {
  return wanted.map((venue) => {
    const found = registered.find((r) => r.protocol === venue.protocol && venueContract(r) === venueContract(venue))
    if (found === undefined) {
      const known = registered.map((r) => `${r.name} (${r.protocol}, ${venueContract(r)})`).join(', ')
      const at = venue.protocol === 'uniswap-v4' ? 'poolManager' : 'factory'
      throw new Error(`VENUES: ${venue.name} (${venue.protocol}, ${at} ${venueContract(venue)}) is not a venue of the devnet registry ${registryPath}, whose contracts accept only ${known}`)
    }
    return found
  })
}

export function resolveChainContracts(config: ServiceConfig): ChainContracts {
  if (config.chain.mode === 'devnet') return devnetContracts(config.devnet.registryPath, config.chain.venues)
  const contracts = config.chain.contracts
  return { ...contracts, venues: [...contracts.venues], baseTokens: [...contracts.baseTokens] }
}
