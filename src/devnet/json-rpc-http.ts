/**
 * A small JSON-RPC 2.0 server over node:http for the devnet's local builder: POST only, bodies
 * capped (checked against Content-Length and while reading), whole-request and header timeouts,
 * batches bounded, and the Flashbots `X-Flashbots-Signature` header verified when present (a bad
 * one refuses the whole request with HTTP 403, as relays do).
 *
 * Errors follow JSON-RPC 2.0: -32700 parse error, -32600 invalid request, -32601 unknown method,
 * -32602 invalid params; handlers throw {@link RpcError} for their own codes (-32000 refused,
 * -32005 limit exceeded, 3 execution reverted). Any other exception becomes -32603 with its message.
 * Every code is a member of the service's one table, {@link JsonRpcCode} (src/transport), which the
 * service's own JSON-RPC server uses too.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hashMessage, hexToBytes, keccak256 } from 'viem'
import type { Address, Hex } from '../chain/types.ts'
import { recoverHashAddress } from '../crypto/sign.ts'
import { positiveInt } from '../primitives/numbers.ts'
import { JsonRpcCode } from '../transport/json-rpc-codes.ts'
import { BaseError } from '../primitives/base-error.ts'
import { errorText } from '../primitives/error-text.ts'

export class RpcError extends BaseError<{ code: number; data?: string }> {
  override readonly name = 'RpcError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: string,
  ) {
    super(message, { details: data === undefined ? { code } : { code, data } })
  }
}

/** Who sent the request: the address proven by X-Flashbots-Signature, when the header was sent. */
export interface RpcCaller {
  signer?: Address
}

export type RpcMethod = (params: readonly unknown[], caller: RpcCaller) => unknown

export interface JsonRpcHttpServerOptions {
  /** largest request body in bytes. Default 1 MiB. */
  maxBodyBytes?: number
  /** most calls in one batch. Default 100. */
  maxBatchSize?: number
  /** the whole request (headers and body) must arrive within this. Default 10 000 ms. */
  requestTimeoutMs?: number
}

/** node lowercases header names */
const SIGNATURE_HEADER = 'x-flashbots-signature'

const JSON_HEADERS = { 'content-type': 'application/json' } as const

type JsonRpcId = string | number | null
interface JsonRpcResponse {
  jsonrpc: '2.0'
  id: JsonRpcId
  result?: unknown
  error?: { code: number; message: string; data?: string }
}

export class JsonRpcHttpServer {
  private server: Server | undefined
  private readonly maxBodyBytes: number
  private readonly maxBatchSize: number
  private readonly requestTimeoutMs: number

  constructor(
    private readonly methods: ReadonlyMap<string, RpcMethod>,
    options: JsonRpcHttpServerOptions = {},
  ) {
    this.maxBodyBytes = positiveInt('maxBodyBytes', options.maxBodyBytes ?? 1024 * 1024)
    this.maxBatchSize = positiveInt('maxBatchSize', options.maxBatchSize ?? 100)
    this.requestTimeoutMs = positiveInt('requestTimeoutMs', options.requestTimeoutMs ?? 10_000)
  }

