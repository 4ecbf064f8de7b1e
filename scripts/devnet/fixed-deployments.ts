/**
 * Contracts at fixed addresses: the ETH/USD feed, and the EXTENSION POINT for the project's own
 * contracts (router, backrun contract, ...).
 *
 * Each fixed contract is deployed by a deployer of its own whose key derives from the label
 * (config.ts labelledAccount(`fixed:<label>`)), at that deployer's nonce 0. Its address is
 * therefore CREATE(deployer(label), 0): it does not depend on its bytecode, on its constructor
 * arguments, or on anything else the build deploys. These deployments run after everything else,
 * so adding one shifts no existing address and changes no existing pool state.
 */
import { getContractAddress, maxUint256, type Hex } from 'viem'
import { ERC20_ABI, projectArtifact } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { GENESIS_TIMESTAMP, labelledAccount, type KeyedAccount } from './config.ts'
import { ETH_USD_FEED } from './layout.ts'
import { v2v3Venues, type DevnetRegistry } from './registry.ts'

/** What an extension's constructor arguments and setup can see. */
export interface ExtensionContext {
  chain: BuildChain
  /** the registry as built so far (extensions deployed earlier in the list included) */
  registry: DevnetRegistry
}

export interface FixedDeployment {
  /** unique and never renamed: the deployer key, and so the address, derive from it */
  label: string
  /** contract name of an artifact in src/contracts/artifacts (run scripts/compile-contracts.ts first) */
  artifact: string
  constructorArgs(ctx: ExtensionContext): readonly unknown[]
  /** optional transactions after the deployment (ownership, approvals); may use `deployer` */
  setup?(ctx: ExtensionContext, address: Hex, deployer: KeyedAccount): Promise<void>
}

/** The deployer of the fixed contract `label`. */
export function fixedDeployer(label: string): KeyedAccount {
  return labelledAccount(`fixed:${label}`)
}

/** Where the fixed contract `label` lives, without building anything. */
export function fixedAddress(label: string): Hex {
  return getContractAddress({ from: fixedDeployer(label).address, nonce: 0n })
}

export const ETH_USD_FEED_LABEL = 'eth-usd-feed'
/** registry.json extensions['swap-plan-router']: the project's router (quote `router` and `spender`). */
export const SWAP_PLAN_ROUTER_LABEL = 'swap-plan-router'
/** registry.json extensions['backrun-executor'] (and registry.backrun.executor): the capital-free backrun contract. */
export const BACKRUN_EXECUTOR_LABEL = 'backrun-executor'

/**
 * Where the devnet's backrun contract pays the operator's share of every profit: an address with
 * no code and no balance at genesis, derived from a public label (devnet only, like every labelled
 * account: anyone can recompute its key). On a real chain the beneficiary is the operator's own
 * account, given to the contract's constructor.
 */
export const BACKRUN_BENEFICIARY = labelledAccount('backrun-beneficiary').address

/** registry.json `backrun`: the backrun contract and its (immutable) beneficiary. */
export interface BackrunRegistryEntry {
  executor: Hex
  beneficiary: Hex
}

/** registry.backrun of a registry built with the backrun-executor extension, if any. */
export function backrunEntry(registry: DevnetRegistry): BackrunRegistryEntry | undefined {
  return (registry as DevnetRegistry & { backrun?: BackrunRegistryEntry }).backrun
}

/** The Chainlink-style ETH/USD feed; its first round is stamped with the genesis time. */
export function deployEthUsdFeed(chain: BuildChain): Promise<Hex> {
  return deployAtFixedAddress(chain, ETH_USD_FEED_LABEL, 'DevnetPriceFeed', [
    ETH_USD_FEED.decimals,
    ETH_USD_FEED.description,
    ETH_USD_FEED.answer,
    GENESIS_TIMESTAMP,
  ])
}

