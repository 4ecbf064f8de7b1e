/**
 * JSON-RPC client for the upstream node: batches, de-duplicates, times out and retries, over the
 * service's one JSON-RPC transport (src/transport), and reports every failure as an
 * `UpstreamError` naming the method (the chain layer's error; its cause is the TransportError).
 *
 * What it keeps of its own over the transport's: the batching semantics (every call made in the
 * same tick, or within `batchWaitMs`, goes out in ONE HTTP request holding a JSON-RPC batch, split
 * at `maxBatchSize`, and a retried call joins the next batch), de-duplication (identical calls, same
 * method and params, in flight share one request and one promise), a backoff without jitter (one
 * caller, whose waits tests measure), and its stats counters.
 *
 * Retried: timeouts, network failures, HTTP 408/425/429/5xx, JSON-RPC -32005 and in-band 429.
 * Not retried: other JSON-RPC errors (a node's -32603 or -32000 is a deterministic answer), and
 * garbage bodies (a proxy's HTML page will not become JSON by asking again).
 */
import { nonNegativeInt, nonNegativeNumber, positiveInt, positiveNumber } from '../../primitives/numbers.ts'
import { JsonRpcTransport } from '../../transport/json-rpc-transport.ts'
import { TransportError } from '../../transport/transport-error.ts'
import { UpstreamError } from '../types.ts'

/** A JSON value that can be sent as a JSON-RPC parameter. */
export type RpcParam = string | number | boolean | null | readonly RpcParam[] | { readonly [key: string]: RpcParam }

export type UpstreamErrorReason = UpstreamError['reason']

export interface UpstreamClientOptions {
  /** http(s) URL of the upstream JSON-RPC node */
  url: string
  /** Timeout of one HTTP attempt (request and body), ms. Default 5000. */
  timeoutMs?: number
  /** Retries after the first attempt for transient failures (network, timeout, HTTP 5xx/408/425/429, JSON-RPC -32005). Default 3. */
  maxRetries?: number
  /** First backoff delay, doubled per retry, ms. Default 100. */
  retryBaseDelayMs?: number
  /** Cap of one backoff delay, ms. Default 2000. */
  retryMaxDelayMs?: number
  /** Most JSON-RPC calls in one HTTP request. Default 1000 (geth's default BatchRequestLimit). */
  maxBatchSize?: number
  /** 0 (default): flush on `setImmediate`, so everything issued in the same tick shares a batch. */
  batchWaitMs?: number
  /** Extra HTTP headers (e.g. an API key header). */
  headers?: Readonly<Record<string, string>>
}

export interface CallOptions {
  /** Overrides `maxRetries` for this call (e.g. 0 for a liveness probe). */
  maxRetries?: number
}

export interface UpstreamClientStats {
  /** HTTP requests sent (each retry counts) */
  httpRequests: number
  /** JSON-RPC calls sent on the wire (each retry counts; de-duplicated calls count once) */
  rpcCalls: number
  /** calls re-sent after a transient failure */
  retries: number
  /** calls that joined an identical call already in flight */
  dedupedCalls: number
  /** calls that finally failed with an UpstreamError */
  errors: number
  /** JSON-RPC calls sent on the wire, per method */
  callsByMethod: Record<string, number>
}

export const UPSTREAM_CLIENT_DEFAULTS = {
  timeoutMs: 5_000,
  maxRetries: 3,
  retryBaseDelayMs: 100,
  retryMaxDelayMs: 2_000,
  maxBatchSize: 1_000,
  batchWaitMs: 0,
} as const

export class UpstreamClient {
  readonly url: string
  private readonly maxRetries: number
  private readonly transport: JsonRpcTransport
  private readonly inflight = new Map<string, Promise<unknown>>()
  private closed = false

  private readonly counters = { httpRequests: 0, rpcCalls: 0, retries: 0, dedupedCalls: 0, errors: 0 }
  private readonly byMethod = new Map<string, number>()

