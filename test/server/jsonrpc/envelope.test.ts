import { describe, expect, it } from 'vitest'
import { checkEnvelope, encodeError, encodeSuccess, parseJsonText, readEchoId, readParamObject } from '../../../src/server/jsonrpc/envelope.ts'
import { InvalidParamsError, JsonRpcError, redactRpcUrl, redactingRequestSerializer } from '../../../src/server/jsonrpc/index.ts'

describe('envelope', () => {
  it('parseJsonText', () => {
    expect(parseJsonText('{"a":1}')).toEqual({ ok: true, value: { a: 1 } })
    expect(parseJsonText('\uFEFF[1]')).toEqual({ ok: true, value: [1] })
    expect(parseJsonText('null')).toEqual({ ok: true, value: null })
    expect(parseJsonText(undefined)).toEqual({ ok: false })
    expect(parseJsonText('')).toEqual({ ok: false })
    expect(parseJsonText('{"a":')).toEqual({ ok: false })
    const parsed = parseJsonText('{"__proto__":{"x":1},"b":{"\\u005f_proto__":{"y":2},"c":"\\u0041"}}')
    expect(parsed).toEqual({ ok: true, value: { b: { c: 'A' } } })
    if (parsed.ok) expect(Object.hasOwn(parsed.value as object, '__proto__')).toBe(false)
  })

  it('parses deeply nested JSON without overflowing the stack', () => {
    const depth = 100_000
    const result = parseJsonText(`${'['.repeat(depth)}${']'.repeat(depth)}`)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    // the value is exactly `depth` nested arrays, the innermost empty (walked without recursion)
    let node: unknown = result.value
    for (let level = 1; level < depth; level++) {
      expect(Array.isArray(node) && node.length === 1).toBe(true)
      node = (node as unknown[])[0]
    }
    expect(node).toEqual([])
    // not a request object: answered with an invalid-request envelope and id null
    expect(checkEnvelope(result.value)).toEqual({ ok: false, id: null, message: 'invalid request: expected a JSON-RPC request object' })
  })

  it('a request whose params nest deeply keeps its envelope', () => {
    const depth = 100_000
    const result = parseJsonText(`{"jsonrpc":"2.0","id":7,"method":"eth_backrun","params":[${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}]}`)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const check = checkEnvelope(result.value)
    expect(check.ok).toBe(true)
    if (!check.ok) return
    expect(check.call.id).toBe(7)
    expect(check.call.method).toBe('eth_backrun')
    const params = readParamObject(check.call.params)
    expect(params.ok).toBe(true)
    if (params.ok) expect(Object.keys(params.value)).toEqual(['a'])
    // an envelope whose id is unreadable echoes null, and the error envelope is exact
    const bad = parseJsonText(`{"jsonrpc":"2.0","id":1.5,"method":"m","params":[${'['.repeat(depth)}${']'.repeat(depth)}]}`)
    expect(bad.ok).toBe(true)
    if (!bad.ok) return
    const rejected = checkEnvelope(bad.value)
    expect(rejected).toEqual({ ok: false, id: null, message: 'invalid request: id must be a string or an integer (at most 2^53-1 in magnitude)' })
    if (!rejected.ok) {
      expect(encodeError(rejected.id, { code: -32600, message: rejected.message })).toBe(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or an integer (at most 2^53-1 in magnitude)"}}',
      )
    }
  })

  it('checkEnvelope reads the id before the other members', () => {
    expect(checkEnvelope({ jsonrpc: '2.0', id: 1, method: 'm', params: [{}] })).toEqual({ ok: true, call: { id: 1, method: 'm', params: [{}] } })
    expect(checkEnvelope({ jsonrpc: '2.0', method: 'm' })).toEqual({ ok: true, call: { id: undefined, method: 'm', params: undefined } })
    expect(checkEnvelope({ jsonrpc: '2.1', id: 'x', method: 'm' })).toMatchObject({ ok: false, id: 'x' })
    expect(checkEnvelope({ jsonrpc: '2.1', id: null, method: 'm' })).toMatchObject({ ok: false, id: null })
    expect(checkEnvelope([])).toMatchObject({ ok: false, id: null })
  })

  it('readEchoId', () => {
    expect(readEchoId({ id: 'a' })).toBe('a')
    expect(readEchoId({ id: 3 })).toBe(3)
    expect(readEchoId({ id: 3.5 })).toBeNull()
    expect(readEchoId({})).toBeNull()
    expect(readEchoId([{ id: 1 }])).toBeNull()
  })

  it('readParamObject', () => {
    expect(readParamObject([{ a: 1 }])).toEqual({ ok: true, value: { a: 1 } })
    for (const bad of [undefined, null, {}, [], [1], [[]], [null], [{}, {}], 'x']) expect(readParamObject(bad).ok).toBe(false)
  })

  it('encodes responses with the members in a fixed order', () => {
    expect(encodeSuccess(1, { a: 1 })).toBe('{"jsonrpc":"2.0","id":1,"result":{"a":1}}')
    expect(encodeSuccess('x', undefined)).toBe('{"jsonrpc":"2.0","id":"x","result":null}')
    expect(encodeSuccess(1, 1n)).toBeUndefined()
    expect(encodeSuccess(1, () => 1)).toBeUndefined()
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(encodeSuccess(1, cyclic)).toBeUndefined()
    expect(encodeError(null, { code: -32600, message: 'm' })).toBe('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}')
    expect(encodeError(2, { code: -1, message: 'm', data: [1] })).toBe('{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m","data":[1]}}')
    expect(encodeError(2, { code: -1, message: 'm', data: 1n })).toBeUndefined()
  })
})

