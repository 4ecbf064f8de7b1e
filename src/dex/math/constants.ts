/**
 * Bounds of the Solidity integer types the ported math runs in. bigint has no width, so every
 * place the contract relies on a width (a checked cast, a SafeMath op, a wrapping product test)
 * compares against one of these.
 */

export const MAX_UINT256 = (1n << 256n) - 1n
export const MAX_UINT160 = (1n << 160n) - 1n
export const MAX_UINT128 = (1n << 128n) - 1n
export const MAX_INT256 = (1n << 255n) - 1n
export const MIN_INT256 = -(1n << 255n)
export const MAX_INT128 = (1n << 127n) - 1n
export const MIN_INT128 = -(1n << 127n)

/** FixedPoint96: prices are sqrt(token1/token0) as Q64.96 */
export const Q96 = 1n << 96n
export const RESOLUTION_96 = 96n

/** V3 fees are in hundredths of a bip: 1e6 = 100% */
export const FEE_PIPS_DENOMINATOR = 1_000_000n
