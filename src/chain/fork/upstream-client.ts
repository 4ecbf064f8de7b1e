/**
 * JSON-RPC client for the upstream node: batches, de-duplicates, times out and retries.
 *
 * Why not viem's `http({ batch })` transport: its retry policy retries JSON-RPC errors such as
 * -32603 (we must not retry deterministic errors), it cannot tell a garbage body from a network
 * failure (both become `HttpRequestError`), and batch responses are matched by position after a
 * sort rather than by id. This client is ~300 lines over `fetch` and classifies every failure into
 * an `UpstreamError` with the method name; viem is still used for hex and hashing helpers.
 *
 * Batching: every call made in the same tick (before `setImmediate` fires, or within `batchWaitMs`)
 * goes out in ONE HTTP request holding a JSON-RPC batch, split at `maxBatchSize`. Identical calls
 * (same method and params) in flight share one request and one promise.
 */
import { UpstreamError } from '../types.ts'

/** A JSON value that can be sent as a JSON-RPC parameter. */
export type RpcParam = string | number | boolean | null | readonly RpcParam[] | { readonly [key: string]: RpcParam }

export type UpstreamErrorReason = UpstreamError['reason']

export interface UpstreamClientOptions {
  /** http(s) URL of the upstream JSON-RPC node */
  url: string
  /** Timeout of one HTTP attempt (request and body), ms. Default 5000. */
  timeoutMs?: number
  /** Retries after the first attempt for transient failures (network, timeout, HTTP 5xx/408/429). Default 3. */
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

interface PendingCall {
  readonly method: string
  readonly params: readonly RpcParam[]
  readonly dedupKey: string
  readonly maxRetries: number
  /** attempts made so far */
  attempts: number
  resolve(value: unknown): void
  reject(error: UpstreamError): void
}

interface Failure {
  readonly reason: UpstreamErrorReason
  readonly message: string
  readonly transient: boolean
  readonly status?: number
  readonly rpcCode?: number
  readonly cause?: unknown
}

/**
 * JSON-RPC error codes that signal load rather than a deterministic answer: -32005 (limit exceeded,
 * EIP-1474) and 429 (some providers' in-band "too many requests"). Every other code is final.
 */
const TRANSIENT_RPC_CODES: ReadonlySet<number> = new Set([-32005, 429])

export class UpstreamClient {
  readonly url: string
  private readonly timeoutMs: number
  private readonly maxRetries: number
  private readonly retryBaseDelayMs: number
  private readonly retryMaxDelayMs: number
  private readonly maxBatchSize: number
  private readonly batchWaitMs: number
  private readonly headers: Record<string, string>

  private queue: PendingCall[] = []
  private flushScheduled = false
  private readonly inflight = new Map<string, Promise<unknown>>()
  private readonly retryTimers = new Set<NodeJS.Timeout>()
  private readonly waitingRetry = new Set<PendingCall>()
  private readonly requestControllers = new Set<AbortController>()
  private nextId = 1
  private closed = false

  private readonly counters = { httpRequests: 0, rpcCalls: 0, retries: 0, dedupedCalls: 0, errors: 0 }
  private readonly byMethod = new Map<string, number>()

