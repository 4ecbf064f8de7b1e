/** Test helpers over the committed devnet fixtures (tests read fixtures/, never ../shared). */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Address, Hex } from '../../src/chain/types.ts'

export const FIXTURES = join(import.meta.dirname, '../../fixtures')
export const GENESIS_PATH = join(FIXTURES, 'devnet/genesis.json')

export interface Registry {
  chainId: number
  genesisTimestamp: string | number
  weth: string
  baseTokens: Array<{ symbol: string; address: string }>
  tokens: Array<{ symbol: string; decimals: number; address: string }>
  v2: { router02: string; factory: string; pairs: Array<{ name: string; address: string; token0: string; token1: string }> }
  v3: { swapRouter: string; swapRouter02: string; quoterV2: string; factory: string; pools: Array<{ name: string; address: string; token0: string; token1: string; fee: number }> }
  ethUsdFeed: { address: string }
  devAccounts: {
    accounts: Array<{ index: number; address: string; privateKey: Hex }>
    /** accounts reserved as searcher keys ([8, 56..63]): not to be used as users */
    searcherIndexes: number[]
  }
  extensions: Record<string, string>
  backrun: { executor: string; beneficiary: string }
  /** every venue in the VENUES format; the added ones list their pools */
  venues: Array<{ kind: 'v2' | 'v3'; name: string; pairs?: Array<{ address: string }>; pools?: Array<{ address: string }> } & Record<string, unknown>>
}

export interface FixtureLog {
  address: string
  topics: string[]
  data: string
}

export interface FixtureTx {
  name: string
  raw: Hex
  hash: Hex
  from: string
  to: string
  createsArbitrage: boolean
  pools: string[]
  expected: {
    status: 0 | 1
    gasUsed: string
    output: string
    logs: FixtureLog[]
    balanceChanges: Array<{ address: string; label: string; deltas: Record<string, string> }>
  }
  block: { number: string; timestamp: string; baseFeePerGas: string; gasLimit: string; miner: string; mixHash: Hex }
}

export function loadRegistry(): Registry {
  return JSON.parse(readFileSync(join(FIXTURES, 'devnet/registry.json'), 'utf8')) as Registry
}

export function loadFixtureTxs(): FixtureTx[] {
  return (JSON.parse(readFileSync(join(FIXTURES, 'txs/transactions.json'), 'utf8')) as { transactions: FixtureTx[] }).transactions
}

export function lower(a: string): Address {
  return a.toLowerCase() as Address
}

export function tokenAddress(registry: Registry, symbol: string): Address {
  const t = registry.tokens.find((x) => x.symbol === symbol)
  if (!t) throw new Error(`no token ${symbol} in the registry`)
  return lower(t.address)
}

/**
 * The environment of a fork of the devnet (anvil loaded with its genesis): the chain contracts
 * from the registry and the devnet searcher key, as fork mode requires them.
 */
export function devnetForkEnv(registry: Registry): Record<string, string> {
  return {
    ROUTER_ADDRESS: registry.extensions['swap-plan-router'],
    WETH_ADDRESS: registry.weth,
    VENUES: JSON.stringify(registry.venues.map(({ pairs: _pairs, pools: _pools, positionManager: _pm, ...venue }) => venue)),
    BASE_TOKENS: registry.baseTokens.map((t) => t.address).join(','),
    BACKRUN_CONTRACT: registry.backrun.executor,
    ETH_USD_FEED: registry.ethUsdFeed.address,
    SEARCHER_PRIVATE_KEY: registry.devAccounts.accounts[8].privateKey,
  }
}
