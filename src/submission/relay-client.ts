/**
 * One relay (or builder) endpoint that takes bundles over JSON-RPC, authenticated the Flashbots
 * way: `X-Flashbots-Signature: <searcher address>:<signature>`, where the signature is the
 * EIP-191 personal_sign, by the searcher key, of the hex string of keccak256(request body).
 *
 * Raw transactions are placed in the body as the exact hex received from the partner (the store
 * keeps the bytes, lowercased); nothing is decoded or re-encoded on the way.
 *
 * Hash references: a notify submission's bundle names the partner's pending tx by its hash, which
 * only some relays accept, each in its own dialect:
 * - `eth_sendBundle` (MEV Blocker, Merkle): `txs[0]` is the 32-byte hash of the target tx
 * - `mev_sendBundle` (Flashbots MEV-Share): `body: [{ hash }, { tx, canRevert: false }]`
 * A relay configured without `hashReference` never receives such a bundle.
 *
 * Requests go through the service's JSON-RPC transport (src/transport), which signs each body it
 * sends, over this relay's own keep-alive connections (relay-http.ts: node:http(s), not fetch). Every HTTP attempt has a timeout. Failed attempts are retried (bounded) with exponential
 * backoff and full jitter when the failure may be transient: timeout, network error, HTTP
 * 408/425/429/5xx, JSON-RPC -32603 / -32005 (internal error, limit exceeded). A relay's retries
 * never hold up another relay: the dispatcher runs one send per relay in parallel.
 *
 * What it keeps of its own over the transport's: RelayError (the transport's failure, named for
 * the relay, its cause the TransportError), the per-relay limit on requests in flight, its stats
 * counters, and answers matched without insisting on the id (it never did).
 */
import type { Hex } from '../chain/types.ts'
import { keccak256 } from '../crypto/keccak.ts'
import { errorText } from '../primitives/error-text.ts'
import type { BackoffPolicy } from '../transport/backoff.ts'
import { JsonRpcCode } from '../transport/json-rpc-codes.ts'
import { JsonRpcTransport, isTransientFailure, type AttemptFailure, type FetchLike, type JsonRpcParams } from '../transport/json-rpc-transport.ts'
import { TransportError } from '../transport/transport-error.ts'
import { RelayError, type RelayErrorReason } from './errors.ts'
import { Limiter } from './limiter.ts'
import { keepAliveHttp } from './relay-http.ts'
import type { SearcherKey } from './searcher-key.ts'

export const FLASHBOTS_SIGNATURE_HEADER = 'X-Flashbots-Signature'

/** How a relay accepts a bundle that references a pending tx by hash (see the module comment). */
export type HashReferenceStyle = 'eth_sendBundle' | 'mev_sendBundle'

export interface RelayEndpoint {
  /** short unique name used in records and logs (e.g. 'flashbots') */
  name: string
  /** http(s) URL of the relay's JSON-RPC endpoint */
  url: string
  /** undefined: this relay is never sent bundles with hash references (notify backruns) */
  hashReference?: HashReferenceStyle
  /** per HTTP attempt, ms. Default 2 000. */
  timeoutMs?: number
  /** HTTP attempts per send, first one included. Default 4. */
  maxAttempts?: number
  /** Default { baseMs: 100, maxMs: 2 000 }. */
  backoff?: BackoffPolicy
  /** HTTP requests in flight to this relay at most (the rest wait their turn), and its connections at most. Default 32. */
  maxConcurrentRequests?: number
  /** An answer larger than this many bytes fails its attempt (a network error). Default 1 MiB. */
  maxAnswerBytes?: number
  /**
   * The relay answers flashbots_getBundleStatsV2 (Flashbots' relay, our devnet builder): after each
   * block the dispatcher asks it what became of each bundle and records it (included, outbid,
   * invalid and why) in the submission's lifecycle. Default false.
   */
  bundleStats?: boolean
}

