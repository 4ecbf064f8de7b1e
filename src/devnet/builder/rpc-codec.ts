/**
 * The local builder's JSON-RPC codec: parameters parsed into typed requests (-32602 naming the
 * field), builder errors mapped to JSON-RPC errors, and answers encoded as nodes and relays
 * encode them (quantities as hex; flashbots_getBundleStatsV2 in Flashbots' shape).
 */
import { toHex } from '../../chain/quantity.ts'
import type { Address, BlockInfo, Hex } from '../../chain/types.ts'
import type { DevnetBlockInfo } from '../../chain/memory/layered-state-reader.ts'
import { JsonRpcCode } from '../../transport/json-rpc-codes.ts'
import { RpcError } from '../json-rpc-http.ts'
import { LocalBuilderError, type BuilderReceipt, type BundleEntry, type BundleRecord, type BundleStatsRecord, type SendBundleRequest } from './types.ts'

const HASH = /^0x[0-9a-fA-F]{64}$/
export const HEX = /^0x([0-9a-fA-F]{2})*$/
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'

// ---- parameter parsing (JSON-RPC input -> typed requests) ----

/**
 * eth_sendBundle's parameter object: `{ txs, blockNumber, minTimestamp?, maxTimestamp?,
 * revertingTxHashes?, replacementUuid? }`. A txs entry is a raw signed transaction (hex), or a
 * 32-byte hash (bare, or `{ hash }`) of a transaction sent before.
 * @throws RpcError -32602 naming the field
 */
export function parseSendBundleRequest(value: unknown): SendBundleRequest {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected [{ txs, blockNumber, ... }]')
  const p = value as Record<string, unknown>
  if (!Array.isArray(p.txs)) throw invalid('txs must be an array of raw signed transactions (hex)')
  const txs: BundleEntry[] = p.txs.map((entry: unknown, i): BundleEntry => {
    if (typeof entry === 'string') {
      if (HASH.test(entry)) return { hash: entry.toLowerCase() as Hex }
      if (!HEX.test(entry) || entry.length <= 2) throw invalid(`txs[${i}] is not a raw transaction in 0x-hex`)
      return { raw: entry.toLowerCase() as Hex }
    }
    if (entry !== null && typeof entry === 'object' && typeof (entry as { hash?: unknown }).hash === 'string') {
      const hash = (entry as { hash: string }).hash
      if (!HASH.test(hash)) throw invalid(`txs[${i}].hash is not a 32-byte 0x-hex hash`)
      return { hash: hash.toLowerCase() as Hex }
    }
    throw invalid(`txs[${i}] must be a raw transaction (0x-hex) or { "hash": "0x..." }`)
  })
  if (p.blockNumber === undefined) throw invalid('blockNumber is required (hex)')
  const request: SendBundleRequest = { txs, blockNumber: parseQuantityParam(p.blockNumber, 'blockNumber') }
  if (p.minTimestamp !== undefined && p.minTimestamp !== null) request.minTimestamp = parseQuantityParam(p.minTimestamp, 'minTimestamp')
  if (p.maxTimestamp !== undefined && p.maxTimestamp !== null) request.maxTimestamp = parseQuantityParam(p.maxTimestamp, 'maxTimestamp')
  if (p.revertingTxHashes !== undefined && p.revertingTxHashes !== null) {
    if (!Array.isArray(p.revertingTxHashes)) throw invalid('revertingTxHashes must be an array of 32-byte hashes')
    request.revertingTxHashes = p.revertingTxHashes.map((h: unknown, i) => {
      if (typeof h !== 'string' || !HASH.test(h)) throw invalid(`revertingTxHashes[${i}] is not a 32-byte 0x-hex hash`)
      return h.toLowerCase() as Hex
    })
  }
  if (p.replacementUuid !== undefined && p.replacementUuid !== null) {
    if (typeof p.replacementUuid !== 'string' || p.replacementUuid.length === 0 || p.replacementUuid.length > 128) {
      throw invalid('replacementUuid must be a string of 1-128 characters')
    }
    request.replacementUuid = p.replacementUuid
  }
  return request
}

export function parseQuantityParam(value: unknown, field: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(value)) return BigInt(value)
  if (typeof value === 'string' && /^[0-9]{1,78}$/.test(value)) return BigInt(value)
  throw invalid(`${field} must be a hex quantity (0x...)`)
}

export function parseHashParam(value: unknown, field: string): Hex {
  if (typeof value !== 'string' || !HASH.test(value)) throw invalid(`${field} must be a 32-byte 0x-hex hash`)
  return value.toLowerCase() as Hex
}

export function parseAddressParam(value: unknown): Address {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw invalid('address must be 20 bytes of 0x-hex')
  return value.toLowerCase() as Address
}

export function parseCallParam(value: unknown): { from: Address; to?: Address; data?: Hex; value?: bigint; gasLimit?: bigint } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected [{ to, data, ... }, block?]')
  const p = value as Record<string, unknown>
  const data = p.input ?? p.data
  if (data !== undefined && (typeof data !== 'string' || !HEX.test(data))) throw invalid('data must be 0x-hex')
  return {
    from: p.from === undefined || p.from === null ? ZERO_ADDRESS : parseAddressParam(p.from),
    ...(p.to === undefined || p.to === null ? {} : { to: parseAddressParam(p.to) }),
    ...(data === undefined ? {} : { data: data as Hex }),
    ...(p.value === undefined || p.value === null ? {} : { value: parseQuantityParam(p.value, 'value') }),
    ...(p.gas === undefined || p.gas === null ? {} : { gasLimit: parseQuantityParam(p.gas, 'gas') }),
  }
}

