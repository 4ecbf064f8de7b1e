/**
 * Replays the JSON-RPC 2.0 specification's examples and go-ethereum's RPC test scripts
 * (fixtures/corpora/jsonrpc, see its NOTICE.md) against the JSON-RPC layer, comparing HTTP status,
 * error codes, ids and results; never messages.
 *
 * The methods those exchanges call (subtract, sum, test_echo, ...) are registered on a test-only
 * method table behind the submit endpoint. They take our one parameter object: positional
 * arguments arrive as `{ args: [...] }`, named ones as the object itself.
 *
 * Two replays:
 * 1. As written. Our envelope is stricter than JSON-RPC 2.0 and geth in one documented way
 *    (spec 2.4): `params` must be an array holding exactly one object. Exchanges whose outcome
 *    that changes are listed in ADAPTED with the reason and our expected answer; every other
 *    exchange must give the upstream answer.
 * 2. With params rewritten into our shape (positional `[a, b]` -> `[{"args":[a,b]}]`, named
 *    `{k: v}` -> `[{k: v}]`, absent or null -> `[{}]`). Every exchange must then give the upstream
 *    answer, with geth's -32602 (invalid params) read as our -32000 (spec 7.2).
 *
 * Exchanges that need a bidirectional transport are listed in SKIPPED with the reason.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidParamsError, type JsonRpcEndpointName, type MethodTable } from '../../../src/server/jsonrpc/index.ts'
import { buildTestApp, rpcUrl, type TestApp } from './helpers.ts'

const CORPUS = join(import.meta.dirname, '../../../fixtures/corpora/jsonrpc')
const GETH_DIR = join(CORPUS, 'geth-rpc-testdata')

// ---------------------------------------------------------------------------------------------
// reading the corpora

interface Exchange {
  /** `<file>#<n>` (n counts the file's requests from 1) or the spec example's name */
  key: string
  request: string
  /** expected response text; null = nothing is sent back */
  response: string | null
  /** further `<--` lines (server-initiated messages); only in skipped exchanges */
  extraResponses: string[]
  orderInsensitive: boolean
}

/** geth's scripts: `--> ` sends a message, each following `<-- ` line is one message expected back. */
function readGethScripts(): Exchange[] {
  const exchanges: Exchange[] = []
  for (const file of readdirSync(GETH_DIR).filter((f) => f.endsWith('.js') || f.endsWith('.json')).sort()) {
    const script: { request: string; responses: string[] }[] = []
    for (const line of readFileSync(join(GETH_DIR, file), 'utf8').split('\n')) {
      if (line.startsWith('--> ')) script.push({ request: line.slice(4), responses: [] })
      else if (line.startsWith('<-- ')) {
        const last = script.at(-1)
        if (last === undefined) throw new Error(`${file}: response before any request`)
        last.responses.push(line.slice(4))
      }
    }
    script.forEach((s, i) =>
      exchanges.push({
        key: `${file}#${i + 1}`,
        request: s.request,
        response: s.responses[0] ?? null,
        extraResponses: s.responses.slice(1),
        orderInsensitive: false,
      }),
    )
  }
  return exchanges
}

interface SpecCorpus {
  cases: { name: string; request: string; response: unknown; orderInsensitive?: boolean }[]
}

function readSpecExamples(): Exchange[] {
  const corpus = JSON.parse(readFileSync(join(CORPUS, 'jsonrpc2_spec_examples.json'), 'utf8')) as SpecCorpus
  return corpus.cases.map((c) => ({
    key: c.name,
    request: c.request,
    response: c.response === null ? null : JSON.stringify(c.response),
    extraResponses: [],
    orderInsensitive: c.orderInsensitive === true,
  }))
}

// ---------------------------------------------------------------------------------------------
// what we compare: per response object its id and either its error code or its result

type Outcome = { id: unknown; code: number } | { id: unknown; result: unknown }
type Answer = Outcome | Outcome[] | null

