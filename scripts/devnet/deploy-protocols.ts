/**
 * Deploys WETH9, the ERC-20s, Uniswap V2 (factory, Router02) and V3 (factory, position manager,
 * SwapRouter, QuoterV2, SwapRouter02), all from the deployer, in a fixed order: the order is what
 * fixes their addresses (CREATE from the deployer's nonce 0, 1, 2 ...).
 */
import { zeroAddress, type Hex } from 'viem'
import type { BuildChain } from './build-chain.ts'
import { DEPLOYER } from './config.ts'
import { projectArtifact, type UniswapArtifacts } from './artifacts.ts'
import { TOKENS, type TokenSymbol } from './layout.ts'

export interface ProtocolAddresses {
  weth: Hex
  tokens: Record<Exclude<TokenSymbol, 'WETH'>, Hex>
  v2Factory: Hex
  v2Router02: Hex
  v3Factory: Hex
  positionManager: Hex
  swapRouter: Hex
  quoterV2: Hex
  swapRouter02: Hex
}

export async function deployProtocols(chain: BuildChain, uni: UniswapArtifacts): Promise<ProtocolAddresses> {
  const weth = await chain.deploy(DEPLOYER, uni.weth9)
  const erc20 = projectArtifact('DevnetERC20')
  const tokens = {} as ProtocolAddresses['tokens']
  for (const t of TOKENS) tokens[t.symbol] = await chain.deploy(DEPLOYER, erc20, [t.name, t.symbol, t.decimals])

  // feeToSetter = deployer; the protocol fee stays off (feeTo = 0), as on mainnet
  const v2Factory = await chain.deploy(DEPLOYER, uni.v2Factory, [DEPLOYER.address])
  const v2Router02 = await chain.deploy(DEPLOYER, uni.v2Router02, [v2Factory, weth])

  // the V3 factory enables the 500/10, 3000/60 and 10000/200 fee tiers in its constructor
  const v3Factory = await chain.deploy(DEPLOYER, uni.v3Factory)
  // no token descriptor: tokenURI is not needed on a devnet and the descriptor needs linked libraries
  const positionManager = await chain.deploy(DEPLOYER, uni.positionManager, [v3Factory, weth, zeroAddress])
  const swapRouter = await chain.deploy(DEPLOYER, uni.swapRouter, [v3Factory, weth])
  const quoterV2 = await chain.deploy(DEPLOYER, uni.quoterV2, [v3Factory, weth])
  const swapRouter02 = await chain.deploy(DEPLOYER, uni.swapRouter02, [v2Factory, v3Factory, positionManager, weth])

  return { weth, tokens, v2Factory, v2Router02, v3Factory, positionManager, swapRouter, quoterV2, swapRouter02 }
}
