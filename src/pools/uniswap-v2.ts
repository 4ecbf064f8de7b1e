/**
 * Uniswap V2-style pairs as a pool kind: found with the venue factory's getPair (and kept only at
 * the CREATE2 address the venue's init-code hash gives, the one our contracts accept), read with
 * getReserves and token0, quoted with getAmountOut at the venue's fee (pool.fee: Uniswap's 30 bps,
 * a fork's own).
 */
import type { Address } from '../chain/types.ts'
import { getAmountOut, isAmmMathError, v2MaxRate } from '../dex/math/index.ts'
import { V2_FACTORY_ABI, V2_PAIR_ABI } from './abis.ts'
import { checkToken0, foundPool, type HopQuote, type PoolKind } from './pool-kind.ts'
import { v2FeeBps, type PoolRef, type V2PoolSnapshot, type V2Venue } from './pools.ts'
import { venuePoolAddress } from './venues.ts'
import type { ViewCaller } from './view-calls.ts'

export function quoteV2(pool: V2PoolSnapshot, zeroForOne: boolean, amountIn: bigint): HopQuote | undefined {
  const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
  if (amountIn <= 0n || reserveIn === 0n || reserveOut === 0n) return undefined
  try {
    const amountOut = getAmountOut(amountIn, reserveIn, reserveOut, v2FeeBps(pool))
    return amountOut > 0n ? { amountOut, ticksCrossed: 0 } : undefined
  } catch (err) {
    if (isAmmMathError(err)) return undefined
    throw err
  }
}

async function loadV2(caller: ViewCaller, ref: PoolRef): Promise<V2PoolSnapshot> {
  const [reserves, token0] = await Promise.all([caller.read(ref.address, V2_PAIR_ABI, 'getReserves', []), caller.read(ref.address, V2_PAIR_ABI, 'token0', [])])
  checkToken0(ref, token0, 'token0')
  return { protocol: 'uniswap-v2', address: ref.address, token0: ref.token0, token1: ref.token1, fee: ref.fee, venue: ref.venue, reserve0: reserves[0], reserve1: reserves[1] }
}

function roundsToZeroV2(pool: V2PoolSnapshot, zeroForOne: boolean, amountIn: bigint): boolean {
  if (amountIn <= 0n) return false
  const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0]
  if (reserveIn === 0n || reserveOut === 0n) return false
  try {
    return getAmountOut(amountIn, reserveIn, reserveOut, v2FeeBps(pool)) === 0n
  } catch (err) {
    if (isAmmMathError(err)) return false
    throw err
  }
}

export const UNISWAP_V2_PAIRS: PoolKind<V2PoolSnapshot, V2Venue> = Object.freeze({
  protocol: 'uniswap-v2',
  lookUp: (caller: ViewCaller, venue: V2Venue, token0: Address, token1: Address) => [
    caller
      .read(venue.factory, V2_FACTORY_ABI, 'getPair', [token0, token1])
      .then((pair) => foundPool(pair, { protocol: 'uniswap-v2', token0, token1, fee: venue.feeBps * 100, venue: venue.name }, venuePoolAddress(venue, token0, token1))),
  ],
  load: (caller: ViewCaller, ref: PoolRef) => loadV2(caller, ref),
  quote: quoteV2,
  maxRate: (pool: V2PoolSnapshot, zeroForOne: boolean) => (zeroForOne ? v2MaxRate(pool.reserve0, pool.reserve1, v2FeeBps(pool)) : v2MaxRate(pool.reserve1, pool.reserve0, v2FeeBps(pool))),
  roundsToZero: roundsToZeroV2,
  hasLiquidity: (pool: V2PoolSnapshot) => pool.reserve0 > 0n && pool.reserve1 > 0n,
})
