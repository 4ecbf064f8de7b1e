/**
 * The devnet's Uniswap V4 hooks (src/contracts/DevnetV4Hooks.sol). A V4 hook's permissions are the
 * low 14 bits of its address, so each hook is deployed with CREATE2 by DevnetCreate2Deployer (itself
 * at a fixed address: a labelled deployer's nonce 0) at a salt mined here, the way v4-periphery's
 * HookMiner does: the first salt from 0 up whose CREATE2 address has exactly the hook's flags in
 * its low bits. Deterministic: the same init code always mines the same salt.
 */
import { encodeDeployData, getAddress, getContractAddress, keccak256, numberToHex, type Hex } from 'viem'
import { V4_ALL_HOOK_MASK, V4_HOOK_FLAGS, v4HookPermissions, type V4HookPermission } from '../../src/pools/uniswap-v4-hooks.ts'
import { projectArtifact } from './artifacts.ts'
import type { BuildChain } from './build-chain.ts'
import { DEPLOYER, labelledAccount } from './config.ts'

const CREATE2_DEPLOYER_LABEL = 'fixed:uniswap-v4-hook-create2-deployer'
/** HookMiner's bound: 160,000 salts; a 14-bit pattern is found within ~16,384 on average */
const MAX_SALT_TRIES = 160_000

/** What the registry records of a deployed hook. */
export interface RegistryV4Hook {
  name: string
  /** its CREATE2 address; the low 14 bits are its permissions */
  address: Hex
  permissions: V4HookPermission[]
  salt: Hex
}

export interface V4Hooks {
  create2Deployer: Hex
  /** DevnetSwapCounterHook: afterSwap only; its owner (the build's deployer) sets its pools' dynamic fee */
  swapCounter: RegistryV4Hook
  /** DevnetDirectionalFeeHook: afterInitialize and beforeSwap, an LP-fee override per direction */
  directionalFee: RegistryV4Hook
}

/** the fees (pips) the directional hook charges: a zeroForOne swap 0.05%, a oneForZero swap 1% */
export const DIRECTIONAL_FEES = { zeroForOne: 500, oneForZero: 10_000 } as const

const flagsOf = (permissions: readonly V4HookPermission[]) => permissions.reduce((f, p) => f | V4_HOOK_FLAGS[p], 0)

/** the first salt whose CREATE2 address under `deployer` has exactly `flags` in its low 14 bits */
export function mineHookSalt(deployer: Hex, initCode: Hex, flags: number): { salt: Hex; address: Hex } {
  const bytecodeHash = keccak256(initCode)
  for (let i = 0; i < MAX_SALT_TRIES; i++) {
    const salt = numberToHex(i, { size: 32 })
    const address = getContractAddress({ opcode: 'CREATE2', from: deployer, salt, bytecodeHash })
    if (Number(BigInt(address) & BigInt(V4_ALL_HOOK_MASK)) === flags) return { salt, address: getAddress(address) }
  }
  throw new Error(`no salt within ${MAX_SALT_TRIES} gives hook flags 0x${flags.toString(16)}`)
}

async function deployHook(chain: BuildChain, create2Deployer: Hex, name: string, args: readonly unknown[], permissions: readonly V4HookPermission[]): Promise<RegistryV4Hook> {
  const artifact = projectArtifact(name)
  const initCode = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args })
  const mined = mineHookSalt(create2Deployer, initCode, flagsOf(permissions))
  const deployerAbi = projectArtifact('DevnetCreate2Deployer').abi
  const address = getAddress(await chain.sendAndDecode<Hex>(DEPLOYER, create2Deployer, { abi: deployerAbi, functionName: 'deploy', args: [mined.salt, initCode] }))
  if (address !== mined.address) throw new Error(`${name} deployed at ${address}, mined ${mined.address}`)
  return { name, address, permissions: v4HookPermissions(address), salt: mined.salt }
}

export async function deployV4Hooks(chain: BuildChain, poolManager: Hex): Promise<V4Hooks> {
  const create2Deployer = getAddress(await chain.deploy(labelledAccount(CREATE2_DEPLOYER_LABEL), projectArtifact('DevnetCreate2Deployer'), []))
  const swapCounter = await deployHook(chain, create2Deployer, 'DevnetSwapCounterHook', [poolManager, DEPLOYER.address], ['afterSwap'])
  const directionalFee = await deployHook(
    chain,
    create2Deployer,
    'DevnetDirectionalFeeHook',
    [poolManager, DIRECTIONAL_FEES.zeroForOne, DIRECTIONAL_FEES.oneForZero],
    ['afterInitialize', 'beforeSwap'],
  )
  return { create2Deployer, swapCounter, directionalFee }
}
