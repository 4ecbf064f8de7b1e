/**
 * What the devnet contains: tokens, reference prices, pools and their liquidity. Pure data; the
 * builder turns it into transactions.
 *
 * Prices. Each token has a reference USD price. Every pool is initialised at the reference ratio
 * moved by a small deviation, so the V2 pair and the V3 pools of one token pair disagree by up to
 * about 1%. Each deviation stays below the pool's own fee (|deviation| < fee), which keeps the
 * genesis free of arbitrage around any cycle of pools; a large enough swap pushes one pool out of
 * that band and creates a real arbitrage, a small one does not. See arbitrage.ts for the check.
 */

export type TokenSymbol = 'WETH' | 'USDC' | 'USDT' | 'WBTC' | 'DAI' | 'UNI' | 'LINK'

export interface TokenSpec {
  symbol: Exclude<TokenSymbol, 'WETH'>
  name: string
  decimals: number
}

/** Deployed in this order after WETH9 (the order fixes their addresses). */
export const TOKENS: readonly TokenSpec[] = [
  { symbol: 'USDC', name: 'USD Coin', decimals: 6 },
  { symbol: 'USDT', name: 'Tether USD', decimals: 6 },
  { symbol: 'WBTC', name: 'Wrapped BTC', decimals: 8 },
  { symbol: 'DAI', name: 'Dai Stablecoin', decimals: 18 },
  { symbol: 'UNI', name: 'Uniswap', decimals: 18 },
  { symbol: 'LINK', name: 'ChainLink Token', decimals: 18 },
]

export const WETH_DECIMALS = 18

/** Reference prices in whole USD. The ETH/USD feed answers the WETH price. */
export const USD_PRICE: Readonly<Record<TokenSymbol, bigint>> = {
  WETH: 3000n,
  USDC: 1n,
  USDT: 1n,
  WBTC: 60_000n,
  DAI: 1n,
  UNI: 10n,
  LINK: 15n,
}

/** The ETH/USD feed: Chainlink's 8 decimals. */
export const ETH_USD_FEED = { decimals: 8, description: 'ETH / USD', answer: USD_PRICE.WETH * 10n ** 8n } as const

/** Tokens a router should try as intermediate hops. */
export const BASE_TOKENS: readonly TokenSymbol[] = ['WETH', 'USDC', 'USDT', 'DAI']

export type V3Fee = 500 | 3000 | 10000
export const V3_TICK_SPACING: Readonly<Record<V3Fee, number>> = { 500: 10, 3000: 60, 10000: 200 }

/**
 * Deviation from the reference price, in basis points of the token0 price, per venue. Each is
 * below the venue's fee (V2 30 bp, 500 5 bp, 3000 30 bp, 10000 100 bp): no arbitrage at genesis,
 * and at least 10 bp of headroom in every two-pool cycle so that small swaps stay arbitrage-free.
 * V2 vs 3000 differ by 0.5%, V2 vs 10000 by 1.0%.
 */
export const DEVIATION_BPS = { v2: -25n, 500: 0n, 3000: 25n, 10000: 75n } as const

export interface PairSpec {
  a: TokenSymbol
  b: TokenSymbol
  /** +1 or -1: flips which side of the pair the deviations favour, for variety */
  side: 1n | -1n
  /** USD value deposited into the V2 pair; undefined = no V2 pair */
  v2Usd?: bigint
  /** USD value per V3 fee tier, spread over the position template */
  v3Usd: Partial<Record<V3Fee, bigint>>
}

/** Every token has a WETH pair on both protocols; the token/token pairs make multi-hop routes. */
export const PAIRS: readonly PairSpec[] = [
  { a: 'WETH', b: 'USDC', side: 1n, v2Usd: 6_000_000n, v3Usd: { 500: 6_000_000n, 3000: 4_000_000n } },
  { a: 'WETH', b: 'USDT', side: -1n, v2Usd: 3_000_000n, v3Usd: { 500: 3_000_000n } },
  { a: 'WETH', b: 'WBTC', side: 1n, v2Usd: 4_000_000n, v3Usd: { 3000: 4_000_000n } },
  { a: 'WETH', b: 'DAI', side: -1n, v2Usd: 3_000_000n, v3Usd: { 3000: 2_000_000n } },
  { a: 'WETH', b: 'UNI', side: 1n, v2Usd: 1_000_000n, v3Usd: { 3000: 1_000_000n, 10000: 500_000n } },
  { a: 'WETH', b: 'LINK', side: -1n, v2Usd: 1_000_000n, v3Usd: { 10000: 1_000_000n } },
  { a: 'USDC', b: 'USDT', side: 1n, v2Usd: 2_000_000n, v3Usd: { 500: 4_000_000n } },
  { a: 'USDC', b: 'DAI', side: -1n, v2Usd: 2_000_000n, v3Usd: { 500: 2_000_000n } },
  { a: 'WBTC', b: 'USDC', side: 1n, v2Usd: 2_000_000n, v3Usd: { 3000: 3_000_000n } },
]