export function invalid(message: string): RpcError {
  return new RpcError(JsonRpcCode.invalidParams, message)
}

function toRpcError(error: unknown): unknown {
  if (!(error instanceof LocalBuilderError)) return error
  const code = error.kind === 'invalid' ? JsonRpcCode.invalidParams : error.kind === 'limit' ? JsonRpcCode.limitExceeded : JsonRpcCode.invalidInput
  return new RpcError(code, error.message)
}

export function rpcCall<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw toRpcError(error)
  }
}

export async function rpcCallAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    throw toRpcError(error)
  }
}

// ---- JSON output (quantities as hex, as nodes answer) ----

export function receiptJson(r: BuilderReceipt): Record<string, unknown> {
  return {
    transactionHash: r.transactionHash,
    transactionIndex: toHex(BigInt(r.transactionIndex)),
    blockHash: r.blockHash,
    blockNumber: toHex(r.blockNumber),
    from: r.from,
    to: r.to,
    status: r.status === 1 ? '0x1' : '0x0',
    gasUsed: toHex(r.gasUsed),
    cumulativeGasUsed: toHex(r.cumulativeGasUsed),
    effectiveGasPrice: toHex(r.effectiveGasPrice),
    type: toHex(BigInt(r.type)),
    contractAddress: r.contractAddress,
    logs: r.logs.map((log, i) => ({
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: toHex(r.blockNumber),
      blockHash: r.blockHash,
      transactionHash: r.transactionHash,
      transactionIndex: toHex(BigInt(r.transactionIndex)),
      // index within the receipt (the block-wide index is not tracked)
      logIndex: toHex(BigInt(i)),
      removed: false,
    })),
    ...(r.bundleHash === undefined ? {} : { bundleHash: r.bundleHash }),
  }
}

export function blockJson(block: BlockInfo, transactions: readonly Hex[]): Record<string, unknown> {
  const parentHash = (block as Partial<DevnetBlockInfo>).parentHash ?? `0x${'00'.repeat(32)}`
  return {
    number: toHex(block.number),
    hash: block.hash,
    parentHash,
    timestamp: toHex(block.timestamp),
    gasLimit: toHex(block.gasLimit),
    gasUsed: toHex(block.gasUsed),
    ...(block.baseFeePerGas === undefined ? {} : { baseFeePerGas: toHex(block.baseFeePerGas) }),
    miner: block.coinbase,
    mixHash: block.prevRandao,
    difficulty: toHex(block.difficulty),
    transactions: [...transactions],
  }
}

export function bundleRecordJson(r: BundleRecord): Record<string, unknown> {
  return { ...r, blockNumber: toHex(r.blockNumber), txHashes: [...r.txHashes] }
}

export function bytesHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}

export function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}

/** flashbots_getBundleStatsV2's parameter object `{ bundleHash, blockNumber }` (blockNumber hex). */
export function parseBundleStatsParams(value: unknown): { bundleHash: Hex; blockNumber: bigint } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected [{ bundleHash, blockNumber }]')
  const p = value as Record<string, unknown>
  if (p.blockNumber === undefined || p.blockNumber === null) throw invalid('blockNumber is required (hex)')
  return { bundleHash: parseHashParam(p.bundleHash, 'bundleHash'), blockNumber: parseQuantityParam(p.blockNumber, 'blockNumber') }
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString())

/**
 * flashbots_getBundleStatsV2's answer for one (bundle, block): Flashbots' fields
 * (`isHighPriority`, `isSimulated`, `simulatedAt`, `receivedAt` as ISO times or null,
 * `consideredByBuildersAt` and `sealedByBuildersAt` as `[{ pubkey, timestamp }]`, empty when not),
 * plus `status` (pending | included | outbid | invalid | expired | unknown), `reason` (when not
 * included and known) and `includedBlock` (hex, when included). An unknown (or forgotten) pair
 * answers `status: 'unknown'` with the Flashbots fields empty.
 */
export function bundleStatsJson(record: BundleStatsRecord | undefined, builderId: string): Record<string, unknown> {
  if (record === undefined) {
    return { isHighPriority: false, isSimulated: false, simulatedAt: null, receivedAt: null, consideredByBuildersAt: [], sealedByBuildersAt: [], status: 'unknown' }
  }
  return {
    // signed requests are the ones a relay can score: the devnet treats them as high priority
    isHighPriority: record.signer !== undefined,
    isSimulated: record.simulatedAt !== undefined,
    simulatedAt: iso(record.simulatedAt),
    receivedAt: iso(record.receivedAt),
    consideredByBuildersAt: record.consideredAt === undefined ? [] : [{ pubkey: builderId, timestamp: iso(record.consideredAt) }],
    sealedByBuildersAt: record.sealedAt === undefined ? [] : [{ pubkey: builderId, timestamp: iso(record.sealedAt) }],
    status: record.status,
    ...(record.reason === undefined || record.status === 'included' ? {} : { reason: record.reason }),
    ...(record.includedBlock === undefined ? {} : { includedBlock: toHex(record.includedBlock) }),
  }
}
