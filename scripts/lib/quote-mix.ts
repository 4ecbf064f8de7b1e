/**
 * The request mix of the quote benchmarks (bench:quote, profile:quote): direct pairs, two and three
 * hops, splits; small and large, on the devnet's registry tokens. Every request of a run may carry a
 * distinct amount (the mix's amount plus a counter, in wei), so none is answered from the
 * service's per-block answer cache.
 */
import { readFileSync } from 'node:fs'
import { DEV_API_KEY } from '../../src/server/auth/api-keys.ts'

interface Registry {
  tokens: Array<{ symbol: string; decimals: number; address: string }>
}
const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as Registry
const token = (symbol: string) => registry.tokens.find((t) => t.symbol === symbol)!.address.toLowerCase()
const units = (symbol: string, n: number) => (BigInt(Math.round(n * 1e6)) * 10n ** BigInt(registry.tokens.find((t) => t.symbol === symbol)!.decimals)) / 1_000_000n

export const QUOTE_MIX: ReadonlyArray<{ tokenIn: string; tokenOut: string; amountIn: bigint }> = [
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 1) },
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 66) },
  { tokenIn: token('USDC'), tokenOut: token('UNI'), amountIn: units('USDC', 10_000) },
  { tokenIn: token('LINK'), tokenOut: token('DAI'), amountIn: units('LINK', 666.67) },
  { tokenIn: token('WBTC'), tokenOut: token('DAI'), amountIn: units('WBTC', 0.5) },
  { tokenIn: token('DAI'), tokenOut: token('WETH'), amountIn: units('DAI', 5_000) },
  { tokenIn: token('UNI'), tokenOut: token('LINK'), amountIn: units('UNI', 1_000) },
  { tokenIn: token('USDT'), tokenOut: token('WBTC'), amountIn: units('USDT', 20_000) },
]

/** distinct amounts across the whole process, so no two requests are the same */
let counter = 0

/** The body of the mix's request `i` (modulo its length); `distinct` adds the counter to its amount. */
export function quoteBody(i: number, distinct: boolean): string {
  const m = QUOTE_MIX[i % QUOTE_MIX.length]
  return JSON.stringify({ tokenIn: m.tokenIn, tokenOut: m.tokenOut, amountIn: (m.amountIn + (distinct ? BigInt(++counter) : 0n)).toString() })
}

/** POST one quote; throws unless it answered 200. */
export async function postQuote(url: string, text: string, apiKey = DEV_API_KEY): Promise<{ ms: number; json: Record<string, unknown> }> {
  const t = performance.now()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: text })
  const json = (await res.json()) as Record<string, unknown>
  const ms = performance.now() - t
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${JSON.stringify(json)}`)
  return { ms, json }
}