function outcomeOf(message: unknown): Outcome {
  const m = message as { id: unknown; error?: { code: number }; result?: unknown }
  return m.error !== undefined ? { id: m.id, code: m.error.code } : { id: m.id, result: m.result }
}

function answerOf(text: string | null): Answer {
  if (text === null || text === '') return null
  const value: unknown = JSON.parse(text)
  return Array.isArray(value) ? value.map(outcomeOf) : outcomeOf(value)
}

/** geth answers a malformed argument with -32602; the spec (7.2) makes that -32000 here. */
function translateGethCodes(answer: Answer): Answer {
  const one = (o: Outcome): Outcome => ('code' in o && o.code === -32602 ? { id: o.id, code: -32000 } : o)
  if (answer === null) return null
  return Array.isArray(answer) ? answer.map(one) : one(answer)
}

function sortedIfUnordered(answer: Answer, unordered: boolean): Answer {
  if (!unordered || !Array.isArray(answer)) return answer
  return [...answer].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
}

/** Every response object has exactly jsonrpc, id and one of result / error{code, message[, data]}. */
function expectWellFormed(text: string): void {
  const value: unknown = JSON.parse(text)
  for (const m of Array.isArray(value) ? value : [value]) {
    const keys = Object.keys(m as object).sort()
    expect([['error', 'id', 'jsonrpc'], ['id', 'jsonrpc', 'result']]).toContainEqual(keys)
    const { jsonrpc, error } = m as { jsonrpc: unknown; error?: { code: unknown; message: unknown; data?: unknown } }
    expect(jsonrpc).toBe('2.0')
    if (error !== undefined) {
      expect(Number.isInteger(error.code)).toBe(true)
      expect(typeof error.message).toBe('string')
      expect(Object.keys(error).filter((k) => k !== 'data').sort()).toEqual(['code', 'message'])
    }
  }
}

// ---------------------------------------------------------------------------------------------
// rewriting params into our one-object shape

function rewriteEntry(entry: unknown): unknown {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry
  const copy = { ...(entry as Record<string, unknown>) }
  const params = copy.params
  if (Array.isArray(params)) copy.params = [{ args: params }]
  else if (params === undefined || params === null) copy.params = [{}]
  else if (typeof params === 'object') copy.params = [params]
  return copy
}

function rewriteParams(request: string): string {
  let value: unknown
  try {
    value = JSON.parse(request)
  } catch {
    return request // not JSON: stays a parse error
  }
  return JSON.stringify(Array.isArray(value) ? value.map(rewriteEntry) : rewriteEntry(value))
}

// ---------------------------------------------------------------------------------------------
// the test-only methods

/** positional arguments as our handlers receive them */
function args(params: Record<string, unknown>): unknown[] | undefined {
  return Array.isArray(params.args) ? params.args : undefined
}

/** geth's rpc/testservice_test.go test service, over our parameter object */
function gethEcho(params: Record<string, unknown>): Promise<unknown> {
  const a = args(params)
  if (a === undefined) throw new InvalidParamsError('non-array args')
  if (a.length < 1) throw new InvalidParamsError('missing value for required argument 0')
  if (a.length < 2) throw new InvalidParamsError('missing value for required argument 1')
  return Promise.resolve({ String: a[0], Int: a[1], Args: a[2] ?? null })
}

const GETH_METHODS: MethodTable = {
  test_echo: async (params) => gethEcho(params),
  test_echoWithCtx: async (params) => gethEcho(params),
  test_noArgsRets: async () => undefined,
  // geth fails to marshal the result; a BigInt does the same to JSON.stringify
  test_marshalError: async () => ({ value: 1n }),
  test_panic: async () => {
    throw new Error('method handler crashed')
  },
  nftest_echo: async (params) => args(params)?.[0],
}

