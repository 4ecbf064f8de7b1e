/**
 * One JSON-RPC 2.0 client over HTTP POST, in the manner of viem's `http` transport: `request()`
 * for one call, `batch()` for several in one HTTP request, and optional automatic batching of
 * `request()` calls made in the same tick. Every client of the service (the fork's upstream, the
 * relays, the inclusion checker) speaks through it, so timeouts, retries and failures mean the same
 * everywhere and end in one {@link TransportError}.
 *
 * Why not viem's transport itself: it retries JSON-RPC errors we must not retry, it cannot tell a
 * garbage body from a network failure, it matches batch answers by position after a sort rather
 * than by id, and it cannot sign each body (relays want X-Flashbots-Signature over the exact bytes).
 *
 * - Each attempt has its own AbortController, aborted by its timer, by the callers' signals or by
 *   close(), and released when the attempt ends (no AbortSignal.any / AbortSignal.timeout: those
 *   stay reachable from Node's internals until they fire, nodejs/node#55351). The time of an
 *   attempt runs from when it leaves the concurrency limit's queue until its body is read.
 * - A failed attempt is retried, up to `maxAttempts` attempts in all, when `retryable(failure)`
 *   says so, after an exponential backoff (full jitter unless the policy says 'none'). A caller's
 *   signal that aborts stops the attempt or the wait at once ('aborted').
 * - Each call keeps its id across retries, so a lone call's body is the same bytes on every
 *   attempt (and its per-request headers, e.g. a signature over the body, are made once).
 * - Batch answers are matched by id, whatever their order; an error object with id null answers
 *   every call of the request. Only the calls whose failure is retryable are sent again.
 * - No message holds the URL (it may carry an API key): anything quoted from the server or from a
 *   cause is scrubbed of the URL's path, query and credentials.
 */
import { clip, errorText } from '../primitives/error-text.ts'
import { positiveInt, positiveNumber } from '../primitives/numbers.ts'
import { backoffDelay, type BackoffPolicy } from './backoff.ts'
import { TRANSIENT_ERROR_CODES } from './json-rpc-codes.ts'
import { TransportError, type TransportErrorReason } from './transport-error.ts'

/** The params of a call: positional (usual) or by name. */
export type JsonRpcParams = readonly unknown[] | Readonly<Record<string, unknown>>

export interface JsonRpcCall {
  method: string
  /** default [] */
  params?: JsonRpcParams
}

export type HeaderRecord = Readonly<Record<string, string>>

/**
 * What the transport needs of `fetch`: one POST and its answer's status and text. globalThis.fetch
 * is one; a relay's keep-alive client is another (it costs a fraction of fetch's CPU per request).
 */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>

/** Extra headers of one request: fixed, or made from the exact body that will be sent (a signature). */
export type RequestHeaders = HeaderRecord | ((body: string) => HeaderRecord | Promise<HeaderRecord>)

/** A bound on concurrent work, e.g. src/submission/limiter.ts's Limiter. */
export interface ConcurrencyLimit {
  run<T>(task: () => Promise<T>): Promise<T>
}

/** What a retry policy is told about a failed attempt. */
export interface AttemptFailure {
  readonly reason: TransportErrorReason
  readonly status?: number
  readonly rpcCode?: number
}

export interface JsonRpcTransportOptions {
  /** http(s) URL of the JSON-RPC endpoint; never quoted in messages */
  url: string
  /** Time of one HTTP attempt (request and body), ms. Default 10 000. */
  timeoutMs?: number
  /** HTTP attempts per call, the first included. Default 3. */
  maxAttempts?: number
  /** Default { baseMs: 100, maxMs: 2 000 } with full jitter. */
  backoff?: BackoffPolicy
  /** Whether a failed attempt is worth another. Default {@link isTransientFailure}. */
  retryable?: (failure: AttemptFailure) => boolean
  /** Headers of every request (e.g. an API key header); content-type is always application/json. */
  headers?: HeaderRecord
  /**
   * Automatic batching of `request()`: calls made before `setImmediate` fires (or within
   * `waitMs`) go out in one HTTP request, split at `maxSize`; their retries join the next batch.
   * Calls with their own headers are always sent alone. Default off.
   */
  batch?: boolean | { maxSize?: number; waitMs?: number }
  /** Bounds the HTTP requests in flight; requests wait their turn before their time starts. */
  limiter?: ConcurrencyLimit
  /**
   * Whether a lone call's answer must carry its id. Default true. False accepts the one answer
   * object of a lone call whatever its id (some relays have been run without id echoing).
   */
  strictIds?: boolean
  /** Called as each HTTP request is about to be sent, with the method of each call in it. */
  onRequest?: (info: { methods: readonly string[] }) => void
  /** The HTTP call: globalThis.fetch by default, a test double, or a lighter client (src/submission/relay-http.ts). */
  fetch?: FetchLike
  /** Jitter source. Default Math.random. */
  random?: () => number
}

