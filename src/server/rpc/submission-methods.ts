/**
 * eth_sendPrivateRawTransaction, eth_sendBundle and eth_notifyRawTransaction (spec 2.8, 4.2, 7.2):
 * validate the parameter object, persist the submission durably, and only then answer with its
 * hash. Wiring (see src/submission/index.ts):
 *
 * ```ts
 * const submit = submissionMethods({
 *   submissions: dispatcher,                                   // Dispatcher.accept: fsynced, then queued
 *   decode: { chainId: chain.chainId, hardfork: config.hardfork },
 *   currentBlock: () => chain.latest().block.number,
 * })
 * registerJsonRpcRoutes(app, { partners, endpoints: { backrun: {...}, submit } })
 * ```
 *
 * Every malformed input is a -32000 ({@link InvalidParamsError}) whose message names the field and
 * the cause, and whose `data` is `{ field, reason }` ({@link SubmissionParamsErrorReason}) for
 * programs. The first problem found is reported, checks cheapest first.
 *
 * Parameter objects (params[0]); unknown members are refused, `null` counts as absent:
 * - eth_sendPrivateRawTransaction, eth_notifyRawTransaction: `{ tx }`, tx a 0x-prefixed raw
 *   signed transaction (spec 2.8).
 * - eth_sendBundle: `{ txs, blockNumber?, minTimestamp?, maxTimestamp?, revertingTxHashes?,
 *   replacementUuid? }`. Spec 2.8 defines `txs` only; the optional members are the Flashbots
 *   eth_sendBundle options in their Flashbots formats (blockNumber: hex quantity string;
 *   min/maxTimestamp: unix seconds as a JSON number, a hex quantity string is also read;
 *   revertingTxHashes: 32-byte hashes, each of a transaction of this bundle; replacementUuid: a
 *   UUID). They are stored with the bundle and passed on to the relays.
 *
 * The raw bytes are never re-encoded: what is stored and forwarded is the hex the partner sent
 * (lowercased), and the hash returned is keccak256 of those bytes (a bundle: keccak256 of its tx
 * hashes concatenated, spec 4.2). Once a hash is returned the submission is on disk (spec 4.2:
 * "once a hash is returned, delivery is committed"). When it cannot be stored (PersistenceError)
 * or the outbox is full (OutboxFullError) the answer is -32603 saying that nothing was accepted;
 * the partner may retry the same request (acceptance is idempotent by hash).
 */
import type { Hex } from '../../chain/types.ts'
import { positiveInt } from '../../primitives/numbers.ts'
import { OutboxFullError, PersistenceError } from '../../submission/errors.ts'
import type { PersistResult } from '../../submission/outbox-store.ts'
import type { BundleOptions, DecodedFacts, NewSubmission, SubmissionKind } from '../../submission/types.ts'
import {
  DEFAULT_MAX_TX_BYTES,
  decodeSignedTransaction,
  type DecodeTransactionOptions,
  type DecodedTransaction,
} from '../../tx/decode-transaction.ts'
import { bundleHash } from '../../tx/bundle-hash.ts'
import { isTxDecodeError, type TxDecodeErrorReason } from '../../tx/errors.ts'
import { SubmissionRefusedError } from '../errors/request-errors.ts'
import { InvalidParamsError, type JsonRpcCallContext, type MethodTable } from '../jsonrpc/index.ts'

// ---------------------------------------------------------------------------------------------
// Public interface

/** Takes a validated submission durably; {@link import('../../submission/dispatcher.ts').Dispatcher} implements it. */
export interface SubmissionAcceptor {
  /**
   * Resolves once the submission is durable (a duplicate of the same kind and hash resolves with
   * the stored record, `created: false`).
   * @throws PersistenceError | OutboxFullError: nothing was accepted
   */
  accept(input: NewSubmission, decoded?: DecodedFacts): Promise<PersistResult>
}


