/**
 * Decoders for upstream JSON-RPC results. The client hands back `unknown`; anything that is not the
 * shape the method promises becomes an `UpstreamError` with reason 'malformed' and the method name.
 */
import { hexToBytes } from 'viem'
import { UpstreamError, type Address, type BlockInfo, type Hex } from '../types.ts'

const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HASH = /^0x[0-9a-fA-F]{64}$/
/** Storage words: geth pads to 32 bytes, some nodes answer "0x0" or even "0x". */
const WORD = /^0x[0-9a-fA-F]{0,64}$/

export function malformed(method: string, message: string): UpstreamError {
  return new UpstreamError(`${method}: malformed result: ${message}`, 'malformed', { method })
}

export function decodeQuantity(value: unknown, method: string, field = 'result'): bigint {
  if (typeof value !== 'string' || !QUANTITY.test(value)) throw malformed(method, `${field} is not a hex quantity: ${show(value)}`)
  return BigInt(value)
}

export function decodeWord(value: unknown, method: string): bigint {
  if (typeof value !== 'string' || !WORD.test(value)) throw malformed(method, `result is not a 32-byte word: ${show(value)}`)
  return value === '0x' ? 0n : BigInt(value)
}

export function decodeData(value: unknown, method: string): Uint8Array {
  if (typeof value !== 'string' || !DATA.test(value)) throw malformed(method, `result is not hex data: ${show(value)}`)
  return hexToBytes(value as Hex)
}

/** The `storageHash` of an `eth_getProof` result (EIP-1186): the account's storage root. */
export function decodeStorageHash(value: unknown, method: string): Hex {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(method, `result is not a proof object: ${show(value)}`)
  const hash = (value as Record<string, unknown>).storageHash
  if (typeof hash !== 'string' || !HASH.test(hash)) throw malformed(method, `storageHash is not a 32-byte hash: ${show(hash)}`)
  return hash.toLowerCase() as Hex
}

/** Header fields of an `eth_getBlockByNumber(n, false)` result. `null` means the block is unknown. */
export function decodeBlock(value: unknown, method: string, requested: string): BlockInfo {
  if (value === null) {
    throw new UpstreamError(`${method}: block ${requested} not found upstream`, 'rpc', { method })
  }
  if (typeof value !== 'object' || Array.isArray(value) || value === undefined) {
    throw malformed(method, `result is not a block object: ${show(value)}`)
  }
  const block = value as Record<string, unknown>
  const optional = (field: string): bigint | undefined =>
    block[field] === undefined || block[field] === null ? undefined : decodeQuantity(block[field], method, field)
  const hash = block.hash
  if (typeof hash !== 'string' || !HASH.test(hash)) throw malformed(method, `hash is not a 32-byte hash: ${show(hash)}`)
  const miner = block.miner
  if (typeof miner !== 'string' || !ADDRESS.test(miner)) throw malformed(method, `miner is not an address: ${show(miner)}`)
  // mixHash is prevRandao since the merge; absent on some non-Ethereum chains, where zero is the EVM's view
  const mixHash = block.mixHash ?? `0x${'00'.repeat(32)}`
  if (typeof mixHash !== 'string' || !HASH.test(mixHash)) throw malformed(method, `mixHash is not a 32-byte hash: ${show(mixHash)}`)

  // every Ethereum node sends it; without it a reorg below the head cannot be seen from the header
  const parentHash = block.parentHash
  if (parentHash !== undefined && (typeof parentHash !== 'string' || !HASH.test(parentHash))) throw malformed(method, `parentHash is not a 32-byte hash: ${show(parentHash)}`)

  const info: BlockInfo = {
    number: decodeQuantity(block.number, method, 'number'),
    hash: hash.toLowerCase() as Hex,
    timestamp: decodeQuantity(block.timestamp, method, 'timestamp'),
    gasLimit: decodeQuantity(block.gasLimit, method, 'gasLimit'),
    gasUsed: decodeQuantity(block.gasUsed, method, 'gasUsed'),
    coinbase: miner.toLowerCase() as Address,
    prevRandao: mixHash.toLowerCase() as Hex,
    difficulty: optional('difficulty') ?? 0n,
  }
  if (typeof parentHash === 'string') info.parentHash = parentHash.toLowerCase() as Hex
  const baseFeePerGas = optional('baseFeePerGas')
  if (baseFeePerGas !== undefined) info.baseFeePerGas = baseFeePerGas
  const excessBlobGas = optional('excessBlobGas')
  if (excessBlobGas !== undefined) info.excessBlobGas = excessBlobGas
  const blobGasUsed = optional('blobGasUsed')
  if (blobGasUsed !== undefined) info.blobGasUsed = blobGasUsed
  // without bodies a node lists hashes; anything else (bodies, an odd node) leaves them unknown
  const txs = block.transactions
  if (Array.isArray(txs) && txs.every((t): t is string => typeof t === 'string' && HASH.test(t))) info.transactionHashes = txs.map((t) => t.toLowerCase() as Hex)
  return info
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  return text.length > 120 ? `${text.slice(0, 120)}…` : text
}