/**
 * EXTENSION POINT. Deployed in this order at the very end of the build, each at
 * fixedAddress(label). Append new entries at the end; never reorder or rename existing ones
 * (renaming moves the address). Example, once src/contracts/MyContract.sol exists and its
 * artifact is compiled (scripts/compile-contracts.ts):
 *
 *   {
 *     label: 'my-contract',
 *     artifact: 'MyContract',
 *     constructorArgs: ({ registry }) => [registry.weth, registry.v2.factory, registry.v3.factory],
 *   },
 *
 * The address appears in registry.json under extensions['my-contract'].
 */
export const EXTENSIONS: readonly FixedDeployment[] = [
  // 1. the project's swap router (src/contracts/SwapPlanRouter.sol): the quote's `router` and `spender`
  {
    label: SWAP_PLAN_ROUTER_LABEL,
    artifact: 'SwapPlanRouter',
    // every V2/V3 venue, and Uniswap V4's PoolManager (built before the extensions, v4-venue.ts)
    constructorArgs: ({ registry }) => [registry.weth, ...venueArgs(registry), registry.v4.poolManager],
    // Every dev account max-approves the router for every token, like the Uniswap routers, so a
    // test or a demo can swap through it without a setup transaction. Plain calls (callAs): the
    // dev accounts keep nonce 0. Only new allowance slots are written; nothing existing changes.
    async setup({ chain, registry }, address) {
      for (const account of registry.devAccounts.accounts) {
        for (const token of registry.tokens) {
          await chain.callAs(account.address, token.address, { abi: ERC20_ABI, functionName: 'approve', args: [address, maxUint256] })
        }
      }
      registry.devAccounts.approvedSpenders.push({ name: 'SwapPlanRouter', address })
    },
  },
  // 2. the project's backrun contract (src/contracts/BackrunExecutor.sol). Nobody approves it: it
  // borrows from the cycle's first pool. The registry also gets `backrun: { executor, beneficiary }`
  // (extensions[] lists contracts only, and the beneficiary has no code).
  {
    label: BACKRUN_EXECUTOR_LABEL,
    artifact: 'BackrunExecutor',
    // WETH (native-ETH V4 hops), every V2/V3 venue, the beneficiary, and Uniswap V4's PoolManager (its V4 hops, as the router's)
    constructorArgs: ({ registry }) => [registry.weth, ...venueArgs(registry), BACKRUN_BENEFICIARY, registry.v4.poolManager],
    async setup({ registry }, address) {
      const entry: BackrunRegistryEntry = { executor: address, beneficiary: BACKRUN_BENEFICIARY }
      Object.assign(registry, { backrun: entry })
    },
  },
]

/**
 * The contracts' venue arguments (UniswapPoolAccess: V2Venue[] and V3Venue[]), in the registry's
 * order: every venue of the devnet is trusted by the router and the backrun contract.
 */
export function venueArgs(registry: DevnetRegistry): [Array<{ factory: Hex; initCodeHash: Hex; feeBps: number }>, Array<{ poolDeployer: Hex; initCodeHash: Hex }>] {
  const v2 = v2v3Venues(registry).filter((v) => v.kind === 'v2').map((v) => ({ factory: v.factory, initCodeHash: v.initCodeHash, feeBps: v.feeBps! }))
  const v3 = v2v3Venues(registry).filter((v) => v.kind === 'v3').map((v) => ({ poolDeployer: v.poolDeployer ?? v.factory, initCodeHash: v.initCodeHash }))
  return [v2, v3]
}

/** Deploys one extension at its fixed address and runs its setup. */
export async function deployExtension(deployment: FixedDeployment, ctx: ExtensionContext): Promise<Hex> {
  const address = await deployAtFixedAddress(ctx.chain, deployment.label, deployment.artifact, deployment.constructorArgs(ctx))
  await deployment.setup?.(ctx, address, fixedDeployer(deployment.label))
  return address
}

async function deployAtFixedAddress(chain: BuildChain, label: string, artifact: string, args: readonly unknown[]): Promise<Hex> {
  const address = await chain.deploy(fixedDeployer(label), projectArtifact(artifact), args)
  if (address !== fixedAddress(label)) throw new Error(`${label} landed at ${address}, not its fixed address (was its deployer used twice?)`)
  return address
}
