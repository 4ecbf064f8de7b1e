/**
 * A simple linear gas model to rank plans by output net of gas during the search. It is only an
 * estimate: the chosen plan's calldata is executed in the EVM afterwards, which gives the exact gas.
 *
 *   gas(plan) = base
 *             + Σ over legs ( perLeg + Σ over hops perHop[protocol] )
 *             + perV3TickCrossed × (initialized ticks the V3 swap loops cross)
 *
 * Calibration (re-run it with `npx tsx test/routing/calibrate-gas.ts`): 78 plans were executed on
 * the devnet through the project's SwapPlanRouter (src/contracts) in the in-process simulator
 * (receipt gasUsed, next-block context; the payer approved the router without limit and keeps some
 * tokenIn, the recipient already holds some tokenOut): 1-, 2- and 3-hop V2, V3 and mixed paths and
 * 2-, 3- and 4-leg splits, 0.1 to 300 ETH, 0 to 6 ticks crossed. Least squares gives base 46,058,
 * leg -2,538, V2 hop 89,641, V3 hop 84,462, tick 44,298: a leg costs nothing beyond its hops (the
 * router loops over legs in one call, and pulling tokenIn into a leg's first pool costs about what a
 * transfer between two pools of a path does). Without the leg term: base 45,408, V2 hop 88,656,
 * V3 hop 82,714, tick 44,830, rounded below (the router compiled through the IR pipeline since
 * 2026-11-26, scripts/compile-contracts.ts: ~1k less per plan and ~2k less per V3 hop than the
 * fit before it; the V4 hop, not in this fit, ~3k less in plan-execution.test.ts). Over the 78 plans the model's largest error is 6.2%
 * (mean 1.5%); the largest errors are V3 swaps too small to move the tick, which skip the oracle
 * write (~6k less). Checked by the tests: the searched plans of plan-execution.test.ts within 6%
 * through SwapPlanRouter (and through Uniswap's SwapRouter02, a call per leg, within 10%), and the
 * ten token-to-token exact-input transactions of fixtures/txs (Uniswap's Router02, SwapRouter and
 * SwapRouter02, recorded on anvil) within 12% (mean 3%; a single-purpose entry point is a few
 * thousand gas cheaper than a general plan executor).
 *
 * What the model leaves out, on purpose:
 *   - a recipient with no tokenOut balance yet pays 17,100 more (a zero-to-nonzero SSTORE), and a
 *     payer who swaps the whole tokenIn balance ~10k less (the emptied slot is refunded). Every
 *     plan pays these alike, so they never change which plan wins.
 *   - tick crossings on the devnet write fee-growth slots for the first time (zero to nonzero);
 *     on a long-lived mainnet pool a crossing costs less (~20-30k). Configure per chain.
 * Only differences between plans steer the search: perLeg, the per-hop costs and the tick cost.
 * `base` matters only for the reported estimate.
 */
import type { PoolProtocol } from '../pools/pools.ts'

export interface GasModel {
  /** per plan: intrinsic 21,000, calldata, router entry, tokenIn pull and tokenOut delivery */
  base: bigint
  /** per leg beyond its hops (measured ≈ 0 for SwapPlanRouter; a knob for other executors) */
  perLeg: bigint
  /** per hop, by protocol: the pool's swap with its token transfers and cold accesses */
  perHop: Readonly<Record<PoolProtocol, bigint>>
  /** per initialized tick a V3 swap crosses (Tick.cross: fee growth and oracle accumulators) */
  perV3TickCrossed: bigint
  /**
   * per hook call a V4 hop makes during its swap (its hook's beforeSwap and afterSwap: a cold
   * account, the key and params encoded); what the hook does inside is its own and not modelled
   */
  perV4HookCall: bigint
  /** per V4 hop through a native ETH pool: SwapPlanRouter unwraps WETH and settles value, or takes ETH and wraps it */
  perV4NativeHop: bigint
}

export const DEFAULT_GAS_MODEL: GasModel = Object.freeze({
  base: 45_000n,
  perLeg: 0n,
  perHop: Object.freeze({ 'uniswap-v2': 89_000n, 'uniswap-v3': 83_000n, 'uniswap-v4': 83_000n }),
  perV3TickCrossed: 44_000n,
  // measured on the devnet's hooked and native V4 pools (README "Venues"): an afterSwap hook that
  // writes one counter and a view beforeSwap hook, 6k to 30k beside the same hop without its hook;
  // a native hop ~14k beside an ERC-20 one
  perV4HookCall: 20_000n,
  perV4NativeHop: 14_000n,
})

/** What a V4 hop costs beyond the V4 per-hop gas: its hook calls, its native ETH wrapping. */
export interface V4HopExtras {
  hookCalls: number
  nativeEth: boolean
}

/** the extra gas of V4 hops (0 for none) */
export function v4ExtrasGas(model: GasModel, hops: readonly V4HopExtras[]): bigint {
  let gas = 0n
  for (const h of hops) gas += model.perV4HookCall * BigInt(h.hookCalls) + (h.nativeEth ? model.perV4NativeHop : 0n)
  return gas
}

/** gas of one leg without the plan's base; `extraGas`: its V4 hops' (v4ExtrasGas) */
export function legGas(model: GasModel, protocols: readonly PoolProtocol[], ticksCrossed: number, extraGas = 0n): bigint {
  let gas = model.perLeg + model.perV3TickCrossed * BigInt(ticksCrossed) + extraGas
  for (const p of protocols) gas += model.perHop[p]
  return gas
}

export interface LegGasInput {
  protocols: readonly PoolProtocol[]
  ticksCrossed: number
  /** its V4 hops' hook calls and native wrapping (v4ExtrasGas); 0 when absent */
  extraGas?: bigint
}

export function planGas(model: GasModel, legs: readonly LegGasInput[]): bigint {
  let gas = model.base
  for (const leg of legs) gas += legGas(model, leg.protocols, leg.ticksCrossed, leg.extraGas)
  return gas
}