  /** Starts listening; resolves with the bound port (port 0 = any free port). */
  async listen(host: string, port: number): Promise<number> {
    if (this.server !== undefined) throw new Error('already listening')
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { jsonrpc: '2.0', id: null, error: { code: JsonRpcCode.internalError, message: errorText(error) } })
        else res.destroy()
      })
    })
    server.requestTimeout = this.requestTimeoutMs
    server.headersTimeout = Math.min(this.requestTimeoutMs, 60_000)
    server.keepAliveTimeout = 5_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.server = server
    return (server.address() as AddressInfo).port
  }

  async close(): Promise<void> {
    const server = this.server
    if (server === undefined) return
    this.server = undefined
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST')
      req.resume()
      return send(res, 405, errorResponse(null, JsonRpcCode.invalidRequest, 'send JSON-RPC requests with POST'))
    }
    const declared = Number(req.headers['content-length'] ?? '0')
    if (declared > this.maxBodyBytes) return refuseTooLarge(req, res, this.maxBodyBytes)
    const body = await readBody(req, this.maxBodyBytes)
    if (body === undefined) return refuseTooLarge(req, res, this.maxBodyBytes)

    const caller: RpcCaller = {}
    const header = headerValue(req.headers, SIGNATURE_HEADER)
    if (header !== undefined) {
      try {
        caller.signer = await verifyFlashbotsSignature(body, header)
      } catch (error) {
        return send(res, 403, errorResponse(null, JsonRpcCode.invalidRequest, `invalid X-Flashbots-Signature: ${errorText(error)}`))
      }
    }

    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.from(body).toString('utf8'))
    } catch {
      return send(res, 200, errorResponse(null, JsonRpcCode.parseError, 'parse error: the body is not JSON'))
    }
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return send(res, 200, errorResponse(null, JsonRpcCode.invalidRequest, 'empty batch'))
      if (parsed.length > this.maxBatchSize) {
        return send(res, 200, errorResponse(null, JsonRpcCode.limitExceeded, `batch of ${parsed.length} calls: at most ${this.maxBatchSize}`))
      }
      const answers: JsonRpcResponse[] = []
      // in order: a batch that sends a tx then a bundle referencing it must see them in that order
      for (const entry of parsed) {
        const answer = await this.call(entry, caller)
        if (answer !== undefined) answers.push(answer)
      }
      if (answers.length === 0) return endEmpty(res)
      return send(res, 200, answers)
    }
    const answer = await this.call(parsed, caller)
    if (answer === undefined) return endEmpty(res)
    return send(res, 200, answer)
  }

  /** One call; undefined for a notification (no id), which gets no answer. */
  private async call(request: unknown, caller: RpcCaller): Promise<JsonRpcResponse | undefined> {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return errorResponse(null, JsonRpcCode.invalidRequest, 'a request must be a JSON object')
    }
    const r = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }
    const hasId = 'id' in r
    const id: JsonRpcId = typeof r.id === 'string' || typeof r.id === 'number' ? r.id : null
    if (hasId && r.id !== null && typeof r.id !== 'string' && typeof r.id !== 'number') {
      return errorResponse(null, JsonRpcCode.invalidRequest, 'id must be a string, a number or null')
    }
    if (r.jsonrpc !== '2.0') return errorResponse(id, JsonRpcCode.invalidRequest, 'jsonrpc must be "2.0"')
    if (typeof r.method !== 'string') return errorResponse(id, JsonRpcCode.invalidRequest, 'method must be a string')
    if (r.params !== undefined && !Array.isArray(r.params)) return errorResponse(id, JsonRpcCode.invalidParams, 'params must be an array')
    const method = this.methods.get(r.method)
    let answer: JsonRpcResponse
    if (method === undefined) {
      answer = errorResponse(id, JsonRpcCode.methodNotFound, `the method ${r.method} does not exist/is not available`)
    } else {
      try {
        const result = await method((r.params as unknown[] | undefined) ?? [], caller)
        answer = { jsonrpc: '2.0', id, result: result === undefined ? null : result }
      } catch (error) {
        answer = error instanceof RpcError ? errorResponse(id, error.code, error.message, error.data) : errorResponse(id, JsonRpcCode.internalError, errorText(error))
      }
    }
    return hasId ? answer : undefined
  }
}

/**
 * The signer proven by an `X-Flashbots-Signature: <address>:<signature>` header: the EIP-191
 * personal_sign of the hex string keccak256(body), made by <address>.
 * @throws Error saying what is wrong (format, unrecoverable, another signer)
 */
export async function verifyFlashbotsSignature(body: Uint8Array, header: string): Promise<Address> {
  const colon = header.indexOf(':')
  const address = colon < 0 ? '' : header.slice(0, colon).trim()
  const signature = colon < 0 ? '' : header.slice(colon + 1).trim()
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error('expected <address>:<signature>, the address being 20 bytes of 0x-hex')
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new Error('expected <address>:<signature>, the signature being 65 bytes of 0x-hex')
  let recovered: string
  try {
    recovered = await recoverHashAddress(hexToBytes(hashMessage(keccak256(body))), signature as Hex)
  } catch {
    throw new Error('the signature cannot be recovered')
  }
  if (recovered.toLowerCase() !== address.toLowerCase()) throw new Error(`the body was not signed by ${address}`)
  return address.toLowerCase() as Address
}

/** The body, or undefined as soon as it exceeds `max` bytes (the rest is left unread). */
function readBody(req: IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > max) {
        settled = true
        req.off('data', onData)
        req.pause()
        resolve(undefined)
        return
      }
      chunks.push(chunk)
    }
    req.on('data', onData)
    req.once('end', () => {
      if (settled) return
      settled = true
      resolve(Buffer.concat(chunks, size))
    })
    req.once('error', (error) => {
      if (settled) return
      settled = true
      reject(error)
    })
    req.once('close', () => {
      if (settled) return
      settled = true
      reject(new Error('the client closed the connection before the body was complete'))
    })
  })
}

function refuseTooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  res.setHeader('connection', 'close')
  send(res, 413, errorResponse(null, JsonRpcCode.invalidRequest, `request body larger than ${max} bytes`))
  // what is left of the body is never read: the connection closes after the answer
  res.once('finish', () => req.destroy())
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

function errorResponse(id: JsonRpcId, code: number, message: string, data?: string): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } }
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload)
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function endEmpty(res: ServerResponse): void {
  res.writeHead(204)
  res.end()
}
