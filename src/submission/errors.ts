/**
 * Typed errors of private submission. Messages never contain raw transactions, partner tokens or
 * the searcher key.
 */

/**
 * The outbox could not durably write (or read) after its bounded retries. Nothing was
 * acknowledged: the RPC layer answers -32603 and must not return a hash.
 */
export class PersistenceError extends Error {
  override readonly name = 'PersistenceError'

  constructor(
    message: string,
    /** what was being done: 'open' | 'persist' | 'append' | 'read' | 'prune' */
    readonly operation: 'open' | 'persist' | 'append' | 'read' | 'prune',
    /** write attempts made (0 when the store was not usable at all) */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/**
 * The outbox holds its configured maximum of undelivered submissions. Nothing was acknowledged;
 * the RPC layer answers -32603 (or a busy code of its choosing) and the partner may retry.
 */
export class OutboxFullError extends Error {
  override readonly name = 'OutboxFullError'

  constructor(readonly maxOpen: number) {
    super(`the outbox already holds ${maxOpen} undelivered submissions; try again shortly`)
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

/** A bundle could not be delivered to one relay (after its retries, when the reason is retryable). */
export class RelayError extends Error {
  override readonly name = 'RelayError'

  constructor(
    message: string,
    readonly relay: string,
    readonly reason: RelayErrorReason,
    /** HTTP requests made before giving up */
    readonly attempts: number,
    readonly details: { status?: number; rpcCode?: number; retryable?: boolean } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export function isPersistenceError(value: unknown): value is PersistenceError {
  return value instanceof PersistenceError
}

export function isRelayError(value: unknown): value is RelayError {
  return value instanceof RelayError
}
