/**
 * The user transactions of fixtures/txs/transactions.json: what each one does, who signs it and
 * with which transaction type. Every transaction is meant to run alone on top of the devnet
 * genesis (so several are nonce 0 of the same account), in block 1 at genesis time + 12 s.
 *
 * `createsArbitrage` is the author's claim; the recorder checks it against arbitrage.ts on the
 * state anvil produced and refuses to record a wrong one.
 */
import { encodeFunctionData, encodePacked, getAddress, parseEther, parseUnits, zeroAddress, type Abi, type Hex } from 'viem'
import { MAX_SQRT_RATIO, MIN_SQRT_RATIO, V4_DYNAMIC_FEE_FLAG } from '../../src/dex/math/index.ts'
import { v4PoolId, type V4PoolKey } from '../../src/pools/uniswap-v4-slots.ts'
import { foundryArtifact, npmArtifact, projectArtifact } from './artifacts.ts'
import { FORK_V2_VENUE, FORK_V3_VENUE, type V3Fee, type TokenSymbol } from './layout.ts'
import { tokenBySymbol, v2v3Venues, type DevnetRegistry } from './registry.ts'
import { encodeSwapPlanCall } from '../../src/quote/router-calldata.ts'
import type { PlanV4Key } from '../../src/routing/swap-plan.ts'

export type TxTypeName = 'legacy' | 'eip2930' | 'eip1559'

export interface TxCall {
  to: Hex
  data: Hex
  value: bigint
  gas: bigint
  /** who receives the output (the sender unless a swap pays someone else) */
  recipient: Hex
  /** pools the transaction routes through, watched for balance changes even when it reverts */
  pools: Hex[]
  accessList?: { address: Hex; storageKeys: Hex[] }[]
}

export interface FixtureTxDefinition {
  name: string
  description: string
  /** dev account index of the signer */
  sender: number
  type: TxTypeName
  createsArbitrage: boolean
  /** the revert is the point of the fixture */
  expectRevert?: boolean
  build(ctx: BuildContext): TxCall
}

export interface BuildContext {
  registry: DevnetRegistry
  /** address of dev account i */
  account(i: number): Hex
  token(symbol: TokenSymbol): Hex
  units(symbol: TokenSymbol, amount: string): bigint
  v2Pair(a: TokenSymbol, b: TokenSymbol): Hex
  v3Pool(a: TokenSymbol, b: TokenSymbol, fee: V3Fee): Hex
  /** the pair of a/b at the devnet's 25-bps V2 fork (registry venues devnet-fork-v2) */
  forkV2Pair(a: TokenSymbol, b: TokenSymbol): Hex
  /** the 0.3% pool of a/b at the devnet's second V3 factory (registry venues devnet-fork-v3) */
  forkV3Pool(a: TokenSymbol, b: TokenSymbol): Hex
  /** the V4 pool key of a/b ('ETH' = native) at this key fee (registry v4.pools); `hook`: the name of its hook contract (registry v4.hooks), none by default */
  v4Key(a: TokenSymbol | 'ETH', b: TokenSymbol, fee: number, hook?: string): V4PoolKey
  /** the project's SwapPlanRouter (the only router that knows the added venues) */
  planRouter: Hex
  /** a deadline one hour after genesis */
  deadline: bigint
  /** the genesis timestamp: already past in block 1 */
  expiredDeadline: bigint
}

/** Fee fields per type; block 1's base fee is 0.875 gwei. */
export const FEES = {
  legacy: { gasPrice: 2_000_000_000n },
  eip2930: { gasPrice: 1_500_000_000n },
  eip1559: { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 100_000_000n },
} as const

const V2_ROUTER = npmArtifact('@uniswap/v2-periphery/build/UniswapV2Router02.json').abi
const SWAP_ROUTER = npmArtifact('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json').abi
const SWAP_ROUTER_02 = npmArtifact('@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json').abi
const ERC20 = projectArtifact('DevnetERC20').abi
const POOL_SWAP_TEST = foundryArtifact('@uniswap/v4-core', 'PoolSwapTest').abi

const call = (abi: Abi, functionName: string, args: readonly unknown[]) => encodeFunctionData({ abi, functionName, args })