export interface SubmissionLimits {
  /** Largest raw transaction, bytes (decoded, not hex). Default {@link DEFAULT_MAX_TX_BYTES} (128 KiB, geth's pool limit). */
  maxRawTxBytes: number
  /** Most transactions in one eth_sendBundle. Default 16. */
  maxBundleTxs: number
  /** Most bytes of all raw transactions of one bundle together. Default 300 000 (the Flashbots relay's bundle limit). */
  maxBundleBytes: number
  /** With `currentBlock`: a bundle's blockNumber may be at most this many blocks after the head. Default 100. */
  maxBlocksAhead: number
}

export const DEFAULT_SUBMISSION_LIMITS: Readonly<SubmissionLimits> = Object.freeze({
  maxRawTxBytes: DEFAULT_MAX_TX_BYTES,
  maxBundleTxs: 16,
  maxBundleBytes: 300_000,
  maxBlocksAhead: 100,
})

export interface SubmissionMethodsDeps {
  /** where accepted submissions go: the Dispatcher (persist, fsync, then queue) */
  submissions: SubmissionAcceptor
  /** how raw transactions are checked: the service's chain id and hardfork (or Common); `maxBytes` comes from the limits */
  decode: Omit<DecodeTransactionOptions, 'maxBytes'>
  /** defaults: {@link DEFAULT_SUBMISSION_LIMITS} */
  limits?: Partial<SubmissionLimits>
  /**
   * The newest known block number. When given, a bundle's blockNumber must be after it and at
   * most `maxBlocksAhead` beyond it (a bundle for a mined block can never land; one far ahead
   * would hold an outbox slot for nothing).
   */
  currentBlock?: () => bigint | undefined
  /** clock for refusing a maxTimestamp already past, ms since the epoch. Default Date.now. */
  now?: () => number
}

/** `data.reason` of a -32000 answer. */
export type SubmissionParamsErrorReason =
  | TxDecodeErrorReason
  /** a required member is absent */
  | 'missing'
  /** a member has the wrong JSON type */
  | 'type'
  | 'unknown_field'
  | 'empty_bundle'
  | 'too_many_txs'
  | 'bundle_too_large'
  /** the same transaction twice in one bundle */
  | 'duplicate_tx'
  /** two transactions of one sender whose nonces cannot run in bundle order */
  | 'nonce_conflict'
  /** an optional bundle member is malformed or out of range */
  | 'invalid_option'

export interface SubmissionParamsErrorData {
  /** the member at fault, e.g. `tx`, `txs[2]`, `blockNumber` */
  field: string
  reason: SubmissionParamsErrorReason
}

/** `data.reason` of a -32603 answer: nothing was accepted, retry. */
export type { SubmissionRefusalReason } from '../errors/request-errors.ts'

export interface ParsedRawTxParams {
  tx: DecodedTransaction
}

export interface ParsedBundleParams {
  txs: DecodedTransaction[]
  /** undefined when no option was given */
  options: BundleOptions | undefined
}

// ---------------------------------------------------------------------------------------------

const RAW_TX_FIELDS = new Set(['tx'])
const BUNDLE_FIELDS = new Set(['txs', 'blockNumber', 'minTimestamp', 'maxTimestamp', 'revertingTxHashes', 'replacementUuid'])
/** hex quantity as geth's hexutil reads it: no leading zeros, "0x0" for zero */
const HEX_QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/
const HASH = /^0x[0-9a-fA-F]{64}$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const MAX_UINT64 = (1n << 64n) - 1n

const DECODE_CAUSE: Record<TxDecodeErrorReason, string> = {
  malformed_hex: 'malformed hex',
  empty: 'empty transaction',
  too_large: 'transaction too large',
  rlp: 'RLP decode failure',
  signature: 'invalid signature',
  chain_id: 'wrong chain id',
  unsupported_type: 'unsupported transaction type',
  invalid_fields: 'invalid transaction fields',
}

function invalid(field: string, reason: SubmissionParamsErrorReason, message: string): InvalidParamsError {
  const data: SubmissionParamsErrorData = { field, reason }
  return new InvalidParamsError(message, { data })
}

