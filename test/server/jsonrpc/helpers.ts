/** A Fastify app with the JSON-RPC routes and a captured pino log, for the tests of this folder. */
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import {
  createPartnerRegistry,
  InvalidParamsError,
  JsonRpcError,
  jsonRpcLogSerializers,
  redactingNotFoundHandler,
  registerJsonRpcRoutes,
  type JsonRpcEndpointName,
  type JsonRpcRoutesOptions,
  type MethodTable,
} from '../../../src/server/jsonrpc/index.ts'

export const TOKEN_ALPHA = 'alpha-tok-Q7vX2mP9kL4sW8nR'
export const TOKEN_BETA = 'beta-tok-Z3cY6hJ1fD5gT0bV'
/** a syntactically valid token no partner has */
export const TOKEN_UNKNOWN = 'nobody-tok-A1b2C3d4E5f6G7h8'

export const TX_HASH = `0x${'11'.repeat(32)}`
export const BUNDLE_HASH = `0x${'22'.repeat(32)}`
/** thrown by the eth_sendBundle stub; must never reach a client */
export const SECRET_INTERNAL_MESSAGE = 'db password is hunter2 at /var/lib/secret'

/** Stand-ins for the domain handlers: shapes only, no domain logic. */
export function stubEndpoints(): { backrun: MethodTable; submit: MethodTable } {
  return {
    backrun: {
      eth_backrun: async (params) => (params.to === undefined ? null : { contract: params.to }),
    },
    submit: {
      eth_sendPrivateRawTransaction: async (params) => {
        if (typeof params.tx !== 'string' || !/^0x[0-9a-fA-F]+$/.test(params.tx)) throw new InvalidParamsError('tx must be a 0x-prefixed hex string')
        return TX_HASH
      },
      eth_sendBundle: async () => {
        throw new Error(SECRET_INTERNAL_MESSAGE)
      },
      eth_notifyRawTransaction: async () => TX_HASH,
      test_context: async (_params, ctx) => ({ partnerId: ctx.partnerId, requestId: ctx.requestId }),
      test_undefined: async () => undefined,
      test_bigint: async () => ({ amount: 1n }),
      test_customError: async () => {
        throw new JsonRpcError(-32050, 'custom failure', { data: { retryAfterMs: 250 } })
      },
      test_customErrorNoData: async () => {
        throw new JsonRpcError(-32051, 'custom failure without data')
      },
      test_unserializableErrorData: async () => {
        throw new JsonRpcError(-32052, 'bad data', { data: { n: 2n } })
      },
      // not async: throws before any promise exists
      test_syncThrow: () => {
        throw new TypeError('synchronous failure')
      },
    },
  }
}

export interface TestApp {
  app: FastifyInstance
  /** everything pino wrote so far */
  logText(): string
  logLines(): Record<string, unknown>[]
}

export interface TestAppOptions extends Partial<JsonRpcRoutesOptions> {
  /** the app's bodyLimit (bytes) */
  appBodyLimit?: number
  /** install the exported serializers on the root logger as the real app does */
  rootSerializers?: typeof jsonRpcLogSerializers
  /** install redactingNotFoundHandler as the app's not-found handler */
  redactingNotFound?: boolean
  knownMethods?: Readonly<Record<string, JsonRpcEndpointName>>
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString())
      callback()
    },
  })
  const app = Fastify({
    bodyLimit: options.appBodyLimit ?? 1_048_576,
    logger: { level: 'trace', stream, ...(options.rootSerializers === undefined ? {} : { serializers: options.rootSerializers }) },
  })
  if (options.redactingNotFound === true) app.setNotFoundHandler(redactingNotFoundHandler)
  registerJsonRpcRoutes(app, {
    partners:
      options.partners ??
      createPartnerRegistry([
        { partnerId: 'alpha', token: TOKEN_ALPHA },
        { partnerId: 'beta', token: TOKEN_BETA },
      ]),
    endpoints: options.endpoints ?? stubEndpoints(),
    ...(options.knownMethods === undefined ? {} : { knownMethods: options.knownMethods }),
    ...(options.maxBatchSize === undefined ? {} : { maxBatchSize: options.maxBatchSize }),
    ...(options.batchConcurrency === undefined ? {} : { batchConcurrency: options.batchConcurrency }),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
  })
  await app.ready()
  const logText = () => chunks.join('')
  return {
    app,
    logText,
    logLines: () =>
      logText()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

export function rpcUrl(endpoint: JsonRpcEndpointName, token: string = TOKEN_ALPHA): string {
  return `/rpc/${token}/${endpoint}`
}

/** POST a raw body (string) or a value (JSON-encoded) with app.inject. */
export async function post(app: FastifyInstance, endpoint: JsonRpcEndpointName, body: unknown, opts: { token?: string; contentType?: string | null; raw?: boolean } = {}) {
  const payload = opts.raw === true && typeof body === 'string' ? body : JSON.stringify(body)
  const headers: Record<string, string> = {}
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json'
  return app.inject({ method: 'POST', url: rpcUrl(endpoint, opts.token), headers, payload })
}

export function request(method: string, params: unknown, id: unknown = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params }
}