/** One hop of a SwapPlanRouter plan (src/routing/swap-plan.ts). */
interface RouterHop {
  protocol: 'uniswap-v2' | 'uniswap-v3' | 'uniswap-v4'
  /** the pair or pool; for V4 the PoolId */
  pool: Hex
  tokenIn: TokenSymbol
  tokenOut: TokenSymbol
  fee: number
  /** V4 hops: the PoolManager and the rest of the key */
  v4?: PlanV4Key
}

/** a SwapPlanRouter hop through the V4 pool of `key` (a native ETH key's hop names WETH for ETH) */
function v4Hop(ctx: BuildContext, key: V4PoolKey, tokenIn: TokenSymbol, tokenOut: TokenSymbol): RouterHop {
  const v4: PlanV4Key = {
    poolManager: ctx.registry.v4.poolManager.toLowerCase() as Hex,
    tickSpacing: key.tickSpacing,
    ...(key.hooks === zeroAddress ? {} : { hooks: key.hooks.toLowerCase() as Hex }),
    ...(key.currency0 === zeroAddress ? { nativeEth: true } : {}),
  }
  return { protocol: 'uniswap-v4', pool: v4PoolId(key), tokenIn, tokenOut, fee: key.fee, v4 }
}

/** SwapPlanRouter.swap of one leg through `hops`, paid to the sender, with the fixtures' deadline. */
function planSwap(ctx: BuildContext, amountIn: bigint, minAmountOut: bigint, hops: RouterHop[]): Hex {
  const planHops = hops.map((h) => {
    const [tokenIn, tokenOut] = [ctx.token(h.tokenIn).toLowerCase() as Hex, ctx.token(h.tokenOut).toLowerCase() as Hex]
    return { protocol: h.protocol, pool: h.pool.toLowerCase() as Hex, tokenIn, tokenOut, fee: h.fee, zeroForOne: tokenIn < tokenOut, ...(h.v4 ? { v4: h.v4 } : {}) }
  })
  const tokenIn = planHops[0]!.tokenIn
  const tokenOut = planHops[planHops.length - 1]!.tokenOut
  return encodeSwapPlanCall({
    plan: { tokenIn, tokenOut, amountIn, legs: [{ amountIn, hops: planHops, expectedAmountOut: minAmountOut }], expectedAmountOut: minAmountOut },
    minAmountOut,
    deadline: ctx.deadline,
  })
}

/** A V3 path: token, fee, token, fee, token ... */
function v3Path(ctx: BuildContext, ...hops: (TokenSymbol | V3Fee)[]): Hex {
  const types = hops.map((h) => (typeof h === 'number' ? 'uint24' : 'address'))
  const values = hops.map((h) => (typeof h === 'number' ? h : ctx.token(h)))
  return encodePacked(types, values)
}

const V2_GAS = 300_000n
const V3_GAS = 500_000n
const V4_GAS = 400_000n

/**
 * PoolSwapTest.swap of an exact input on one V4 pool, paid to the sender (the test router settles
 * the input from msg.sender, or from msg.value for native ETH, and takes the output to it), no
 * price limit beyond the pool's.
 */
function v4Swap(key: V4PoolKey, zeroForOne: boolean, amountIn: bigint): Hex {
  const params = { zeroForOne, amountSpecified: -amountIn, sqrtPriceLimitX96: zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n }
  return call(POOL_SWAP_TEST, 'swap', [key, params, { takeClaims: false, settleUsingBurn: false }, '0x'])
}

/** the direction of a swap of `tokenIn` on `key` */
const zeroForOneOf = (key: V4PoolKey, tokenIn: Hex) => tokenIn.toLowerCase() === key.currency0.toLowerCase()