/** Resolved limits; @throws RangeError for a limit that is not a positive integer (configuration error). */
export function resolveSubmissionLimits(limits: Partial<SubmissionLimits> = {}): SubmissionLimits {
  const out: SubmissionLimits = { ...DEFAULT_SUBMISSION_LIMITS }
  for (const name of Object.keys(DEFAULT_SUBMISSION_LIMITS) as Array<keyof SubmissionLimits>) {
    const value = limits[name]
    if (value === undefined) continue
    out[name] = positiveInt(name, value, 'submission limits')
  }
  return out
}

function checkKnownFields(params: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const name of Object.keys(params)) {
    if (!known.has(name)) {
      const shown = name.length > 40 ? `${name.slice(0, 40)}...` : name
      throw invalid(shown, 'unknown_field', `unknown field: ${shown}`)
    }
  }
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null
}

/** One raw transaction through decodeSignedTransaction; a refusal becomes -32000 naming `field` and the cause. */
function decodeField(value: unknown, field: string, decode: DecodeTransactionOptions): DecodedTransaction {
  if (typeof value !== 'string') throw invalid(field, 'type', `${field} must be a 0x-prefixed hex string of a signed transaction`)
  try {
    return decodeSignedTransaction(value, decode)
  } catch (err) {
    if (isTxDecodeError(err)) throw invalid(field, err.reason, `${field}: ${DECODE_CAUSE[err.reason]}: ${err.message}`)
    throw err
  }
}

/** The `{ tx }` object of eth_sendPrivateRawTransaction and eth_notifyRawTransaction. */
export function parseRawTxParams(params: Record<string, unknown>, decode: DecodeTransactionOptions): ParsedRawTxParams {
  checkKnownFields(params, RAW_TX_FIELDS)
  if (!present(params.tx)) throw invalid('tx', 'missing', 'missing field: tx')
  return { tx: decodeField(params.tx, 'tx', decode) }
}

/**
 * The parameter object of eth_sendBundle. `context.currentBlock` (the head) bounds blockNumber,
 * `context.nowMs` refuses a maxTimestamp already past.
 */
export function parseBundleParams(
  params: Record<string, unknown>,
  decode: DecodeTransactionOptions,
  limits: SubmissionLimits,
  context: { currentBlock?: bigint; nowMs?: number } = {},
): ParsedBundleParams {
  checkKnownFields(params, BUNDLE_FIELDS)
  const raw = params.txs
  if (!present(raw)) throw invalid('txs', 'missing', 'missing field: txs')
  if (!Array.isArray(raw)) throw invalid('txs', 'type', 'txs must be an array of 0x-prefixed hex strings of signed transactions')
  if (raw.length === 0) throw invalid('txs', 'empty_bundle', 'txs is empty: a bundle needs at least one transaction')
  if (raw.length > limits.maxBundleTxs) {
    throw invalid('txs', 'too_many_txs', `txs has ${raw.length} transactions; a bundle may have at most ${limits.maxBundleTxs}`)
  }
  let totalBytes = 0
  raw.forEach((entry: unknown, i) => {
    if (typeof entry !== 'string') throw invalid(`txs[${i}]`, 'type', `txs[${i}] must be a 0x-prefixed hex string of a signed transaction`)
    totalBytes += Math.ceil(Math.max(0, entry.length - 2) / 2)
  })
  if (totalBytes > limits.maxBundleBytes) {
    throw invalid('txs', 'bundle_too_large', `the bundle's transactions are ${totalBytes} bytes together; the limit is ${limits.maxBundleBytes} bytes`)
  }
  // cheap format checks of the options before any signature is recovered
  const options = parseBundleOptionFormats(params, { ...context, maxBlocksAhead: limits.maxBlocksAhead })

  const txs = raw.map((entry: unknown, i) => decodeField(entry, `txs[${i}]`, decode))
  checkBundleConsistency(txs)
  if (options.revertingTxHashes !== undefined) {
    const hashes = new Map(txs.map((t, i) => [t.hash, i]))
    options.revertingTxHashes.forEach((hash, i) => {
      if (!hashes.has(hash)) {
        throw invalid(`revertingTxHashes[${i}]`, 'invalid_option', `revertingTxHashes[${i}] (${hash}) is not the hash of a transaction in txs`)
      }
    })
  }
  return { txs, options: Object.keys(options).length === 0 ? undefined : options }
}

