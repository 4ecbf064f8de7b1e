/**
 * Calldata for SwapPlanRouter.swap (src/contracts/SwapPlanRouter.sol), from a SwapPlan.
 *
 *   swap(Plan plan, uint256 minAmountOut, address recipient, uint256 deadline,
 *        address postCallTarget, bytes postCallData) payable returns (uint256 amountOut)
 *   Plan { address tokenIn; address tokenOut; uint256 amountIn; Leg[] legs }
 *   Leg  { uint256 amountIn; Hop[] hops }
 *   Hop  { uint8 protocol; address pool; address tokenOut; uint24 fee; int24 tickSpacing; address hooks }
 *        protocol: 0 = V2, 1 = V3, 2 = V4, 3 = V4 with native ETH in the key where the hop has WETH
 *        (pool: the PoolManager; tickSpacing and hooks: V4 only, else 0)
 *
 * A hop's tokenIn and zeroForOne are not encoded: the contract chains tokenIn from the previous
 * hop and derives the direction from the token addresses. The encoder checks that the plan agrees
 * with both (and with the contract's other rules), so a route-search bug fails here with a message
 * instead of on chain with a revert.
 */
import { toFunctionSelector, zeroAddress, type Abi, type AbiFunction } from 'viem'
import artifact from '../contracts/artifacts/SwapPlanRouter.json' with { type: 'json' }
import { bytesToHexString, decodeHexInto, hexToBytesStrict } from '../chain/quantity.ts'
import type { Address, Hex } from '../chain/types.ts'
import type { PoolProtocol } from '../pools/pools.ts'
import { MAX_HOPS, type PlanHop, type SwapPlan } from '../routing/swap-plan.ts'
import { BaseError } from '../primitives/base-error.ts'

/** The router's ABI, from its committed artifact. */
export const SWAP_PLAN_ROUTER_ABI = artifact.abi as Abi

/** Hop.protocol on chain. */
export const ROUTER_PROTOCOL: Readonly<Record<PoolProtocol, number>> = { 'uniswap-v2': 0, 'uniswap-v3': 1, 'uniswap-v4': 2 }
/** Hop.protocol of a V4 hop whose key holds native ETH where the hop holds WETH */
export const ROUTER_PROTOCOL_V4_NATIVE = 3

/** An optional call the router makes (from its post-call proxy) after paying the recipient. */
export interface PostSwapCall {
  target: Address
  data: Hex
}

export interface SwapPlanCallParams {
  plan: SwapPlan
  /** the swap reverts with InsufficientOutput(amountOut, minAmountOut) below this */
  minAmountOut: bigint
  /** receives tokenOut; omitted (or the zero address) means msg.sender */
  recipient?: Address
  /** unix seconds; the swap reverts with Expired() once block.timestamp is past it */
  deadline: bigint
  postCall?: PostSwapCall
}

/** The plan cannot be executed by the router as it stands. */
export class InvalidSwapPlanError extends BaseError<Record<string, unknown>> {
  override readonly name = 'InvalidSwapPlanError'
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { details })
  }
}

const MAX_UINT256 = (1n << 256n) - 1n
const MAX_UINT24 = (1 << 24) - 1

/** swap's selector, from the artifact's ABI */
const SWAP_SELECTOR = toFunctionSelector(SWAP_PLAN_ROUTER_ABI.find((x): x is AbiFunction => x.type === 'function' && x.name === 'swap')!)
const SWAP_SELECTOR_BYTES = hexToBytesStrict(SWAP_SELECTOR, 'swap selector')
/** the argument head: Plan (its offset), minAmountOut, recipient, deadline, postCallTarget, postCallData (its offset) */
const HEAD_WORDS = 6
/** a Hop is a static tuple of six words */
const HOP_WORDS = 6
/** a leg's words before its hops: amountIn, the offset of hops, their count */
const LEG_HEAD_WORDS = 3
const HEX_BYTES_PATTERN = /^0x(?:[0-9a-fA-F]{2})*$/
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const MASK_64 = (1n << 64n) - 1n

/**
 * The `swap` calldata for `params`, in lowercase hex; throws InvalidSwapPlanError when the router
 * would reject the plan. The hex of encodeSwapPlanCallBytes (the quote service executes the bytes
 * and answers the hex; test/quote/router-calldata.test.ts compares both with viem's encoder).
 */
export function encodeSwapPlanCall(params: SwapPlanCallParams): Hex {
  return bytesToHexString(encodeSwapPlanCallBytes(params))
}

