/** The JSON-RPC transport every client of the service speaks through, its error, its codes and its backoff. */
export { backoffCap, backoffDelay, fullJitterDelay, sleep, type BackoffPolicy } from './backoff.ts'
export { JsonRpcCode, REQUEST_ERROR_CODES, TRANSIENT_ERROR_CODES, type JsonRpcCodeName } from './json-rpc-codes.ts'
export {
  JSON_RPC_TRANSPORT_DEFAULTS,
  JsonRpcTransport,
  isTransientFailure,
  type AttemptFailure,
  type BatchOutcome,
  type ConcurrencyLimit,
  type FetchLike,
  type HeaderRecord,
  type JsonRpcCall,
  type JsonRpcParams,
  type JsonRpcTransportOptions,
  type RequestHeaders,
  type RequestOptions,
} from './json-rpc-transport.ts'
export { TransportError, isTransportError, type TransportErrorDetails, type TransportErrorParams, type TransportErrorReason } from './transport-error.ts'