export interface PositionTemplate {
  /** range edges in ticks relative to the pool's initial tick, rounded outwards to the spacing */
  lower: number
  upper: number
  /** share of the pool's USD budget, in percent */
  sharePct: bigint
}

/**
 * Several concentrated positions per V3 pool: nested ranges around the price (so liquidity
 * steps up towards the middle) plus one range entirely above and one entirely below it
 * (single-sided, their ticks are crossed by large swaps).
 */
export const POSITION_TEMPLATE: readonly PositionTemplate[] = [
  { lower: -6000, upper: 6000, sharePct: 35n },
  { lower: -1200, upper: 1200, sharePct: 25n },
  { lower: -300, upper: 300, sharePct: 20n },
  { lower: 300, upper: 1500, sharePct: 10n },
  { lower: -1500, upper: -300, sharePct: 10n },
]

/** Tokens every dev account receives, in whole tokens (ETH is DEV_ACCOUNT_ETH). */
export const DEV_ACCOUNT_TOKENS: Readonly<Record<TokenSymbol, bigint>> = {
  WETH: 100n,
  USDC: 1_000_000n,
  USDT: 1_000_000n,
  WBTC: 20n,
  DAI: 1_000_000n,
  UNI: 50_000n,
  LINK: 50_000n,
}

/** Whole tokens minted to the deployer per token (liquidity plus the dev accounts' shares). */
export const DEPLOYER_MINT_WHOLE_TOKENS = 1_000_000_000n
/** ETH the deployer wraps into WETH for liquidity and the dev accounts. */
export const DEPLOYER_WRAP_ETH = 50_000n

/**
 * The devnet's second venue of each kind, deployed after everything above (so no existing address
 * or pool state moves): a V2-style fork at 25 bps (src/contracts/DevnetV2Fork.sol, PancakeSwap's
 * fee and callback) and a second Uniswap V3 factory (the same npm artifacts, as Sushi V3 deploys
 * Uniswap's code). Their pools sit at their own deviations from the reference price, still below
 * every pool's fee against every other pool of the pair (fork V2 +20 bp at 25 bp: 45 bp from
 * Uniswap V2's -25 bp, under the 55 bp of their fees; fork V3 -20 bp at 30 bp: 45 bp from Uniswap's
 * 0.3% at +25 bp, under 60), so genesis stays free of arbitrage while large swaps on one venue
 * open cycles through another.
 */
export const FORK_V2_VENUE = { name: 'devnet-fork-v2', feeBps: 25, deviationBps: 20n } as const
export const FORK_V3_VENUE = { name: 'devnet-fork-v3', deviationBps: -20n } as const

export interface ForkPoolSpec {
  a: TokenSymbol
  b: TokenSymbol
  side: 1n | -1n
  /** USD value deposited */
  usd: bigint
}

/** fork V2 pairs */
export const FORK_V2_PAIRS: readonly ForkPoolSpec[] = [
  { a: 'WETH', b: 'USDC', side: 1n, usd: 4_000_000n },
  { a: 'WETH', b: 'DAI', side: -1n, usd: 2_000_000n },
  { a: 'WETH', b: 'WBTC', side: 1n, usd: 2_000_000n },
  { a: 'USDC', b: 'USDT', side: 1n, usd: 1_000_000n },
]

/** fork V3 pools, all at the 0.3% tier */
export const FORK_V3_POOLS: readonly ForkPoolSpec[] = [
  { a: 'WETH', b: 'USDC', side: 1n, usd: 3_000_000n },
  { a: 'WETH', b: 'USDT', side: -1n, usd: 2_000_000n },
  { a: 'WETH', b: 'UNI', side: 1n, usd: 1_000_000n },
]

