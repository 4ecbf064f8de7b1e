/**
 * Plans found by the search, executed in the EVM on the devnet: the recipient receives exactly the
 * plan's expectedAmountOut (the native math is exact, legs sharing no pool do not interact), and
 * the gas used is close to the model's estimate.
 *
 * Executors: the project's SwapPlanRouter (any plan; when the devnet registry has it), and
 * Uniswap's SwapRouter02 (a call per leg in a multicall; legs of one protocol only).
 */
import { decodeFunctionResult, encodeFunctionData, encodePacked, parseAbi, type Abi, type Hex } from 'viem'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import type { SimulationState } from '../../src/evm/simulator.ts'
import { encodeSwapPlanCall } from '../../src/quote/router-calldata.ts'
import { quotePath, type PathHop } from '../../src/pools/index.ts'
import { RoutingEngine, type RoutedPlan, type SwapPlan } from '../../src/routing/index.ts'
import { DEX, E18, lower, registry, sim, source, tok } from './helpers.ts'

const engine = new RoutingEngine(sim, { dex: DEX })
const writer = new Erc20StateWriter(sim)
const USER: Address = '0x00000000000000000000000000000000000a11ce'
const GWEI = 10n ** 9n
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const MAX_UINT256 = (1n << 256n) - 1n
const SWAP_ROUTER02_ABI = (
  JSON.parse(readFileSync(new URL('../../node_modules/@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json', import.meta.url), 'utf8')) as { abi: Abi }
).abi

const CASES: Array<[string, string, bigint]> = [
  ['WETH', 'USDC', E18],
  ['WETH', 'USDC', 300n * E18],
  ['USDC', 'WETH', 6n * 10n ** 11n],
  ['UNI', 'LINK', 1_000n * E18],
  ['UNI', 'LINK', 20_000n * E18],
  ['WBTC', 'DAI', 10n ** 8n],
  ['DAI', 'WBTC', 100_000n * E18],
  ['USDC', 'USDT', 10n ** 12n],
]