export const FIXTURE_TXS: readonly FixtureTxDefinition[] = [
  // ---- Uniswap V2 Router02 ----
  {
    name: 'v2-swapExactETHForTokens-small',
    description: 'Router02.swapExactETHForTokens: 0.1 ETH for USDC through the V2 WETH/USDC pair',
    sender: 0,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactETHForTokens', [1n, [ctx.token('WETH'), ctx.token('USDC')], ctx.account(0), ctx.deadline]),
      value: parseEther('0.1'),
      gas: V2_GAS,
      recipient: ctx.account(0),
      pools: [ctx.v2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'v2-swapExactETHForTokens-large',
    description: 'Router02.swapExactETHForTokens: 100 ETH for USDC through the V2 WETH/USDC pair (about 10% of its WETH), pushing its price far below the V3 pools',
    sender: 1,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactETHForTokens', [ctx.units('USDC', '250000'), [ctx.token('WETH'), ctx.token('USDC')], ctx.account(1), ctx.deadline]),
      value: parseEther('100'),
      gas: V2_GAS,
      recipient: ctx.account(1),
      pools: [ctx.v2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'v2-swapExactTokensForETH-small',
    description: 'Router02.swapExactTokensForETH: 300 USDC for ETH through the V2 WETH/USDC pair',
    sender: 2,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForETH', [ctx.units('USDC', '300'), 1n, [ctx.token('USDC'), ctx.token('WETH')], ctx.account(2), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(2),
      pools: [ctx.v2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'v2-swapExactTokensForETH-large',
    description: 'Router02.swapExactTokensForETH: 300,000 USDC for ETH through the V2 WETH/USDC pair (10% of its USDC)',
    sender: 3,
    type: 'legacy',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForETH', [ctx.units('USDC', '300000'), parseEther('80'), [ctx.token('USDC'), ctx.token('WETH')], ctx.account(3), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(3),
      pools: [ctx.v2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'v2-swapExactTokensForTokens-multihop-small',
    description: 'Router02.swapExactTokensForTokens: 200 DAI -> WETH -> USDC through two V2 pairs, paid to account 5, with an EIP-2930 access list',
    sender: 4,
    type: 'eip2930',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForTokens', [
        ctx.units('DAI', '200'),
        ctx.units('USDC', '195'),
        [ctx.token('DAI'), ctx.token('WETH'), ctx.token('USDC')],
        ctx.account(5),
        ctx.deadline,
      ]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(5),
      pools: [ctx.v2Pair('WETH', 'DAI'), ctx.v2Pair('WETH', 'USDC')],
      // the pairs' token0, token1 and reserves slots (6, 7, 8)
      accessList: [ctx.v2Pair('WETH', 'DAI'), ctx.v2Pair('WETH', 'USDC')].map((address) => ({
        address,
        storageKeys: [6n, 7n, 8n].map((s) => `0x${s.toString(16).padStart(64, '0')}` as Hex),
      })),
    }),
  },
  {
    name: 'v2-swapExactTokensForTokens-large',
    description: 'Router02.swapExactTokensForTokens: 60 WETH for DAI through the V2 WETH/DAI pair (12% of its WETH)',
    sender: 5,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForTokens', [parseEther('60'), 1n, [ctx.token('WETH'), ctx.token('DAI')], ctx.account(5), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(5),
      pools: [ctx.v2Pair('WETH', 'DAI')],
    }),
  },
  {
    name: 'v2-swapTokensForExactTokens-small',
    description: 'Router02.swapTokensForExactTokens: exactly 1,000 USDT for at most 1 WETH through the V2 WETH/USDT pair',
    sender: 6,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapTokensForExactTokens', [ctx.units('USDT', '1000'), parseEther('1'), [ctx.token('WETH'), ctx.token('USDT')], ctx.account(6), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(6),
      pools: [ctx.v2Pair('WETH', 'USDT')],
    }),
  },
  {
    name: 'v2-swapETHForExactTokens-large',
    description: 'Router02.swapETHForExactTokens: exactly 1 WBTC for at most 30 ETH through the V2 WETH/WBTC pair (3% of its WBTC); the unspent ETH is refunded',
    sender: 7,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapETHForExactTokens', [ctx.units('WBTC', '1'), [ctx.token('WETH'), ctx.token('WBTC')], ctx.account(7), ctx.deadline]),
      value: parseEther('30'),
      gas: V2_GAS,
      recipient: ctx.account(7),
      pools: [ctx.v2Pair('WETH', 'WBTC')],
    }),
  },
  {
    name: 'v2-swapExactTokensForTokens-stable-large',
    description: 'Router02.swapExactTokensForTokens: 20,000 USDC for USDT through the V2 USDC/USDT pair (2% of its USDC)',
    sender: 8,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForTokens', [ctx.units('USDC', '20000'), 1n, [ctx.token('USDC'), ctx.token('USDT')], ctx.account(8), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(8),
      pools: [ctx.v2Pair('USDC', 'USDT')],
    }),
  },

  // ---- Uniswap V3 SwapRouter ----
  {
    name: 'v3-exactInputSingle-small',
    description: 'SwapRouter.exactInputSingle: 0.5 WETH for USDC in the 0.05% pool',
    sender: 9,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInputSingle', [
        {
          tokenIn: ctx.token('WETH'),
          tokenOut: ctx.token('USDC'),
          fee: 500,
          recipient: ctx.account(9),
          deadline: ctx.deadline,
          amountIn: parseEther('0.5'),
          amountOutMinimum: 1n,
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(9),
      pools: [ctx.v3Pool('WETH', 'USDC', 500)],
    }),
  },
  {
    name: 'v3-exactInputSingle-large',
    description: 'SwapRouter.exactInputSingle: 80 WETH for USDC in the 0.05% pool, crossing initialized ticks',
    sender: 0,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInputSingle', [
        {
          tokenIn: ctx.token('WETH'),
          tokenOut: ctx.token('USDC'),
          fee: 500,
          recipient: ctx.account(0),
          deadline: ctx.deadline,
          amountIn: parseEther('80'),
          amountOutMinimum: 1n,
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(0),
      pools: [ctx.v3Pool('WETH', 'USDC', 500)],
    }),
  },
  {
    name: 'v3-exactInputSingle-eth-value',
    description: 'SwapRouter.exactInputSingle paid in ETH: 1 ETH sent as value is wrapped by the router and swapped for USDC in the 0.3% pool',
    sender: 1,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInputSingle', [
        {
          tokenIn: ctx.token('WETH'),
          tokenOut: ctx.token('USDC'),
          fee: 3000,
          recipient: ctx.account(1),
          deadline: ctx.deadline,
          amountIn: parseEther('1'),
          amountOutMinimum: 1n,
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: parseEther('1'),
      gas: V3_GAS,
      recipient: ctx.account(1),
      pools: [ctx.v3Pool('WETH', 'USDC', 3000)],
    }),
  },
  {
    name: 'v3-exactInput-multihop-small',
    description: 'SwapRouter.exactInput: 2,000 USDC -> WETH (0.05%) -> DAI (0.3%)',
    sender: 2,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInput', [
        { path: v3Path(ctx, 'USDC', 500, 'WETH', 3000, 'DAI'), recipient: ctx.account(2), deadline: ctx.deadline, amountIn: ctx.units('USDC', '2000'), amountOutMinimum: 1n },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(2),
      pools: [ctx.v3Pool('WETH', 'USDC', 500), ctx.v3Pool('WETH', 'DAI', 3000)],
    }),
  },
  {
    name: 'v3-exactInput-multihop-large',
    description: 'SwapRouter.exactInput: 3 WBTC -> WETH (0.3%) -> UNI (0.3%), large against the WETH/UNI pool',
    sender: 3,
    type: 'eip2930',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInput', [
        { path: v3Path(ctx, 'WBTC', 3000, 'WETH', 3000, 'UNI'), recipient: ctx.account(3), deadline: ctx.deadline, amountIn: ctx.units('WBTC', '3'), amountOutMinimum: 1n },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(3),
      pools: [ctx.v3Pool('WETH', 'WBTC', 3000), ctx.v3Pool('WETH', 'UNI', 3000)],
      accessList: [],
    }),
  },
  {
    name: 'v3-exactOutputSingle-small',
    description: 'SwapRouter.exactOutputSingle: exactly 1,000 DAI for at most 1 WETH in the 0.3% pool',
    sender: 4,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactOutputSingle', [
        {
          tokenIn: ctx.token('WETH'),
          tokenOut: ctx.token('DAI'),
          fee: 3000,
          recipient: ctx.account(4),
          deadline: ctx.deadline,
          amountOut: ctx.units('DAI', '1000'),
          amountInMaximum: parseEther('1'),
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(4),
      pools: [ctx.v3Pool('WETH', 'DAI', 3000)],
    }),
  },
  {
    name: 'v3-exactOutputSingle-large',
    description: 'SwapRouter.exactOutputSingle: exactly 100 WETH for at most 400,000 USDC in the 0.3% pool, paid to account 6',
    sender: 5,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactOutputSingle', [
        {
          tokenIn: ctx.token('USDC'),
          tokenOut: ctx.token('WETH'),
          fee: 3000,
          recipient: ctx.account(6),
          deadline: ctx.deadline,
          amountOut: parseEther('100'),
          amountInMaximum: ctx.units('USDC', '400000'),
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(6),
      pools: [ctx.v3Pool('WETH', 'USDC', 3000)],
    }),
  },
  {
    name: 'v3-exactInputSingle-1pct-large',
    description: 'SwapRouter.exactInputSingle: 20 WETH for LINK in the 1% pool (its price was already 1% below V2; this pushes it past the fee band)',
    sender: 6,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactInputSingle', [
        {
          tokenIn: ctx.token('WETH'),
          tokenOut: ctx.token('LINK'),
          fee: 10000,
          recipient: ctx.account(6),
          deadline: ctx.deadline,
          amountIn: parseEther('20'),
          amountOutMinimum: 1n,
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(6),
      pools: [ctx.v3Pool('WETH', 'LINK', 10000)],
    }),
  },

  // ---- SwapRouter02 (V3 and V2 through one router) ----
  {
    name: 'router02-v3-exactInputSingle-small',
    description: 'SwapRouter02.exactInputSingle (no deadline field): 100 UNI for WETH in the 0.3% pool, with an EIP-2930 access list',
    sender: 7,
    type: 'eip2930',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter02,
      data: call(SWAP_ROUTER_02, 'exactInputSingle', [
        { tokenIn: ctx.token('UNI'), tokenOut: ctx.token('WETH'), fee: 3000, recipient: ctx.account(7), amountIn: ctx.units('UNI', '100'), amountOutMinimum: 1n, sqrtPriceLimitX96: 0n },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(7),
      pools: [ctx.v3Pool('WETH', 'UNI', 3000)],
      // the pool's slot0, feeGrowthGlobal0/1 and liquidity slots (0 .. 4)
      accessList: [{ address: ctx.v3Pool('WETH', 'UNI', 3000), storageKeys: [0n, 1n, 2n, 4n].map((s) => `0x${s.toString(16).padStart(64, '0')}` as Hex) }],
    }),
  },
  {
    name: 'router02-v2-swapExactTokensForTokens-small',
    description: 'SwapRouter02.swapExactTokensForTokens (V2, no deadline): 500 USDT for WETH through the V2 WETH/USDT pair',
    sender: 8,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter02,
      data: call(SWAP_ROUTER_02, 'swapExactTokensForTokens', [ctx.units('USDT', '500'), 1n, [ctx.token('USDT'), ctx.token('WETH')], ctx.account(8)]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(8),
      pools: [ctx.v2Pair('WETH', 'USDT')],
    }),
  },

  // ---- not a swap ----
  {
    name: 'eth-transfer',
    description: 'plain transfer of 1.5 ETH from account 9 to account 4',
    sender: 9,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({ to: ctx.account(4), data: '0x', value: parseEther('1.5'), gas: 21_000n, recipient: ctx.account(4), pools: [] }),
  },

  // ---- reverts (mined, status 0) ----
  {
    name: 'revert-v2-amountOutMin-too-high',
    description: 'Router02.swapExactETHForTokens asking for 10,000 USDC for 1 ETH: reverts UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT',
    sender: 0,
    type: 'legacy',
    createsArbitrage: false,
    expectRevert: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactETHForTokens', [ctx.units('USDC', '10000'), [ctx.token('WETH'), ctx.token('USDC')], ctx.account(0), ctx.deadline]),
      value: parseEther('1'),
      gas: V2_GAS,
      recipient: ctx.account(0),
      pools: [ctx.v2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'revert-v2-expired-deadline',
    description: 'Router02.swapExactTokensForTokens with the genesis time as deadline, already past in block 1: reverts UniswapV2Router: EXPIRED',
    sender: 1,
    type: 'eip1559',
    createsArbitrage: false,
    expectRevert: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForTokens', [ctx.units('DAI', '100'), 1n, [ctx.token('DAI'), ctx.token('WETH')], ctx.account(1), ctx.expiredDeadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(1),
      pools: [ctx.v2Pair('WETH', 'DAI')],
    }),
  },
  {
    name: 'revert-v2-insufficient-balance',
    description: 'Router02.swapExactTokensForTokens of 30 WBTC from an account holding 20: the transfer to the pair fails, reverts TransferHelper: TRANSFER_FROM_FAILED',
    sender: 2,
    type: 'eip2930',
    createsArbitrage: false,
    expectRevert: true,
    build: (ctx) => ({
      to: ctx.registry.v2.router02,
      data: call(V2_ROUTER, 'swapExactTokensForTokens', [ctx.units('WBTC', '30'), 1n, [ctx.token('WBTC'), ctx.token('WETH')], ctx.account(2), ctx.deadline]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(2),
      pools: [ctx.v2Pair('WETH', 'WBTC')],
      accessList: [],
    }),
  },
  {
    name: 'revert-v3-exactOutput-amountInMaximum-too-low',
    description: 'SwapRouter.exactOutputSingle: exactly 1 WETH for at most 1,000 USDC in the 0.05% pool: reverts Too much requested',
    sender: 3,
    type: 'eip1559',
    createsArbitrage: false,
    expectRevert: true,
    build: (ctx) => ({
      to: ctx.registry.v3.swapRouter,
      data: call(SWAP_ROUTER, 'exactOutputSingle', [
        {
          tokenIn: ctx.token('USDC'),
          tokenOut: ctx.token('WETH'),
          fee: 500,
          recipient: ctx.account(3),
          deadline: ctx.deadline,
          amountOut: parseEther('1'),
          amountInMaximum: ctx.units('USDC', '1000'),
          sqrtPriceLimitX96: 0n,
        },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(3),
      pools: [ctx.v3Pool('WETH', 'USDC', 500)],
    }),
  },
  {
    name: 'revert-insufficient-allowance',
    description: 'USDC.transferFrom(account 1 -> account 4) by account 4, which has no allowance from account 1: reverts DevnetERC20: insufficient allowance',
    sender: 4,
    type: 'legacy',
    createsArbitrage: false,
    expectRevert: true,
    build: (ctx) => ({
      to: ctx.token('USDC'),
      data: call(ERC20, 'transferFrom', [ctx.account(1), ctx.account(4), ctx.units('USDC', '100')]),
      value: 0n,
      gas: 100_000n,
      recipient: ctx.account(4),
      pools: [],
    }),
  },
  // ---- the added venues, through SwapPlanRouter (appended: earlier fixtures keep their order;
  // signed by accounts 40-43, which no test uses as a mover or searcher) ----
  {
    name: 'plan-fork-v2-large',
    description: 'SwapPlanRouter: 60 WETH for USDC through the 25-bps fork V2 WETH/USDC pair, pushing its price below every other venue',
    sender: 40,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, parseEther('60'), 1n, [{ protocol: 'uniswap-v2', pool: ctx.forkV2Pair('WETH', 'USDC'), tokenIn: 'WETH', tokenOut: 'USDC', fee: 2500 }]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(40),
      pools: [ctx.forkV2Pair('WETH', 'USDC')],
    }),
  },
  {
    name: 'plan-fork-v3-large',
    description: 'SwapPlanRouter: 40 WETH for USDT through the second V3 factory\'s WETH/USDT 0.3% pool',
    sender: 41,
    type: 'eip1559',
    createsArbitrage: true,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, parseEther('40'), 1n, [{ protocol: 'uniswap-v3', pool: ctx.forkV3Pool('WETH', 'USDT'), tokenIn: 'WETH', tokenOut: 'USDT', fee: 3000 }]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(41),
      pools: [ctx.forkV3Pool('WETH', 'USDT')],
    }),
  },
  {
    name: 'plan-fork-v2-small',
    description: 'SwapPlanRouter: 500 USDC for USDT through the fork V2 USDC/USDT pair',
    sender: 42,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('USDC', '500'), 1n, [{ protocol: 'uniswap-v2', pool: ctx.forkV2Pair('USDC', 'USDT'), tokenIn: 'USDC', tokenOut: 'USDT', fee: 2500 }]),
      value: 0n,
      gas: V2_GAS,
      recipient: ctx.account(42),
      pools: [ctx.forkV2Pair('USDC', 'USDT')],
    }),
  },
  {
    name: 'plan-cross-venue-multihop',
    description: 'SwapPlanRouter: 0.01 WBTC -> WETH -> UNI, the first hop on the fork V2 pair, the second in the second V3 factory\'s 0.3% pool',
    sender: 43,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('WBTC', '0.01'), 1n, [
        { protocol: 'uniswap-v2', pool: ctx.forkV2Pair('WETH', 'WBTC'), tokenIn: 'WBTC', tokenOut: 'WETH', fee: 2500 },
        { protocol: 'uniswap-v3', pool: ctx.forkV3Pool('WETH', 'UNI'), tokenIn: 'WETH', tokenOut: 'UNI', fee: 3000 },
      ]),
      value: 0n,
      gas: V3_GAS,
      recipient: ctx.account(43),
      pools: [ctx.forkV2Pair('WETH', 'WBTC'), ctx.forkV3Pool('WETH', 'UNI')],
    }),
  },
  // ---- Uniswap V4 through v4-core's PoolSwapTest (unlock, swap, settle, take) ----
  {
    name: 'v4-swap-native-eth-small',
    description: 'PoolSwapTest.swap: 1 native ETH for USDC in the V4 ETH/USDC 0.3% pool (currency0 = address(0), settled with msg.value)',
    sender: 44,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => {
      const key = ctx.v4Key('ETH', 'USDC', 3000)
      return {
        to: ctx.registry.v4.poolSwapTest,
        data: v4Swap(key, true, parseEther('1')),
        value: parseEther('1'),
        gas: V4_GAS,
        recipient: ctx.account(44),
        pools: [ctx.registry.v4.poolManager],
      }
    },
  },
  {
    name: 'v4-swap-weth-usdt-large',
    description: 'PoolSwapTest.swap: 60 WETH for USDT in the V4 WETH/USDT 0.05% pool, pushing its price below the V2 and V3 WETH/USDT pools',
    sender: 45,
    type: 'legacy',
    createsArbitrage: true,
    build: (ctx) => {
      const key = ctx.v4Key('WETH', 'USDT', 500)
      return {
        to: ctx.registry.v4.poolSwapTest,
        data: v4Swap(key, zeroForOneOf(key, ctx.token('WETH')), parseEther('60')),
        value: 0n,
        gas: V4_GAS,
        recipient: ctx.account(45),
        pools: [ctx.registry.v4.poolManager],
      }
    },
  },
  {
    name: 'v4-swap-usdc-usdt-small',
    description: 'PoolSwapTest.swap: 2,000 USDT for USDC in the V4 USDC/USDT 0.08% pool (tick spacing 1)',
    sender: 46,
    type: 'eip2930',
    createsArbitrage: false,
    build: (ctx) => {
      const key = ctx.v4Key('USDC', 'USDT', 800)
      return {
        to: ctx.registry.v4.poolSwapTest,
        data: v4Swap(key, zeroForOneOf(key, ctx.token('USDT')), ctx.units('USDT', '2000')),
        value: 0n,
        gas: V4_GAS,
        recipient: ctx.account(46),
        pools: [ctx.registry.v4.poolManager],
      }
    },
  },
  // ---- SwapPlanRouter through Uniswap V4 (unlock, swap, sync/settle, take) ----
  {
    name: 'plan-v4-single',
    description: 'SwapPlanRouter: 5,000 USDT for WETH through the V4 WETH/USDT 0.05% pool, settled in its unlockCallback',
    sender: 54,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('USDT', '5000'), 1n, [v4Hop(ctx, ctx.v4Key('WETH', 'USDT', 500), 'USDT', 'WETH')]),
      value: 0n,
      gas: V4_GAS,
      recipient: ctx.account(54),
      pools: [ctx.registry.v4.poolManager],
    }),
  },
  {
    name: 'plan-v4-v3-multihop',
    description: 'SwapPlanRouter: 0.05 WBTC -> WETH in the V4 WBTC/WETH 0.12% pool (tick spacing 24), then WETH -> USDC in the V3 0.05% pool',
    sender: 55,
    type: 'legacy',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('WBTC', '0.05'), 1n, [
        v4Hop(ctx, ctx.v4Key('WETH', 'WBTC', 1200), 'WBTC', 'WETH'),
        { protocol: 'uniswap-v3', pool: ctx.v3Pool('WETH', 'USDC', 500), tokenIn: 'WETH', tokenOut: 'USDC', fee: 500 },
      ]),
      value: 0n,
      gas: V4_GAS,
      recipient: ctx.account(55),
      pools: [ctx.registry.v4.poolManager, ctx.v3Pool('WETH', 'USDC', 500)],
    }),
  },
  {
    name: 'plan-v4-native-eth-pool',
    description: 'SwapPlanRouter: 3,000 USDC for WETH through the V4 native ETH/USDC 0.3% pool (the router takes ETH and wraps it)',
    sender: 53,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('USDC', '3000'), 1n, [v4Hop(ctx, ctx.v4Key('ETH', 'USDC', 3000), 'USDC', 'WETH')]),
      value: 0n,
      gas: V4_GAS,
      recipient: ctx.account(53),
      pools: [ctx.registry.v4.poolManager],
    }),
  },
  {
    name: 'plan-v4-hooked-pools',
    description:
      'SwapPlanRouter: 300 UNI -> WETH in the V4 WETH/UNI dynamic-fee pool of the afterSwap counter hook, then WETH -> LINK in the WETH/LINK pool of the beforeSwap directional-fee hook',
    sender: 52,
    type: 'eip1559',
    createsArbitrage: false,
    build: (ctx) => ({
      to: ctx.planRouter,
      data: planSwap(ctx, ctx.units('UNI', '300'), 1n, [
        v4Hop(ctx, ctx.v4Key('WETH', 'UNI', V4_DYNAMIC_FEE_FLAG, 'DevnetSwapCounterHook'), 'UNI', 'WETH'),
        v4Hop(ctx, ctx.v4Key('WETH', 'LINK', V4_DYNAMIC_FEE_FLAG, 'DevnetDirectionalFeeHook'), 'WETH', 'LINK'),
      ]),
      value: 0n,
      gas: V4_GAS,
      recipient: ctx.account(52),
      pools: [ctx.registry.v4.poolManager],
    }),
  },
]