  constructor(options: UpstreamClientOptions) {
    const url = new URL(options.url)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`upstream url must be http(s), got ${url.protocol}`)
    }
    this.url = options.url
    this.timeoutMs = positive('timeoutMs', options.timeoutMs ?? UPSTREAM_CLIENT_DEFAULTS.timeoutMs)
    this.maxRetries = nonNegativeInt('maxRetries', options.maxRetries ?? UPSTREAM_CLIENT_DEFAULTS.maxRetries)
    this.retryBaseDelayMs = nonNegative('retryBaseDelayMs', options.retryBaseDelayMs ?? UPSTREAM_CLIENT_DEFAULTS.retryBaseDelayMs)
    this.retryMaxDelayMs = nonNegative('retryMaxDelayMs', options.retryMaxDelayMs ?? UPSTREAM_CLIENT_DEFAULTS.retryMaxDelayMs)
    this.maxBatchSize = positiveInt('maxBatchSize', options.maxBatchSize ?? UPSTREAM_CLIENT_DEFAULTS.maxBatchSize)
    this.batchWaitMs = nonNegative('batchWaitMs', options.batchWaitMs ?? UPSTREAM_CLIENT_DEFAULTS.batchWaitMs)
    this.headers = { 'content-type': 'application/json', accept: 'application/json', ...(options.headers ?? {}) }
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
    const promise = new Promise<unknown>((resolve, reject) => {
      this.enqueue({
        method,
        params,
        dedupKey,
        maxRetries: options.maxRetries ?? this.maxRetries,
        attempts: 0,
        resolve,
        reject,
      })
    })
    this.inflight.set(dedupKey, promise)
    const forget = () => {
      if (this.inflight.get(dedupKey) === promise) this.inflight.delete(dedupKey)
    }
    promise.then(forget, forget)
    return promise
  }

  stats(): UpstreamClientStats {
    return { ...this.counters, callsByMethod: Object.fromEntries(this.byMethod) }
  }

  /** Rejects everything queued or in flight and refuses new calls. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const timer of this.retryTimers) clearTimeout(timer)
    this.retryTimers.clear()
    const pending = [...this.queue, ...this.waitingRetry]
    this.queue = []
    this.waitingRetry.clear()
    for (const call of pending) this.fail(call, closedError(call.method))
    for (const controller of this.requestControllers) controller.abort()
  }

  private enqueue(call: PendingCall): void {
    this.queue.push(call)
    if (this.flushScheduled) return
    this.flushScheduled = true
    const flush = () => {
      this.flushScheduled = false
      const calls = this.queue
      this.queue = []
      for (let i = 0; i < calls.length; i += this.maxBatchSize) {
        const chunk = calls.slice(i, i + this.maxBatchSize)
        // send() settles every call itself; this only guards against a bug leaving callers hanging
        this.send(chunk).catch((cause: unknown) => {
          for (const call of chunk) {
            const error = new UpstreamError(`${call.method}: internal client error: ${describe(cause)}`, 'network', { method: call.method })
            error.cause = cause
            call.reject(error)
          }
        })
      }
    }
    if (this.batchWaitMs > 0) setTimeout(flush, this.batchWaitMs)
    else setImmediate(flush)
  }

  /** Sends one HTTP request for `calls` and settles each call from its own response item. */
  private async send(calls: PendingCall[]): Promise<void> {
    if (this.closed) {
      for (const call of calls) this.fail(call, closedError(call.method))
      return
    }
    const ids = new Map<number, PendingCall>()
    const bodies = calls.map((call) => {
      const id = this.nextId++
      ids.set(id, call)
      call.attempts++
      this.byMethod.set(call.method, (this.byMethod.get(call.method) ?? 0) + 1)
      return { jsonrpc: '2.0', id, method: call.method, params: call.params }
    })
    this.counters.httpRequests++
    this.counters.rpcCalls += calls.length
    // A lone call goes out as a plain object: the most portable form.
    const body = JSON.stringify(bodies.length === 1 ? bodies[0] : bodies)

    // One controller per request, aborted by its timer or by close(). Not AbortSignal.any() over a
    // long-lived close signal: that pattern leaks dependent signals (nodejs/node#55351).
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.timeoutMs)
    this.requestControllers.add(controller)
    let status: number
    let text: string
    try {
      const response = await fetch(this.url, { method: 'POST', headers: this.headers, body, signal: controller.signal })
      status = response.status
      // the body is read under the same signal: a server stalling mid-body still times out
      text = await response.text()
    } catch (cause) {
      if (this.closed) {
        for (const call of calls) this.fail(call, closedError(call.method))
      } else if (timedOut) {
        this.failAll(calls, { reason: 'timeout', message: `no answer within ${this.timeoutMs} ms`, transient: true, cause })
      } else {
        this.failAll(calls, { reason: 'network', message: `request failed: ${describe(cause)}`, transient: true, cause })
      }
      return
    } finally {
      clearTimeout(timer)
      this.requestControllers.delete(controller)
    }

    if (status < 200 || status > 299) {
      const transient = status >= 500 || status === 429 || status === 408
      this.failAll(calls, { reason: 'http', status, transient, message: `HTTP ${status}${snippet(text)}` })
      return
    }

    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (cause) {
      this.failAll(calls, { reason: 'malformed', transient: false, message: `response is not JSON${snippet(text)}`, cause })
      return
    }

    const items = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]
    const byId = new Map<number, Record<string, unknown>>()
    let batchError: Record<string, unknown> | undefined
    for (const item of items) {
      if (!isObject(item)) continue
      if (typeof item.id === 'number') byId.set(item.id, item)
      else if (item.id === null && item.error !== undefined) batchError = item // the server rejected the whole request
    }
    const retry: PendingCall[] = []
    for (const [id, call] of ids) {
      const item = byId.get(id) ?? batchError
      if (item === undefined) {
        this.settleFailure(call, { reason: 'malformed', transient: false, message: `no response item for id ${id}` }, retry)
        continue
      }
      if (item.error !== undefined && item.error !== null) {
        this.settleFailure(call, rpcFailure(item.error), retry)
        continue
      }
      if (!('result' in item)) {
        this.settleFailure(call, { reason: 'malformed', transient: false, message: 'response item has neither result nor error' }, retry)
        continue
      }
      call.resolve(item.result)
    }
    this.scheduleRetry(retry)
  }

  private failAll(calls: PendingCall[], failure: Failure): void {
    const retry: PendingCall[] = []
    for (const call of calls) this.settleFailure(call, failure, retry)
    this.scheduleRetry(retry)
  }

  private settleFailure(call: PendingCall, failure: Failure, retry: PendingCall[]): void {
    if (failure.transient && call.attempts <= call.maxRetries && !this.closed) {
      retry.push(call)
      return
    }
    const attempts = call.attempts > 1 ? ` after ${call.attempts} attempts` : ''
    const error = new UpstreamError(`${call.method}: ${failure.message}${attempts}`, failure.reason, {
      method: call.method,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      ...(failure.rpcCode !== undefined ? { rpcCode: failure.rpcCode } : {}),
    })
    if (failure.cause !== undefined) error.cause = failure.cause
    this.fail(call, error)
  }

  private fail(call: PendingCall, error: UpstreamError): void {
    this.counters.errors++
    call.reject(error)
  }

  /** Re-queues calls after an exponential backoff: base * 2^(attempt-1), capped. No jitter, so tests are exact. */
  private scheduleRetry(calls: PendingCall[]): void {
    if (calls.length === 0) return
    const attempts = Math.max(...calls.map((c) => c.attempts))
    const delay = Math.min(this.retryMaxDelayMs, this.retryBaseDelayMs * 2 ** (attempts - 1))
    for (const call of calls) this.waitingRetry.add(call)
    // Not unref'd: a caller is awaiting these calls, and the wait is bounded.
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer)
      for (const call of calls) {
        this.waitingRetry.delete(call)
        this.counters.retries++
        this.enqueue(call)
      }
    }, delay)
    this.retryTimers.add(timer)
  }
}