  constructor(options: UpstreamClientOptions) {
    const url = new URL(options.url)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`upstream url must be http(s), got ${url.protocol}`)
    }
    this.url = options.url
    this.maxRetries = nonNegativeInt('maxRetries', options.maxRetries ?? UPSTREAM_CLIENT_DEFAULTS.maxRetries)
    const retryBaseDelayMs = nonNegativeNumber('retryBaseDelayMs', options.retryBaseDelayMs ?? UPSTREAM_CLIENT_DEFAULTS.retryBaseDelayMs)
    const retryMaxDelayMs = nonNegativeNumber('retryMaxDelayMs', options.retryMaxDelayMs ?? UPSTREAM_CLIENT_DEFAULTS.retryMaxDelayMs)
    this.transport = new JsonRpcTransport({
      url: options.url,
      timeoutMs: positiveNumber('timeoutMs', options.timeoutMs ?? UPSTREAM_CLIENT_DEFAULTS.timeoutMs),
      maxAttempts: this.maxRetries + 1,
      // base * 2^(retry-1), capped; no jitter: one caller, and tests measure the waits
      backoff: { baseMs: Math.min(retryBaseDelayMs, retryMaxDelayMs), maxMs: retryMaxDelayMs, jitter: 'none' },
      batch: {
        maxSize: positiveInt('maxBatchSize', options.maxBatchSize ?? UPSTREAM_CLIENT_DEFAULTS.maxBatchSize),
        waitMs: nonNegativeNumber('batchWaitMs', options.batchWaitMs ?? UPSTREAM_CLIENT_DEFAULTS.batchWaitMs),
      },
      headers: { accept: 'application/json', ...(options.headers ?? {}) },
      onRequest: ({ methods }) => {
        this.counters.httpRequests++
        this.counters.rpcCalls += methods.length
        for (const method of methods) this.byMethod.set(method, (this.byMethod.get(method) ?? 0) + 1)
      },
    })
  }

  /**
   * Queues one JSON-RPC call; resolves with its `result` (unvalidated: decode it at the call site)
   * or rejects with an `UpstreamError`.
   */
  call(method: string, params: readonly RpcParam[] = [], options: CallOptions = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(closedError(method))
    const dedupKey = `${method}\u0000${JSON.stringify(params)}`
    const existing = this.inflight.get(dedupKey)
    if (existing) {
      this.counters.dedupedCalls++
      return existing
    }
    const maxRetries = options.maxRetries === undefined ? this.maxRetries : nonNegativeInt('maxRetries', options.maxRetries)
    const promise = this.transport
      .request(method, params, { maxAttempts: maxRetries + 1, onRetry: () => this.counters.retries++ })
      .catch((error: unknown) => {
        this.counters.errors++
        throw upstreamError(method, error)
      })
    this.inflight.set(dedupKey, promise)
    const forget = () => {
      if (this.inflight.get(dedupKey) === promise) this.inflight.delete(dedupKey)
    }
    promise.then(forget, forget)
    return promise
  }

  /**
   * Calls made from now on no longer join identical calls in flight (which still answer their own
   * callers): after a reorg, a read by block number sent before it may be answered by either chain.
   */
  forgetInflight(): void {
    this.inflight.clear()
  }

  stats(): UpstreamClientStats {
    return { ...this.counters, callsByMethod: Object.fromEntries(this.byMethod) }
  }

  /** Rejects everything queued or in flight and refuses new calls. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.transport.close()
  }
}

/** The chain layer's error for a failed call: `<method>: <what happened>[ after N attempts]`, the TransportError as cause. */
function upstreamError(method: string, error: unknown): UpstreamError {
  if (!(error instanceof TransportError)) {
    return new UpstreamError(`${method}: internal client error: ${String(error)}`, 'network', { method }, { cause: error })
  }
  // the transport closed under the call: close() was called
  if (error.reason === 'aborted') return closedError(method, error)
  const attempts = error.attempts > 1 ? ` after ${error.attempts} attempts` : ''
  const details = {
    method,
    ...(error.reason === 'http' && error.status !== undefined ? { status: error.status } : {}),
    ...(error.rpcCode !== undefined ? { rpcCode: error.rpcCode } : {}),
  }
  return new UpstreamError(`${method}: ${error.shortMessage}${attempts}`, error.reason, details, { cause: error })
}

function closedError(method: string, cause?: unknown): UpstreamError {
  return new UpstreamError(`${method}: upstream client closed`, 'network', { method }, { cause })
}