/** the methods section 7 of the JSON-RPC 2.0 specification assumes */
const SPEC_METHODS: MethodTable = {
  subtract: async (params) => {
    const a = args(params)
    const [minuend, subtrahend] = a ?? [params.minuend, params.subtrahend]
    if (typeof minuend !== 'number' || typeof subtrahend !== 'number') throw new InvalidParamsError('minuend and subtrahend must be numbers')
    return minuend - subtrahend
  },
  sum: async (params) => (args(params) ?? []).reduce<number>((total, n) => total + Number(n), 0),
  get_data: async () => ['hello', 5],
  update: async () => undefined,
  notify_hello: async () => undefined,
  notify_sum: async () => undefined,
}

const asSubmit = (table: MethodTable): Record<string, JsonRpcEndpointName> => Object.fromEntries(Object.keys(table).map((m) => [m, 'submit']))

// ---------------------------------------------------------------------------------------------
// the documented departures

/** Replay 1 only: exchanges whose answer differs from upstream because params must be [ {…} ]. */
const ADAPTED: Record<string, { reason: string; expected: Answer }> = {
  'internal-error.js#1': { reason: 'params [] (no parameter object)', expected: { id: 1, code: -32600 } },
  'internal-error.js#2': { reason: 'params [] (no parameter object)', expected: { id: 2, code: -32600 } },
  'invalid-badversion.js#1': { reason: 'positional params ["x", 3]', expected: { id: 1, code: -32600 } },
  'invalid-batch.js#5': {
    reason: 'entry 1 has positional params ["foo", 1]; the unknown method in entry 3 is still -32601 (method lookup precedes the params check)',
    expected: [
      { id: 1, code: -32600 },
      { id: null, code: -32600 },
      { id: 2, code: -32601 },
      { id: null, code: -32600 },
    ],
  },
  'reqresp-batch.js#2': {
    reason: 'positional params [] and ["x", 3]',
    expected: [
      { id: 2, code: -32600 },
      { id: 3, code: -32600 },
    ],
  },
  'reqresp-echo.js#1': { reason: 'params [] (geth: -32602 missing argument)', expected: { id: 2, code: -32600 } },
  'reqresp-echo.js#2': { reason: 'positional params ["x"] (geth: -32602 missing argument)', expected: { id: 2, code: -32600 } },
  'reqresp-echo.js#3': { reason: 'positional params ["x", 3]', expected: { id: 2, code: -32600 } },
  'reqresp-echo.js#4': { reason: 'positional params ["x", 3, {...}]', expected: { id: 2, code: -32600 } },
  'reqresp-echo.js#5': { reason: 'positional params ["x", 3, {...}]', expected: { id: 2, code: -32600 } },
  'reqresp-namedparam.js#1': { reason: 'named params as a bare object (geth: -32602 non-array args)', expected: { id: 3, code: -32600 } },
  'reqresp-noargsrets.js#1': { reason: 'params [] (no parameter object)', expected: { id: 'foo', code: -32600 } },
  'reqresp-noparam.js#1': { reason: 'no params member', expected: { id: 3, code: -32600 } },
  'reqresp-paramsnull.js#1': { reason: 'params null', expected: { id: 3, code: -32600 } },
  'subscription.js#2': { reason: 'positional params [11]', expected: { id: 2, code: -32600 } },
  'positional params 1': { reason: 'positional params [42, 23]', expected: { id: 1, code: -32600 } },
  'positional params 2': { reason: 'positional params [23, 42]', expected: { id: 2, code: -32600 } },
  'named params 1': { reason: 'named params as a bare object', expected: { id: 3, code: -32600 } },
  'named params 2': { reason: 'named params as a bare object', expected: { id: 4, code: -32600 } },
  'batch mixed': {
    reason: 'positional params in sum/subtract, no params in get_data; foo.get (unknown) stays -32601; the notification stays silent',
    expected: [
      { id: '1', code: -32600 },
      { id: '2', code: -32600 },
      { id: null, code: -32600 },
      { id: '5', code: -32601 },
      { id: '9', code: -32600 },
    ],
  },
}

