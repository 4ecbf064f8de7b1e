/**
 * The method registry: which handler serves which method on which endpoint. Domain code plugs
 * its handlers in through {@link MethodTable}s; this file never knows what a method does.
 */
import type { FastifyBaseLogger } from 'fastify'

/** The two partner-specific addresses of spec 4.2: {rpc_backrun_endpoint} and {rpc_submission_endpoint}. */
export type JsonRpcEndpointName = 'backrun' | 'submit'

export const JSON_RPC_ENDPOINTS: readonly JsonRpcEndpointName[] = ['backrun', 'submit']

/** What a handler learns about the call besides its parameter object. */
export interface JsonRpcCallContext {
  /** the partner the URL's token belongs to */
  readonly partnerId: string
  /** Fastify's request id; a batch entry gets `<request id>:<index>` */
  readonly requestId: string
  /** a child of the request logger bound to the method, partner and request id */
  readonly log: FastifyBaseLogger
}

/**
 * One method. `params` is the parameter object (params[0]); the envelope was checked already.
 * Resolve with the `result` (undefined is sent as null). Throw {@link InvalidParamsError} for a
 * missing or malformed field (-32000), {@link JsonRpcError} for another code; any other exception
 * is logged and answered as -32603 "internal error".
 */
export type JsonRpcMethodHandler = (params: Record<string, unknown>, ctx: JsonRpcCallContext) => Promise<unknown>

/** Method name -> handler, for one endpoint. Only own properties count. */
export type MethodTable = Readonly<Record<string, JsonRpcMethodHandler>>

/** The spec's four methods and the endpoint that serves each (spec 4.2). */
export const SPEC_METHOD_ENDPOINTS: Readonly<Record<string, JsonRpcEndpointName>> = Object.freeze({
  eth_backrun: 'backrun',
  eth_sendPrivateRawTransaction: 'submit',
  eth_sendBundle: 'submit',
  eth_notifyRawTransaction: 'submit',
})

export type MethodLookup = { ok: true; handler: JsonRpcMethodHandler } | { ok: false; message: string }

/** Longest method name quoted back in an error message. */
const MAX_QUOTED_METHOD_LENGTH = 64

export class MethodRegistry {
  private readonly handlers: Record<JsonRpcEndpointName, Map<string, JsonRpcMethodHandler>>
  /** every known method and the endpoint that serves it */
  private readonly known: Map<string, JsonRpcEndpointName>

  /**
   * @param endpoints handlers per endpoint
   * @param knownMethods all method names the service knows, with the endpoint serving each, so a
   *   known method on the wrong endpoint is told where to go even before its handler exists.
   *   Methods found only in `endpoints` are added with their table's endpoint.
   * @throws Error when a method is registered on an endpoint other than the one knownMethods names,
   *   on both endpoints, or with a handler that is not a function
   */
  constructor(endpoints: { backrun: MethodTable; submit: MethodTable }, knownMethods: Readonly<Record<string, JsonRpcEndpointName>> = SPEC_METHOD_ENDPOINTS) {
    this.known = new Map()
    for (const [method, endpoint] of Object.entries(knownMethods)) {
      if (endpoint !== 'backrun' && endpoint !== 'submit') throw new Error(`knownMethods.${method}: endpoint must be 'backrun' or 'submit'`)
      this.known.set(method, endpoint)
    }
    this.handlers = { backrun: new Map(), submit: new Map() }
    for (const endpoint of JSON_RPC_ENDPOINTS) {
      for (const [method, handler] of Object.entries(endpoints[endpoint])) {
        if (method === '') throw new Error(`endpoints.${endpoint}: a method name must not be empty`)
        if (typeof handler !== 'function') throw new Error(`endpoints.${endpoint}.${method}: handler must be a function`)
        const servedBy = this.known.get(method)
        if (servedBy !== undefined && servedBy !== endpoint) {
          throw new Error(`endpoints.${endpoint}.${method}: ${method} is served by the ${servedBy} endpoint, not ${endpoint}`)
        }
        this.known.set(method, endpoint)
        this.handlers[endpoint].set(method, handler)
      }
    }
  }

  lookup(endpoint: JsonRpcEndpointName, method: string): MethodLookup {
    const handler = this.handlers[endpoint].get(method)
    if (handler !== undefined) return { ok: true, handler }
    const quoted = quoteMethod(method)
    const servedBy = this.known.get(method)
    if (servedBy === undefined) return { ok: false, message: `method not found: ${quoted} does not exist` }
    if (servedBy !== endpoint) {
      return { ok: false, message: `method not found: ${quoted} is not served on the ${endpoint} endpoint; use the ${servedBy} endpoint (/rpc/<token>/${servedBy})` }
    }
    return { ok: false, message: `method not found: ${quoted} is not available` }
  }
}

function quoteMethod(method: string): string {
  return method.length <= MAX_QUOTED_METHOD_LENGTH ? method : `${method.slice(0, MAX_QUOTED_METHOD_LENGTH)}…`
}