function rpcFailure(error: unknown): Failure {
  if (isObject(error) && typeof error.code === 'number') {
    const message = typeof error.message === 'string' ? error.message : 'no message'
    return {
      reason: 'rpc',
      rpcCode: error.code,
      transient: TRANSIENT_RPC_CODES.has(error.code),
      message: `JSON-RPC error ${error.code}: ${message}`,
    }
  }
  return { reason: 'malformed', transient: false, message: `JSON-RPC error field is not an error object: ${JSON.stringify(error)?.slice(0, 200)}` }
}

function closedError(method: string): UpstreamError {
  return new UpstreamError(`${method}: upstream client closed`, 'network', { method })
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function snippet(text: string): string {
  const trimmed = text.trim()
  if (trimmed === '') return ''
  return `: ${trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed}`
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : ''
    return `${cause.message}${inner}`
  }
  return String(cause)
}

function positive(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be > 0, got ${value}`)
  return value
}
function nonNegative(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must be >= 0, got ${value}`)
  return value
}
function positiveInt(name: string, value: number): number {
  if (!(Number.isInteger(value) && value > 0)) throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}
function nonNegativeInt(name: string, value: number): number {
  if (!(Number.isInteger(value) && value >= 0)) throw new RangeError(`${name} must be a non-negative integer, got ${value}`)
  return value
}
