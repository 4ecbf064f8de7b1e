/**
 * The request mix of the quote benchmarks (bench:quote, profile:quote) and of the test that checks
 * the route math against the EVM on it: direct pairs, two and three hops, splits; small and large,
 * on the devnet's registry tokens.
 */
import type { QuoteRequest } from '../../src/quote/types.ts'
import { loadRegistry, tokenAddress } from './devnet.ts'

const registry = loadRegistry()
const token = (symbol: string) => tokenAddress(registry, symbol)
const units = (symbol: string, n: number) => (BigInt(Math.round(n * 1e6)) * 10n ** BigInt(registry.tokens.find((t) => t.symbol === symbol)!.decimals)) / 1_000_000n

export const QUOTE_MIX: readonly QuoteRequest[] = [
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 1) },
  { tokenIn: token('WETH'), tokenOut: token('USDC'), amountIn: units('WETH', 66) },
  { tokenIn: token('USDC'), tokenOut: token('UNI'), amountIn: units('USDC', 10_000) },
  { tokenIn: token('LINK'), tokenOut: token('DAI'), amountIn: units('LINK', 666.67) },
  { tokenIn: token('WBTC'), tokenOut: token('DAI'), amountIn: units('WBTC', 0.5) },
  { tokenIn: token('DAI'), tokenOut: token('WETH'), amountIn: units('DAI', 5_000) },
  { tokenIn: token('UNI'), tokenOut: token('LINK'), amountIn: units('UNI', 1_000) },
  { tokenIn: token('USDT'), tokenOut: token('WBTC'), amountIn: units('USDT', 20_000) },
]
