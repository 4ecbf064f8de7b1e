/**
 * Addresses of the contracts the service routes through: from the devnet registry in devnet mode,
 * from configuration in fork mode.
 */
import { readFileSync } from 'node:fs'
import type { ServiceConfig } from '../config.ts'
import { normalizeAddress } from './quantity.ts'
import type { Address } from './types.ts'

export interface ChainContracts {
  router: Address
  weth: Address
  v2Factory: Address
  v3Factory: Address
  /** tokens routes may pass through */
  baseTokens: Address[]
  /** Chainlink-style ETH/USD feed (AggregatorV3Interface) */
  ethUsdFeed: Address
  /** the deployed BackrunExecutor (src/contracts/BackrunExecutor.sol) */
  backrunExecutor: Address
}

interface DevnetRegistryFile {
  weth: string
  baseTokens: Array<{ address: string }>
  v2: { factory: string }
  v3: { factory: string }
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
    v2Factory: normalizeAddress(registry.v2.factory),
    v3Factory: normalizeAddress(registry.v3.factory),
    baseTokens: registry.baseTokens.map((t) => normalizeAddress(t.address)),
    ethUsdFeed: normalizeAddress(registry.ethUsdFeed.address),
    backrunExecutor: normalizeAddress(requireEntry(registry.backrun?.executor, 'backrun.executor', registryPath)),
  }
}

export function resolveChainContracts(config: ServiceConfig): ChainContracts {
  if (config.upstreamRpcUrl === undefined) return devnetContracts(config.devnetRegistryPath)
  // loadConfig guarantees these in fork mode
  const required = (value: string | undefined, name: string): Address => {
    if (value === undefined) throw new Error(`${name} is required in fork mode`)
    return normalizeAddress(value, name)
  }
  const weth = required(config.wethAddress, 'WETH_ADDRESS')
  return {
    router: required(config.routerAddress, 'ROUTER_ADDRESS'),
    weth,
    v2Factory: required(config.v2Factory, 'V2_FACTORY'),
    v3Factory: required(config.v3Factory, 'V3_FACTORY'),
    baseTokens: config.baseTokens?.map((t) => normalizeAddress(t, 'BASE_TOKENS')) ?? [weth],
    ethUsdFeed: required(config.ethUsdFeed, 'ETH_USD_FEED'),
    backrunExecutor: required(config.backrunContract, 'BACKRUN_CONTRACT'),
  }
}
