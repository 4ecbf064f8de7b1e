/**
 * The Dispatcher's {@link InclusionChecker} over a JSON-RPC node: `eth_getTransactionReceipt` for
 * the submission's user tx hashes, and for the backrun's once they are on chain. In fork mode the
 * URL is the upstream node; in devnet mode the local builder's endpoint, which answers
 * eth_getTransactionReceipt with `{ transactionHash, blockNumber, status, gasUsed }` or null.
 *
 * - every user tx has a receipt: `included` in the block of the last one (a bundle lands in one
 *   block), `backrunIncluded` when the backrun has a receipt in that same block
 * - otherwise: `pending` (a bundle whose first txs landed on their own stays pending until it
 *   expires: whether the rest can still land is not knowable from receipts alone)
 *
 * blockTransactions() reads a block's tx hashes (eth_getBlockByNumber without bodies), so the
 * dispatcher can index each block once and ask for receipts only where it found a hash.
 *
 * The last user tx is asked first: while it has no receipt (the usual answer) one request per
 * check suffices. Requests go through the service's JSON-RPC transport (src/transport): each
 * attempt has a timeout; transient failures (timeout, network, HTTP 408/425/429/5xx, answers that
 * are not a JSON-RPC response to the request, JSON-RPC errors other than "parse error / invalid
 * request / method / params") are retried a bounded number of times with exponential backoff and
 * full jitter. Then it throws an {@link InclusionCheckError}; the Dispatcher counts that as pending
 * and asks again at the next head. A receipt or block that is malformed is not asked again.
 */
import { decodeBackrunEvents } from '../backrun/backrun-calldata.ts'
import type { Hex } from '../chain/types.ts'
import { errorText } from '../primitives/error-text.ts'
import { positiveInt } from '../primitives/numbers.ts'
import type { BackoffPolicy } from '../transport/backoff.ts'
import { REQUEST_ERROR_CODES } from '../transport/json-rpc-codes.ts'
import { JsonRpcTransport, isTransientFailure, type AttemptFailure, type FetchLike } from '../transport/json-rpc-transport.ts'
import { TransportError, type TransportErrorReason } from '../transport/transport-error.ts'
import type { InclusionChecker, InclusionQuery, InclusionStatus } from './dispatcher.ts'
import { keepAliveHttp } from './relay-http.ts'

export interface RpcInclusionCheckerOptions {
  /** http(s) URL of the JSON-RPC endpoint */
  url: string
  /** per HTTP attempt, ms. Default 2 000. */
  timeoutMs?: number
  /** attempts per receipt request, the first included. Default 3. */
  maxAttempts?: number
  /** Default { baseMs: 50, maxMs: 1 000 }. */
  backoff?: BackoffPolicy
  /** the largest answer read, bytes; a larger one fails its attempt as a network error. Default 8 MiB */
  maxAnswerBytes?: number
  /** Injected for tests. Default: node:http over a keep-alive agent (relay-http.ts), at most 16 connections */
  fetch?: FetchLike
  /** Jitter source. Default Math.random. */
  random?: () => number
}

/**
 * The transport's reasons (see TransportErrorReason); `malformed` also when the answer is a
 * JSON-RPC response but not a receipt (or block) or null.
 */
export type InclusionCheckErrorReason = TransportErrorReason

/** A {@link TransportError} of the inclusion checker, its `name` telling the two apart in logs. */
export class InclusionCheckError extends TransportError {
  override readonly name: string = 'InclusionCheckError'
}

/** The receipt fields used; nodes send more. */
export interface ReceiptInfo {
  transactionHash: Hex
  blockNumber: bigint
  /** 1 success, 0 reverted; undefined when the node omits it (pre-Byzantium) */
  status?: 0 | 1
  /** the gross profit of the BackrunExecutor's Backrun event in its logs, when there is one */
  backrunGrossProfit?: bigint
}

const DEFAULT_TIMEOUT_MS = 2_000
const DEFAULT_MAX_ATTEMPTS = 3
const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 50, maxMs: 1_000 }
const DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024
/** connections kept to the node; more requests at once wait for one (their timeout runs meanwhile) */
const MAX_SOCKETS = 16