/** No transaction twice; the transactions of one sender with strictly increasing nonces in bundle order. */
function checkBundleConsistency(txs: readonly DecodedTransaction[]): void {
  const byHash = new Map<Hex, number>()
  const lastOfSender = new Map<string, number>()
  txs.forEach((tx, j) => {
    const i = byHash.get(tx.hash)
    if (i !== undefined) throw invalid(`txs[${j}]`, 'duplicate_tx', `txs[${j}] is the same transaction as txs[${i}] (${tx.hash}); a bundle holds each transaction once`)
    byHash.set(tx.hash, j)
    const previous = lastOfSender.get(tx.sender)
    if (previous !== undefined && txs[previous].nonce >= tx.nonce) {
      throw invalid(
        `txs[${j}]`,
        'nonce_conflict',
        `txs[${j}] (sender ${tx.sender}, nonce ${tx.nonce}) cannot follow txs[${previous}] (same sender, nonce ${txs[previous].nonce}): one sender's nonces must increase in bundle order`,
      )
    }
    lastOfSender.set(tx.sender, j)
  })
}

function parseBundleOptionFormats(params: Record<string, unknown>, context: { currentBlock?: bigint; nowMs?: number; maxBlocksAhead: number }): BundleOptions {
  const options: BundleOptions = {}

  if (present(params.blockNumber)) {
    const v = params.blockNumber
    if (typeof v !== 'string' || !HEX_QUANTITY.test(v) || BigInt(v) > MAX_UINT64) {
      throw invalid('blockNumber', 'invalid_option', 'blockNumber must be a hex quantity string (0x-prefixed, no leading zeros, at most 64 bits), e.g. "0x12a05f2"')
    }
    options.blockNumber = BigInt(v)
    checkTargetBlock(options.blockNumber, context.currentBlock, context.maxBlocksAhead)
  }

  for (const name of ['minTimestamp', 'maxTimestamp'] as const) {
    const v = params[name]
    if (!present(v)) continue
    let seconds: bigint | undefined
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) seconds = BigInt(v)
    else if (typeof v === 'string' && HEX_QUANTITY.test(v) && BigInt(v) <= MAX_UINT64) seconds = BigInt(v)
    if (seconds === undefined) throw invalid(name, 'invalid_option', `${name} must be unix seconds: a non-negative integer (or a hex quantity string)`)
    options[name] = seconds
  }
  if (options.minTimestamp !== undefined && options.maxTimestamp !== undefined && options.minTimestamp > options.maxTimestamp) {
    throw invalid('minTimestamp', 'invalid_option', `minTimestamp ${options.minTimestamp} is after maxTimestamp ${options.maxTimestamp}`)
  }
  if (options.maxTimestamp !== undefined && context.nowMs !== undefined && options.maxTimestamp * 1000n < BigInt(Math.floor(context.nowMs))) {
    throw invalid('maxTimestamp', 'invalid_option', `maxTimestamp ${options.maxTimestamp} has already passed; the bundle could never be included`)
  }

  if (present(params.revertingTxHashes)) {
    const v = params.revertingTxHashes
    if (!Array.isArray(v)) throw invalid('revertingTxHashes', 'invalid_option', 'revertingTxHashes must be an array of 32-byte 0x-prefixed hex transaction hashes')
    const seen = new Set<string>()
    const hashes = v.map((h: unknown, i) => {
      if (typeof h !== 'string' || !HASH.test(h)) {
        throw invalid(`revertingTxHashes[${i}]`, 'invalid_option', `revertingTxHashes[${i}] must be a 32-byte 0x-prefixed hex transaction hash`)
      }
      const hash = h.toLowerCase() as Hex
      if (seen.has(hash)) throw invalid(`revertingTxHashes[${i}]`, 'invalid_option', `revertingTxHashes[${i}] repeats ${hash}`)
      seen.add(hash)
      return hash
    })
    if (hashes.length > 0) options.revertingTxHashes = hashes
  }

  if (present(params.replacementUuid)) {
    const v = params.replacementUuid
    if (typeof v !== 'string' || !UUID.test(v)) throw invalid('replacementUuid', 'invalid_option', 'replacementUuid must be a UUID string (8-4-4-4-12 hex digits)')
    options.replacementUuid = v
  }
  return options
}

