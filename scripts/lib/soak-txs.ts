/**
 * The devnet load of bench:soak: distinct quote requests, eth_backrun parameter objects and
 * signed small swaps, built from fixtures/devnet/registry.json (tokens, V2 Router02 and pairs,
 * the dev accounts). Deterministic: a seeded generator drives every choice.
 */
import { readFileSync } from 'node:fs'
import { encodeFunctionData, parseAbi, type Hex } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

export interface SoakRegistry {
  chainId: number
  weth: string
  tokens: Array<{ symbol: string; decimals: number; address: string }>
  v2: { router02: string; pairs: Array<{ name: string; token0: string; token1: string; reserve0: string; reserve1: string }> }
  devAccounts: { searcherIndexes?: number[]; accounts: Array<{ index: number; address: string; privateKey: Hex }> }
}

export const registry = JSON.parse(readFileSync('fixtures/devnet/registry.json', 'utf8')) as SoakRegistry

const ROUTER02_ABI = parseAbi([
  'function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) payable returns (uint256[] amounts)',
  'function swapExactTokensForETH(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
])
/** 2100-01-01: "far ahead" */
export const FAR_DEADLINE = 4_102_444_800n
export const ETH_SENTINEL = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'

const lower = (a: string) => a.toLowerCase() as Hex
export const ROUTER02 = lower(registry.v2.router02)
const WETH = lower(registry.weth)

/** mulberry32: a small seeded generator, so a run's load is reproducible */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** a log-uniform draw in [lo, hi] */
export function logUniform(r: () => number, lo: number, hi: number): number {
  return Math.exp(Math.log(lo) + r() * (Math.log(hi) - Math.log(lo)))
}

/** `x` (a decimal amount) in base units of `decimals`, to 6 significant places */
export function units(x: number, decimals: number): bigint {
  return (BigInt(Math.round(x * 1e6)) * 10n ** BigInt(decimals)) / 1_000_000n
}

/** rough USD prices of the devnet's tokens (from its V2 reserves; only used to size amounts) */
const USD: Record<string, number> = { WETH: 3000, USDC: 1, USDT: 1, DAI: 1, WBTC: 60_000, UNI: 10, LINK: 15 }

// ------------------------------------------------------------------------------------------------
// quotes

export interface QuoteRequest {
  tokenIn: string
  tokenOut: string
  amountIn: string
}

/**
 * Quote requests over every ordered pair of the devnet's tokens (all route: every token has a V2
 * pair and V3 pools with WETH), amounts log-uniform between $10 and $30,000, plus the request's
 * counter in the lowest base units so no two are the same request (no answer-cache hits).
 */
export function quoteRequests(seed: number): (i: number) => QuoteRequest {
  const r = rng(seed)
  const tokens = registry.tokens
  return (i) => {
    const a = Math.floor(r() * tokens.length)
    let b = Math.floor(r() * (tokens.length - 1))
    if (b >= a) b++
    const tin = tokens[a]
    const usd = logUniform(r, 10, 30_000)
    const amount = units(usd / USD[tin.symbol], tin.decimals) + BigInt(i + 1)
    return { tokenIn: lower(tin.address), tokenOut: lower(tokens[b].address), amountIn: amount.toString() }
  }
}

// ------------------------------------------------------------------------------------------------
// eth_backrun

export interface BackrunParams {
  to: string
  calldata: Hex
  value: string
  tokenIn: string
  amountIn: string
}

/** the V2 WETH pairs: token, its reserve and WETH's */
function wethPairs(): Array<{ token: { symbol: string; address: Hex; decimals: number }; wethReserve: bigint; tokenReserve: bigint }> {
  return registry.v2.pairs
    .filter((p) => lower(p.token0) === WETH || lower(p.token1) === WETH)
    .map((p) => {
      const wethIs0 = lower(p.token0) === WETH
      const tokenAddress = lower(wethIs0 ? p.token1 : p.token0)
      const t = registry.tokens.find((x) => lower(x.address) === tokenAddress)!
      return {
        token: { symbol: t.symbol, address: tokenAddress, decimals: t.decimals },
        wethReserve: BigInt(wethIs0 ? p.reserve0 : p.reserve1),
        tokenReserve: BigInt(wethIs0 ? p.reserve1 : p.reserve0),
      }
    })
}

