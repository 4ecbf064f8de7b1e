/**
 * go-ethereum genesis files: the embedded devnet ships one, and every geth tracer fixture carries
 * one as its prestate. Parsed once into plain maps.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { KECCAK256_NULL } from '@ethereumjs/util'
import { hexToBytesStrict, normalizeAddress, parseOptionalQuantity, parseQuantity } from '../quantity.ts'
import type { Address, BlockInfo, Hex } from '../types.ts'

export interface GenesisAccount {
  nonce: bigint
  balance: bigint
  code: Uint8Array
  codeHash: Uint8Array
  storage: Map<bigint, bigint>
}

export interface GethGenesisJson {
  config: Record<string, unknown> & { chainId?: number | string }
  alloc: Record<string, { balance?: string; nonce?: string | number; code?: string; storage?: Record<string, string> }>
  timestamp?: string | number
  gasLimit?: string | number
  baseFeePerGas?: string | number | null
  difficulty?: string | number
  mixHash?: string
  coinbase?: string
  number?: string | number
  gasUsed?: string | number
  parentHash?: string
  extraData?: string
  excessBlobGas?: string | number | null
  blobGasUsed?: string | number | null
}

export interface ParsedGenesis {
  chainId: bigint
  config: Record<string, unknown>
  accounts: Map<Address, GenesisAccount>
  block: BlockInfo
}

export function parseGenesis(json: GethGenesisJson, blockHash: Hex = `0x${'00'.repeat(32)}`): ParsedGenesis {
  if (typeof json !== 'object' || json === null || typeof json.alloc !== 'object' || typeof json.config !== 'object') {
    throw new Error('genesis: expected an object with config and alloc')
  }
  const accounts = new Map<Address, GenesisAccount>()
  for (const [rawAddress, entry] of Object.entries(json.alloc)) {
    const address = normalizeAddress(rawAddress, `alloc ${rawAddress}`)
    const code = entry.code ? hexToBytesStrict(entry.code, `alloc ${rawAddress}.code`) : new Uint8Array(0)
    const storage = new Map<bigint, bigint>()
    for (const [k, v] of Object.entries(entry.storage ?? {})) {
      const value = parseQuantity(v, `alloc ${rawAddress}.storage[${k}]`)
      if (value !== 0n) storage.set(parseQuantity(k, `alloc ${rawAddress}.storage key`), value)
    }
    accounts.set(address, {
      nonce: parseQuantity(entry.nonce ?? 0, `alloc ${rawAddress}.nonce`),
      balance: parseQuantity(entry.balance ?? 0, `alloc ${rawAddress}.balance`),
      code,
      codeHash: code.length === 0 ? KECCAK256_NULL : keccak_256(code),
      storage,
    })
  }
  const chainId = parseQuantity(json.config.chainId ?? 1, 'config.chainId')
  const block: BlockInfo = {
    number: parseQuantity(json.number ?? 0, 'number'),
    hash: blockHash,
    timestamp: parseQuantity(json.timestamp ?? 0, 'timestamp'),
    gasLimit: parseQuantity(json.gasLimit ?? 30_000_000, 'gasLimit'),
    gasUsed: parseQuantity(json.gasUsed ?? 0, 'gasUsed'),
    baseFeePerGas: parseOptionalQuantity(json.baseFeePerGas, 'baseFeePerGas'),
    coinbase: normalizeAddress(json.coinbase ?? `0x${'00'.repeat(20)}`, 'coinbase'),
    prevRandao: (json.mixHash ?? `0x${'00'.repeat(32)}`).toLowerCase() as Hex,
    difficulty: parseQuantity(json.difficulty ?? 0, 'difficulty'),
    excessBlobGas: parseOptionalQuantity(json.excessBlobGas, 'excessBlobGas'),
    blobGasUsed: parseOptionalQuantity(json.blobGasUsed, 'blobGasUsed'),
  }
  return { chainId, config: json.config, accounts, block }
}
