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
 * check suffices. Each request has a timeout; transient failures (timeout, network, HTTP
 * 408/425/429/5xx, JSON-RPC errors other than "invalid request / method / params") are retried a
 * bounded number of times with exponential backoff and full jitter. Then it throws an
 * {@link InclusionCheckError}; the Dispatcher counts that as pending and asks again at the next head.
 */
import { decodeBackrunEvents } from '../backrun/backrun-calldata.ts'
import type { Hex } from '../chain/types.ts'
import { fullJitterDelay, sleep, type BackoffPolicy } from './backoff.ts'
import type { InclusionChecker, InclusionQuery, InclusionStatus } from './dispatcher.ts'

export interface RpcInclusionCheckerOptions {
  /** http(s) URL of the JSON-RPC endpoint */
  url: string
  /** per HTTP attempt, ms. Default 2 000. */
  timeoutMs?: number
  /** attempts per receipt request, the first included. Default 3. */
  maxAttempts?: number
  /** Default { baseMs: 50, maxMs: 1 000 }. */
  backoff?: BackoffPolicy
  /** Injected for tests. Default globalThis.fetch. */
  fetch?: typeof fetch
  /** Jitter source. Default Math.random. */
  random?: () => number
}

/**
 * - `timeout`: an attempt exceeded timeoutMs
 * - `network`: connection refused / reset, DNS failure
 * - `http`: non-2xx status
 * - `rpc`: the node answered with a JSON-RPC error object
 * - `malformed`: the answer is not a JSON-RPC response with a receipt or null
 */
export type InclusionCheckErrorReason = 'timeout' | 'network' | 'http' | 'rpc' | 'malformed'

export class InclusionCheckError extends Error {
  override readonly name = 'InclusionCheckError'

  constructor(
    message: string,
    readonly reason: InclusionCheckErrorReason,
    /** HTTP requests made before giving up */
    readonly attempts: number,
    readonly details: { status?: number; rpcCode?: number; retryable?: boolean } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
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
const RETRYABLE_HTTP = new Set([408, 425, 429])
/** request-shape errors: asking again gives the same answer */
const FINAL_RPC_CODES = new Set([-32700, -32600, -32601, -32602])
const HASH = /^0x[0-9a-fA-F]{64}$/
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/
const MAX_ERROR_TEXT = 200

export class RpcInclusionChecker implements InclusionChecker {
  /** may carry an API key (upstream URLs often do): never put in messages or logs */
  private readonly url: string
  private readonly timeoutMs: number
  private readonly maxAttempts: number
  private readonly backoff: BackoffPolicy
  private readonly fetchImpl: typeof fetch
  private readonly random: () => number
  private nextId = 1

  /** @throws TypeError for a URL that is not http(s), RangeError for non-positive limits */
  constructor(options: RpcInclusionCheckerOptions) {
    let parsed: URL
    try {
      parsed = new URL(options.url)
    } catch {
      throw new TypeError('RpcInclusionChecker: url must be an absolute http(s) URL')
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError('RpcInclusionChecker: url must be an http(s) URL')
    this.url = options.url
    this.timeoutMs = positiveInt('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    this.maxAttempts = positiveInt('maxAttempts', options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)
    this.backoff = options.backoff ?? DEFAULT_BACKOFF
    this.fetchImpl = options.fetch ?? globalThis.fetch
    this.random = options.random ?? Math.random
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

  private async withRetries<T>(method: string, params: unknown[], parse: (result: unknown, attempt: number) => T): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return parse(await this.request(method, params, attempt), attempt)
      } catch (error) {
        const failure = error instanceof InclusionCheckError ? error : new InclusionCheckError(`${method}: ${errorText(error)}`, 'network', attempt, { retryable: true }, { cause: error })
        if (failure.details.retryable !== true || attempt >= this.maxAttempts) throw failure
        await sleep(fullJitterDelay(attempt, this.backoff, this.random))
      }
    }
  }

  /** One JSON-RPC request; its `result` (null included). @throws InclusionCheckError */
  private async request(method: string, params: unknown[], attempt: number): Promise<unknown> {
    const id = this.nextId++
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params })
    let response: Response
    let text: string
    try {
      response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      text = await response.text()
    } catch (error) {
      if (isTimeout(error)) throw new InclusionCheckError(`${method}: no answer within ${this.timeoutMs} ms`, 'timeout', attempt, { retryable: true }, { cause: error })
      throw new InclusionCheckError(`${method}: ${errorText(error)}`, 'network', attempt, { retryable: true }, { cause: error })
    }
    if (!response.ok) {
      const retryable = RETRYABLE_HTTP.has(response.status) || response.status >= 500
      throw new InclusionCheckError(`${method}: HTTP ${response.status} ${clip(text)}`, 'http', attempt, { status: response.status, retryable })
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (cause) {
      throw new InclusionCheckError(`${method}: the answer is not JSON: ${clip(text)}`, 'malformed', attempt, { retryable: true }, { cause })
    }
    if (!isObject(json) || json.jsonrpc !== '2.0' || json.id !== id) {
      throw new InclusionCheckError(`${method}: the answer is not a JSON-RPC 2.0 response to this request`, 'malformed', attempt, { retryable: true })
    }
    if (json.error !== undefined) {
      const err = isObject(json.error) ? json.error : {}
      const code = typeof err.code === 'number' ? err.code : undefined
      const message = typeof err.message === 'string' ? err.message : 'no message'
      throw new InclusionCheckError(`${method}: JSON-RPC error ${code ?? '?'}: ${clip(message)}`, 'rpc', attempt, {
        ...(code === undefined ? {} : { rpcCode: code }),
        retryable: code === undefined || !FINAL_RPC_CODES.has(code),
      })
    }
    if (!('result' in json)) throw new InclusionCheckError(`${method}: the answer has neither result nor error`, 'malformed', attempt, { retryable: true })
    return json.result
  }
}

function parseBlockTransactions(value: unknown, number: bigint, attempt: number): readonly Hex[] | null {
  if (value === null) return null
  const bad = (what: string): InclusionCheckError => new InclusionCheckError(`eth_getBlockByNumber: malformed block: ${what}`, 'malformed', attempt, { retryable: false })
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
  const bad = (what: string): InclusionCheckError => new InclusionCheckError(`eth_getTransactionReceipt: malformed receipt: ${what}`, 'malformed', attempt, { retryable: false })
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

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || (error.name === 'AbortError' && /timeout/i.test(error.message)))
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ''
    return `${error.message}${cause}`
  }
  return String(error)
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > MAX_ERROR_TEXT ? `${flat.slice(0, MAX_ERROR_TEXT)}…` : flat
}

function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`RpcInclusionChecker: ${name} must be a positive integer, got ${value}`)
  return value
}
