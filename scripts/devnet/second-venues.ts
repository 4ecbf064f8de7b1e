/**
 * The devnet's second venue of each kind (layout.ts FORK_V2_VENUE, FORK_V3_VENUE), deployed by the
 * deployer after every existing deployment, pool and dev-account funding, so nothing that exists
 * moves: a V2-style fork at 25 bps (DevnetV2ForkFactory, compiled from src/contracts) with liquidity
 * added as a provider does without a router (tokens into the pair, then mint), and a second Uniswap
 * V3 factory from the npm artifacts with a NonfungiblePositionManager of its own.
 */
import { getAddress, keccak256, maxUint256, zeroAddress, type Hex } from 'viem'
import { mintV3Pool, sorted, type TokenInfo } from './add-liquidity.ts'
import { ERC20_ABI, projectArtifact, type UniswapArtifacts } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { DEPLOYER } from './config.ts'
import { FORK_V2_PAIRS, FORK_V2_VENUE, FORK_V3_POOLS, FORK_V3_VENUE, V3_TICK_SPACING, type TokenSymbol } from './layout.ts'
import { rawPrice, unitsForUsd } from './price-math.ts'
import type { RegistryV2Pair, RegistryVenue } from './registry.ts'

export async function deploySecondVenues(chain: BuildChain, uni: UniswapArtifacts, tokens: Map<TokenSymbol, TokenInfo>): Promise<RegistryVenue[]> {
  return [await deployForkV2(chain, tokens), await deployForkV3(chain, uni, tokens)]
}

async function deployForkV2(chain: BuildChain, tokens: Map<TokenSymbol, TokenInfo>): Promise<RegistryVenue> {
  const factoryArtifact = projectArtifact('DevnetV2ForkFactory')
  const pairArtifact = projectArtifact('DevnetV2ForkPair')
  const factory = await chain.deploy(DEPLOYER, factoryArtifact, [DEPLOYER.address])
  const initCodeHash = keccak256(pairArtifact.bytecode)
  const onChain = await chain.read<Hex>(factory, { abi: factoryArtifact.abi, functionName: 'pairInitCodeHash' })
  if (onChain !== initCodeHash) throw new Error(`DevnetV2ForkPair init-code hash ${onChain} on chain, ${initCodeHash} in the artifact`)

  const pairs: RegistryV2Pair[] = []
  for (const spec of FORK_V2_PAIRS) {
    const [t0, t1] = sorted(spec, tokens)
    const price = rawPrice(t0, t1, FORK_V2_VENUE.deviationBps * spec.side)
    const amount0 = unitsForUsd(spec.usd / 2n, t0)
    const amount1 = (amount0 * price.num) / price.den
    await chain.send(DEPLOYER, factory, { abi: factoryArtifact.abi, functionName: 'createPair', args: [t0.address, t1.address] })
    const address = getAddress(await chain.read<Hex>(factory, { abi: factoryArtifact.abi, functionName: 'getPair', args: [t0.address, t1.address] }))
    await chain.send(DEPLOYER, t0.address, { abi: ERC20_ABI, functionName: 'transfer', args: [address, amount0] })
    await chain.send(DEPLOYER, t1.address, { abi: ERC20_ABI, functionName: 'transfer', args: [address, amount1] })
    await chain.send(DEPLOYER, address, { abi: pairArtifact.abi, functionName: 'mint', args: [DEPLOYER.address] })
    const [reserve0, reserve1] = await chain.read<[bigint, bigint, number]>(address, { abi: pairArtifact.abi, functionName: 'getReserves' })
    pairs.push({ name: `${t0.symbol}/${t1.symbol}`, token0: t0.address, token1: t1.address, address, reserve0: reserve0.toString(), reserve1: reserve1.toString() })
  }
  return { kind: 'v2', name: FORK_V2_VENUE.name, factory, initCodeHash, feeBps: FORK_V2_VENUE.feeBps, callback: 'pancakeCall', pairs }
}

async function deployForkV3(chain: BuildChain, uni: UniswapArtifacts, tokens: Map<TokenSymbol, TokenInfo>): Promise<RegistryVenue> {
  const weth = tokens.get('WETH')!.address
  const v3Factory = await chain.deploy(DEPLOYER, uni.v3Factory)
  const positionManager = await chain.deploy(DEPLOYER, uni.positionManager, [v3Factory, weth, zeroAddress])
  for (const token of tokens.values()) {
    await chain.send(DEPLOYER, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [positionManager, maxUint256] })
  }
  const pools = []
  for (const spec of FORK_V3_POOLS) {
    const [t0, t1] = sorted(spec, tokens)
    pools.push(await mintV3Pool(chain, { v3Factory, positionManager }, uni, { t0, t1, fee: 3000, deviationBps: FORK_V3_VENUE.deviationBps * spec.side, usd: spec.usd }))
  }
  const fees = [500, 3000, 10000] as const
  return {
    kind: 'v3',
    name: FORK_V3_VENUE.name,
    factory: v3Factory,
    poolDeployer: v3Factory,
    initCodeHash: keccak256(uni.v3Pool.bytecode),
    feeTiers: [...fees],
    tickSpacings: fees.map((f) => V3_TICK_SPACING[f]),
    callback: 'uniswapV3SwapCallback',
    positionManager,
    pools,
  }
}
