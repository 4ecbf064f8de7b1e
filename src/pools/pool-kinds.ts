/**
 * Every pool kind the layer knows, by protocol: discovery, the pool-state loader and the quoting
 * functions dispatch through this table and know no protocol themselves. A PoolProtocol member
 * without an entry here does not compile.
 */
import type { PoolKind } from './pool-kind.ts'
import type { PoolProtocol, PoolSnapshot, Venue } from './pools.ts'
import { UNISWAP_V2_PAIRS } from './uniswap-v2.ts'
import { UNISWAP_V3_POOLS } from './uniswap-v3.ts'
import { UNISWAP_V4_POOLS } from './uniswap-v4.ts'

export const POOL_KINDS: { readonly [P in PoolProtocol]: PoolKind<Extract<PoolSnapshot, { protocol: P }>, Extract<Venue, { protocol: P }>> } = Object.freeze({
  'uniswap-v2': UNISWAP_V2_PAIRS,
  'uniswap-v3': UNISWAP_V3_POOLS,
  'uniswap-v4': UNISWAP_V4_POOLS,
})

/** the kind of pools of this protocol, typed for any snapshot (the protocol of the snapshot passed must match) */
export function poolKind(protocol: PoolProtocol): PoolKind {
  return POOL_KINDS[protocol] as PoolKind
}

/** true when the pool holds anything a swap could take */
export function hasLiquidity(pool: PoolSnapshot): boolean {
  return poolKind(pool.protocol).hasLiquidity(pool)
}