/**
 * The receipt and block requests' HTTP client: node:http over a keep-alive agent rather than
 * globalThis.fetch. Measured per receipt (scripts/probe/receipt-fetch-cost.ts, sixteenth
 * session, 24 bursts of 300, 16 at once): fetch 90.2 KB of garbage and 1,297 CPU us at the
 * median, node:http with keep-alive 38.3 KB and 534 us, on the main thread that also
 * acknowledges; under bench:soak the fetch path was the largest source of what the main isolate
 * promotes and drops at 10 requests/s (h16-heap). Made at the first request, so the transport has
 * checked the URL first (and never quotes it, as it may carry an API key).
 */
function lazyKeepAliveHttp(url: string, maxAnswerBytes: number): FetchLike {
  let client: FetchLike | undefined
  return (target, init) => {
    client ??= keepAliveHttp(url, { maxSockets: MAX_SOCKETS, maxAnswerBytes }).fetch
    return client(target, init)
  }
}
const HASH = /^0x[0-9a-fA-F]{64}$/
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/

/**
 * What is asked again: what the transport retries by default, an answer that is not a JSON-RPC
 * response to the request (a proxy's hiccup), and every JSON-RPC error but the request-shape ones
 * (a node still indexing answers -32000 and will answer later).
 */
function retryable(failure: AttemptFailure): boolean {
  if (failure.reason === 'malformed') return true
  if (failure.reason === 'rpc') return failure.rpcCode === undefined || !REQUEST_ERROR_CODES.has(failure.rpcCode)
  return isTransientFailure(failure)
}

export class RpcInclusionChecker implements InclusionChecker {
  /** the URL may carry an API key (upstream URLs often do): the transport never puts it in messages */
  private readonly transport: JsonRpcTransport