/** What a relay says became of one bundle for one block. */
export interface RelayBundleStats {
  /** included | outbid | invalid | expired | pending | unknown (our builder); Flashbots' relay: derived from isSimulated / sealed */
  status: string
  reason?: string
}

/** One bundle entry: a raw signed tx, or (first entry only, hash-accepting relays only) the hash of a pending tx. */
export type RelayBundleEntry = { tx: Hex } | { hash: Hex }

export interface RelayBundle {
  entries: readonly RelayBundleEntry[]
  /** the block the bundle is valid for */
  blockNumber: bigint
  /** unix seconds */
  minTimestamp?: bigint
  /** unix seconds */
  maxTimestamp?: bigint
  revertingTxHashes?: readonly Hex[]
  replacementUuid?: string
}

export interface RelaySendResult {
  relay: string
  /** HTTP attempts made, the successful one included */
  attempts: number
  /** `result.bundleHash` of the relay's answer, when it gave one */
  relayBundleHash?: string
}

export interface RelaySendOptions {
  /** aborts the current attempt and any further retries (RelayError reason 'aborted') */
  signal?: AbortSignal
  /** called after each failed attempt that will be retried */
  onRetry?: (info: { attempt: number; error: RelayError; delayMs: number }) => void
}

/** What the dispatcher needs from a relay; {@link RelayClient} is the HTTP implementation. */
export interface BundleRelay {
  readonly name: string
  /** whether bundles that reference a pending tx by hash may be sent here */
  readonly acceptsHashReference: boolean
  /** @throws RelayError */
  sendBundle(bundle: RelayBundle, options?: RelaySendOptions): Promise<RelaySendResult>
  /** Present when the relay tells what became of a bundle (see RelayEndpoint.bundleStats). @throws RelayError */
  bundleStats?(bundleHash: Hex, block: bigint, options?: RelaySendOptions): Promise<RelayBundleStats>
}

/** What a relay client counted since it was made (for metrics). */
export interface RelayClientStats {
  /** JSON-RPC requests to the relay: every attempt of bundle sends and bundle-stats questions, retries and attempts cancelled before they were sent included */
  requests: number
  /** of those, the attempts that failed, by reason (`aborted`: cancelled, e.g. because the block was built) */
  failures: Record<RelayErrorReason, number>
  /** bundle sends by final outcome: accepted by the relay, or failed (after retries) for this reason */
  bundles: { accepted: number; failed: Record<RelayErrorReason, number> }
}

function noFailures(): Record<RelayErrorReason, number> {
  return { timeout: 0, network: 0, http: 0, rpc: 0, malformed: 0, aborted: 0, unsupported: 0 }
}

export interface RelayClientOptions {
  /** Injected for tests. Default: node:http(s) over a keep-alive agent of this relay's own (relay-http.ts). */
  fetch?: FetchLike
  /** Jitter source. Default Math.random. */
  random?: () => number
}

const DEFAULT_TIMEOUT_MS = 2_000
const DEFAULT_MAX_ATTEMPTS = 4
const DEFAULT_MAX_CONCURRENT_REQUESTS = 32
const DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024
const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 2_000 }

/** What is sent again: what the transport retries by default, and -32603 (a relay's internal error is often its load). */
function retryable(failure: AttemptFailure): boolean {
  return isTransientFailure(failure) || (failure.reason === 'rpc' && failure.rpcCode === JsonRpcCode.internalError)
}

export class RelayClient implements BundleRelay {
  readonly name: string
  readonly url: string
  readonly hashReference: HashReferenceStyle | undefined
  readonly acceptsHashReference: boolean
  private readonly signer: SearcherKey
  private readonly transport: JsonRpcTransport
  private readonly counters = { requests: 0, failures: noFailures(), accepted: 0, sendFailures: noFailures() }