/**
 * User swaps through V2 Router02 over the WETH pairs, as a partner would ask eth_backrun about them:
 * ETH -> token (swapExactETHForTokens) or token -> ETH (swapExactTokensForETH). 40% are large,
 * 4-12% of the pair's reserve, which moves its price away from the V3 pools' and leaves an
 * arbitrage; the others are small (0.01-1 ETH worth), which leave none. Amounts differ per request.
 */
export function backrunParams(seed: number): (i: number) => BackrunParams {
  const r = rng(seed)
  const pairs = wethPairs()
  const recipient = '0x000000000000000000000000000000000000beef'
  return (i) => {
    const pair = pairs[Math.floor(r() * pairs.length)]
    const large = r() < 0.4
    const ethForTokens = r() < 0.6
    const share = 0.04 + r() * 0.08
    if (ethForTokens) {
      const value = (large ? (pair.wethReserve * BigInt(Math.round(share * 1e6))) / 1_000_000n : units(logUniform(r, 0.01, 1), 18)) + BigInt(i + 1)
      const calldata = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'swapExactETHForTokens', args: [1n, [WETH, pair.token.address], recipient, FAR_DEADLINE] })
      return { to: ROUTER02, calldata, value: value.toString(), tokenIn: ETH_SENTINEL, amountIn: value.toString() }
    }
    const amountIn =
      (large ? (pair.tokenReserve * BigInt(Math.round(share * 1e6))) / 1_000_000n : units((logUniform(r, 0.01, 1) * USD.WETH) / USD[pair.token.symbol], pair.token.decimals)) + BigInt(i + 1)
    const calldata = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'swapExactTokensForETH', args: [amountIn, 1n, [pair.token.address, WETH], recipient, FAR_DEADLINE] })
    return { to: ROUTER02, calldata, value: '0', tokenIn: pair.token.address, amountIn: amountIn.toString() }
  }
}

// ------------------------------------------------------------------------------------------------
// signed submissions

/** the devnet accounts that are not searcher keys (registry devAccounts.searcherIndexes excluded) */
export function userAccounts(): PrivateKeyAccount[] {
  const reserved = new Set(registry.devAccounts.searcherIndexes ?? [8])
  return registry.devAccounts.accounts.filter((a) => !reserved.has(a.index)).map((a) => privateKeyToAccount(a.privateKey))
}

export function searcherPrivateKeys(): Hex[] {
  const indexes = registry.devAccounts.searcherIndexes ?? [8]
  return indexes.map((i) => registry.devAccounts.accounts.find((a) => a.index === i)!.privateKey)
}

export interface SmallSwap {
  account: PrivateKeyAccount
  nonce: number
  /** base fee the fee cap is set from */
  baseFee: bigint
}

/**
 * A small swap (0.01-0.2 ETH, plus `distinct` wei) for a token through V2 Router02, minimum output
 * 1, deadline far ahead, EIP-1559 with a 1 gwei tip and a fee cap of twice the base fee plus the tip.
 */
export function smallSwapSigner(seed: number): (swap: SmallSwap, distinct: number) => Promise<Hex> {
  const r = rng(seed)
  const pairs = wethPairs()
  return async ({ account, nonce, baseFee }, distinct) => {
    const pair = pairs[Math.floor(r() * pairs.length)]
    const value = units(0.01 + r() * 0.19, 18) + BigInt(distinct)
    const data = encodeFunctionData({ abi: ROUTER02_ABI, functionName: 'swapExactETHForTokens', args: [1n, [WETH, pair.token.address], account.address, FAR_DEADLINE] })
    const tip = 1_000_000_000n
    return account.signTransaction({
      chainId: registry.chainId,
      type: 'eip1559',
      nonce,
      to: ROUTER02,
      data,
      value,
      gas: 250_000n,
      maxFeePerGas: baseFee * 2n + tip,
      maxPriorityFeePerGas: tip,
    })
  }
}
