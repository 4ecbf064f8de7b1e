/**
 * buildDevnet: runs the whole build on an in-process EVM and writes genesis.json and
 * registry.json. Steps, in the order that fixes every address and every stored timestamp:
 *
 *   1. fund the deployer; deploy WETH9, tokens, Uniswap V2 and V3 (deploy-protocols.ts)
 *   2. mint and wrap, add V2 liquidity, create V3 pools and mint positions (add-liquidity.ts)
 *   3. fund and approve the dev accounts, all 64 alike (fund-accounts.ts)
 *   4. the ETH/USD feed at its fixed address, the second V2 and V3 venues (second-venues.ts),
 *      Uniswap V4's PoolManager and pools (v4-venue.ts), then the extension point (fixed-deployments.ts)
 *   5. dump the state into the genesis; read pool states into the registry
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { getAddress, keccak256, type Hex } from 'viem'
import { addV2Liquidity, addV3Liquidity, fundDeployer, tokenInfos } from './add-liquidity.ts'
import { projectArtifact, uniswapArtifacts, uniswapV4Artifacts } from './artifacts.ts'
import { BuildChain } from './build-chain.ts'
import {
  CHAIN_ID,
  DEPLOYER,
  DEPLOYER_ETH,
  DEV_KEYS_WARNING,
  DEV_MNEMONIC,
  GENESIS_TIMESTAMP,
  SEARCHER_ACCOUNT_INDEXES,
  devAccounts,
} from './config.ts'
import { deployProtocols } from './deploy-protocols.ts'
import { EXTENSIONS, deployEthUsdFeed, deployExtension, type FixedDeployment } from './fixed-deployments.ts'
import { devAccountBalances, fundDevAccounts } from './fund-accounts.ts'
import { deploySecondVenues } from './second-venues.ts'
import { deployUniswapV4 } from './v4-venue.ts'
import { genesisJson } from './genesis-file.ts'
import { BASE_TOKENS, TOKENS, type TokenSymbol } from './layout.ts'
import type { DevnetRegistry } from './registry.ts'

/** Init-code hashes hard-coded in UniswapV2Library and the V3 periphery's PoolAddress. */
const V2_PAIR_INIT_CODE_HASH = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f'
const V3_POOL_INIT_CODE_HASH = '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54'

export interface DevnetBuild {
  genesis: ReturnType<typeof genesisJson>
  registry: DevnetRegistry
  /** build transactions and calls executed (one block each) */
  buildBlocks: bigint
}

export interface BuildOptions {
  /** the extension deployments (default: EXTENSIONS); tests pass their own */
  extensions?: readonly FixedDeployment[]
}

