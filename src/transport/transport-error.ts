/**
 * The one error of the JSON-RPC transport, a {@link BaseError}: a short message that says what
 * happened, structured details beside it, and the underlying error as `cause`. Unlike viem,
 * `message` stays one line (`<method>: <shortMessage>`): it goes into logs and lifecycle records
 * as it is, and the details are logged as fields.
 *
 * The transport family: each kind of network call has one error type, and the transport's error
 * is in it.
 * - upstream reads (src/chain/fork): `UpstreamError`, the TransportError as `cause`
 * - bundle relays (src/submission/relay-client.ts): `RelayError`, the TransportError as `cause`
 *   (its `unsupported` reason, a bundle the relay cannot take, is no transport failure, so it is
 *   not a subclass)
 * - inclusion checks (src/submission/rpc-inclusion-checker.ts): `InclusionCheckError`, a
 *   TransportError subclass re-branded with {@link TransportError.from}
 * `error.walk(TransportError)` finds the transport's part of any of them.
 *
 * No message, detail or excerpt ever holds the endpoint's URL: upstream and relay URLs often carry
 * an API key in their path or query.
 */
import { BaseError } from '../primitives/base-error.ts'

/**
 * - `timeout`: an attempt got no complete answer within its time
 * - `network`: the request could not be made or its answer not read (refused, reset, DNS)
 * - `http`: the answer's status was not 2xx
 * - `rpc`: the server answered with a JSON-RPC error object (`rpcCode`)
 * - `malformed`: the answer is not a JSON-RPC response to the request (or the request could not be encoded)
 * - `aborted`: the caller's signal aborted, or the transport was closed
 */
export type TransportErrorReason = 'timeout' | 'network' | 'http' | 'rpc' | 'malformed' | 'aborted'

export interface TransportErrorDetails {
  /** whether this kind of failure is worth another attempt (true also when the attempts ran out) */
  readonly retryable: boolean
  /** the JSON-RPC method of the call */
  readonly method?: string
  /** HTTP status of the answer, when one came */
  readonly status?: number
  /** `error.code` of a JSON-RPC error answer */
  readonly rpcCode?: number
  /** `error.data` of a JSON-RPC error answer, when it had one */
  readonly rpcData?: unknown
}

export interface TransportErrorParams {
  reason: TransportErrorReason
  retryable: boolean
  /** HTTP attempts made before giving up (0: none was sent) */
  attempts: number
  method?: string
  status?: number
  rpcCode?: number
  rpcData?: unknown
  cause?: unknown
}

/** `shortMessage` is what happened, without the method: e.g. `HTTP 503: upstream unavailable`. */
export class TransportError extends BaseError<TransportErrorDetails> {
  override readonly name: string = 'TransportError'
  readonly reason: TransportErrorReason
  readonly retryable: boolean
  /** HTTP attempts made before giving up (0: none was sent) */
  readonly attempts: number
  readonly status?: number
  readonly rpcCode?: number

  constructor(shortMessage: string, params: TransportErrorParams) {
    super(shortMessage, {
      message: params.method === undefined ? shortMessage : `${params.method}: ${shortMessage}`,
      details: transportErrorDetails(params),
      cause: params.cause,
    })
    this.reason = params.reason
    this.retryable = params.retryable
    this.attempts = params.attempts
    if (params.status !== undefined) this.status = params.status
    if (params.rpcCode !== undefined) this.rpcCode = params.rpcCode
  }

  /** The parameters this error was made with (to make a subclass of it, see {@link TransportError.from}). */
  params(): TransportErrorParams {
    const { retryable, method, status, rpcCode, rpcData } = this.details
    return {
      reason: this.reason,
      retryable,
      attempts: this.attempts,
      ...(method === undefined ? {} : { method }),
      ...(status === undefined ? {} : { status }),
      ...(rpcCode === undefined ? {} : { rpcCode }),
      ...(rpcData === undefined ? {} : { rpcData }),
      ...(this.cause === undefined ? {} : { cause: this.cause }),
    }
  }

  /** The same error as an instance of this (sub)class: `InclusionCheckError.from(transportError)`. */
  static from<E extends TransportError>(this: new (shortMessage: string, params: TransportErrorParams) => E, error: TransportError): E {
    return new this(error.shortMessage, error.params())
  }
}

function transportErrorDetails(params: TransportErrorParams): TransportErrorDetails {
  const details: { -readonly [K in keyof TransportErrorDetails]: TransportErrorDetails[K] } = { retryable: params.retryable }
  if (params.method !== undefined) details.method = params.method
  if (params.status !== undefined) details.status = params.status
  if (params.rpcCode !== undefined) details.rpcCode = params.rpcCode
  if (params.rpcData !== undefined) details.rpcData = params.rpcData
  return details
}

export function isTransportError(value: unknown): value is TransportError {
  return value instanceof TransportError
}
