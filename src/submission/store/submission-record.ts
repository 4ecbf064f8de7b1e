/**
 * The record of a new submission, as both stores write it: raw transactions lowercased, their
 * keccak hashes, the identity (`<kind>:<hash>`, the bundle hash for a bundle) and the bundle
 * options checked. The same bytes always give the same id, which is what de-duplication keys on.
 */
import type { Hex } from '../../chain/types.ts'
import { keccak256 } from '../../crypto/keccak.ts'
import { bundleHash } from '../../tx/bundle-hash.ts'
import { submissionId, type BundleOptions, type NewSubmission, type SubmissionRecord } from '../types.ts'

const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * @throws TypeError for input that is not hex bytes / an empty bundle / a bad option (the caller
 *   validates with decodeSignedTransaction first, so this is a programming error)
 */
export function buildRecord(input: NewSubmission, receivedAt: number): SubmissionRecord {
  if (input === null || typeof input !== 'object') throw new TypeError('persist: submission must be an object')
  if (typeof input.partnerId !== 'string' || input.partnerId === '') throw new TypeError('persist: partnerId must be a non-empty string')
  switch (input.kind) {
    case 'private-tx':
    case 'notify': {
      const raw = normalizeRaw(input.rawTx, 'rawTx')
      const txHash = keccakHex(raw)
      return { id: submissionId(input.kind, txHash), kind: input.kind, hash: txHash, partnerId: input.partnerId, receivedAt, rawTxs: [raw], txHashes: [txHash] }
    }
    case 'bundle': {
      if (!Array.isArray(input.rawTxs) || input.rawTxs.length === 0) throw new TypeError('persist: a bundle needs at least one raw transaction')
      const rawTxs = input.rawTxs.map((raw, i) => normalizeRaw(raw, `rawTxs[${i}]`))
      const txHashes = rawTxs.map(keccakHex)
      const hash = bundleHash(txHashes)
      const record: SubmissionRecord = { id: submissionId('bundle', hash), kind: 'bundle', hash, partnerId: input.partnerId, receivedAt, rawTxs, txHashes }
      const options = normalizeBundleOptions(input.options)
      if (options !== undefined) record.bundleOptions = options
      return record
    }
    default:
      throw new TypeError(`persist: unknown submission kind ${JSON.stringify((input as { kind?: unknown }).kind)}`)
  }
}

function normalizeRaw(raw: unknown, field: string): Hex {
  if (typeof raw !== 'string' || !HEX_BYTES.test(raw)) throw new TypeError(`persist: ${field} must be 0x-prefixed hex bytes`)
  return raw.toLowerCase() as Hex
}

function normalizeBundleOptions(options: BundleOptions | undefined): BundleOptions | undefined {
  if (options === undefined) return undefined
  const out: BundleOptions = {}
  for (const field of ['blockNumber', 'minTimestamp', 'maxTimestamp'] as const) {
    const value = options[field]
    if (value === undefined) continue
    if (typeof value !== 'bigint' || value < 0n) throw new TypeError(`persist: bundle option ${field} must be a non-negative bigint`)
    out[field] = value
  }
  if (options.revertingTxHashes !== undefined) {
    if (!Array.isArray(options.revertingTxHashes) || options.revertingTxHashes.some((h) => typeof h !== 'string' || !HASH.test(h))) {
      throw new TypeError('persist: bundle option revertingTxHashes must be 32-byte hex hashes')
    }
    out.revertingTxHashes = options.revertingTxHashes.map((h) => h.toLowerCase() as Hex)
  }
  if (options.replacementUuid !== undefined) {
    if (typeof options.replacementUuid !== 'string' || options.replacementUuid === '') throw new TypeError('persist: bundle option replacementUuid must be a non-empty string')
    out.replacementUuid = options.replacementUuid
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/** keccak256 of the bytes of `raw`: native (an acknowledgement hashes its transaction here) */
function keccakHex(raw: Hex): Hex {
  return `0x${Buffer.from(keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`
}