  /** @throws TypeError for a URL that is not http(s) (from the transport, which does not quote it), RangeError for non-positive limits */
  constructor(options: RpcInclusionCheckerOptions) {
    this.transport = new JsonRpcTransport({
      url: options.url,
      timeoutMs: positiveInt('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'RpcInclusionChecker'),
      maxAttempts: positiveInt('maxAttempts', options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, 'RpcInclusionChecker'),
      backoff: options.backoff ?? DEFAULT_BACKOFF,
      retryable,
      fetch: options.fetch ?? lazyKeepAliveHttp(options.url, positiveInt('maxAnswerBytes', options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, 'RpcInclusionChecker')),
      ...(options.random === undefined ? {} : { random: options.random }),
    })
  }

  /** @throws InclusionCheckError after the retries of one receipt request */
  async check(query: InclusionQuery): Promise<InclusionStatus> {
    const hashes = query.txHashes
    if (hashes.length === 0) return { status: 'pending' }
    const last = await this.receipt(hashes[hashes.length - 1])
    if (last === null) return { status: 'pending' }
    const others = await Promise.all(hashes.slice(0, -1).map((h) => this.receipt(h)))
    if (others.some((r) => r === null)) return { status: 'pending' }
    const blockNumber = last.blockNumber
    if (query.backrunTxHash === undefined) return { status: 'included', blockNumber }
    const backrun = await this.receipt(query.backrunTxHash)
    // a backrun that landed reverted (where a relay let it) did not run
    const backrunIncluded = backrun !== null && backrun.blockNumber === blockNumber && backrun.status !== 0
    if (!backrunIncluded) return { status: 'included', blockNumber, backrunIncluded }
    return {
      status: 'included',
      blockNumber,
      backrunIncluded,
      backrunTxHash: query.backrunTxHash,
      ...(backrun.backrunGrossProfit === undefined ? {} : { backrunGrossProfit: backrun.backrunGrossProfit }),
    }
  }

  /**
   * The receipt of `hash`, or null when the node has none (not mined, or mined in a block the
   * node has not seen). A receipt without a block number (a pending receipt) counts as none.
   * @throws InclusionCheckError
   */
  async receipt(hash: Hex): Promise<ReceiptInfo | null> {
    if (!HASH.test(hash)) throw new TypeError(`RpcInclusionChecker.receipt: ${JSON.stringify(hash)} is not a 32-byte hash`)
    return this.withRetries('eth_getTransactionReceipt', [hash], (result, attempt) => parseReceipt(result, hash, attempt))
  }

  /**
   * The transaction hashes of block `number` (eth_getBlockByNumber without bodies), or null when
   * the node does not have that block. Lets the dispatcher index each block once instead of asking
   * for every open submission's receipt (see BlockTxIndex).
   * @throws InclusionCheckError
   */
  async blockTransactions(number: bigint): Promise<readonly Hex[] | null> {
    if (number < 0n) throw new RangeError(`RpcInclusionChecker.blockTransactions: ${number} is not a block number`)
    return this.withRetries('eth_getBlockByNumber', [`0x${number.toString(16)}`, false], (result, attempt) => parseBlockTransactions(result, number, attempt))
  }

  /** One call through the transport, its result parsed; every failure an InclusionCheckError. */
  private async withRetries<T>(method: string, params: unknown[], parse: (result: unknown, attempt: number) => T): Promise<T> {
    let attempts = 0
    let result: unknown
    try {
      result = await this.transport.request(method, params, { onAttempt: ({ attempt }) => (attempts = attempt) })
    } catch (error) {
      if (error instanceof TransportError) throw InclusionCheckError.from(error)
      throw new InclusionCheckError(errorText(error), { reason: 'network', retryable: false, attempts, method, cause: error })
    }
    try {
      return parse(result, attempts)
    } catch (error) {
      if (error instanceof InclusionCheckError) throw error
      throw new InclusionCheckError(`the answer could not be read: ${errorText(error)}`, { reason: 'malformed', retryable: false, attempts, method, cause: error })
    }
  }
}

function parseBlockTransactions(value: unknown, number: bigint, attempt: number): readonly Hex[] | null {
  if (value === null) return null
  const bad = (what: string): InclusionCheckError => new InclusionCheckError(`malformed block: ${what}`, { reason: 'malformed', retryable: false, attempts: attempt, method: 'eth_getBlockByNumber' })
  if (!isObject(value)) throw bad('not an object')
  if (typeof value.number !== 'string' || !QUANTITY.test(value.number) || BigInt(value.number) !== number) throw bad(`it is not block ${number}`)
  if (!Array.isArray(value.transactions)) throw bad('transactions is not a list')
  // without bodies a node answers hashes; a node that sends bodies anyway has them under .hash
  return value.transactions.map((tx: unknown) => {
    const hash = isObject(tx) ? tx.hash : tx
    if (typeof hash !== 'string' || !HASH.test(hash)) throw bad('a transaction hash is not a 32-byte hash')
    return hash.toLowerCase() as Hex
  })
}

function parseReceipt(value: unknown, hash: Hex, attempt: number): ReceiptInfo | null {
  if (value === null) return null
  const bad = (what: string): InclusionCheckError => new InclusionCheckError(`malformed receipt: ${what}`, { reason: 'malformed', retryable: false, attempts: attempt, method: 'eth_getTransactionReceipt' })
  if (!isObject(value)) throw bad('not an object')
  const txHash = value.transactionHash
  if (typeof txHash !== 'string' || !HASH.test(txHash)) throw bad('transactionHash is not a 32-byte hash')
  if (txHash.toLowerCase() !== hash.toLowerCase()) throw bad(`it is for ${txHash}, not ${hash}`)
  // some nodes answer a receipt of a pending tx with blockNumber null
  if (value.blockNumber === null || value.blockNumber === undefined) return null
  if (typeof value.blockNumber !== 'string' || !QUANTITY.test(value.blockNumber)) throw bad('blockNumber is not a hex quantity')
  const receipt: ReceiptInfo = { transactionHash: txHash.toLowerCase() as Hex, blockNumber: BigInt(value.blockNumber) }
  if (Array.isArray(value.logs)) {
    const logs = value.logs.filter(
      (l): l is { address: string; topics: Hex[]; data: Hex } =>
        isObject(l) && typeof l.address === 'string' && Array.isArray(l.topics) && l.topics.every((t) => typeof t === 'string') && typeof l.data === 'string',
    )
    // the profit our backrun realized on chain, as its Backrun event says
    const [event] = decodeBackrunEvents(logs)
    if (event !== undefined) receipt.backrunGrossProfit = event.grossProfit
  }
  if (value.status === '0x1' || value.status === '0x0' || value.status === '0x01' || value.status === '0x00') receipt.status = BigInt(value.status) === 1n ? 1 : 0
  return receipt
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