/** Not replayed at all. */
const SKIPPED: Record<string, string> = {
  'revcall.js#1': 'the server calls back into the client (server-to-client request): needs a bidirectional transport such as a websocket',
  'revcall.js#2': 'the client answers the server-to-client request of revcall.js#1',
  'revcall2.js#1': 'a server-to-client request follows the response: needs a bidirectional transport',
  'revcall2.js#2': 'the client answers the server-to-client request of revcall2.js#1',
  'subscription.js#1': 'a subscription pushes five notifications after the response: needs a websocket',
}

// ---------------------------------------------------------------------------------------------

const gethExchanges = readGethScripts()
const specExchanges = readSpecExamples()

describe('conformance corpora', () => {
  let geth: TestApp
  let spec: TestApp
  beforeAll(async () => {
    // geth's test server limits batches to 4 items (invalid-batch-toolarge.js)
    geth = await buildTestApp({ endpoints: { backrun: {}, submit: GETH_METHODS }, knownMethods: asSubmit(GETH_METHODS), maxBatchSize: 4 })
    spec = await buildTestApp({ endpoints: { backrun: {}, submit: SPEC_METHODS }, knownMethods: asSubmit(SPEC_METHODS) })
  })
  afterAll(async () => {
    await geth.app.close()
    await spec.app.close()
  })

  async function replay(t: TestApp, body: string): Promise<{ status: number; text: string }> {
    const res = await t.app.inject({ method: 'POST', url: rpcUrl('submit'), headers: { 'content-type': 'application/json' }, payload: body })
    return { status: res.statusCode, text: res.body }
  }

  it('reads every corpus file and every listed case exists', () => {
    expect(gethExchanges.length).toBe(40)
    expect(specExchanges.length).toBe(15)
    const keys = new Set([...gethExchanges, ...specExchanges].map((e) => e.key))
    for (const key of [...Object.keys(ADAPTED), ...Object.keys(SKIPPED)]) expect(keys, key).toContain(key)
    // exchanges with server-pushed messages must be skipped
    for (const e of gethExchanges) if (e.extraResponses.length > 0) expect(SKIPPED, e.key).toHaveProperty([e.key])
  })

  it('every ADAPTED case really departs from upstream (the list is not stale)', () => {
    for (const e of [...gethExchanges, ...specExchanges]) {
      const adapted = ADAPTED[e.key]
      if (adapted !== undefined) expect(adapted.expected, e.key).not.toEqual(answerOf(e.response))
    }
  })

  const suites: [string, () => TestApp, Exchange[]][] = [
    ['geth rpc/testdata', () => geth, gethExchanges],
    ['JSON-RPC 2.0 spec examples', () => spec, specExchanges],
  ]

  for (const [name, app, exchanges] of suites) {
    describe(name, () => {
      for (const e of exchanges) {
        const skipped = SKIPPED[e.key]
        if (skipped !== undefined) {
          it.skip(`${e.key}: ${skipped}`, () => undefined)
          continue
        }
        const adapted = ADAPTED[e.key]
        const upstream = translateGethCodes(answerOf(e.response))

        it(`${e.key} as written${adapted === undefined ? '' : ` (adapted: ${adapted.reason})`}`, async () => {
          const { status, text } = await replay(app(), e.request)
          expect(status).toBe(200)
          if (text !== '') expectWellFormed(text)
          const expected = adapted === undefined ? upstream : adapted.expected
          expect(sortedIfUnordered(answerOf(text), e.orderInsensitive)).toEqual(sortedIfUnordered(expected, e.orderInsensitive))
        })

        it(`${e.key} with params in our shape`, async () => {
          const { status, text } = await replay(app(), rewriteParams(e.request))
          expect(status).toBe(200)
          if (text !== '') expectWellFormed(text)
          expect(sortedIfUnordered(answerOf(text), e.orderInsensitive)).toEqual(sortedIfUnordered(upstream, e.orderInsensitive))
        })
      }
    })
  }
})
