/**
 * Seeds the pools: the deployer mints and wraps what it needs, adds V2 liquidity through
 * Router02 and mints V3 positions through the NonfungiblePositionManager, exactly as a liquidity
 * provider would on mainnet.
 */
import { getAddress, maxUint256, type Hex } from 'viem'
import { ERC20_ABI, projectArtifact, type UniswapArtifacts } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { BUILD_DEADLINE, DEPLOYER } from './config.ts'
import {
  DEPLOYER_MINT_WHOLE_TOKENS,
  DEPLOYER_WRAP_ETH,
  DEVIATION_BPS,
  PAIRS,
  POSITION_TEMPLATE,
  TOKENS,
  USD_PRICE,
  V3_TICK_SPACING,
  type PairSpec,
  type TokenSymbol,
  type V3Fee,
} from './layout.ts'
import { ceilTick, floorTick, rawPrice, sqrtPriceX96, unitsForUsd } from './price-math.ts'
import type { ProtocolAddresses } from './deploy-protocols.ts'
import type { RegistryV2Pair, RegistryV3Pool, RegistryV3Position } from './registry.ts'

export interface TokenInfo {
  symbol: TokenSymbol
  address: Hex
  decimals: number
  usd: bigint
}

export function tokenInfos(addresses: ProtocolAddresses): Map<TokenSymbol, TokenInfo> {
  const out = new Map<TokenSymbol, TokenInfo>()
  out.set('WETH', { symbol: 'WETH', address: addresses.weth, decimals: 18, usd: USD_PRICE.WETH })
  for (const t of TOKENS) out.set(t.symbol, { symbol: t.symbol, address: addresses.tokens[t.symbol], decimals: t.decimals, usd: USD_PRICE[t.symbol] })
  return out
}

/** The pair's tokens in pool order (token0 has the lower address). */
export function sorted(pair: Pick<PairSpec, 'a' | 'b'>, tokens: Map<TokenSymbol, TokenInfo>): [TokenInfo, TokenInfo] {
  const a = tokens.get(pair.a)!
  const b = tokens.get(pair.b)!
  return BigInt(a.address) < BigInt(b.address) ? [a, b] : [b, a]
}

/** Mints every token to the deployer, wraps ETH, and approves the router and position manager. */
export async function fundDeployer(chain: BuildChain, addresses: ProtocolAddresses, uni: UniswapArtifacts, tokens: Map<TokenSymbol, TokenInfo>) {
  const erc20 = projectArtifact('DevnetERC20')
  for (const t of TOKENS) {
    await chain.send(DEPLOYER, addresses.tokens[t.symbol], {
      abi: erc20.abi,
      functionName: 'mint',
      args: [DEPLOYER.address, DEPLOYER_MINT_WHOLE_TOKENS * 10n ** BigInt(t.decimals)],
    })
  }
  await chain.send(DEPLOYER, addresses.weth, { abi: uni.weth9.abi, functionName: 'deposit', value: DEPLOYER_WRAP_ETH * 10n ** 18n })
  for (const token of tokens.values()) {
    for (const spender of [addresses.v2Router02, addresses.positionManager]) {
      await chain.send(DEPLOYER, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [spender, maxUint256] })
    }
  }
}

export async function addV2Liquidity(
  chain: BuildChain,
  addresses: ProtocolAddresses,
  uni: UniswapArtifacts,
  tokens: Map<TokenSymbol, TokenInfo>,
): Promise<RegistryV2Pair[]> {
  const pairs: RegistryV2Pair[] = []
  for (const pair of PAIRS) {
    if (pair.v2Usd === undefined) continue
    const [t0, t1] = sorted(pair, tokens)
    const price = rawPrice(t0, t1, DEVIATION_BPS.v2 * pair.side)
    const amount0 = unitsForUsd(pair.v2Usd / 2n, t0)
    const amount1 = (amount0 * price.num) / price.den
    await chain.send(DEPLOYER, addresses.v2Router02, {
      abi: uni.v2Router02.abi,
      functionName: 'addLiquidity',
      args: [t0.address, t1.address, amount0, amount1, amount0, amount1, DEPLOYER.address, BUILD_DEADLINE],
    })
    const address = getAddress(
      await chain.read<Hex>(addresses.v2Factory, { abi: uni.v2Factory.abi, functionName: 'getPair', args: [t0.address, t1.address] }),
    )
    const [reserve0, reserve1] = await chain.read<[bigint, bigint, number]>(address, { abi: uni.v2Pair.abi, functionName: 'getReserves' })
    pairs.push({ name: `${t0.symbol}/${t1.symbol}`, token0: t0.address, token1: t1.address, address, reserve0: reserve0.toString(), reserve1: reserve1.toString() })
  }
  return pairs
}