  /** @throws TypeError for an invalid endpoint (bad URL, empty name, non-positive limits) */
  constructor(endpoint: RelayEndpoint, signer: SearcherKey, options: RelayClientOptions = {}) {
    const problems = relayEndpointProblems(endpoint)
    if (problems.length > 0) throw new TypeError(`relay ${endpoint.name ?? '?'}: ${problems.join('; ')}`)
    this.name = endpoint.name
    this.url = endpoint.url
    this.hashReference = endpoint.hashReference
    this.acceptsHashReference = endpoint.hashReference !== undefined
    this.signer = signer
    const maxConcurrentRequests = endpoint.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS
    // the relay's own keep-alive connections: a fraction of fetch's CPU per request (relay-http.ts)
    const fetch = options.fetch ?? keepAliveHttp(endpoint.url, { maxSockets: maxConcurrentRequests, maxAnswerBytes: endpoint.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES }).fetch
    this.transport = new JsonRpcTransport({
      url: endpoint.url,
      timeoutMs: endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxAttempts: endpoint.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      backoff: endpoint.backoff ?? DEFAULT_BACKOFF,
      retryable,
      // requests in flight to this relay at most: hundreds of sends at a head would each open a connection
      limiter: new Limiter(maxConcurrentRequests),
      strictIds: false,
      fetch,
      ...(options.random === undefined ? {} : { random: options.random }),
    })
    if (endpoint.bundleStats !== true) this.bundleStats = undefined
  }

  /**
   * flashbots_getBundleStatsV2 for one (bundle, block). Our devnet builder answers `status` and
   * `reason`; a relay answering only Flashbots' fields gets `included` when sealed by a builder,
   * `pending` when simulated, else `unknown`. Retried like a send.
   * @throws RelayError
   */
  bundleStats?: (bundleHash: Hex, block: bigint, options?: RelaySendOptions) => Promise<RelayBundleStats> = async (bundleHash, block, options = {}) => {
    const result = await this.withRetries('flashbots_getBundleStatsV2', [{ bundleHash, blockNumber: `0x${block.toString(16)}` }], options)
    return parseBundleStats(result)
  }

  /** Requests, failures and bundle outcomes since this client was made (copies). */
  stats(): RelayClientStats {
    const c = this.counters
    return { requests: c.requests, failures: { ...c.failures }, bundles: { accepted: c.accepted, failed: { ...c.sendFailures } } }
  }

  /**
   * Send `bundle`, retrying transient failures.
   * @throws RelayError after the last attempt, at the first non-retryable failure, or on abort
   */
  async sendBundle(bundle: RelayBundle, options: RelaySendOptions = {}): Promise<RelaySendResult> {
    let sent: { result: unknown; attempts: number }
    try {
      const { method, params } = sendBundleCall(bundle, this.hashReference, this.name)
      sent = await this.withRetries(method, params, options)
    } catch (error) {
      if (error instanceof RelayError) this.counters.sendFailures[error.reason]++
      throw error
    }
    this.counters.accepted++
    const { result, attempts } = sent
    const relayBundleHash = result !== null && typeof result === 'object' && typeof (result as { bundleHash?: unknown }).bundleHash === 'string' ? (result as { bundleHash: string }).bundleHash : undefined
    return relayBundleHash === undefined ? { relay: this.name, attempts } : { relay: this.name, attempts, relayBundleHash }
  }

  /** One signed call through the transport, retrying transient failures; the `result` and the attempts made. */
  private async withRetries(method: string, params: JsonRpcParams, options: RelaySendOptions): Promise<{ result: unknown; attempts: number }> {
    let attempts = 0
    const onRetry = options.onRetry
    try {
      const result = await this.transport.request(method, params, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        // over the exact bytes sent; a call's body is the same on every attempt, so it is signed once
        headers: async (body) => ({ [FLASHBOTS_SIGNATURE_HEADER]: await flashbotsSignature(body, this.signer) }),
        onAttempt: ({ attempt }) => {
          attempts = attempt
          this.counters.requests++
        },
        onFailedAttempt: ({ error }) => {
          this.counters.failures[error.reason]++
        },
        ...(onRetry === undefined ? {} : { onRetry: ({ attempt, error, delayMs }) => onRetry({ attempt, error: this.relayError(error, attempts), delayMs }) }),
      })
      return { result, attempts }
    } catch (error) {
      throw this.relayError(error, attempts)
    }
  }

  /** The transport's failure as this relay's: `relay <name>: <what happened>`, the TransportError as cause. */
  private relayError(error: unknown, attempts: number): RelayError {
    if (!(error instanceof TransportError)) return new RelayError(errorText(error), { relay: this.name, reason: 'network', attempts, retryable: false, cause: error })
    return new RelayError(error.shortMessage, {
      relay: this.name,
      reason: error.reason,
      attempts: error.attempts,
      retryable: error.retryable,
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.rpcCode === undefined ? {} : { rpcCode: error.rpcCode }),
      cause: error,
    })
  }
}