/**
 * Uniswap V4 on the devnet (v4-venue.ts): the real PoolManager from @uniswap/v4-core's out/, deployed
 * after the second venues (nothing existing moves), its pools initialised and their liquidity added
 * through the package's PoolModifyLiquidityTest, the POSITION_TEMPLATE spread as in V3. Static fees
 * and no hooks, but for the last two pools: a dynamic-fee pool needs a hook (PoolManager.initialize
 * refuses the dynamic-fee flag without one).
 *
 * Deviations, as for the forks, keep the genesis free of arbitrage with at least 10 bp of headroom in
 * every two-pool cycle (|deviation difference| <= fee + fee - 10 bp; the recorder checks the
 * genesis, V4 pools included), while swaps on one venue open cycles through the others: WETH/USDC
 * +10 bp at 0.3% (Uniswap V2 is at -25, V3 0.05% at 0, fork V2 +20 at 0.25%), WETH/USDT at 0.05%
 * on the V3 0.05% pool's price (two 5-bp pools leave no room: it differs from V2 and the fork),
 * WETH/WBTC -5 bp at the non-standard 0.12% with tick spacing 24, USDC/USDT +3 bp at 0.08% with
 * tick spacing 1 (against V3's 0.05% at 0: 3 <= 3; a 0.01% pool could not keep the headroom),
 * one pool of native ETH (currency0 = address(0)) at its WETH/USDC twin's price, and two pools with
 * hooks and dynamic fees at the reference price (v4-hooks.ts): WETH/UNI with the afterSwap counter
 * hook, whose owner sets 0.05% (Uniswap V2 at -25 bp and V3 0.3% at +25 bp: 25 <= 5 + 30 - 10; V3
 * 1% at +75 bp: 75 <= 5 + 100 - 10; fork V3 0.3% at -20 bp: 20 <= 5 + 30 - 10), and WETH/LINK with the directional-fee hook, 0.05% for
 * zeroForOne swaps (the fee slot0 shows and the arbitrage check reads) and 1% the other way (V2 at
 * +25 bp: 25 <= 5 + 30 - 10; V3 1% at -75 bp: 75 <= 5 + 100 - 10).
 */
export const V4_VENUE = { name: 'uniswap-v4' } as const

export interface V4PoolSpec {
  /** 'ETH' is native ether, currency address(0) */
  a: TokenSymbol | 'ETH'
  b: TokenSymbol
  /**
   * LP fee in pips (hundredths of a basis point); with a hook, the key's fee is the dynamic-fee flag
   * and this is the LP fee slot0 holds once the pool is set up (v4-hooks.ts)
   */
  fee: number
  /** the pool's hook (v4-hooks.ts): `swap-counter` (afterSwap; its owner sets the fee) or `directional-fee` (beforeSwap fee override) */
  hook?: 'swap-counter' | 'directional-fee'
  tickSpacing: number
  /** deviation from the reference price in basis points of the sorted token0's price */
  deviationBps: bigint
  /** USD value spread over POSITION_TEMPLATE */
  usd: bigint
}

export const V4_POOLS: readonly V4PoolSpec[] = [
  { a: 'WETH', b: 'USDC', fee: 3000, tickSpacing: 60, deviationBps: 10n, usd: 3_000_000n },
  { a: 'WETH', b: 'USDT', fee: 500, tickSpacing: 10, deviationBps: 0n, usd: 2_000_000n },
  { a: 'WETH', b: 'WBTC', fee: 1200, tickSpacing: 24, deviationBps: -5n, usd: 2_000_000n },
  { a: 'USDC', b: 'USDT', fee: 800, tickSpacing: 1, deviationBps: 3n, usd: 2_000_000n },
  { a: 'ETH', b: 'USDC', fee: 3000, tickSpacing: 60, deviationBps: 10n, usd: 1_000_000n },
  // hooked, dynamic-fee pools, after the five above (their state does not move)
  { a: 'WETH', b: 'UNI', fee: 500, tickSpacing: 10, deviationBps: 0n, usd: 2_000_000n, hook: 'swap-counter' },
  { a: 'WETH', b: 'LINK', fee: 500, tickSpacing: 10, deviationBps: 0n, usd: 2_000_000n, hook: 'directional-fee' },
]