export async function addV3Liquidity(
  chain: BuildChain,
  addresses: ProtocolAddresses,
  uni: UniswapArtifacts,
  tokens: Map<TokenSymbol, TokenInfo>,
): Promise<RegistryV3Pool[]> {
  const pools: RegistryV3Pool[] = []
  for (const pair of PAIRS) {
    for (const fee of [500, 3000, 10000] as const satisfies readonly V3Fee[]) {
      const budget = pair.v3Usd[fee]
      if (budget === undefined) continue
      const [t0, t1] = sorted(pair, tokens)
      pools.push(await mintV3Pool(chain, addresses, uni, { t0, t1, fee, deviationBps: DEVIATION_BPS[fee] * pair.side, usd: budget }))
    }
  }
  return pools
}

/** V3 pool factory and the position manager that mints into its pools */
export interface V3Deployment {
  v3Factory: Hex
  positionManager: Hex
}

export interface V3PoolSeed {
  t0: TokenInfo
  t1: TokenInfo
  fee: V3Fee
  /** deviation of the pool's price from the reference, basis points of token0's price */
  deviationBps: bigint
  /** USD value spread over POSITION_TEMPLATE */
  usd: bigint
}

/** Creates and initialises one pool of `v3` and mints the position template into it. */
export async function mintV3Pool(chain: BuildChain, v3: V3Deployment, uni: UniswapArtifacts, seed: V3PoolSeed): Promise<RegistryV3Pool> {
  const { t0, t1, fee, usd: budget } = seed
  const spacing = V3_TICK_SPACING[fee]
  const sqrtPrice = sqrtPriceX96(rawPrice(t0, t1, seed.deviationBps))
  await chain.send(DEPLOYER, v3.positionManager, {
    abi: uni.positionManager.abi,
    functionName: 'createAndInitializePoolIfNecessary',
    args: [t0.address, t1.address, fee, sqrtPrice],
  })
  const address = getAddress(await chain.read<Hex>(v3.v3Factory, { abi: uni.v3Factory.abi, functionName: 'getPool', args: [t0.address, t1.address, fee] }))
  const [, tick] = await chain.read<[bigint, number]>(address, { abi: uni.v3Pool.abi, functionName: 'slot0' })

  const positions: RegistryV3Position[] = []
  for (const p of POSITION_TEMPLATE) {
    // nested ranges widen outwards; one-sided ranges keep their inner edge on the far side of the price
    const tickLower = p.lower > 0 ? ceilTick(tick + p.lower, spacing) : floorTick(tick + p.lower, spacing)
    const tickUpper = p.upper < 0 ? floorTick(tick + p.upper, spacing) : ceilTick(tick + p.upper, spacing)
    const usd = (budget * p.sharePct) / 100n
    // a range above the price holds only token0, one below only token1, one around it both
    const above = tickLower > tick
    const below = tickUpper <= tick
    const amount0Desired = below ? 0n : unitsForUsd(above ? usd : usd / 2n, t0)
    const amount1Desired = above ? 0n : unitsForUsd(below ? usd : usd / 2n, t1)
    const minted = await chain.sendAndDecode<readonly [bigint, bigint, bigint, bigint]>(DEPLOYER, v3.positionManager, {
      abi: uni.positionManager.abi,
      functionName: 'mint',
      args: [
        {
          token0: t0.address,
          token1: t1.address,
          fee,
          tickLower,
          tickUpper,
          amount0Desired,
          amount1Desired,
          amount0Min: 0n,
          amount1Min: 0n,
          recipient: DEPLOYER.address,
          deadline: BUILD_DEADLINE,
        },
      ],
    })
    const [tokenId, liquidity] = minted
    positions.push({ tokenId: tokenId.toString(), tickLower, tickUpper, liquidity: liquidity.toString() })
  }
  // one read at a time: reads share the chain's checkpoint stack
  const slot0 = await chain.read<[bigint, number]>(address, { abi: uni.v3Pool.abi, functionName: 'slot0' })
  const liquidity = await chain.read<bigint>(address, { abi: uni.v3Pool.abi, functionName: 'liquidity' })
  return {
    name: `${t0.symbol}/${t1.symbol} ${fee / 10_000}%`,
    token0: t0.address,
    token1: t1.address,
    fee,
    tickSpacing: spacing,
    address,
    sqrtPriceX96: slot0[0].toString(),
    tick: slot0[1],
    liquidity: liquidity.toString(),
    positions,
  }
}