export async function buildDevnet(options: BuildOptions = {}): Promise<DevnetBuild> {
  const uni = uniswapArtifacts()
  // The periphery finds pairs and pools by CREATE2 with these hashes; other bytecode would break routing.
  const pairInitCodeHash = keccak256(uni.v2Pair.bytecode)
  const poolInitCodeHash = keccak256(uni.v3Pool.bytecode)
  if (pairInitCodeHash !== V2_PAIR_INIT_CODE_HASH) throw new Error(`UniswapV2Pair init-code hash ${pairInitCodeHash} does not match Router02's`)
  if (poolInitCodeHash !== V3_POOL_INIT_CODE_HASH) throw new Error(`UniswapV3Pool init-code hash ${poolInitCodeHash} does not match the periphery's`)

  const chain = await BuildChain.create()
  await chain.setBalance(DEPLOYER.address, DEPLOYER_ETH)

  const addresses = await deployProtocols(chain, uni)
  const tokens = tokenInfos(addresses)
  await fundDeployer(chain, addresses, uni, tokens)
  const pairs = await addV2Liquidity(chain, addresses, uni, tokens)
  const pools = await addV3Liquidity(chain, addresses, uni, tokens)

  const spenders = [
    { name: 'UniswapV2Router02', address: addresses.v2Router02 },
    { name: 'SwapRouter', address: addresses.swapRouter },
    { name: 'SwapRouter02', address: addresses.swapRouter02 },
  ]
  const accounts = devAccounts()
  await fundDevAccounts(chain, accounts, tokens.values(), spenders)

  const feed = await deployEthUsdFeed(chain)
  // after everything above: the added venues move no existing address or pool state
  const secondVenues = await deploySecondVenues(chain, uni, tokens)
  // after the second venues, for the same reason: Uniswap V4's PoolManager, test routers and pools
  const v4 = await deployUniswapV4(chain, uniswapV4Artifacts(), tokens, accounts)
  spenders.push(v4.spender)

  const registry: DevnetRegistry = {
    chainId: CHAIN_ID,
    hardfork: 'prague',
    genesisTimestamp: GENESIS_TIMESTAMP.toString(),
    weth: addresses.weth,
    tokens: [
      { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, address: addresses.weth },
      ...TOKENS.map((t) => ({ symbol: t.symbol, name: t.name, decimals: t.decimals, address: addresses.tokens[t.symbol] })),
    ],
    baseTokens: BASE_TOKENS.map((symbol: TokenSymbol) => ({ symbol, address: tokens.get(symbol)!.address })),
    v2: { factory: addresses.v2Factory, router02: addresses.v2Router02, pairInitCodeHash, fee: 3000, pairs },
    v3: {
      factory: addresses.v3Factory,
      positionManager: addresses.positionManager,
      swapRouter: addresses.swapRouter,
      swapRouter02: addresses.swapRouter02,
      quoterV2: addresses.quoterV2,
      poolInitCodeHash,
      pools,
    },
    venues: [
      { kind: 'v2', name: 'uniswap-v2', factory: addresses.v2Factory, initCodeHash: pairInitCodeHash, feeBps: 30, callback: 'uniswapV2Call' },
      {
        kind: 'v3',
        name: 'uniswap-v3',
        factory: addresses.v3Factory,
        poolDeployer: addresses.v3Factory,
        initCodeHash: poolInitCodeHash,
        // the tiers the factory enables in its constructor
        feeTiers: [500, 3000, 10000],
        tickSpacings: [10, 60, 200],
        callback: 'uniswapV3SwapCallback',
      },
      ...secondVenues,
      v4.venue,
    ],
    v4: v4.registry,
    ethUsdFeed: await readFeed(chain, feed),
    deployer: { warning: DEV_KEYS_WARNING, address: DEPLOYER.address, privateKey: DEPLOYER.privateKey },
    devAccounts: {
      warning: DEV_KEYS_WARNING,
      mnemonic: DEV_MNEMONIC,
      derivationPath: "m/44'/60'/0'/0/{index}",
      balances: devAccountBalances(tokens.values()) as DevnetRegistry['devAccounts']['balances'],
      approvedSpenders: spenders,
      accounts: accounts.map((a, index) => ({ index, address: getAddress(a.address), privateKey: a.privateKey })),
      searcherIndexes: [...SEARCHER_ACCOUNT_INDEXES],
    },
    extensions: {},
  }

  // EXTENSION POINT: see fixed-deployments.ts. Runs last so it cannot move anything above.
  for (const extension of options.extensions ?? EXTENSIONS) {
    if (extension.label in registry.extensions) throw new Error(`duplicate extension label ${extension.label}`)
    registry.extensions[extension.label] = await deployExtension(extension, { chain, registry })
  }

  if (chain.lastTimestamp >= GENESIS_TIMESTAMP) throw new Error('build timestamps must precede the genesis')
  return { genesis: genesisJson(chain.dump()), registry, buildBlocks: chain.blockCount }
}

async function readFeed(chain: BuildChain, address: Hex): Promise<DevnetRegistry['ethUsdFeed']> {
  const { abi } = projectArtifact('DevnetPriceFeed')
  const decimals = await chain.read<number>(address, { abi, functionName: 'decimals' })
  const description = await chain.read<string>(address, { abi, functionName: 'description' })
  const [roundId, answer, , updatedAt] = await chain.read<[bigint, bigint, bigint, bigint, bigint]>(address, { abi, functionName: 'latestRoundData' })
  return { address, decimals, description, answer: answer.toString(), roundId: roundId.toString(), updatedAt: updatedAt.toString() }
}

/** The exact text of the two fixture files. */
export function devnetFiles(build: DevnetBuild): { 'genesis.json': string; 'registry.json': string } {
  return {
    'genesis.json': JSON.stringify(build.genesis, null, 2) + '\n',
    'registry.json': JSON.stringify(build.registry, null, 2) + '\n',
  }
}

export async function writeDevnet(outDir: string, options: BuildOptions = {}): Promise<DevnetBuild> {
  const build = await buildDevnet(options)
  mkdirSync(outDir, { recursive: true })
  for (const [name, text] of Object.entries(devnetFiles(build))) writeFileSync(join(outDir, name), text)
  return build
}