export interface RequestOptions {
  /** Aborts the call: its current attempt, or its wait for the next one ('aborted'). */
  signal?: AbortSignal
  /** Extra headers of this request. A call with its own headers is never merged into an automatic batch. */
  headers?: RequestHeaders
  /** Overrides the transport's `maxAttempts` (e.g. 1 for a liveness probe). */
  maxAttempts?: number
  /** Called as each attempt of a call starts (attempt 1 first), before it may wait for the limiter. */
  onAttempt?: (info: { attempt: number }) => void
  /** Called after each failed attempt of a call, retried or not. */
  onFailedAttempt?: (info: { attempt: number; error: TransportError }) => void
  /** Called for each failed attempt that will be retried, with the delay before the next one. */
  onRetry?: (info: { attempt: number; error: TransportError; delayMs: number }) => void
}

/** The outcome of one call of {@link JsonRpcTransport.batch}, in the order of the calls. */
export type BatchOutcome = { ok: true; result: unknown } | { ok: false; error: TransportError }

export const JSON_RPC_TRANSPORT_DEFAULTS = {
  timeoutMs: 10_000,
  maxAttempts: 3,
  backoff: { baseMs: 100, maxMs: 2_000 } satisfies BackoffPolicy,
  /** geth's default BatchRequestLimit */
  maxBatchSize: 1_000,
  batchWaitMs: 0,
} as const

const RETRYABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([408, 425, 429])

/**
 * The default retry policy: timeouts, network failures, HTTP 408/425/429/5xx and the JSON-RPC
 * codes that signal load (-32005, in-band 429). Every other answer is taken as final.
 */
export function isTransientFailure(failure: AttemptFailure): boolean {
  switch (failure.reason) {
    case 'timeout':
    case 'network':
      return true
    case 'http':
      return failure.status !== undefined && (failure.status >= 500 || RETRYABLE_HTTP_STATUSES.has(failure.status))
    case 'rpc':
      return failure.rpcCode !== undefined && TRANSIENT_ERROR_CODES.has(failure.rpcCode)
    default:
      return false
  }
}

interface Call {
  readonly id: number
  readonly method: string
  /** the call's request object as JSON, made once: the same bytes on every attempt */
  readonly json: string
  readonly options: RequestOptions
  readonly maxAttempts: number
  /** came through the automatic batch queue: its retries go back there */
  readonly queued: boolean
  attempts: number
  settled: boolean
  /** the failed attempt it waits to retry after */
  lastError?: TransportError
  /** its per-request headers as made for its lone body (made once: the body does not change) */
  loneHeaders?: HeaderRecord
  resolve(value: unknown): void
  reject(error: TransportError): void
}

/** One failed attempt, before it becomes a TransportError per call. */
interface Failure extends AttemptFailure {
  readonly message: string
  readonly rpcData?: unknown
  readonly cause?: unknown
  /** never retried, whatever the policy says */
  readonly final?: boolean
  /** attempts to report when not the attempts made (an abort before the attempt was sent) */
  readonly attempts?: number
}

/** Calls waiting for their next attempt. */
interface Wait {
  readonly calls: Call[]
  timer: NodeJS.Timeout | undefined
  readonly release: Array<() => void>
}

export class JsonRpcTransport {
  private readonly url: string
  private readonly timeoutMs: number
  private readonly maxAttempts: number
  private readonly backoff: BackoffPolicy
  private readonly retryable: (failure: AttemptFailure) => boolean
  private readonly headers: Record<string, string>
  private readonly batching: boolean
  private readonly maxBatchSize: number
  private readonly batchWaitMs: number
  private readonly limiter: ConcurrencyLimit | undefined
  private readonly strictIds: boolean
  private readonly onRequest: ((info: { methods: readonly string[] }) => void) | undefined
  private readonly fetchImpl: FetchLike
  private readonly random: () => number
  /** texts that would reveal the URL's secrets, longest first */
  private readonly secrets: readonly string[]

