/**
 * The receipts the local builder keeps for its history window (LOCAL_BUILDER_HISTORY_BLOCKS
 * blocks), their logs packed into one binary string each.
 *
 * Why: kept as the simulator returns them, a router swap's five or six logs are ~20 hex strings,
 * their arrays and objects: ~3.5 KB per receipt, 4.7 MB for the 8 blocks of ~165 transactions
 * bench:soak builds (a heap snapshot at minute 6), which fill as the load starts. Packed, the same
 * logs are their raw bytes (a one-byte string: 1 byte per byte, one header), under half of that.
 * They are unpacked only when a receipt is read (eth_getTransactionReceipt, receipt()).
 *
 * Layout, per log: address (20 bytes), topic count (1 byte, 0-4), topics (32 bytes each), data
 * length (4 bytes, big-endian), data.
 */
import { bytesToHexString } from '../../chain/quantity.ts'
import type { Address, Hex } from '../../chain/types.ts'
import type { SimulationLog } from '../../evm/simulator.ts'
import type { BuilderReceipt } from './types.ts'

/** The packed form: each char is one byte (0-255). */
export type PackedLogs = string & { readonly __packedLogs: unique symbol }

const MAX_TOPICS = 4

function bytesOf(hex: string, what: string): Buffer {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) throw new RangeError(`${what} is not 0x-prefixed hex of whole bytes: ${hex.slice(0, 20)}`)
  return Buffer.from(hex.slice(2), 'hex')
}

function fixed(hex: string, length: number, what: string): Buffer {
  const bytes = bytesOf(hex, what)
  if (bytes.length !== length) throw new RangeError(`${what} must be ${length} bytes, got ${bytes.length}`)
  return bytes
}

export function packLogs(logs: readonly SimulationLog[]): PackedLogs {
  const parts: Buffer[] = []
  for (const [i, log] of logs.entries()) {
    if (log.topics.length > MAX_TOPICS) throw new RangeError(`log ${i} has ${log.topics.length} topics, at most ${MAX_TOPICS}`)
    parts.push(fixed(log.address, 20, `log ${i}'s address`), Buffer.of(log.topics.length))
    for (const [t, topic] of log.topics.entries()) parts.push(fixed(topic, 32, `log ${i}'s topic ${t}`))
    const data = bytesOf(log.data, `log ${i}'s data`)
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    parts.push(length, data)
  }
  return Buffer.concat(parts).toString('latin1') as PackedLogs
}

export function unpackLogs(packed: PackedLogs): SimulationLog[] {
  const bytes = Buffer.from(packed, 'latin1')
  const logs: SimulationLog[] = []
  let at = 0
  const take = (n: number): Buffer => {
    if (at + n > bytes.length) throw new RangeError(`packed logs end at byte ${bytes.length}, ${n} more wanted at ${at}`)
    const out = bytes.subarray(at, at + n)
    at += n
    return out
  }
  while (at < bytes.length) {
    const address = bytesToHexString(take(20)) as Address
    const count = take(1)[0]
    const topics: Hex[] = []
    for (let t = 0; t < count; t++) topics.push(bytesToHexString(take(32)))
    const data = bytesToHexString(take(take(4).readUInt32BE(0)))
    logs.push({ address, topics, data })
  }
  return logs
}

/** A receipt as the builder keeps it: every field but the logs as they are, the logs packed. */
export type KeptReceipt = Omit<BuilderReceipt, 'logs'> & { readonly packedLogs: PackedLogs }

export function packReceipt(receipt: BuilderReceipt): KeptReceipt {
  return Object.assign(fieldsOf(receipt), { packedLogs: packLogs(receipt.logs) })
}

/** A fresh BuilderReceipt (its own logs: the caller may change them). */
export function unpackReceipt(kept: KeptReceipt): BuilderReceipt {
  return Object.assign(fieldsOf(kept), { logs: unpackLogs(kept.packedLogs) })
}

/**
 * Every field but the logs, in one order (bundleHash undefined for a public transaction). Not
 * `const { logs, ...rest } = receipt; return { ...rest, packedLogs }`: Node 20's V8 can give each
 * object made by a spread followed by more properties a hidden class of its own (a map and its
 * descriptor array, ~430 B allocated straight in old space; eighteenth session,
 * scripts/probe/heap-snapshot-diff.ts), so each kept receipt held that much beside itself for the
 * window's life, and each one read back (the inclusion checker reads every included submission's)
 * left it as garbage in old space. One literal, then the logs field added, share one hidden class.
 */
function fieldsOf(r: Omit<BuilderReceipt, 'logs'>): Omit<BuilderReceipt, 'logs'> {
  return {
    transactionHash: r.transactionHash,
    transactionIndex: r.transactionIndex,
    blockNumber: r.blockNumber,
    blockHash: r.blockHash,
    from: r.from,
    to: r.to,
    status: r.status,
    gasUsed: r.gasUsed,
    cumulativeGasUsed: r.cumulativeGasUsed,
    effectiveGasPrice: r.effectiveGasPrice,
    type: r.type,
    contractAddress: r.contractAddress,
    bundleHash: r.bundleHash,
  }
}