/**
 * The `swap` calldata for `params` as bytes; throws InvalidSwapPlanError when the router would
 * reject the plan. ABI-encoded here, word by word, rather than by viem's general encoder (it walks
 * the ABI's parameter tree and validates every value anew on every call: ~0.1-0.2 ms a quote), and
 * written straight into the bytes the EVM executes: as a hex string of words it was ~17-20 us a
 * plan, and its conversion back to bytes for the EVM (hexToBytesStrict's pattern over ~3 KB of
 * hex) ~11-15 us more, per execution (sixteenth session, scripts/probe/calldata-cost.ts).
 */
export function encodeSwapPlanCallBytes(params: SwapPlanCallParams): Uint8Array {
  const { plan, minAmountOut, deadline, postCall } = params
  checkPlan(plan)
  checkUint256('minAmountOut', minAmountOut)
  checkUint256('deadline', deadline)
  const postData = postCall?.data ?? '0x'
  if (!HEX_BYTES_PATTERN.test(postData)) throw new InvalidSwapPlanError('postCall.data is not hex bytes')
  const postBytes = (postData.length - 2) / 2
  // the Plan tuple: tokenIn, tokenOut, amountIn, the offset of legs (4 words on), then legs
  const planWords = 4 + legsWords(plan)
  const w = new WordWriter(SWAP_SELECTOR_BYTES.length + 32 * (HEAD_WORDS + planWords + 1 + Math.ceil(postBytes / 32)))
  w.out.set(SWAP_SELECTOR_BYTES, 0)
  w.small(32 * HEAD_WORDS)
  w.uint(minAmountOut)
  w.address('recipient', params.recipient ?? zeroAddress)
  w.uint(deadline)
  w.address('postCall.target', postCall?.target ?? zeroAddress)
  w.small(32 * (HEAD_WORDS + planWords))
  w.address('plan.tokenIn', plan.tokenIn)
  w.address('plan.tokenOut', plan.tokenOut)
  w.uint(plan.amountIn)
  w.small(128)
  writeLegs(w, plan)
  // bytes: its length, then the bytes padded to whole words (the writer's array starts zeroed)
  w.small(postBytes)
  if (postBytes > 0) w.out.set(Buffer.from(postData.slice(2), 'hex'), w.at)
  return w.out
}

/** Leg[]'s words: its length, an offset per leg, and each leg's head and hops */
function legsWords(plan: SwapPlan): number {
  let words = 1 + plan.legs.length
  for (const leg of plan.legs) words += LEG_HEAD_WORDS + HOP_WORDS * leg.hops.length
  return words
}

/**
 * Leg[]: its length, each leg's offset (from the first offset word), then the legs. A leg is
 * (amountIn, the offset of hops: 2 words on, hops: their count, then HOP_WORDS words each). A V4
 * hop names the PoolManager; the router builds the key from the tokens, fee, spacing and hooks.
 */
function writeLegs(w: WordWriter, plan: SwapPlan): void {
  w.small(plan.legs.length)
  let offset = 32 * plan.legs.length
  for (const leg of plan.legs) {
    w.small(offset)
    offset += 32 * (LEG_HEAD_WORDS + HOP_WORDS * leg.hops.length)
  }
  for (const leg of plan.legs) {
    w.uint(leg.amountIn)
    w.small(64)
    w.small(leg.hops.length)
    for (const hop of leg.hops) {
      w.small(hop.v4?.nativeEth === true ? ROUTER_PROTOCOL_V4_NATIVE : ROUTER_PROTOCOL[hop.protocol])
      w.address('hop.pool', hop.v4?.poolManager ?? hop.pool)
      w.address('hop.tokenOut', hop.tokenOut)
      w.small(hop.fee)
      w.int(hop.v4?.tickSpacing ?? 0)
      w.address('hop.hooks', hop.v4?.hooks ?? zeroAddress)
    }
  }
}

/** Words written one after another into calldata of a known length (zeroed: a word's leading zeros are not written). */
class WordWriter {
  readonly out: Uint8Array
  private readonly view: DataView
  /** where the next word starts */
  at: number

  constructor(length: number) {
    this.out = new Uint8Array(length)
    this.view = new DataView(this.out.buffer)
    this.at = SWAP_SELECTOR_BYTES.length
  }

  /** a uint (checked < 2^256 by the caller), big-endian in its word */
  uint(value: bigint): void {
    if (value <= MAX_SAFE) {
      this.small(Number(value))
      return
    }
    // 64 bits at a time from the word's end
    let v = value
    for (let end = this.at + 24; v > 0n; end -= 8) {
      this.view.setBigUint64(end, v & MASK_64)
      v >>= 64n
    }
    this.at += 32
  }