  private nextId = 1
  private closed = false
  private queue: Call[] = []
  private flushHandle: { cancel(): void } | undefined
  private readonly waits = new Set<Wait>()
  private readonly controllers = new Set<AbortController>()

  /** @throws TypeError for a URL that is not http(s) (not quoted), RangeError for bad limits */
  constructor(options: JsonRpcTransportOptions) {
    let url: URL
    try {
      url = new URL(options.url)
    } catch {
      throw new TypeError('JsonRpcTransport: url must be an absolute http(s) URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('JsonRpcTransport: url must be an http(s) URL')
    this.url = options.url
    this.secrets = urlSecrets(url)
    this.timeoutMs = positiveNumber('timeoutMs', options.timeoutMs ?? JSON_RPC_TRANSPORT_DEFAULTS.timeoutMs, 'JsonRpcTransport')
    this.maxAttempts = positiveInt('maxAttempts', options.maxAttempts ?? JSON_RPC_TRANSPORT_DEFAULTS.maxAttempts, 'JsonRpcTransport')
    this.backoff = options.backoff ?? JSON_RPC_TRANSPORT_DEFAULTS.backoff
    if (!(this.backoff.baseMs >= 0 && this.backoff.maxMs >= this.backoff.baseMs)) throw new RangeError('JsonRpcTransport: backoff needs 0 <= baseMs <= maxMs')
    this.retryable = options.retryable ?? isTransientFailure
    this.headers = { ...(options.headers ?? {}), 'content-type': 'application/json' }
    const batch = typeof options.batch === 'object' ? options.batch : {}
    this.batching = options.batch !== undefined && options.batch !== false
    this.maxBatchSize = positiveInt('batch.maxSize', batch.maxSize ?? JSON_RPC_TRANSPORT_DEFAULTS.maxBatchSize, 'JsonRpcTransport')
    this.batchWaitMs = batch.waitMs ?? JSON_RPC_TRANSPORT_DEFAULTS.batchWaitMs
    if (!(Number.isFinite(this.batchWaitMs) && this.batchWaitMs >= 0)) throw new RangeError(`JsonRpcTransport: batch.waitMs must be a non-negative number, got ${this.batchWaitMs}`)
    this.limiter = options.limiter
    this.strictIds = options.strictIds ?? true
    this.onRequest = options.onRequest
    this.fetchImpl = options.fetch ?? globalThis.fetch
    this.random = options.random ?? Math.random
  }

  /**
   * One call; resolves with its `result` (unvalidated: decode it at the call site, null included).
   * @throws TransportError
   */
  request(method: string, params: JsonRpcParams = [], options: RequestOptions = {}): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const call = this.newCall({ method, params }, options, this.batching && options.headers === undefined, resolve, reject)
      if (call === undefined) return
      if (call.queued) this.enqueue(call)
      else this.send([call], options.headers)
    })
  }

  /**
   * Several calls in one HTTP request (split at the batch size), each settled from its own answer:
   * one call's error does not fail the others. Never rejects; each outcome carries its result or
   * its TransportError. `options` apply to every call (its hooks are called per call).
   */
  batch(calls: readonly JsonRpcCall[], options: RequestOptions = {}): Promise<BatchOutcome[]> {
    const made: Call[] = []
    const outcomes = calls.map(
      (c) =>
        new Promise<BatchOutcome>((resolve) => {
          const call = this.newCall(c, options, false, (result) => resolve({ ok: true, result }), (error) => resolve({ ok: false, error }))
          if (call !== undefined) made.push(call)
        }),
    )
    for (let i = 0; i < made.length; i += this.maxBatchSize) this.send(made.slice(i, i + this.maxBatchSize), options.headers)
    return Promise.all(outcomes)
  }

  /** Rejects every call queued, waiting or in flight ('aborted') and refuses new ones. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.flushHandle?.cancel()
    this.flushHandle = undefined
    const queued = this.queue
    this.queue = []
    for (const call of queued) this.settleFailure(call, closedFailure(call))
    for (const wait of this.waits) {
      clearTimeout(wait.timer)
      for (const release of wait.release) release()
      for (const call of wait.calls) this.settleFailure(call, closedFailure(call))
    }
    this.waits.clear()
    for (const controller of this.controllers) controller.abort(new Error('the transport was closed'))
  }

  private newCall(
    { method, params = [] }: JsonRpcCall,
    options: RequestOptions,
    queued: boolean,
    resolve: (value: unknown) => void,
    reject: (error: TransportError) => void,
  ): Call | undefined {
    const maxAttempts = options.maxAttempts === undefined ? this.maxAttempts : positiveInt('maxAttempts', options.maxAttempts, 'JsonRpcTransport')
    const id = this.nextId++
    let json: string
    try {
      json = JSON.stringify({ jsonrpc: '2.0', id, method, params })
    } catch (cause) {
      reject(new TransportError(`the params cannot be sent as JSON: ${errorText(cause)}`, { reason: 'malformed', retryable: false, attempts: 0, method, cause }))
      return undefined
    }
    const call: Call = { id, method, json, options, maxAttempts, queued, attempts: 0, settled: false, resolve, reject }
    if (this.closed) {
      this.settleFailure(call, closedFailure(call))
      return undefined
    }
    return call
  }

  private enqueue(call: Call): void {
    this.queue.push(call)
    if (this.flushHandle !== undefined) return
    const flush = (): void => {
      this.flushHandle = undefined
      const calls = this.queue
      this.queue = []
      for (let i = 0; i < calls.length; i += this.maxBatchSize) this.send(calls.slice(i, i + this.maxBatchSize), undefined)
    }
    if (this.batchWaitMs > 0) {
      const timer = setTimeout(flush, this.batchWaitMs)
      this.flushHandle = { cancel: () => clearTimeout(timer) }
    } else {
      const immediate = setImmediate(flush)
      this.flushHandle = { cancel: () => clearImmediate(immediate) }
    }
  }

  /** One attempt for `calls`; settles or reschedules each. Never rejects. */
  private send(calls: readonly Call[], headers: RequestHeaders | undefined): void {
    this.attempt(calls, headers).catch((cause: unknown) => {
      // attempt() settles every call itself; this only keeps a bug from leaving callers hanging
      for (const call of calls) this.settleFailure(call, { reason: 'network', message: `internal transport error: ${errorText(cause)}`, cause })
    })
  }

  private async attempt(calls: readonly Call[], headers: RequestHeaders | undefined): Promise<void> {
    const live: Call[] = []
    for (const call of calls) {
      if (call.settled) continue
      if (this.closed) {
        this.settleFailure(call, closedFailure(call))
        continue
      }
      call.attempts++
      call.options.onAttempt?.({ attempt: call.attempts })
      const signal = call.options.signal
      if (signal?.aborted === true) {
        // nothing was sent for this attempt
        this.fail(call, { reason: 'aborted', message: 'aborted', cause: signal.reason, final: true, attempts: call.attempts - 1 })
        continue
      }
      live.push(call)
    }
    if (live.length === 0) return
    const body = live.length === 1 ? live[0].json : `[${live.map((c) => c.json).join(',')}]`

    const controller = new AbortController()
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    const release: Array<() => void> = []
    for (const call of live) {
      const signal = call.options.signal
      if (signal === undefined) continue
      const onAbort = (): void => {
        this.fail(call, { reason: 'aborted', message: 'aborted', cause: signal.reason, final: true })
        // the request goes on while another call of it still waits for its answer
        if (live.every((c) => c.settled)) controller.abort(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      release.push(() => signal.removeEventListener('abort', onAbort))
    }
    this.controllers.add(controller)
    let status: number
    let text: string
    try {
      let extra: HeaderRecord | undefined
      try {
        if (typeof headers !== 'function') extra = headers
        else if (live.length === 1) extra = live[0].loneHeaders ??= await headers(body)
        else extra = await headers(body)
      } catch (cause) {
        this.failAll(live, { reason: 'network', message: `the request headers could not be made: ${errorText(cause)}`, cause, final: true }, headers)
        return
      }
      const exchange = async (): Promise<{ status: number; text: string }> => {
        // the attempt's time starts when it leaves the limiter's queue, not while it waits its turn
        controller.signal.throwIfAborted()
        this.onRequest?.({ methods: live.map((c) => c.method) })
        timer = setTimeout(() => {
          timedOut = true
          controller.abort(new Error(`no answer within ${this.timeoutMs} ms`))
        }, this.timeoutMs)
        const response = await this.fetchImpl(this.url, { method: 'POST', headers: extra === undefined ? this.headers : { ...this.headers, ...extra, 'content-type': 'application/json' }, body, signal: controller.signal })
        // the body is read under the same signal: a server stalling mid-body still times out
        return { status: response.status, text: await response.text() }
      }
      ;({ status, text } = this.limiter === undefined ? await exchange() : await this.limiter.run(exchange))
    } catch (cause) {
      if (this.closed) for (const call of live) this.settleFailure(call, closedFailure(call))
      else if (timedOut) this.failAll(live, { reason: 'timeout', message: `no answer within ${this.timeoutMs} ms`, cause }, headers)
      else this.failAll(live, { reason: 'network', message: `request failed: ${errorText(cause)}`, cause }, headers)
      return
    } finally {
      clearTimeout(timer)
      for (const off of release) off()
      this.controllers.delete(controller)
    }

    if (status < 200 || status > 299) {
      this.failAll(live, { reason: 'http', status, message: `HTTP ${status}${excerpt(text)}` }, headers)
      return
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (cause) {
      this.failAll(live, { reason: 'malformed', status, message: `the answer is not JSON${excerpt(text)}`, cause }, headers)
      return
    }
    const items = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]
    const byId = new Map<unknown, Record<string, unknown>>()
    let requestError: Record<string, unknown> | undefined
    for (const item of items) {
      if (!isObject(item)) continue
      if (typeof item.id === 'number' || typeof item.id === 'string') byId.set(item.id, item)
      else if (item.id === null && item.error !== undefined && item.error !== null) requestError = item // the server refused the whole request
    }
    const lone = live.length === 1 && !this.strictIds && !Array.isArray(parsed) && isObject(parsed) ? parsed : undefined
    const retry: Call[] = []
    for (const call of live) {
      if (call.settled) continue
      const item = byId.get(call.id) ?? requestError ?? lone
      if (item === undefined) {
        const message = live.length === 1 ? 'the answer is not a JSON-RPC response to this request' : `the answer has no response for call id ${call.id}`
        this.fail(call, { reason: 'malformed', message }, retry)
      } else if (item.error !== undefined && item.error !== null) {
        this.fail(call, rpcFailure(item.error), retry)
      } else if (!('result' in item)) {
        this.fail(call, { reason: 'malformed', message: 'the answer has neither result nor error' }, retry)
      } else {
        call.settled = true
        call.resolve(item.result)
      }
    }
    this.scheduleRetry(retry, headers)
  }

  private failAll(calls: readonly Call[], failure: Failure, headers: RequestHeaders | undefined): void {
    const retry: Call[] = []
    for (const call of calls) this.fail(call, failure, retry)
    this.scheduleRetry(retry, headers)
  }

  /** A failed attempt of `call`: into `retry` when it is worth another (and `retry` is given), else final. */
  private fail(call: Call, failure: Failure, retry?: Call[]): void {
    if (call.settled) return
    const retryable = failure.final !== true && this.retryable(failure)
    const error = this.error(call, failure, retryable)
    call.options.onFailedAttempt?.({ attempt: call.attempts, error })
    if (retry !== undefined && retryable && call.attempts < call.maxAttempts && !this.closed && call.options.signal?.aborted !== true) {
      call.lastError = error
      retry.push(call)
      return
    }
    call.settled = true
    call.reject(error)
  }

  /** Ends `call` with `failure`, not retryable, without it counting as a failed attempt (closed, aborted while waiting). */
  private settleFailure(call: Call, failure: Failure): void {
    if (call.settled) return
    call.settled = true
    call.reject(this.error(call, failure, false))
  }

  private error(call: Call, failure: Failure, retryable: boolean): TransportError {
    return new TransportError(this.scrub(failure.message), {
      reason: failure.reason,
      retryable,
      attempts: failure.attempts ?? call.attempts,
      method: call.method,
      ...(failure.status === undefined ? {} : { status: failure.status }),
      ...(failure.rpcCode === undefined ? {} : { rpcCode: failure.rpcCode }),
      ...(failure.rpcData === undefined ? {} : { rpcData: failure.rpcData }),
      ...(failure.cause === undefined ? {} : { cause: failure.cause }),
    })
  }

  /** Sends `calls` again after the backoff of the most-tried one; a caller's abort ends its wait. */
  private scheduleRetry(calls: Call[], headers: RequestHeaders | undefined): void {
    if (calls.length === 0) return
    const delayMs = backoffDelay(Math.max(...calls.map((c) => c.attempts)), this.backoff, this.random)
    for (const call of calls) if (call.lastError !== undefined) call.options.onRetry?.({ attempt: call.attempts, error: call.lastError, delayMs })
    const wait: Wait = { calls, timer: undefined, release: [] }
    const abortWait = (call: Call): void => {
      this.settleFailure(call, { reason: 'aborted', message: 'aborted while waiting to retry', cause: call.lastError ?? call.options.signal?.reason })
      if (calls.every((c) => c.settled)) {
        clearTimeout(wait.timer)
        for (const release of wait.release) release()
        this.waits.delete(wait)
      }
    }
    for (const call of calls) {
      const signal = call.options.signal
      if (signal === undefined) continue
      // (an onRetry hook may have aborted it already)
      if (signal.aborted) {
        abortWait(call)
        continue
      }
      const onAbort = (): void => abortWait(call)
      signal.addEventListener('abort', onAbort, { once: true })
      wait.release.push(() => signal.removeEventListener('abort', onAbort))
    }
    if (calls.every((c) => c.settled)) return
    this.waits.add(wait)
    // Not unref'd: a caller is awaiting these calls, and the wait is bounded.
    wait.timer = setTimeout(() => {
      this.waits.delete(wait)
      for (const release of wait.release) release()
      const again = calls.filter((c) => !c.settled)
      if (again.length === 0) return
      if (this.batching && headers === undefined && again.every((c) => c.queued)) for (const call of again) this.enqueue(call)
      else this.send(again, headers)
    }, delayMs)
  }

  /** `text` with every trace of the URL's path, query and credentials replaced. */
  private scrub(text: string): string {
    let out = text
    for (const secret of this.secrets) out = out.split(secret).join('[redacted]')
    return out
  }
}

function rpcFailure(error: unknown): Failure {
  if (isObject(error) && typeof error.code === 'number') {
    const message = typeof error.message === 'string' ? error.message : 'no message'
    return {
      reason: 'rpc',
      rpcCode: error.code,
      ...(error.data === undefined ? {} : { rpcData: error.data }),
      message: `JSON-RPC error ${error.code}: ${clip(message)}`,
    }
  }
  return { reason: 'malformed', message: `the error member is not a JSON-RPC error object: ${clip(JSON.stringify(error) ?? String(error))}` }
}

function closedFailure(call: Call): Failure {
  return { reason: 'aborted', message: 'the transport was closed', final: true, attempts: call.attempts }
}

/** `: <the text on one line, clipped>`, or nothing for an empty text. */
function excerpt(text: string): string {
  const clipped = clip(text)
  return clipped === '' ? '' : `: ${clipped}`
}

/**
 * What of `url` could be a secret if quoted: the whole URL, its path and query (API keys live
 * there: /v3/<key>, ?apikey=), its credentials. Longest first, so the longest match is replaced.
 */
function urlSecrets(url: URL): string[] {
  const found = new Set<string>()
  // short pieces ('v1', 'rpc') are no secret, and replacing them would garble ordinary words
  const add = (text: string): void => {
    if (text.length >= 8) found.add(text)
  }
  add(url.href)
  add(url.href.replace(/\/$/, ''))
  if (url.pathname !== '/') {
    add(url.pathname + url.search)
    add(url.pathname)
    for (const segment of url.pathname.split('/')) add(segment)
  }
  if (url.search !== '') {
    add(url.search)
    for (const [, value] of url.searchParams) add(value)
  }
  if (url.username !== '') add(decodeURIComponent(url.username))
  if (url.password !== '') add(decodeURIComponent(url.password))
  return [...found].sort((a, b) => b.length - a.length)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
