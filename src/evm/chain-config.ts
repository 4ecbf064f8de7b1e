/**
 * The ethereumjs Common for a chain: which hardfork rules apply. Pinned explicitly, because
 * ethereumjs and anvil default to different forks and gas differs between them.
 */
import { Common, Mainnet, createCommonFromGethGenesis, createCustomCommon, type GethGenesis } from '@ethereumjs/common'
import { CUSTOM_CRYPTO } from '../crypto/ecrecover.ts'
import { MAINNET_KZG } from './kzg.ts'
import { wasmKeccak256 } from './keccak.ts'

export const DEFAULT_HARDFORK = 'prague'

/**
 * Native ecrecover, the WebAssembly keccak256 where WebAssembly runs (./keccak.ts; ethereumjs hashes
 * with noble's JavaScript otherwise), and a real KZG with the mainnet trusted setup (./kzg.ts): the
 * point-evaluation precompile (0x0a) verifies proofs exactly, so a contract that checks a blob
 * proof (a rollup bridge) simulates as it executes on chain, and blob transactions decode.
 */
const EVM_CRYPTO = { ...CUSTOM_CRYPTO, ...(wasmKeccak256 === undefined ? {} : { keccak256: wasmKeccak256 }), kzg: MAINNET_KZG }

export function commonForChain(chainId: bigint, hardfork: string = DEFAULT_HARDFORK): Common {
  if (chainId === 1n) return new Common({ chain: Mainnet, hardfork, customCrypto: EVM_CRYPTO })
  return createCustomCommon({ chainId: Number(chainId), name: `chain-${chainId}` }, Mainnet, { hardfork, customCrypto: EVM_CRYPTO })
}

/**
 * A Common built from a go-ethereum genesis config, with the hardfork chosen for the given block
 * (fork blocks and fork timestamps both honoured).
 */
export function commonFromGethGenesis(genesis: GethGenesis, block: { number: bigint; timestamp: bigint }): Common {
  const common = createCommonFromGethGenesis(genesis, { chain: 'custom', customCrypto: EVM_CRYPTO })
  common.setHardforkBy({ blockNumber: block.number, timestamp: block.timestamp })
  return common
}