  /** a non-negative safe integer (offsets, counts, protocol, fee), without a BigInt */
  small(value: number): void {
    let v = value
    for (let i = this.at + 31; v > 0; i--) {
      this.out[i] = v % 256
      v = Math.floor(v / 256)
    }
    this.at += 32
  }

  /** an int (int24 here) as its word, two's complement */
  int(value: number): void {
    if (value >= 0) this.small(value)
    else this.uint((1n << 256n) + BigInt(value))
  }

  /** 0x and 40 hex digits (either case), right-aligned in its word */
  address(name: string, address: string): void {
    if (address.length !== 42 || address.charCodeAt(0) !== 48 || address.charCodeAt(1) !== 120) throw notAnAddress(name, address)
    if (!decodeHexInto(address, 2, this.out, this.at + 12, 20)) throw notAnAddress(name, address)
    this.at += 32
  }
}

function notAnAddress(name: string, address: string): InvalidSwapPlanError {
  return new InvalidSwapPlanError(`${name} ${address} is not an address`)
}

function checkPlan(plan: SwapPlan): void {
  checkUint256('plan.amountIn', plan.amountIn)
  if (plan.legs.length === 0) throw new InvalidSwapPlanError('the plan has no legs')
  let sum = 0n
  for (const [i, leg] of plan.legs.entries()) {
    checkUint256(`legs[${i}].amountIn`, leg.amountIn)
    // the pools revert on a zero input; an empty leg is a route-search bug
    if (leg.amountIn === 0n) throw new InvalidSwapPlanError(`leg ${i} has amountIn 0`, { leg: i })
    sum += leg.amountIn
    if (leg.hops.length === 0 || leg.hops.length > MAX_HOPS) {
      throw new InvalidSwapPlanError(`leg ${i} has ${leg.hops.length} hops; the router takes 1 to ${MAX_HOPS}`, { leg: i })
    }
    let tokenIn = plan.tokenIn
    for (const [j, hop] of leg.hops.entries()) {
      checkHop(hop, tokenIn, i, j)
      tokenIn = hop.tokenOut
    }
    if (!sameAddress(tokenIn, plan.tokenOut)) {
      throw new InvalidSwapPlanError(`leg ${i} ends in ${tokenIn}, not the plan's tokenOut ${plan.tokenOut}`, { leg: i })
    }
  }
  if (sum !== plan.amountIn) {
    throw new InvalidSwapPlanError(`the legs' amountIn add up to ${sum}, not the plan's ${plan.amountIn}`, { legsAmountIn: sum, amountIn: plan.amountIn })
  }
}

function checkHop(hop: PlanHop, tokenIn: Address, leg: number, index: number): void {
  const where = { leg, hop: index }
  if (!(hop.protocol in ROUTER_PROTOCOL)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: unknown protocol ${String(hop.protocol)}`, where)
  if (!sameAddress(hop.tokenIn, tokenIn)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index} starts in ${hop.tokenIn}, but the path is at ${tokenIn}`, where)
  }
  if (sameAddress(hop.tokenIn, hop.tokenOut)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index} swaps ${hop.tokenIn} for itself`, where)
  // the contract swaps token0 -> token1 exactly when tokenIn is the lower address
  if (hop.zeroForOne !== addressBelow(hop.tokenIn, hop.tokenOut)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: zeroForOne ${hop.zeroForOne} disagrees with the token order`, where)
  }
  if (!Number.isInteger(hop.fee) || hop.fee < 0 || hop.fee > MAX_UINT24) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: fee ${hop.fee} is not a uint24`, where)
  if ((hop.protocol === 'uniswap-v4') !== (hop.v4 !== undefined)) throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: a V4 hop, and only one, names its PoolManager and tick spacing`, where)
  if (hop.v4 !== undefined && (!Number.isInteger(hop.v4.tickSpacing) || hop.v4.tickSpacing < 1 || hop.v4.tickSpacing > 32_767)) {
    throw new InvalidSwapPlanError(`leg ${leg} hop ${index}: tick spacing ${hop.v4.tickSpacing} is not a V4 spacing`, where)
  }
}

function checkUint256(name: string, value: bigint): void {
  if (value < 0n || value > MAX_UINT256) throw new InvalidSwapPlanError(`${name} ${value} is not a uint256`)
}

/**
 * a < b as numbers. Two addresses of 40 digits compare as their lowercase strings (the digits sort
 * before the letters in ASCII), without parsing two BigInts a hop; any other length as numbers.
 */
export function addressBelow(a: string, b: string): boolean {
  if (a.length === 42 && b.length === 42) return a.toLowerCase() < b.toLowerCase()
  return BigInt(a) < BigInt(b)
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase()
}
