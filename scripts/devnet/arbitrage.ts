/**
 * Is there an arbitrage on the devnet? Checks every cycle of two or three pools (A -> B -> A,
 * A -> B -> C -> A) at the pools' marginal prices after fees: a cycle whose product of marginal
 * rates exceeds 1 is an arbitrage (profitable before gas for a small enough input).
 *
 * This is the ground truth behind the fixtures' `createsArbitrage` flag and the "genesis has no
 * arbitrage" property. Exact rationals of bigints throughout. Uniswap V4 pools are read through
 * PoolManager.extsload (their fee is the LP fee plus nothing: the devnet sets no protocol fee), and
 * native ETH counts as WETH (wrapping is 1:1).
 */
import { encodeFunctionData, getAddress, zeroAddress, type Hex } from 'viem'
import { decodeV4Slot0, v4LiquiditySlot, v4Slot0Slot } from '../../src/pools/uniswap-v4-slots.ts'
import type { Ratio } from './price-math.ts'
import { allV2Pairs, allV3Pools, type DevnetRegistry } from './registry.ts'
import { rpcBatch } from './rpc.ts'

export interface PoolPrice {
  name: string
  address: Hex
  token0: Hex
  token1: Hex
  /** fee in millionths */
  feePpm: bigint
  /** marginal price of token0 in token1 base units, before fee; undefined when the pool has no liquidity at its price */
  price: Ratio | undefined
}

export interface ArbitrageCycle {
  /** pool names in trading order */
  pools: string[]
  /** how much more than 1 the product of marginal rates is, in millionths (positive = arbitrage) */
  edgePpm: number
}

const SEL_GET_RESERVES = '0x0902f1ac'
const SEL_SLOT0 = '0x3850c7bd'
const SEL_LIQUIDITY = '0x1a686502'

/** Marginal prices of every registry pool at `blockTag` (e.g. '0x0', '0x1'). */
export async function readPoolPrices(url: string, registry: DevnetRegistry, blockTag: string): Promise<PoolPrice[]> {
  const v2Pairs = allV2Pairs(registry)
  const v3Pools = allV3Pools(registry)
  const calls = [
    ...v2Pairs.map((p) => ({ method: 'eth_call', params: [{ to: p.address, data: SEL_GET_RESERVES }, blockTag] })),
    ...v3Pools.flatMap((p) => [
      { method: 'eth_call', params: [{ to: p.address, data: SEL_SLOT0 }, blockTag] },
      { method: 'eth_call', params: [{ to: p.address, data: SEL_LIQUIDITY }, blockTag] },
    ]),
  ]
  const v4Pools = registry.v4?.pools ?? []
  const extsload = (slot: Hex) => ({
    method: 'eth_call',
    params: [{ to: registry.v4.poolManager, data: encodeFunctionData({ abi: EXTSLOAD_ABI, functionName: 'extsload', args: [slot] }) }, blockTag],
  })
  calls.push(...v4Pools.flatMap((p) => [extsload(v4Slot0Slot(p.poolId)), extsload(v4LiquiditySlot(p.poolId))]))
  const results = await rpcBatch<Hex>(url, calls)
  const word = (data: Hex, i: number) => BigInt(`0x${data.slice(2 + 64 * i, 2 + 64 * (i + 1))}`)
  const prices: PoolPrice[] = []
  v2Pairs.forEach((p, i) => {
    const data = results[i]!
    const [r0, r1] = [word(data, 0), word(data, 1)]
    prices.push({
      name: p.venue === 'uniswap-v2' ? `V2 ${p.name}` : `${p.venue} ${p.name}`,
      address: p.address,
      token0: p.token0,
      token1: p.token1,
      feePpm: BigInt(p.feeBps * 100),
      price: r0 > 0n && r1 > 0n ? { num: r1, den: r0 } : undefined,
    })
  })
  const offset = v2Pairs.length
  v3Pools.forEach((p, i) => {
    const sqrtPriceX96 = word(results[offset + 2 * i]!, 0)
    const liquidity = word(results[offset + 2 * i + 1]!, 0)
    prices.push({
      name: p.venue === 'uniswap-v3' ? `V3 ${p.name}` : `${p.venue} ${p.name}`,
      address: p.address,
      token0: p.token0,
      token1: p.token1,
      feePpm: BigInt(p.fee),
      price: liquidity > 0n ? { num: sqrtPriceX96 * sqrtPriceX96, den: 1n << 192n } : undefined,
    })
  })
  const v4Offset = offset + 2 * v3Pools.length
  const asToken = (currency: Hex) => (currency === zeroAddress ? registry.weth : currency)
  v4Pools.forEach((p, i) => {
    const slot0 = decodeV4Slot0(word(results[v4Offset + 2 * i]!, 0))
    const liquidity = word(results[v4Offset + 2 * i + 1]!, 0) & ((1n << 128n) - 1n)
    prices.push({
      name: `V4 ${p.name}`,
      address: registry.v4.poolManager,
      token0: asToken(p.currency0),
      token1: asToken(p.currency1),
      feePpm: BigInt(slot0.lpFee),
      price: liquidity > 0n ? { num: slot0.sqrtPriceX96 * slot0.sqrtPriceX96, den: 1n << 192n } : undefined,
    })
  })
  return prices
}

const EXTSLOAD_ABI = [
  { type: 'function', name: 'extsload', stateMutability: 'view', inputs: [{ name: 'slot', type: 'bytes32' }], outputs: [{ type: 'bytes32' }] },
] as const

interface Edge {
  pool: PoolPrice
  from: string
  to: string
  rate: Ratio
}

/** Both trading directions of each pool with a price, as rates after the fee. */
function edges(pools: readonly PoolPrice[]): Edge[] {
  const out: Edge[] = []
  for (const pool of pools) {
    if (!pool.price) continue
    const keep = 1_000_000n - pool.feePpm
    const [t0, t1] = [getAddress(pool.token0), getAddress(pool.token1)]
    out.push({ pool, from: t0, to: t1, rate: { num: pool.price.num * keep, den: pool.price.den * 1_000_000n } })
    out.push({ pool, from: t1, to: t0, rate: { num: pool.price.den * keep, den: pool.price.num * 1_000_000n } })
  }
  return out
}

/** The cycle of two or three pools with the largest edge (possibly negative: no arbitrage). */
export function bestCycle(pools: readonly PoolPrice[]): ArbitrageCycle {
  const all = edges(pools)
  const from = new Map<string, Edge[]>()
  for (const e of all) from.set(e.from, [...(from.get(e.from) ?? []), e])
  let best: { path: Edge[]; num: bigint; den: bigint } | undefined
  const consider = (path: Edge[]) => {
    let num = 1n
    let den = 1n
    for (const e of path) {
      num *= e.rate.num
      den *= e.rate.den
    }
    // compare num/den with best.num/best.den without division
    if (!best || num * best.den > best.num * den) best = { path, num, den }
  }
  for (const e1 of all) {
    for (const e2 of from.get(e1.to) ?? []) {
      if (e2.pool === e1.pool) continue
      if (e2.to === e1.from) consider([e1, e2])
      for (const e3 of from.get(e2.to) ?? []) {
        if (e3.pool === e1.pool || e3.pool === e2.pool || e3.to !== e1.from) continue
        consider([e1, e2, e3])
      }
    }
  }
  if (!best) throw new Error('no cycle of pools found')
  const edgePpm = ((best.num - best.den) * 1_000_000n) / best.den
  return { pools: best.path.map((e) => e.pool.name), edgePpm: Number(edgePpm) }
}