export function buildContext(registry: DevnetRegistry): BuildContext {
  const genesis = BigInt(registry.genesisTimestamp)
  const symbolOf = (s: TokenSymbol) => tokenBySymbol(registry, s)
  const pairOf = (a: TokenSymbol, b: TokenSymbol) => {
    const [x, y] = [symbolOf(a).address, symbolOf(b).address]
    return (p: { token0: Hex; token1: Hex }) => (p.token0 === x && p.token1 === y) || (p.token0 === y && p.token1 === x)
  }
  return {
    registry,
    account: (i) => {
      const a = registry.devAccounts.accounts[i]
      if (!a) throw new Error(`no dev account ${i}`)
      return a.address
    },
    token: (s) => symbolOf(s).address,
    units: (s, amount) => parseUnits(amount, symbolOf(s).decimals),
    v2Pair: (a, b) => {
      const pair = registry.v2.pairs.find(pairOf(a, b))
      if (!pair) throw new Error(`no V2 pair ${a}/${b}`)
      return getAddress(pair.address)
    },
    v3Pool: (a, b, fee) => {
      const match = pairOf(a, b)
      const pool = registry.v3.pools.find((p) => p.fee === fee && match(p))
      if (!pool) throw new Error(`no V3 pool ${a}/${b} ${fee}`)
      return getAddress(pool.address)
    },
    forkV2Pair: (a, b) => {
      const pair = v2v3Venues(registry).find((v) => v.name === FORK_V2_VENUE.name)?.pairs?.find(pairOf(a, b))
      if (!pair) throw new Error(`no fork V2 pair ${a}/${b}`)
      return getAddress(pair.address)
    },
    forkV3Pool: (a, b) => {
      const pool = v2v3Venues(registry).find((v) => v.name === FORK_V3_VENUE.name)?.pools?.find(pairOf(a, b))
      if (!pool) throw new Error(`no fork V3 pool ${a}/${b}`)
      return getAddress(pool.address)
    },
    v4Key: (a, b, fee, hook) => {
      const [x, y] = [a === 'ETH' ? zeroAddress : symbolOf(a).address, symbolOf(b).address]
      const hooks = hook === undefined ? zeroAddress : registry.v4.hooks.find((h) => h.name === hook)?.address
      if (hooks === undefined) throw new Error(`no V4 hook ${hook}`)
      const pool = registry.v4.pools.find((p) => p.fee === fee && p.hooks === hooks && ((p.currency0 === x && p.currency1 === y) || (p.currency0 === y && p.currency1 === x)))
      if (!pool) throw new Error(`no V4 pool ${a}/${b} ${fee}`)
      return { currency0: pool.currency0, currency1: pool.currency1, fee: pool.fee, tickSpacing: pool.tickSpacing, hooks: pool.hooks }
    },
    planRouter: getAddress(registry.extensions['swap-plan-router']!),
    deadline: genesis + 3600n,
    expiredDeadline: genesis,
  }
}
