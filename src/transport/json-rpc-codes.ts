/**
 * The JSON-RPC error codes this service sends or acts on, in one table: the partner-facing server
 * (src/server/jsonrpc), the devnet builder's server (src/devnet/json-rpc-http.ts) and the
 * transport's retry policies all take their codes from here. Each server keeps its own constant
 * names (re-exported from its errors module) because the same meaning has a different code there:
 * the partner API answers a malformed field with -32000 as its spec says, the builder with -32602.
 *
 * | code   | name              | origin        | sent by                                    |
 * |--------|-------------------|---------------|--------------------------------------------|
 * | -32700 | parseError        | JSON-RPC 2.0  | both servers: the body is not JSON          |
 * | -32600 | invalidRequest    | JSON-RPC 2.0  | both servers: not a valid request object    |
 * | -32601 | methodNotFound    | JSON-RPC 2.0  | both servers                                |
 * | -32602 | invalidParams     | JSON-RPC 2.0  | devnet builder                              |
 * | -32603 | internalError     | JSON-RPC 2.0  | both servers                                |
 * | -32000 | invalidInput      | EIP-1474      | partner API: malformed field (its spec); devnet builder: refused (nonce too low, unknown referenced tx) |
 * | -32001 | unauthorized      | ours          | partner API: unknown partner token (HTTP 401); EIP-1474 names -32001 "resource not found", which no server here sends |
 * | -32005 | limitExceeded     | EIP-1474      | devnet builder: a bound was reached, retry later |
 * | 3      | executionReverted | geth          | devnet builder: eth_call reverted, `data` is the revert data |
 */
export const JsonRpcCode = {
  /** the body could not be parsed as JSON */
  parseError: -32700,
  /** the JSON is not a valid request */
  invalidRequest: -32600,
  /** no such method (or not on this endpoint) */
  methodNotFound: -32601,
  /** the params are not what the method takes */
  invalidParams: -32602,
  /** the server failed; details are logged, not sent */
  internalError: -32603,
  /** EIP-1474 "invalid input": well formed, but refused */
  invalidInput: -32000,
  /** ours: unknown credentials (EIP-1474's -32001 "resource not found" is not used here) */
  unauthorized: -32001,
  /** EIP-1474 "limit exceeded": a rate or size bound was reached; asking later may succeed */
  limitExceeded: -32005,
  /** geth: execution reverted; `data` carries the revert data */
  executionReverted: 3,
} as const

export type JsonRpcCodeName = keyof typeof JsonRpcCode

/**
 * Codes that say the request itself is wrong (parse, request, method, params): sending it again
 * gets the same answer, whatever the server's load.
 */
export const REQUEST_ERROR_CODES: ReadonlySet<number> = new Set([
  JsonRpcCode.parseError,
  JsonRpcCode.invalidRequest,
  JsonRpcCode.methodNotFound,
  JsonRpcCode.invalidParams,
])

/**
 * Codes that signal load rather than a deterministic answer: -32005 (limit exceeded, EIP-1474),
 * and 429, the "too many requests" some providers send in-band as a JSON-RPC code.
 */
export const TRANSIENT_ERROR_CODES: ReadonlySet<number> = new Set([JsonRpcCode.limitExceeded, 429])