function parseBundleStats(answer: { result: unknown }): RelayBundleStats {
  const r = answer.result
  if (r === null || typeof r !== 'object') return { status: 'unknown' }
  const o = r as { status?: unknown; reason?: unknown; isSimulated?: unknown; sealedByBuildersAt?: unknown }
  if (typeof o.status === 'string') return typeof o.reason === 'string' ? { status: o.status, reason: o.reason } : { status: o.status }
  if (Array.isArray(o.sealedByBuildersAt) && o.sealedByBuildersAt.length > 0) return { status: 'included' }
  return { status: o.isSimulated === true ? 'pending' : 'unknown' }
}

/**
 * `<address>:<signature>` for the X-Flashbots-Signature header: personal_sign (EIP-191) of the
 * string keccak256(body) as 0x-prefixed hex, as the Flashbots relay verifies it.
 */
export async function flashbotsSignature(body: string, signer: SearcherKey): Promise<string> {
  // native keccak (src/crypto/keccak.ts): every open submission's body is hashed at every head
  const digest = `0x${Buffer.from(keccak256(Buffer.from(body, 'utf8'))).toString('hex')}`
  return `${signer.address}:${await signer.signMessage(digest)}`
}

/**
 * The JSON-RPC request body for `bundle`: `eth_sendBundle` (Flashbots params), or `mev_sendBundle`
 * when the bundle starts with a hash reference and the relay speaks MEV-Share.
 *
 * @throws RelayError 'unsupported' when the bundle has a hash reference the relay does not accept,
 *   or a hash reference that is not the first entry
 */
export function encodeSendBundleRequest(bundle: RelayBundle, id: number, hashReference: HashReferenceStyle | undefined, relayName = 'relay'): string {
  const { method, params } = sendBundleCall(bundle, hashReference, relayName)
  return JSON.stringify({ jsonrpc: '2.0', id, method, params })
}

/** A bundle this relay cannot take: refused before any request (0 attempts). */
function unsupported(relay: string, shortMessage: string): RelayError {
  return new RelayError(shortMessage, { relay, reason: 'unsupported', attempts: 0, retryable: false })
}

/**
 * The method and params that send `bundle` (see {@link encodeSendBundleRequest}).
 * @throws RelayError 'unsupported'
 */
