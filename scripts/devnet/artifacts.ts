/**
 * Loads contract artifacts: the Uniswap contracts exactly as shipped in their npm packages (never
 * recompiled: two of them sit just under the code size limit and the routers hard-code the
 * factories' init-code hashes), and the project's own contracts from src/contracts/artifacts.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Abi, Hex } from 'viem'
import { ARTIFACTS_DIR } from './paths.ts'

export interface Artifact {
  abi: Abi
  bytecode: Hex
}

const require = createRequire(import.meta.url)

function loadJson(path: string): { abi: Abi; bytecode: string } {
  return JSON.parse(readFileSync(path, 'utf8')) as { abi: Abi; bytecode: string }
}

function withPrefix(bytecode: string): Hex {
  return (bytecode.startsWith('0x') ? bytecode : `0x${bytecode}`) as Hex
}

/** An artifact from an npm package, by its path inside the package. */
export function npmArtifact(specifier: string): Artifact {
  const json = loadJson(require.resolve(specifier))
  return { abi: json.abi, bytecode: withPrefix(json.bytecode) }
}

/**
 * An artifact of a Foundry build shipped in an npm package (its `out/<Name>.sol/<Name>.json`, where
 * the bytecode is `{ object }`), as @uniswap/v4-core ships its compiled contracts.
 */
export function foundryArtifact(packageName: string, contractName: string): Artifact {
  const json = JSON.parse(readFileSync(require.resolve(`${packageName}/out/${contractName}.sol/${contractName}.json`), 'utf8')) as {
    abi: Abi
    bytecode: { object: string }
  }
  if (/__\$[0-9a-f]{34}\$__/.test(json.bytecode.object)) throw new Error(`${contractName} needs linked libraries`)
  return { abi: json.abi, bytecode: withPrefix(json.bytecode.object) }
}

/** An artifact written by scripts/compile-contracts.ts. */
export function projectArtifact(contractName: string): Artifact {
  const json = loadJson(join(ARTIFACTS_DIR, `${contractName}.json`))
  if (json.bytecode === '0x') throw new Error(`${contractName} has no bytecode (an interface or abstract contract?)`)
  return { abi: json.abi, bytecode: withPrefix(json.bytecode) }
}

/** Every external artifact the devnet deploys, and where it comes from. */
export function uniswapArtifacts() {
  return {
    weth9: npmArtifact('@uniswap/v2-periphery/build/WETH9.json'),
    v2Factory: npmArtifact('@uniswap/v2-core/build/UniswapV2Factory.json'),
    v2Pair: npmArtifact('@uniswap/v2-core/build/UniswapV2Pair.json'),
    v2Router02: npmArtifact('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
    v3Factory: npmArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json'),
    v3Pool: npmArtifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json'),
    positionManager: npmArtifact(
      '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json',
    ),
    swapRouter: npmArtifact('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json'),
    quoterV2: npmArtifact('@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json'),
    swapRouter02: npmArtifact('@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json'),
  }
}

export type UniswapArtifacts = ReturnType<typeof uniswapArtifacts>

/**
 * Uniswap V4 as compiled in @uniswap/v4-core 1.0.2's out/: the singleton PoolManager (BUSL-1.1,
 * licenses/BUSL_LICENSE: its Additional Use Grant aside, non-production use is permitted, and the
 * devnet is a local test chain) and two of the package's test routers, which settle through
 * unlock/unlockCallback with flash accounting (PoolModifyLiquidityTest adds the devnet's liquidity,
 * PoolSwapTest makes the fixture swaps). Deployed as shipped, never recompiled.
 */
export function uniswapV4Artifacts() {
  return {
    poolManager: foundryArtifact('@uniswap/v4-core', 'PoolManager'),
    poolModifyLiquidityTest: foundryArtifact('@uniswap/v4-core', 'PoolModifyLiquidityTest'),
    poolSwapTest: foundryArtifact('@uniswap/v4-core', 'PoolSwapTest'),
  }
}

export type UniswapV4Artifacts = ReturnType<typeof uniswapV4Artifacts>

/** The ERC-20 ABI subset the build and the recorder use (every devnet token and WETH9 have it). */
export const ERC20_ABI = [
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'a', type: 'address' }], outputs: [{ type: 'uint256' }] },
  {
    type: 'function',
    name: 'allowance',
    stateMutability: 'view',
    inputs: [
      { name: 'o', type: 'address' },
      { name: 's', type: 'address' },
    ],
    outputs: [{ type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'approve',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 's', type: 'address' },
      { name: 'v', type: 'uint256' },
    ],
    outputs: [{ type: 'bool' }],
  },
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 't', type: 'address' },
      { name: 'v', type: 'uint256' },
    ],
    outputs: [{ type: 'bool' }],
  },
] as const satisfies Abi
