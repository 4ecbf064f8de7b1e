/**
 * fixtures/devnet/registry.json: where everything on the devnet is. Addresses are EIP-55
 * checksummed; amounts are decimal strings (never JSON numbers, they overflow).
 */
import { readFileSync } from 'node:fs'
import type { Hex } from 'viem'
import type { TokenSymbol, V3Fee } from './layout.ts'
import type { RegistryV4Hook } from './v4-hooks.ts'

export type { RegistryV4Hook }

export interface RegistryToken {
  symbol: TokenSymbol
  name: string
  decimals: number
  address: Hex
}

export interface RegistryV2Pair {
  /** e.g. "WETH/USDC" in token0/token1 order */
  name: string
  token0: Hex
  token1: Hex
  address: Hex
  reserve0: string
  reserve1: string
}

export interface RegistryV3Position {
  tokenId: string
  tickLower: number
  tickUpper: number
  liquidity: string
}

export interface RegistryV3Pool {
  /** e.g. "WETH/USDC 0.05%" in token0/token1 order */
  name: string
  token0: Hex
  token1: Hex
  fee: V3Fee
  tickSpacing: number
  address: Hex
  sqrtPriceX96: string
  tick: number
  /** in-range liquidity at genesis */
  liquidity: string
  /** positions minted through the NonfungiblePositionManager, owned by the deployer */
  positions: RegistryV3Position[]
}

/**
 * A V2- or V3-style venue in the VENUES format (src/pools/venues.ts). The devnet's added venues also
 * list their pools here (Uniswap's own are v2.pairs and v3.pools).
 */
export interface RegistryVenue {
  kind: 'v2' | 'v3'
  name: string
  factory: Hex
  /** v3: the account that CREATE2-deploys the pools */
  poolDeployer?: Hex
  initCodeHash: Hex
  /** v2: swap fee in basis points */
  feeBps?: number
  /** v3 */
  feeTiers?: number[]
  tickSpacings?: number[]
  callback: string
  /** v3: the position manager minting into this venue's pools */
  positionManager?: Hex
  pairs?: RegistryV2Pair[]
  pools?: RegistryV3Pool[]
}

export interface RegistryV4Position {
  tickLower: number
  tickUpper: number
  liquidity: string
}

/** A Uniswap V4 pool: a PoolKey in the PoolManager (no contract of its own). */
export interface RegistryV4Pool {
  /** e.g. "WETH/USDC 0.3% ts60" in currency0/currency1 order; ETH is native ether */
  name: string
  /** keccak256(abi.encode(PoolKey)) */
  poolId: Hex
  /** address(0) for native ETH */
  currency0: Hex
  currency1: Hex
  /** the key's LP fee in pips, or 8388608 (0x800000) for a dynamic fee */
  fee: number
  /** the LP fee slot0 holds at genesis (for a dynamic-fee pool, what its hook or hook owner set) */
  lpFee: number
  tickSpacing: number
  /** the hooks contract (one of RegistryV4.hooks), or address(0) */
  hooks: Hex
  sqrtPriceX96: string
  tick: number
  liquidity: string
  /** added through PoolModifyLiquidityTest (the position owner), salt 0 */
  positions: RegistryV4Position[]
}

/** Uniswap V4 on the devnet: the PoolManager, the v4-core test routers and the pools. */
export interface RegistryV4 {
  name: string
  poolManager: Hex
  poolModifyLiquidityTest: Hex
  /** every dev account approves it for every token */
  poolSwapTest: Hex
  /** PoolManager's owner (may set a protocol fee controller; none is set) */
  protocolFeeOwner: Hex
  /** deploys the hooks with CREATE2 at mined salts (v4-hooks.ts) */
  hookCreate2Deployer: Hex
  hooks: RegistryV4Hook[]
  pools: RegistryV4Pool[]
}

/** The V4 venue in the VENUES format: the PoolManager and the pool keys routes may use. */
export interface RegistryV4Venue {
  kind: 'v4'
  name: string
  poolManager: Hex
  poolKeys: Array<{ currency0: Hex; currency1: Hex; fee: number; tickSpacing: number; hooks: Hex }>
}

