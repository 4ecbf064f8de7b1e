/**
 * The JSON-RPC 2.0 envelope (spec 2.4, 2.5): reading the raw body, checking one request object,
 * and writing response objects.
 *
 * This service is stricter than JSON-RPC 2.0 in two documented ways:
 * - `id`, when present, must be a string or a safe integer (spec 2.4 says "number or string";
 *   null is refused, and so are numbers JavaScript cannot echo exactly).
 * - `params` must be an array holding exactly one parameter object (spec 2.4). Positional
 *   parameters, named parameters as a bare object, no params and `params: null` are refused
 *   with -32600. That check runs after the method lookup, so an unknown method is still
 *   -32601, and a notification is never answered once it is recognisable as one.
 */
import type { JsonRpcErrorObject } from './errors.ts'

export type JsonRpcId = string | number

/** A request whose `jsonrpc`, `id` and `method` are valid; `params` is not yet checked. */
export interface JsonRpcCall {
  /** undefined: the request has no `id` member, i.e. it is a notification and gets no response */
  id: JsonRpcId | undefined
  method: string
  /** the raw `params` member (undefined when absent) */
  params: unknown
}

export type EnvelopeCheck =
  | { ok: true; call: JsonRpcCall }
  /** `id` is the request's id when it could be read, otherwise null */
  | { ok: false; id: JsonRpcId | null; message: string }

export type ParamObjectCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string }

/**
 * Parses the raw body. A leading byte-order mark is ignored. Members named `__proto__` are
 * dropped: harmless as own properties, but a handler that copies params with Object.assign
 * would otherwise replace a prototype.
 */
export function parseJsonText(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined) return { ok: false }
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  try {
    // `__proto__` can only appear literally or through a \u escape; skip the reviver otherwise
    const value: unknown = source.includes('__proto__') || source.includes('\\u') ? JSON.parse(source, dropProtoMembers) : JSON.parse(source)
    return { ok: true, value }
  } catch {
    return { ok: false }
  }
}

function dropProtoMembers(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A string, or an integer JavaScript holds exactly (so the echo equals what the client sent). */
export function isValidId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value))
}

/** The id to echo for a value that may not be a valid request: its id when readable, else null. */
export function readEchoId(value: unknown): JsonRpcId | null {
  if (!isPlainObject(value) || !Object.hasOwn(value, 'id')) return null
  const id = value.id
  return isValidId(id) ? id : null
}

/** True for a request that expects a response: a valid id and a method name (geth's isCall). */
export function isCallWithId(value: unknown): boolean {
  return readEchoId(value) !== null && isPlainObject(value) && typeof value.method === 'string' && value.method !== ''
}

/**
 * Checks `jsonrpc`, `id` and `method` of one request. The id is read first so that a request
 * with a readable id gets it echoed even when another member is wrong (as geth does).
 */
export function checkEnvelope(value: unknown): EnvelopeCheck {
  if (!isPlainObject(value)) return { ok: false, id: null, message: 'invalid request: expected a JSON-RPC request object' }
  let id: JsonRpcId | undefined
  if (Object.hasOwn(value, 'id')) {
    if (!isValidId(value.id)) {
      return { ok: false, id: null, message: 'invalid request: id must be a string or an integer (at most 2^53-1 in magnitude)' }
    }
    id = value.id
  }
  if (value.jsonrpc !== '2.0') return { ok: false, id: id ?? null, message: 'invalid request: jsonrpc must be "2.0"' }
  if (typeof value.method !== 'string' || value.method === '') {
    return { ok: false, id: id ?? null, message: 'invalid request: method must be a non-empty string' }
  }
  return { ok: true, call: { id, method: value.method, params: value.params } }
}

/** spec 2.4: params is always an array with exactly one element, the parameter object. */
export function readParamObject(params: unknown): ParamObjectCheck {
  const expected = 'invalid request: params must be an array holding exactly one parameter object'
  if (params === undefined) return { ok: false, message: `${expected}; params is missing` }
  if (!Array.isArray(params)) return { ok: false, message: `${expected}; got ${params === null ? 'null' : typeof params}` }
  if (params.length !== 1) return { ok: false, message: `${expected}; got ${params.length} elements` }
  const first: unknown = params[0]
  if (!isPlainObject(first)) {
    return { ok: false, message: `${expected}; its element is ${first === null ? 'null' : Array.isArray(first) ? 'an array' : typeof first}` }
  }
  return { ok: true, value: first }
}

/**
 * `{"jsonrpc":"2.0","id":…,"result":…}`, or undefined when the result cannot be written as JSON
 * (a BigInt, a cycle, a function): the caller answers -32603 instead.
 */
export function encodeSuccess(id: JsonRpcId, result: unknown): string | undefined {
  const encoded = safeStringify(result === undefined ? null : result)
  if (encoded === undefined) return undefined
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${encoded}}`
}

/** `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…[,"data":…]}}`; undefined when `data` cannot be written. */
export function encodeError(id: JsonRpcId | null, error: JsonRpcErrorObject): string | undefined {
  let encodedError = `{"code":${error.code},"message":${JSON.stringify(error.message)}`
  if (error.data !== undefined) {
    const data = safeStringify(error.data)
    if (data === undefined) return undefined
    encodedError += `,"data":${data}`
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${encodedError}}}`
}

/** For errors built here (fixed code and message, no data), which always encode. */
export function encodeFixedError(id: JsonRpcId | null, code: number, message: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":${code},"message":${JSON.stringify(message)}}}`
}

function safeStringify(value: unknown): string | undefined {
  try {
    // JSON.stringify returns undefined for a function or symbol at top level
    const encoded: string | undefined = JSON.stringify(value)
    return encoded
  } catch {
    return undefined
  }
}
