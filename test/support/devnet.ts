/** Test helpers over the committed devnet fixtures (tests read fixtures/, never ../shared). */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { privateKeyToAccount } from 'viem/accounts'
import type { BackrunRequest } from '../../src/backrun/types.ts'
import type { Address, Hex } from '../../src/chain/types.ts'

export const FIXTURES = join(import.meta.dirname, '../../fixtures')
export const GENESIS_PATH = join(FIXTURES, 'devnet/genesis.json')
export const REGISTRY_PATH = join(FIXTURES, 'devnet/registry.json')

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
  /** Uniswap V4: the PoolManager holds every V4 pool (scripts/devnet/v4-venue.ts) */
  v4: {
    name: string
    poolManager: string
    poolSwapTest: string
    /** the hook contracts, at addresses whose low 14 bits are their permissions (scripts/devnet/v4-hooks.ts) */
    hooks: Array<{ name: string; address: string; permissions: string[]; salt: string }>
    pools: Array<{
      name: string
      poolId: string
      currency0: string
      currency1: string
      /** the key's fee: 8388608 (0x800000) for a dynamic fee */
      fee: number
      /** the LP fee slot0 holds at genesis */
      lpFee: number
      tickSpacing: number
      hooks: string
      sqrtPriceX96: string
      tick: number
      liquidity: string
      positions: Array<{ tickLower: number; tickUpper: number; liquidity: string }>
    }>
  }
  /** every venue in the VENUES format; the added ones list their pools */
  venues: Array<{ kind: 'v2' | 'v3' | 'v4'; name: string; pairs?: Array<{ address: string }>; pools?: Array<{ address: string }> } & Record<string, unknown>>
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
  return JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as Registry
}

/**
 * The fixture swaps in Uniswap V4's PoolManager (their `pools` is the PoolManager, their moved
 * pools the PoolIds in its events). The backrun tests take them like any other since backruns
 * cycle through V4 pools; a test that still leaves them out says why.
 */
export function swapsInV4(fx: Pick<FixtureTx, 'pools'>): boolean {
  const poolManager = (JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) as Registry).v4.poolManager.toLowerCase()
  return fx.pools.some((p) => p.toLowerCase() === poolManager)
}

export function loadFixtureTxs(): FixtureTx[] {
  return (JSON.parse(readFileSync(join(FIXTURES, 'txs/transactions.json'), 'utf8')) as { transactions: FixtureTx[] }).transactions
}

/** What signing a devnet transfer needs of the registry (the benchmarks read their own copy of it). */
export interface DevAccounts {
  chainId: number
  devAccounts: { accounts: ReadonlyArray<{ privateKey: Hex }> }
}

/**
 * A signed EIP-1559 transfer of 1 wei to 0x…dEaD from dev account `accountIndex`: 21,000 gas,
 * distinct per (account, nonce). `maxFeePerGas` defaults to 100 gwei, above any devnet base fee.
 */
export function signDevTransfer(registry: DevAccounts, accountIndex: number, nonce: number, maxFeePerGas = 100_000_000_000n): Promise<Hex> {
  const account = registry.devAccounts.accounts[accountIndex]
  if (account === undefined) throw new Error(`no dev account ${accountIndex} in the registry`)
  return privateKeyToAccount(account.privateKey).signTransaction({
    chainId: registry.chainId,
    type: 'eip1559',
    nonce,
    to: '0x000000000000000000000000000000000000dEaD',
    value: 1n,
    gas: 21_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: 1_000_000_000n,
  })
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

/** A signed EIP-1559 transfer of 1 wei to 0x…dEaD from `privateKey` with `nonce`, for the devnet's chain (distinct per key and nonce). */
export function signedTransfer(privateKey: Hex, nonce = 0, chainId = loadRegistry().chainId): Promise<Hex> {
  return privateKeyToAccount(privateKey).signTransaction({
    chainId,
    type: 'eip1559',
    nonce,
    to: '0x000000000000000000000000000000000000dEaD',
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  }) as Promise<Hex>
}

const NATIVE_TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' as Address

/**
 * The eth_backrun request of a fixture transaction whose call data is `data`: what its sender
 * spent, read from the recorded balance changes (the token it paid, else the ETH it sent).
 */
export function fixtureBackrunRequest(fx: FixtureTx & { value?: string }, data: Hex, registry: Registry = loadRegistry()): BackrunRequest {
  const sender = fx.expected.balanceChanges.find((c) => lower(c.address) === lower(fx.from))!
  const spent = Object.entries(sender.deltas).find(([symbol, delta]) => symbol !== 'ETH' && BigInt(delta) < 0n)
  const value = BigInt(fx.value ?? '0')
  return spent === undefined
    ? { to: lower(fx.to), calldata: data, value, tokenIn: NATIVE_TOKEN, amountIn: value }
    : { to: lower(fx.to), calldata: data, value, tokenIn: tokenAddress(registry, spent[0]), amountIn: -BigInt(spent[1]) }
}
