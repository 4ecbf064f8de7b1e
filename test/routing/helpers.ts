/**
 * Test helpers of the routing suite: the devnet (state, simulator, registry with the fields routing
 * needs), synthetic pools, and brute-force references written independently of src/routing (they
 * enumerate paths their own way and quote with src/dex/math directly).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address } from '../../src/chain/types.ts'
import {
  buildV3Pool,
  getAmountOut,
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  isAmmMathError,
  simulateV3Swap,
  type InitializedTick,
  type V3PoolState,
} from '../../src/dex/math/index.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { tickCoverage, type DexDeployment, type PoolSnapshot, type V2PoolSnapshot, type V3PoolSnapshot } from '../../src/pools/index.ts'
import { devnetContracts } from '../../src/node/chain-contracts.ts'
import { FIXTURES, GENESIS_PATH } from '../support/devnet.ts'

export interface RoutingRegistry {
  chainId: number
  weth: string
  tokens: Array<{ symbol: string; decimals: number; address: string }>
  baseTokens: Array<{ symbol: string; address: string }>
  v2: { factory: string; router02: string; pairs: Array<{ name: string; address: string; token0: string; token1: string; reserve0: string; reserve1: string }> }
  v3: {
    factory: string
    quoterV2: string
    swapRouter02: string
    pools: Array<{
      name: string
      address: string
      token0: string
      token1: string
      fee: number
      tickSpacing: number
      sqrtPriceX96: string
      tick: number
      liquidity: string
      positions: Array<{ tickLower: number; tickUpper: number; liquidity: string }>
    }>
  }
  extensions?: Record<string, string>
}

export const registry = JSON.parse(readFileSync(join(FIXTURES, 'devnet/registry.json'), 'utf8')) as RoutingRegistry
export const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
export const sim = new Simulator({ common: commonForChain(source.chainId) })

export const lower = (a: string): Address => a.toLowerCase() as Address

export function tok(symbol: string): Address {
  const t = registry.tokens.find((x) => x.symbol === symbol)
  if (!t) throw new Error(`no token ${symbol}`)
  return lower(t.address)
}

export function symbolOf(address: string): string {
  return registry.tokens.find((t) => lower(t.address) === lower(address))?.symbol ?? address
}

export const DEX: DexDeployment = {
  weth: lower(registry.weth),
  baseTokens: registry.baseTokens.map((t) => lower(t.address)),
  venues: devnetContracts(join(FIXTURES, 'devnet/registry.json')).venues,
}

export const E18 = 10n ** 18n

// ---------------------------------------------------------------- synthetic pools

let nextAddress = 0x1000
function syntheticAddress(): Address {
  return `0x${(nextAddress++).toString(16).padStart(40, '0')}` as Address
}

export function syntheticToken(n: number): Address {
  return `0x${(0xaa00 + n).toString(16).padStart(40, '0')}` as Address
}

/** a V2 pair between a and b holding reserveA of a and reserveB of b */
export function v2Pool(a: Address, b: Address, reserveA: bigint, reserveB: bigint, address: Address = syntheticAddress()): V2PoolSnapshot {
  const aIs0 = a < b
  return {
    protocol: 'uniswap-v2',
    address,
    token0: aIs0 ? a : b,
    token1: aIs0 ? b : a,
    fee: 3000,
    venue: 'uniswap-v2',
    reserve0: aIs0 ? reserveA : reserveB,
    reserve1: aIs0 ? reserveB : reserveA,
  }
}

/**
 * A V3 pool between a and b with its price at `tick`, positions given as [tickLower, tickUpper,
 * liquidity], fully loaded (coverage up to the tick bounds).
 */
export function v3Pool(a: Address, b: Address, fee: number, tickSpacing: number, tick: number, positions: Array<[number, number, bigint]>): V3PoolSnapshot {
  const [token0, token1] = a < b ? [a, b] : [b, a]
  const net = new Map<number, bigint>()
  let liquidity = 0n
  for (const [lo, hi, l] of positions) {
    net.set(lo, (net.get(lo) ?? 0n) + l)
    net.set(hi, (net.get(hi) ?? 0n) - l)
    if (lo <= tick && tick < hi) liquidity += l
  }
  const initializedTicks: InitializedTick[] = [...net].map(([t, liquidityNet]) => ({ tick: t, liquidityNet }))
  const sqrtPriceX96 = getSqrtRatioAtTick(tick)
  const state = buildV3Pool({ sqrtPriceX96, tick: getTickAtSqrtRatio(sqrtPriceX96), liquidity, fee, tickSpacing, initializedTicks })
  return { protocol: 'uniswap-v3', address: syntheticAddress(), token0, token1, fee, venue: 'uniswap-v3', state, coverage: tickCoverage(tick, tickSpacing, 1_000_000) }
}

// ---------------------------------------------------------------- brute-force references

export interface ReferenceQuote {
  amountOut: bigint
  ticksCrossed: number
}

/** exact output of one pool for the whole amount, or undefined (partial fill, zero out, revert) */
export function referenceQuote(pool: PoolSnapshot, tokenIn: Address, amountIn: bigint): ReferenceQuote | undefined {
  // a V4 key's currency1 is always an ERC-20 (its currency0 may be native ETH, which routes name WETH)
  const zeroForOne = pool.protocol === 'uniswap-v4' ? tokenIn !== pool.key.currency1 : tokenIn === pool.token0
  try {
    if (pool.protocol === 'uniswap-v2') {
      const out = getAmountOut(amountIn, zeroForOne ? pool.reserve0 : pool.reserve1, zeroForOne ? pool.reserve1 : pool.reserve0, pool.fee / 100)
      return out > 0n ? { amountOut: out, ticksCrossed: 0 } : undefined
    }
    const r = simulateV3Swap(pool.state as V3PoolState, { zeroForOne, amountSpecified: amountIn })
    const [used, out] = zeroForOne ? [r.amount0, -r.amount1] : [r.amount1, -r.amount0]
    return used === amountIn && out > 0n ? { amountOut: out, ticksCrossed: r.initializedTicksCrossed } : undefined
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

export interface ReferencePath {
  pools: PoolSnapshot[]
  tokens: Address[]
}

/** every simple path of 1..maxHops pools, by its own recursion over the pool list */
export function referencePaths(pools: readonly PoolSnapshot[], tokenIn: Address, tokenOut: Address, maxHops: number): ReferencePath[] {
  const out: ReferencePath[] = []
  const extend = (tokens: Address[], used: PoolSnapshot[]) => {
    const at = tokens[tokens.length - 1]
    if (at === tokenOut) {
      out.push({ pools: [...used], tokens: [...tokens] })
      return
    }
    if (used.length === maxHops) return
    for (const p of pools) {
      if (p.token0 !== at && p.token1 !== at) continue
      const next = p.token0 === at ? p.token1 : p.token0
      if (tokens.includes(next)) continue
      extend([...tokens, next], [...used, p])
    }
  }
  extend([tokenIn], [])
  return out
}

export function referencePathQuote(path: ReferencePath, amountIn: bigint): ReferenceQuote | undefined {
  let amount = amountIn
  let ticksCrossed = 0
  for (let i = 0; i < path.pools.length; i++) {
    const q = referenceQuote(path.pools[i], path.tokens[i], amount)
    if (q === undefined) return undefined
    amount = q.amountOut
    ticksCrossed += q.ticksCrossed
  }
  return { amountOut: amount, ticksCrossed }
}
