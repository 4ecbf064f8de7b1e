/**
 * UnsafeMath (v3-core): ceil(x / y) written in assembly. EVM `div` and `mod` by zero yield 0
 * instead of reverting, so divRoundingUp(x, 0) is 0 on chain and is 0 here too; every caller in
 * the contracts has already required y > 0, so this only matters for bit-exactness.
 */
export function divRoundingUp(x: bigint, y: bigint): bigint {
  if (y === 0n) return 0n
  const q = x / y
  // multiply back instead of a second (remainder) division: cheaper on wide bigints
  return q * y === x ? q : q + 1n
}