/** With a known head: the bundle's block must be after it and at most maxBlocksAhead beyond it. */
function checkTargetBlock(blockNumber: bigint, head: bigint | undefined, maxBlocksAhead: number): void {
  if (head === undefined) return
  if (blockNumber <= head) throw invalid('blockNumber', 'invalid_option', `blockNumber ${blockNumber} is not after the current block ${head}; the bundle could never be included`)
  if (blockNumber - head > BigInt(maxBlocksAhead)) {
    throw invalid('blockNumber', 'invalid_option', `blockNumber ${blockNumber} is more than ${maxBlocksAhead} blocks after the current block ${head}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The handlers

const WHAT: Record<SubmissionKind, string> = {
  'private-tx': 'the transaction',
  bundle: 'the bundle',
  notify: 'the notification',
}

/** Persist, mapping "could not store" to -32603 that says nothing was accepted. */
async function acceptOrRefuse(deps: SubmissionMethodsDeps, input: NewSubmission, ctx: JsonRpcCallContext, hash: Hex, decoded: DecodedFacts): Promise<Hex> {
  const what = WHAT[input.kind]
  const consequence = input.kind === 'notify' ? 'it was dropped; your own transaction is unaffected' : 'nothing was accepted and nothing will be forwarded'
  let result: PersistResult
  try {
    result = await deps.submissions.accept(input, decoded)
  } catch (err) {
    // answered -32603 with data { reason } (../errors/error-answers.ts)
    if (err instanceof OutboxFullError) {
      ctx.log.warn({ kind: input.kind, hash, maxOpen: err.maxOpen }, 'submission refused: the outbox is full')
      throw new SubmissionRefusedError('outbox_full', `internal error: the service is at capacity and ${what} was not stored; ${consequence}. Retry shortly.`, { cause: err })
    }
    if (err instanceof PersistenceError) {
      ctx.log.error({ err, kind: input.kind, hash }, 'submission refused: the outbox could not store it')
      throw new SubmissionRefusedError('persistence', `internal error: ${what} could not be stored; ${consequence}. Retry the same request.`, { cause: err })
    }
    throw err // logged by the JSON-RPC layer, answered as -32603 "internal error"
  }
  ctx.log.info({ kind: input.kind, hash: result.record.hash, created: result.created }, 'submission accepted')
  return result.record.hash
}

export function submissionMethods(deps: SubmissionMethodsDeps): MethodTable {
  const limits = resolveSubmissionLimits(deps.limits)
  // an acknowledged transaction is not decoded again on this thread: not remembered (see DecodeTransactionOptions.remember)
  const decode: DecodeTransactionOptions = { ...deps.decode, maxBytes: limits.maxRawTxBytes, remember: false }
  const now = deps.now ?? Date.now

  const single = (kind: 'private-tx' | 'notify') => async (params: Record<string, unknown>, ctx: JsonRpcCallContext): Promise<Hex> => {
    const { tx } = parseRawTxParams(params, decode)
    return acceptOrRefuse(deps, { kind, partnerId: ctx.partnerId, rawTx: tx.rawHex }, ctx, tx.hash, { tipCap: tx.gasTipCap })
  }

  return {
    eth_sendPrivateRawTransaction: single('private-tx'),
    eth_notifyRawTransaction: single('notify'),
    eth_sendBundle: async (params, ctx): Promise<Hex> => {
      const head = deps.currentBlock?.()
      const { txs, options } = parseBundleParams(params, decode, limits, { nowMs: now(), ...(head === undefined ? {} : { currentBlock: head }) })
      const input: NewSubmission = { kind: 'bundle', partnerId: ctx.partnerId, rawTxs: txs.map((t) => t.rawHex), ...(options === undefined ? {} : { options }) }
      const tipCap = txs.reduce((highest, t) => (t.gasTipCap > highest ? t.gasTipCap : highest), 0n)
      return acceptOrRefuse(deps, input, ctx, bundleHash(txs.map((t) => t.hash)), { tipCap })
    },
  }
}