function sendBundleCall(bundle: RelayBundle, hashReference: HashReferenceStyle | undefined, relayName: string): { method: string; params: unknown[] } {
  if (bundle.entries.length === 0) throw unsupported(relayName, 'a bundle needs at least one entry')
  const hashAt = bundle.entries.findIndex((e) => 'hash' in e)
  if (hashAt > 0 || bundle.entries.filter((e) => 'hash' in e).length > 1) {
    throw unsupported(relayName, 'only the first bundle entry may be a hash reference')
  }
  const blockNumber = `0x${bundle.blockNumber.toString(16)}`
  if (hashAt === 0) {
    if (hashReference === undefined) {
      throw unsupported(relayName, 'does not accept bundles that reference a transaction by hash')
    }
    if (hashReference === 'mev_sendBundle') {
      // MEV-Share has no revertingTxHashes; the backrun behind a hash reference must not revert.
      const body = bundle.entries.map((e) => ('hash' in e ? { hash: e.hash } : { tx: e.tx, canRevert: false }))
      return { method: 'mev_sendBundle', params: [{ version: 'v0.1', inclusion: { block: blockNumber }, body }] }
    }
  }
  const params: Record<string, unknown> = {
    txs: bundle.entries.map((e) => ('hash' in e ? e.hash : e.tx)),
    blockNumber,
  }
  // Flashbots documents the timestamps as JSON numbers (unix seconds; far below 2^53).
  if (bundle.minTimestamp !== undefined) params.minTimestamp = Number(bundle.minTimestamp)
  if (bundle.maxTimestamp !== undefined) params.maxTimestamp = Number(bundle.maxTimestamp)
  if (bundle.revertingTxHashes !== undefined && bundle.revertingTxHashes.length > 0) params.revertingTxHashes = [...bundle.revertingTxHashes]
  if (bundle.replacementUuid !== undefined) params.replacementUuid = bundle.replacementUuid
  return { method: 'eth_sendBundle', params: [params] }
}

/** Problems with a relay endpoint, empty when it is usable (for configuration validation). */
export function relayEndpointProblems(endpoint: RelayEndpoint): string[] {
  const problems: string[] = []
  if (endpoint === null || typeof endpoint !== 'object') return ['must be an object']
  if (typeof endpoint.name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(endpoint.name)) problems.push('name must be 1-64 characters of A-Z a-z 0-9 . _ -')
  try {
    const url = new URL(endpoint.url)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('url must be http(s)')
  } catch {
    problems.push('url must be an http(s) URL')
  }
  if (endpoint.hashReference !== undefined && endpoint.hashReference !== 'eth_sendBundle' && endpoint.hashReference !== 'mev_sendBundle') {
    problems.push("hashReference must be 'eth_sendBundle' or 'mev_sendBundle' when given")
  }
  for (const field of ['timeoutMs', 'maxAttempts', 'maxConcurrentRequests', 'maxAnswerBytes'] as const) {
    const v = endpoint[field]
    if (v !== undefined && (!Number.isSafeInteger(v) || v <= 0)) problems.push(`${field} must be a positive integer`)
  }
  if (endpoint.bundleStats !== undefined && typeof endpoint.bundleStats !== 'boolean') problems.push('bundleStats must be true or false when given')
  if (endpoint.backoff !== undefined && (!(endpoint.backoff.baseMs >= 0) || !(endpoint.backoff.maxMs >= endpoint.backoff.baseMs))) {
    problems.push('backoff needs 0 <= baseMs <= maxMs')
  }
  return problems
}

/**
 * Parse a relay list given as JSON (e.g. a RELAYS environment variable):
 * `[{"name":"flashbots","url":"https://relay.flashbots.net","hashReference":"mev_sendBundle"}, …]`.
 * Returns every problem at once, in the style of src/config.ts, and never throws.
 */
export function parseRelayEndpoints(json: string): { relays: RelayEndpoint[]; problems: string[] } {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return { relays: [], problems: ['expected a JSON array of {"name","url","hashReference"?,"bundleStats"?,"timeoutMs"?,"maxAttempts"?} objects'] }
  }
  if (!Array.isArray(parsed)) return { relays: [], problems: ['expected a JSON array of relay objects'] }
  const relays: RelayEndpoint[] = []
  const problems: string[] = []
  const names = new Set<string>()
  parsed.forEach((entry: unknown, i) => {
    const found = relayEndpointProblems(entry as RelayEndpoint)
    if (found.length > 0) {
      problems.push(...found.map((p) => `relay ${i}: ${p}`))
      return
    }
    const endpoint = entry as RelayEndpoint
    if (names.has(endpoint.name)) {
      problems.push(`relay ${i}: name ${endpoint.name} is used twice`)
      return
    }
    names.add(endpoint.name)
    relays.push(endpoint)
  })
  return { relays, problems }
}
