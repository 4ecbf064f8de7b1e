/**
 * The request mix of the quote benchmarks (bench:quote, profile:quote), which test/support/quote-mix.ts
 * holds, over HTTP. Every request of a run may carry a distinct amount (the mix's amount plus a
 * counter, in wei), so none is answered from the service's per-block answer cache.
 */
import autocannon from 'autocannon'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'
import { QUOTE_MIX } from '../../test/support/quote-mix.ts'

export { QUOTE_MIX }

/** distinct amounts across the whole process, so no two requests are the same */
let counter = 0

/** The body of the mix's request `i` (modulo its length); `distinct` adds the counter to its amount. */
export function quoteBody(i: number, distinct: boolean): string {
  const m = QUOTE_MIX[i % QUOTE_MIX.length]
  return JSON.stringify({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: (m.amountIn + (distinct ? BigInt(++counter) : 0n)).toString() })
}

/** POST one quote; throws unless it answered 200 (within `timeoutMs` when given). */
export async function postQuote(url: string, text: string, apiKey = DEV_API_KEY, timeoutMs?: number): Promise<{ ms: number; json: Record<string, unknown> }> {
  const t = performance.now()
  const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: text, signal })
  const json = (await res.json()) as Record<string, unknown>
  const ms = performance.now() - t
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${JSON.stringify(json)}`)
  return { ms, json }
}

/**
 * autocannon's requests for the mix, cycling through it with distinct amounts (`quoteBody(i, true)`),
 * authenticated with the dev API key: the saturating load of bench:quote's probes.
 */
export function mixRequests(): autocannon.Request[] {
  let i = 0
  return [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEV_API_KEY }, setupRequest: (req) => ({ ...req, body: quoteBody(i++, true) }) }]
}

/** `connections` connections of the mix's distinct quotes on `url` for `seconds`, as fast as answered. */
export function quoteLoad(url: string, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({ url, connections, duration: seconds, requests: mixRequests() })
}
