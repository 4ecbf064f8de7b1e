/**
 * Market data: the pools of a chain's venues (discovery through the factories), their state at one
 * block (view calls on the pinned state, cached per block), the exact per-pool quoting math, the
 * pool graph and its simple paths, and prices read off the pools (gas valued in a token). Used by
 * routing and backrun; imports only chain, dex/math and evm. Each kind of pool (Uniswap V2 pairs,
 * V3 pools) is a PoolKind (pool-kind.ts says what a new venue or kind takes).
 */
export * from './pools.ts'
export * from './venues.ts'
export { ViewCallError, ViewCaller, VIEW_CALLER, blockKey } from './view-calls.ts'
export * from './block-scoped-cache.ts'
export type { HopQuote, PoolKind, PoolLoadSettings } from './pool-kind.ts'
export * from './pool-kinds.ts'
export * from './uniswap-v2.ts'
export * from './uniswap-v3.ts'
export * from './uniswap-v4.ts'
export * from './uniswap-v4-slots.ts'
export * from './pool-discovery.ts'
export * from './pool-state.ts'
export * from './pool-quote.ts'
export * from './paths.ts'
export * from './gas-price.ts'
