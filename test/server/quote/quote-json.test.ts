/**
 * The 200 body a worker writes (src/server/quote/quote-json.ts) is, byte for byte and header for
 * header, what the route's compiled response serializer writes for the same answer: the route is
 * driven twice, once over a service answering the domain value (WORKERS=0) and once over one
 * answering quoteJson's string (the pool's facade), and the two responses compared.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { QuoteFailedError, type QuoteResult } from '../../../src/quote/types.ts'
import { parseQuoteJson, quoteJson } from '../../../src/server/quote/quote-json.ts'
import { FIXED_RESULT, VALID_BODY, buildHarness, postQuote, type Harness } from './harness.ts'

const { priceImpactBps: _omit, ...WITHOUT_IMPACT } = FIXED_RESULT
const SPLIT: QuoteResult = {
  ...FIXED_RESULT,
  amountOut: 2n ** 255n + 17n,
  gas: BigInt(Number.MAX_SAFE_INTEGER),
  calldata: `0x${'ab'.repeat(1_400)}`,
  priceImpactBps: -3.25,
  routes: [
    FIXED_RESULT.routes[0],
    { amountIn: 1n, amountOut: 0n, hops: [FIXED_RESULT.routes[0].hops[0], { ...FIXED_RESULT.routes[0].hops[0], protocol: 'uniswap-v2', fee: 3000 }] },
    { amountIn: 7n, amountOut: 9n, hops: [] },
  ],
}
const ANSWERS: Array<[string, QuoteResult]> = [
  ['a spec answer', FIXED_RESULT],
  ['no price impact', WITHOUT_IMPACT],
  ['three routes, a fractional negative impact, gas 2^53-1, 1.4 KB of calldata', SPLIT],
  ['no routes, zero impact', { ...FIXED_RESULT, priceImpactBps: 0, routes: [] }],
  ['an infinite impact (written as null by both)', { ...FIXED_RESULT, priceImpactBps: Number.POSITIVE_INFINITY }],
  ['a fractional fee (truncated by both)', { ...FIXED_RESULT, routes: [{ ...FIXED_RESULT.routes[0], hops: [{ ...FIXED_RESULT.routes[0].hops[0], fee: 499.9 }] }] }],
]

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.app.close()))
})

/** the route's response to VALID_BODY when its service answers `answer` (or throws it) */
async function respond(json: boolean, answer: () => Promise<QuoteResult>) {
  const harness = await buildHarness({ json })
  harnesses.push(harness)
  harness.service.behaviour = answer
  const res = await postQuote(harness.app, VALID_BODY)
  const { date: _date, ...headers } = res.headers
  return { status: res.statusCode, headers, body: res.body }
}

describe('quoteJson: the route\'s serializer, written beforehand', () => {
  it.each(ANSWERS)('%s: the same status, headers and bytes', async (_name, answer) => {
    const serialized = await respond(false, async () => answer)
    const written = await respond(true, async () => answer)
    expect(serialized.status).toBe(200)
    expect(written).toEqual(serialized)
    expect(quoteJson(answer)).toBe(serialized.body)
  })

  it('errors are the route\'s as before: a quote failure (422), a gas estimate out of range (500)', async () => {
    const failure = async () => {
      throw new QuoteFailedError('NO_ROUTE', 'no pools join the tokens', { tokenIn: 'x' })
    }
    const failed = await respond(true, failure)
    expect(failed.status).toBe(422)
    expect(failed).toEqual(await respond(false, failure))
    const tooMuchGas = async () => ({ ...FIXED_RESULT, gas: 2n ** 53n })
    const refused = await respond(true, tooMuchGas)
    expect(refused.status).toBe(500)
    expect(refused).toEqual(await respond(false, tooMuchGas))
    expect(() => quoteJson({ ...FIXED_RESULT, priceImpactBps: Number.NaN })).toThrow(RangeError)
  })

  it('parseQuoteJson gives back the domain value (the facade\'s quote())', () => {
    for (const [, answer] of ANSWERS.slice(0, 4)) expect(parseQuoteJson(quoteJson(answer))).toEqual(answer)
  })
})
