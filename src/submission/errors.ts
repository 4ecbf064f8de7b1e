/**
 * Typed errors of private submission, members of the service's error family (BaseError). Messages
 * never contain raw transactions, partner tokens or the searcher key.
 */
import { BaseError } from '../primitives/base-error.ts'

/**
 * The outbox could not durably write (or read) after its bounded retries. Nothing was
 * acknowledged: the RPC layer answers -32603 and must not return a hash.
 */
export class PersistenceError extends BaseError {
  override readonly name = 'PersistenceError'

  constructor(
    message: string,
    /** what was being done: 'open' | 'persist' | 'append' | 'read' | 'prune' */
    readonly operation: 'open' | 'persist' | 'append' | 'read' | 'prune',
    /** write attempts made (0 when the store was not usable at all) */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause })
  }
}

/**
 * The outbox holds its configured maximum of undelivered submissions. Nothing was acknowledged;
 * the RPC layer answers -32603 (or a busy code of its choosing) and the partner may retry.
 */
export class OutboxFullError extends BaseError {
  override readonly name = 'OutboxFullError'

  constructor(readonly maxOpen: number) {
    super(`the outbox already holds ${maxOpen} undelivered submissions; try again shortly`)
  }
}

/**
 * A lifecycle write was refused because the writer does not hold the submission's lease (another
 * process took it over after the writer's lease expired, or the writer never held it). The writer
 * must stop working on the submission: its new owner writes its lifecycle from now on, so a
 * submission never has two writers.
 */
export class LeaseLostError extends BaseError {
  override readonly name = 'LeaseLostError'

  constructor(
    readonly id: string,
    readonly owner: string,
  ) {
    super(`submission ${id} is not leased to ${owner} (its lease expired and was taken over, or was never held)`)
  }
}

/**
 * - `timeout`: one HTTP attempt exceeded the relay's timeout
 * - `network`: connection refused / reset, DNS failure
 * - `http`: non-2xx status
 * - `rpc`: the relay answered with a JSON-RPC error object
 * - `malformed`: the answer was not a JSON-RPC response
 * - `aborted`: the caller aborted (target block passed, submission finished, shutdown)
 * - `unsupported`: the bundle references a tx by hash and this relay does not accept that
 */
export type RelayErrorReason = 'timeout' | 'network' | 'http' | 'rpc' | 'malformed' | 'aborted' | 'unsupported'

export interface RelayErrorDetails {
  status?: number
  rpcCode?: number
  retryable?: boolean
}

export interface RelayErrorParams extends RelayErrorDetails {
  /** the relay's name (never its URL, which may carry a key) */
  relay: string
  reason: RelayErrorReason
  /** HTTP requests made before giving up (0: none was sent) */
  attempts: number
  /** the transport's TransportError when the relay was called */
  cause?: unknown
}

/**
 * A bundle could not be delivered to one relay (after its retries, when the reason is retryable):
 * the relay's member of the transport family (see src/transport/transport-error.ts), its cause the
 * TransportError when the relay was called. Message: `relay <name>: <shortMessage>`.
 */
export class RelayError extends BaseError<RelayErrorDetails> {
  override readonly name = 'RelayError'
  readonly relay: string
  readonly reason: RelayErrorReason
  /** HTTP requests made before giving up */
  readonly attempts: number

  constructor(shortMessage: string, params: RelayErrorParams) {
    const details: RelayErrorDetails = {}
    if (params.status !== undefined) details.status = params.status
    if (params.rpcCode !== undefined) details.rpcCode = params.rpcCode
    if (params.retryable !== undefined) details.retryable = params.retryable
    super(shortMessage, { message: `relay ${params.relay}: ${shortMessage}`, details, cause: params.cause })
    this.relay = params.relay
    this.reason = params.reason
    this.attempts = params.attempts
  }
}

export function isPersistenceError(value: unknown): value is PersistenceError {
  return value instanceof PersistenceError
}

export function isLeaseLostError(value: unknown): value is LeaseLostError {
  return value instanceof LeaseLostError
}

export function isRelayError(value: unknown): value is RelayError {
  return value instanceof RelayError
}
