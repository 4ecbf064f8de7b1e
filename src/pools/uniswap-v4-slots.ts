/**
 * Where Uniswap V4's PoolManager keeps a pool: its StateLibrary's layout (v4-core
 * src/libraries/StateLibrary.sol). The pools mapping is storage slot 6, keyed by the PoolId
 * (keccak256 of the abi-encoded PoolKey); a pool's Pool.State starts at keccak256(poolId . 6) with
 * slot0 (sqrtPriceX96 | tick | protocolFee | lpFee) at +0, the fee growths at +1 and +2, liquidity
 * at +3, and the ticks and tickBitmap mappings at +4 and +5. PoolManager.extsload(slot) is the
 * on-chain view of these same words; the service reads them through the state reader directly.
 */
import { encodeAbiParameters, keccak256 } from 'viem'
import type { Address, Hex } from '../chain/types.ts'

export const V4_POOLS_SLOT = 6n
const LIQUIDITY_OFFSET = 3n
const TICKS_OFFSET = 4n
const TICK_BITMAP_OFFSET = 5n

/** A V4 pool's identity: currency0 < currency1 (address(0) is native ETH), LP fee in pips or the dynamic flag, spacing, hooks. */
export interface V4PoolKey {
  currency0: Address
  currency1: Address
  fee: number
  tickSpacing: number
  hooks: Address
}

export interface V4Slot0 {
  sqrtPriceX96: bigint
  tick: number
  /** two 12-bit protocol fees in pips: zeroForOne in the low bits, oneForZero in the high bits */
  protocolFee: number
  /** the LP fee in pips the pool charges now (for a dynamic-fee pool, what its hook set last) */
  lpFee: number
}

const POOL_KEY_TYPES = [
  { type: 'address' },
  { type: 'address' },
  { type: 'uint24' },
  { type: 'int24' },
  { type: 'address' },
] as const

export function v4PoolId(key: V4PoolKey): Hex {
  return keccak256(encodeAbiParameters(POOL_KEY_TYPES, [key.currency0, key.currency1, key.fee, key.tickSpacing, key.hooks]))
}

const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`
const add = (slot: Hex, offset: bigint): Hex => word(BigInt(slot) + offset)
const mappingSlot = (key: Hex, slot: Hex): Hex => keccak256(`0x${key.slice(2)}${slot.slice(2)}` as Hex)
const int256Word = (n: number): Hex => word(BigInt.asUintN(256, BigInt(n)))

/** The pool's Pool.State base slot (= its slot0 word). */
export function v4Slot0Slot(poolId: Hex): Hex {
  return mappingSlot(poolId, word(V4_POOLS_SLOT))
}

export function v4LiquiditySlot(poolId: Hex): Hex {
  return add(v4Slot0Slot(poolId), LIQUIDITY_OFFSET)
}

/** ticks[tick]: word 0 is liquidityGross (low 128 bits) | liquidityNet (high 128 bits, signed). */
export function v4TickSlot(poolId: Hex, tick: number): Hex {
  return mappingSlot(int256Word(tick), add(v4Slot0Slot(poolId), TICKS_OFFSET))
}

/** tickBitmap[wordPos] (int16 keys, sign-extended to a word like every mapping key). */
export function v4TickBitmapSlot(poolId: Hex, wordPos: number): Hex {
  return mappingSlot(int256Word(wordPos), add(v4Slot0Slot(poolId), TICK_BITMAP_OFFSET))
}

export function decodeV4Slot0(w: bigint): V4Slot0 {
  return {
    sqrtPriceX96: w & ((1n << 160n) - 1n),
    tick: Number(BigInt.asIntN(24, w >> 160n)),
    protocolFee: Number((w >> 184n) & 0xffffffn),
    lpFee: Number((w >> 208n) & 0xffffffn),
  }
}

/** a tick's liquidityNet from its first word */
export function decodeV4LiquidityNet(w: bigint): bigint {
  return BigInt.asIntN(128, w >> 128n)
}
