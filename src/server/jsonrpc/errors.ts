/**
 * JSON-RPC error codes and the error classes method handlers throw.
 *
 * Codes (spec 7.2 lists -32601, -32000 and -32603 per method; the rest is JSON-RPC 2.0 itself):
 *
 * | code   | when |
 * |--------|------|
 * | -32700 | the body is not JSON |
 * | -32600 | not a valid request for this service: not an object, `jsonrpc` not "2.0", `id` neither a string
 * |        | nor a safe integer, `method` not a non-empty string, `params` not an array of exactly one
 * |        | object; also an empty batch, a batch over the limit and a body over the size limit |
 * | -32601 | unknown method, or a known method sent to the endpoint that does not serve it |
 * | -32000 | a method's parameter object has a missing or malformed field (spec 7.2; handlers throw
 * |        | {@link InvalidParamsError}). The standard -32602 is deliberately not used. |
 * | -32001 | unknown partner token in the URL (HTTP 401); see {@link RPC_UNAUTHORIZED} |
 * | -32603 | anything else a handler throws; the client sees only "internal error" |
 *
 * The codes come from the service's one table, src/transport/json-rpc-codes.ts; the names here
 * are this server's.
 */
import { JsonRpcCode } from '../../transport/json-rpc-codes.ts'
import { BaseError } from '../../primitives/base-error.ts'

/** The body could not be parsed as JSON. */
export const RPC_PARSE_ERROR = JsonRpcCode.parseError
/** The JSON is not a request this service accepts (see the table above). */
export const RPC_INVALID_REQUEST = JsonRpcCode.invalidRequest
/** No such method, or not on this endpoint. */
export const RPC_METHOD_NOT_FOUND = JsonRpcCode.methodNotFound
/** Unexpected failure inside a handler; details are logged, never sent. */
export const RPC_INTERNAL_ERROR = JsonRpcCode.internalError
/**
 * A field of the method's parameter object is missing or malformed. The spec (4.2, 7.2) assigns
 * -32000 to this (EIP-1474's "invalid input"), in the implementation-defined server-error range,
 * instead of JSON-RPC's -32602.
 */
export const RPC_INVALID_PARAMS = JsonRpcCode.invalidInput
/**
 * The partner token in the URL path is unknown. -32001 is ours: JSON-RPC 2.0 reserves
 * -32000..-32099 for implementation-defined server errors, the spec already uses -32000 for
 * malformed fields, so the next code of that range names this. It is sent with HTTP 401.
 */
export const RPC_UNAUTHORIZED = JsonRpcCode.unauthorized

/** The error member of a JSON-RPC error response: exactly these keys, `data` only when present. */
export interface JsonRpcErrorObject {
  code: number
  message: string
  data?: unknown
}

/**
 * An error a method handler throws to answer with a specific code and message. The message and
 * `data` are sent to the client as they are, so write them for the partner.
 */
export class JsonRpcError extends BaseError {
  override readonly name: string = 'JsonRpcError'
  readonly code: number
  /** sent as `error.data` unless undefined */
  readonly data: unknown

  constructor(code: number, message: string, options?: { data?: unknown; cause?: unknown }) {
    super(message, { cause: options?.cause })
    if (!Number.isSafeInteger(code)) throw new TypeError(`JSON-RPC error code must be an integer, got ${String(code)}`)
    this.code = code
    this.data = options?.data
  }

  toErrorObject(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data }
  }
}

/**
 * A missing or malformed field of the method's parameter object (code -32000, spec 7.2).
 * Name the field in the message, e.g. `new InvalidParamsError('amountIn must be a decimal string')`.
 */
export class InvalidParamsError extends JsonRpcError {
  override readonly name: string = 'InvalidParamsError'

  constructor(message: string, options?: { data?: unknown; cause?: unknown }) {
    super(RPC_INVALID_PARAMS, message, options)
  }
}

export function isJsonRpcError(value: unknown): value is JsonRpcError {
  return value instanceof JsonRpcError
}