export interface RegistryKeyedAccount {
  index: number
  address: Hex
  privateKey: Hex
}

export interface DevnetRegistry {
  chainId: number
  hardfork: 'prague'
  genesisTimestamp: string
  weth: Hex
  /** WETH first, then the ERC-20s in deployment order */
  tokens: RegistryToken[]
  /** intermediate hops a router should try */
  baseTokens: { symbol: TokenSymbol; address: Hex }[]
  v2: {
    factory: Hex
    router02: Hex
    /** keccak256 of the pair creation code, as hard-coded in UniswapV2Library */
    pairInitCodeHash: Hex
    /** swap fee in hundredths of a basis point, like V3's fee field */
    fee: 3000
    pairs: RegistryV2Pair[]
  }
  v3: {
    factory: Hex
    positionManager: Hex
    swapRouter: Hex
    swapRouter02: Hex
    quoterV2: Hex
    /** keccak256 of the pool creation code, as hard-coded in the periphery's PoolAddress */
    poolInitCodeHash: Hex
    pools: RegistryV3Pool[]
  }
  /**
   * every venue routes use, Uniswap V2 and V3 first (in the VENUES format; the service reads its
   * devnet venues from here)
   */
  venues: Array<RegistryVenue | RegistryV4Venue>
  /** Uniswap V4: the PoolManager, the test routers and every pool (its ERC-20 pools' keys are the V4 venue in `venues`) */
  v4: RegistryV4
  ethUsdFeed: { address: Hex; decimals: number; description: string; answer: string; roundId: string; updatedAt: string }
  /** owns the factories and every liquidity position */
  deployer: { warning: string; address: Hex; privateKey: Hex }
  devAccounts: {
    warning: string
    mnemonic: string
    derivationPath: string
    /** each account's balances at genesis, in base units */
    balances: Record<'ETH' | TokenSymbol, string>
    /** every token (WETH included) is approved for type(uint256).max to these */
    approvedSpenders: { name: string; address: Hex }[]
    /** every account, index 0..63 (m/44'/60'/0'/0/index), funded alike */
    accounts: RegistryKeyedAccount[]
    /**
     * indexes of the accounts reserved as searcher keys ([8, 56..63]; 8 is the service's default
     * searcher): never use them as users in tests or benchmarks
     */
    searcherIndexes: number[]
  }
  /** contracts deployed at fixed addresses by the extension point, by label */
  extensions: Record<string, Hex>
}

export function readRegistry(path: string): DevnetRegistry {
  return JSON.parse(readFileSync(path, 'utf8')) as DevnetRegistry
}

/** Every V2-style pair of the devnet with its venue and fee in basis points: Uniswap's, then the added venues'. */
export function allV2Pairs(registry: DevnetRegistry): Array<RegistryV2Pair & { venue: string; feeBps: number }> {
  return [
    ...registry.v2.pairs.map((p) => ({ ...p, venue: 'uniswap-v2', feeBps: 30 })),
    ...v2v3Venues(registry).flatMap((v) => (v.pairs ?? []).map((p) => ({ ...p, venue: v.name, feeBps: v.feeBps! }))),
  ]
}

/** the registry's V2- and V3-style venues (the V4 venue has no pairs, pools or factory) */
export function v2v3Venues(registry: DevnetRegistry): RegistryVenue[] {
  return (registry.venues ?? []).filter((v): v is RegistryVenue => v.kind !== 'v4')
}

/** Every V3-style pool of the devnet with its venue: Uniswap's, then the added venues'. */
export function allV3Pools(registry: DevnetRegistry): Array<RegistryV3Pool & { venue: string }> {
  return [...registry.v3.pools.map((p) => ({ ...p, venue: 'uniswap-v3' })), ...v2v3Venues(registry).flatMap((v) => (v.pools ?? []).map((p) => ({ ...p, venue: v.name })))]
}

/** The token with `symbol`; throws when the registry has none. */
export function tokenBySymbol(registry: DevnetRegistry, symbol: TokenSymbol): RegistryToken {
  const token = registry.tokens.find((t) => t.symbol === symbol)
  if (!token) throw new Error(`no token ${symbol} in the registry`)
  return token
}