describe('error classes', () => {
  it('InvalidParamsError is a JsonRpcError with code -32000', () => {
    const err = new InvalidParamsError('amountIn must be a decimal string')
    expect(err).toBeInstanceOf(JsonRpcError)
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe(-32000)
    expect(err.name).toBe('InvalidParamsError')
    expect(err.toErrorObject()).toEqual({ code: -32000, message: 'amountIn must be a decimal string' })
  })

  it('JsonRpcError carries data and cause', () => {
    const cause = new Error('inner')
    const err = new JsonRpcError(-32010, 'outer', { data: { a: 1 }, cause })
    expect(err.toErrorObject()).toEqual({ code: -32010, message: 'outer', data: { a: 1 } })
    expect(err.cause).toBe(cause)
    expect(() => new JsonRpcError(1.5, 'x')).toThrow(TypeError)
  })
})

describe('URL redaction', () => {
  it.each([
    ['/rpc/s3cr3t/backrun', '/rpc/[redacted]/backrun'],
    ['/rpc/s3cr3t/submit?x=1&y=/rpc/', '/rpc/[redacted]/submit?[redacted]'],
    ['/rpc/s3cr3t', '/rpc/[redacted]'],
    ['/rpc/', '/rpc/[redacted]'],
    ['/v1/rpc/s3cr3t/backrun', '/v1/rpc/[redacted]/backrun'],
    ['/RPC/s3cr3t/backrun', '/RPC/[redacted]/backrun'],
    ['/rpc/a%2Fb/backrun', '/rpc/[redacted]/backrun'],
    // not canonical: the token is not right after rpc
    ['/rpc//s3cr3t/backrun', '/rpc/[redacted]/[redacted]/backrun'],
    ['/rpc/x/../s3cr3t/backrun', '/rpc/[redacted]/[redacted]/[redacted]/backrun'],
    ['/rpc/./s3cr3t/submit', '/rpc/[redacted]/[redacted]/submit'],
    // secrets in the query
    ['/v1/quote?api_key=k3y', '/v1/quote?[redacted]'],
    ['/rpc/backrun?token=s3cr3t', '/rpc/[redacted]?[redacted]'],
    // words that are not ours are not shown
    ['/jsonrpc/keep/backrun', '/[redacted]/[redacted]/backrun'],
    ['/healthz', '/healthz'],
    [`/v1/submissions/0x${'ab'.repeat(32)}`, `/v1/submissions/0x${'ab'.repeat(32)}`],
    ['/v1/submissions/s3cr3t', '/v1/submissions/[redacted]'],
  ])('%s -> %s', (url, expected) => {
    expect(redactRpcUrl(url)).toBe(expected)
  })

  it('the serializer keeps the default fields and redacts the url', () => {
    expect(
      redactingRequestSerializer({ method: 'POST', url: '/rpc/tok/backrun', host: 'h', ip: '127.0.0.1', headers: { 'accept-version': '1' }, socket: { remotePort: 5 } }),
    ).toEqual({ method: 'POST', url: '/rpc/[redacted]/backrun', version: '1', host: 'h', remoteAddress: '127.0.0.1', remotePort: 5 })
  })
})
