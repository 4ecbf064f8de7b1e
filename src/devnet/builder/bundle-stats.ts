/**
 * What became of each bundle for each block it was sent for: one record per (bundle hash, block),
 * so the same bundle re-sent for successive blocks has one record per block. Bounded: at most
 * `maxRecords` records (the oldest settled one is forgotten first; a pending one only when
 * nothing settled is left), and settled records of blocks more than `maxAgeBlocks` behind the
 * head are released on every block. Records hold hashes, times and reasons only, never state.
 */
import type { Hex } from '../../chain/types.ts'
import type { BundleBlockStatus, BundleRecord, BundleStatsRecord } from './types.ts'

const key = (hash: Hex, block: bigint): string => `${hash}:${block}`

/**
 * A record with every field, in one order, from `record` with `changes` over it. Not
 * `{ ...record, ...changes, status }`: Node 20's V8 can give each object made by a spread followed by
 * more properties a hidden class of its own (a map and its descriptor array, ~350 B allocated
 * straight in old space; eighteenth session, scripts/probe/heap-snapshot-diff.ts), so each record
 * cost twice its size while the store held it and left that much garbage in old space when it was
 * replaced. One literal of every field gives all records one hidden class, which later
 * Object.assigns of fields already present keep.
 */
function recordOf(record: BundleStatsRecord, changes: Partial<BundleStatsRecord>, status: BundleBlockStatus): BundleStatsRecord {
  const pick = <K extends keyof BundleStatsRecord>(field: K): BundleStatsRecord[K] => (Object.hasOwn(changes, field) ? changes[field] : record[field]) as BundleStatsRecord[K]
  return {
    bundleHash: pick('bundleHash'),
    blockNumber: pick('blockNumber'),
    txHashes: pick('txHashes'),
    status,
    reason: pick('reason'),
    includedBlock: pick('includedBlock'),
    signer: pick('signer'),
    replacementUuid: pick('replacementUuid'),
    receivedAt: pick('receivedAt'),
    simulatedAt: pick('simulatedAt'),
    consideredAt: pick('consideredAt'),
    sealedAt: pick('sealedAt'),
    payment: pick('payment'),
    gasUsed: pick('gasUsed'),
  }
}

export class BundleStatsStore {
  /** insertion order = order of the last change: settled records are in settling order */
  private readonly records = new Map<string, BundleStatsRecord>()
  /** the blocks each hash has a record for */
  private readonly byHash = new Map<Hex, Set<bigint>>()

  constructor(
    private readonly maxRecords: number,
    private readonly maxAgeBlocks: number,
  ) {}

  get size(): number {
    return this.records.size
  }

  get(hash: Hex, block: bigint): BundleStatsRecord | undefined {
    return this.records.get(key(hash, block))
  }

  /** A bundle queued for `record.blockNumber`: a new pending record (an existing one for that block is kept). */
  received(record: BundleStatsRecord): void {
    const k = key(record.bundleHash, record.blockNumber)
    const existing = this.records.get(k)
    if (existing !== undefined && existing.status === 'pending') return
    this.put(k, recordOf(record, {}, record.status))
  }

  /**
   * Settles the record of (hash, block). `included` is final: a later settlement of the same
   * pair (a duplicate copy of the bundle that conflicted with itself) never overrides it.
   */
  settle(hash: Hex, block: bigint, status: Exclude<BundleBlockStatus, 'pending'>, fields: Partial<BundleStatsRecord> = {}): void {
    const k = key(hash, block)
    const record = this.records.get(k)
    if (record === undefined || record.status === 'included') return
    const next = recordOf(record, fields, status)
    if (status === 'included') next.reason = undefined
    this.put(k, next)
  }

  /** Adds times or figures to a record without settling it (every field is there already: the record keeps its shape). */
  annotate(hash: Hex, block: bigint, fields: Partial<BundleStatsRecord>): void {
    const record = this.records.get(key(hash, block))
    if (record !== undefined) Object.assign(record, fields)
  }

  /** Releases settled records of blocks more than maxAgeBlocks behind `head`. */
  prune(head: bigint): void {
    const cutoff = head - BigInt(this.maxAgeBlocks)
    for (const [k, r] of this.records) {
      if (r.status === 'pending') continue
      // settled records are (nearly) in block order: stop at the first recent one
      if (r.blockNumber >= cutoff) break
      this.remove(k, r)
    }
  }

  /**
   * devnet_bundleStatus' summary over every block the bundle was sent for: included (in the
   * block it landed in) when one copy landed; else pending (the earliest block waited for) when
   * one copy waits, with why the last settled copy did not land; else dropped, with the reason
   * of the latest block's record.
   */
  summary(hash: Hex): BundleRecord | undefined {
    const blocks = this.byHash.get(hash)
    if (blocks === undefined) return undefined
    let included: BundleStatsRecord | undefined
    let pending: BundleStatsRecord | undefined
    let latest: BundleStatsRecord | undefined
    for (const block of blocks) {
      const r = this.records.get(key(hash, block))
      if (r === undefined) continue
      if (r.status === 'included' && (included === undefined || r.blockNumber > included.blockNumber)) included = r
      else if (r.status === 'pending' && (pending === undefined || r.blockNumber < pending.blockNumber)) pending = r
      else if (r.status !== 'pending' && r.status !== 'included' && (latest === undefined || (r.consideredAt ?? 0) >= (latest.consideredAt ?? 0))) latest = r
    }
    const base = included ?? pending ?? latest
    if (base === undefined) return undefined
    const out: BundleRecord = {
      bundleHash: base.bundleHash,
      txHashes: [...base.txHashes],
      blockNumber: base.includedBlock ?? base.blockNumber,
      status: base.status === 'included' ? 'included' : base.status === 'pending' ? 'pending' : 'dropped',
      outcome: base.status,
    }
    const reason = base.status === 'included' ? undefined : (base.reason ?? latest?.reason)
    if (reason !== undefined) out.reason = reason
    if (base.signer !== undefined) out.signer = base.signer
    if (base.replacementUuid !== undefined) out.replacementUuid = base.replacementUuid
    return out
  }

  private put(k: string, record: BundleStatsRecord): void {
    this.records.delete(k)
    this.records.set(k, record)
    let blocks = this.byHash.get(record.bundleHash)
    if (blocks === undefined) {
      blocks = new Set()
      this.byHash.set(record.bundleHash, blocks)
    }
    blocks.add(record.blockNumber)
    if (this.records.size > this.maxRecords) this.evictOne()
  }

  private evictOne(): void {
    let oldest: [string, BundleStatsRecord] | undefined
    for (const entry of this.records) {
      oldest ??= entry
      if (entry[1].status !== 'pending') {
        this.remove(entry[0], entry[1])
        return
      }
    }
    if (oldest !== undefined) this.remove(oldest[0], oldest[1])
  }

  private remove(k: string, record: BundleStatsRecord): void {
    this.records.delete(k)
    const blocks = this.byHash.get(record.bundleHash)
    blocks?.delete(record.blockNumber)
    if (blocks !== undefined && blocks.size === 0) this.byHash.delete(record.bundleHash)
  }
}