async function balanceOf(state: SimulationState, token: Address, holder: Address): Promise<bigint> {
  const r = await sim.call(state, { from: USER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
  return decodeFunctionResult({ abi: ERC20, functionName: 'balanceOf', data: bytesToHexString(r.returnData) })
}

/**
 * Runs `data` from USER, who approves `to` without limit. As the gas model is calibrated
 * (gas-model.ts), USER keeps some tokenIn after the swap and already holds some tokenOut.
 */
async function execute(plan: SwapPlan, to: Address, data: Hex): Promise<{ received: bigint; gasUsed: bigint }> {
  const state = sim.openState(source.latest())
  await writer.setBalance(state, plan.tokenIn, USER, 2n * plan.amountIn)
  await writer.setAllowance(state, plan.tokenIn, USER, to, MAX_UINT256)
  await writer.setBalance(state, plan.tokenOut, USER, 1n)
  const r = await sim.call(state, { from: USER, to, data })
  if (r.status !== 'success') throw new Error(`execution ${r.status}: ${r.revertReason ?? r.error}`)
  return { received: (await balanceOf(r.state, plan.tokenOut, USER)) - 1n, gasUsed: r.gasUsed }
}

/** routes over Uniswap's own venues only: what Uniswap's SwapRouter02 can execute */
const uniswapOnlyEngine = new RoutingEngine(sim, { dex: { ...DEX, venues: DEX.venues.filter((v) => v.name === 'uniswap-v2' || v.name === 'uniswap-v3') } })

async function plans(routing: RoutingEngine = engine): Promise<RoutedPlan[]> {
  const out: RoutedPlan[] = []
  for (const [a, b, amountIn] of CASES) {
    const plan = await routing.findBestPlan(source.latest(), { tokenIn: tok(a), tokenOut: tok(b), amountIn, gasPriceWei: 10n * GWEI })
    if (!plan) throw new Error(`no plan for ${a} -> ${b}`)
    out.push(plan)
  }
  return out
}

function describePlan(plan: SwapPlan): string {
  return plan.legs.map((l) => l.hops.map((h) => (h.protocol === 'uniswap-v2' ? 'v2' : `${h.protocol === 'uniswap-v3' ? 'v3' : 'v4'}/${h.fee}${h.v4?.hooks === undefined ? '' : '+hook'}${h.v4?.nativeEth === true ? '+eth' : ''}`)).join('>')).join(' + ')
}

const planRouter = registry.extensions?.['swap-plan-router'] === undefined ? undefined : lower(registry.extensions['swap-plan-router'])

describe.skipIf(planRouter === undefined)('plans executed by SwapPlanRouter', () => {
  it('deliver exactly the expected amount, with gas within 6% of the model', async () => {
    if (planRouter === undefined) return
    const report: string[] = []
    let legsTotal = 0
    let worst = 0
    for (const plan of await plans()) {
      const data = encodeSwapPlanCall({ plan, minAmountOut: plan.expectedAmountOut, deadline: 2n ** 40n, recipient: USER })
      const { received, gasUsed } = await execute(plan, planRouter, data)
      expect(received).toBe(plan.expectedAmountOut)
      const errorPct = (Number(plan.estimatedGas - gasUsed) / Number(gasUsed)) * 100
      report.push(`${describePlan(plan)}: gas ${gasUsed} vs model ${plan.estimatedGas} (${errorPct.toFixed(1)}%)`)
      worst = Math.max(worst, Math.abs(errorPct))
      legsTotal += plan.legs.length
    }
    console.info(`SwapPlanRouter executions:\n  ${report.join('\n  ')}`)
    expect(worst).toBeLessThan(6)
    // the cases include splits
    expect(legsTotal).toBeGreaterThan(CASES.length + 4)
  })

  it('executes a three-hop mixed path exactly as the math expects', async () => {
    if (planRouter === undefined) return
    const { pools } = await engine.loadPools(source.latest(), tok('WETH'), tok('DAI'))
    const pick = (a: string, b: string, protocol: 'uniswap-v2' | 'uniswap-v3'): PathHop => {
      const pool = pools.find((p) => p.protocol === protocol && [p.token0, p.token1].includes(tok(a)) && [p.token0, p.token1].includes(tok(b)))
      if (!pool) throw new Error(`no ${protocol} pool ${a}/${b}`)
      return { pool, tokenIn: tok(a), tokenOut: tok(b), zeroForOne: tok(a) === pool.token0 }
    }
    const path = [pick('WETH', 'USDT', 'uniswap-v3'), pick('USDT', 'USDC', 'uniswap-v2'), pick('USDC', 'DAI', 'uniswap-v3')]
    const amountIn = 5n * E18
    const q = quotePath(path, amountIn)
    if (!q) throw new Error('no quote')
    const hops = path.map((h) => ({ protocol: h.pool.protocol, pool: h.pool.address, tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.pool.fee, zeroForOne: h.zeroForOne }))
    const plan: SwapPlan = { tokenIn: tok('WETH'), tokenOut: tok('DAI'), amountIn, legs: [{ amountIn, hops, expectedAmountOut: q.amountOut }], expectedAmountOut: q.amountOut }
    const { received } = await execute(plan, planRouter, encodeSwapPlanCall({ plan, minAmountOut: 0n, deadline: 2n ** 40n, recipient: USER }))
    expect(received).toBe(q.amountOut)
  })
})

/** Uniswap's own pools: SwapRouter02 derives pools from Uniswap's factories only, not the devnet's added venues */
const UNISWAP_POOLS = new Set([...registry.v2.pairs, ...registry.v3.pools].map((p) => lower(p.address)))

/** SwapRouter02 calldata for a plan whose every leg is all-V2 or all-V3 on Uniswap's pools; undefined otherwise */
function swapRouter02Call(plan: SwapPlan): Hex | undefined {
  if (plan.legs.some((leg) => leg.hops.some((h) => !UNISWAP_POOLS.has(h.pool)))) return undefined
  const calls: Hex[] = []
  for (const leg of plan.legs) {
    const path = [plan.tokenIn, ...leg.hops.map((h) => h.tokenOut)]
    if (leg.hops.every((h) => h.protocol === 'uniswap-v2')) {
      calls.push(encodeFunctionData({ abi: SWAP_ROUTER02_ABI, functionName: 'swapExactTokensForTokens', args: [leg.amountIn, 1n, path, USER] }))
    } else if (leg.hops.every((h) => h.protocol === 'uniswap-v3')) {
      const types: Array<'address' | 'uint24'> = ['address']
      const values: Array<Address | number> = [plan.tokenIn]
      for (const h of leg.hops) {
        types.push('uint24', 'address')
        values.push(h.fee, h.tokenOut)
      }
      const packed = encodePacked(types, values)
      calls.push(encodeFunctionData({ abi: SWAP_ROUTER02_ABI, functionName: 'exactInput', args: [{ path: packed, recipient: USER, amountIn: leg.amountIn, amountOutMinimum: 1n }] }))
    } else return undefined
  }
  return calls.length === 1 ? calls[0] : encodeFunctionData({ abi: SWAP_ROUTER02_ABI, functionName: 'multicall', args: [calls] })
}

describe("plans executed by Uniswap's SwapRouter02", () => {
  it('deliver exactly the expected amount (legs of one protocol), with gas within 10% of the model', async () => {
    let executed = 0
    let worst = 0
    const report: string[] = []
    for (const plan of await plans(uniswapOnlyEngine)) {
      const data = swapRouter02Call(plan)
      if (data === undefined) continue
      const { received, gasUsed } = await execute(plan, lower(registry.v3.swapRouter02), data)
      expect(received).toBe(plan.expectedAmountOut)
      const errorPct = (Number(plan.estimatedGas - gasUsed) / Number(gasUsed)) * 100
      report.push(`${describePlan(plan)}: gas ${gasUsed} vs model ${plan.estimatedGas} (${errorPct.toFixed(1)}%)`)
      worst = Math.max(worst, Math.abs(errorPct))
      executed++
    }
    console.info(`SwapRouter02 executions:\n  ${report.join('\n  ')}`)
    expect(worst).toBeLessThan(10)
    expect(executed).toBeGreaterThanOrEqual(4)
  })
})
