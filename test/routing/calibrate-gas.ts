/**
 * Re-derives the gas model's constants (src/routing/gas-model.ts): executes a fixed set of plans
 * through SwapPlanRouter on the devnet in the simulator and fits
 *   gas = base + leg × legs + v2 × V2 hops + v3 × V3 hops + tick × V3 ticks crossed
 * by least squares, then prints the fit and each plan's error under the current DEFAULT_GAS_MODEL.
 *
 *   npx tsx test/routing/calibrate-gas.ts
 *
 * Not a test (vitest runs *.test.ts only): a measurement to repeat when the router changes.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import { encodeSwapPlanCall } from '../../src/quote/router-calldata.ts'
import { quoteHop, type PoolSnapshot } from '../../src/pools/index.ts'
import { DEFAULT_GAS_MODEL, planGas, RoutingEngine, type PlanLeg, type SwapPlan } from '../../src/routing/index.ts'
import { DEX, E18, lower, registry, sim, source, tok } from './helpers.ts'

type Hop = [protocol: 'v2' | 'v3', from: string, to: string, fee?: number]
const USER: Address = '0x00000000000000000000000000000000000a11ce'
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const MAX_UINT256 = (1n << 256n) - 1n

const routerAddress = registry.extensions?.['swap-plan-router']
if (routerAddress === undefined) throw new Error('the devnet registry has no swap-plan-router')
const router = lower(routerAddress)
const engine = new RoutingEngine(sim, { dex: DEX })
const writer = new Erc20StateWriter(sim)
const pools = [...(await engine.loadPools(source.latest(), tok('WETH'), tok('USDC'))).pools]

function pool([protocol, a, b, fee]: Hop): PoolSnapshot {
  const found = pools.find((p) => (protocol === 'v2' ? p.protocol === 'uniswap-v2' : p.protocol === 'uniswap-v3' && p.fee === fee) && [p.token0, p.token1].includes(tok(a)) && [p.token0, p.token1].includes(tok(b)))
  if (!found) throw new Error(`no pool ${protocol} ${a}/${b} ${fee ?? ''}`)
  return found
}

const SHAPES: Record<string, Hop[][]> = {
  'v2 1 hop': [[['v2', 'WETH', 'USDC']]],
  'v3/500 1 hop': [[['v3', 'WETH', 'USDC', 500]]],
  'v3/3000 1 hop': [[['v3', 'WETH', 'USDC', 3000]]],
  'v2 2 hops': [[['v2', 'WETH', 'DAI'], ['v2', 'DAI', 'USDC']]],
  'v3 2 hops': [[['v3', 'WETH', 'DAI', 3000], ['v3', 'DAI', 'USDC', 500]]],
  'v2>v3': [[['v2', 'WETH', 'DAI'], ['v3', 'DAI', 'USDC', 500]]],
  'v3>v2': [[['v3', 'WETH', 'USDT', 500], ['v2', 'USDT', 'USDC']]],
  'v2 3 hops': [[['v2', 'WETH', 'USDT'], ['v2', 'USDT', 'USDC'], ['v2', 'USDC', 'DAI']]],
  'v3 3 hops': [[['v3', 'WETH', 'USDT', 500], ['v3', 'USDT', 'USDC', 500], ['v3', 'USDC', 'DAI', 500]]],
  'split 2': [[['v2', 'WETH', 'USDC']], [['v3', 'WETH', 'USDC', 500]]],
  'split 3': [[['v2', 'WETH', 'USDC']], [['v3', 'WETH', 'USDC', 500]], [['v3', 'WETH', 'USDC', 3000]]],
  'split 4': [[['v2', 'WETH', 'USDC']], [['v3', 'WETH', 'USDC', 500]], [['v3', 'WETH', 'USDC', 3000]], [['v3', 'WETH', 'DAI', 3000], ['v3', 'DAI', 'USDC', 500]]],
  'split 2 x 2 hops': [[['v2', 'WETH', 'DAI'], ['v2', 'DAI', 'USDC']], [['v3', 'WETH', 'USDT', 500], ['v3', 'USDT', 'USDC', 500]]],
}

interface Row {
  name: string
  gas: number
  features: number[]
  estimate: bigint
}

const rows: Row[] = []
for (const amount of [E18 / 10n, E18, 10n * E18, 50n * E18, 150n * E18, 300n * E18]) {
  for (const [shape, legs] of Object.entries(SHAPES)) {
    let ticks = 0
    const planLegs: PlanLeg[] = legs.map((hops) => {
      const amountIn = amount / BigInt(legs.length)
      let out = amountIn
      const planHops = hops.map((h) => {
        const p = pool(h)
        const zeroForOne = tok(h[1]) === p.token0
        const q = quoteHop(p, zeroForOne, out)
        if (!q) throw new Error(`no quote ${shape}`)
        out = q.amountOut
        ticks += q.ticksCrossed
        return { protocol: p.protocol, pool: p.address, tokenIn: tok(h[1]), tokenOut: tok(h[2]), fee: p.fee, zeroForOne }
      })
      return { amountIn, hops: planHops, expectedAmountOut: out }
    })
    const tokenIn = planLegs[0].hops[0].tokenIn
    const tokenOut = planLegs[0].hops[planLegs[0].hops.length - 1].tokenOut
    const amountIn = planLegs.reduce((s, l) => s + l.amountIn, 0n)
    const plan: SwapPlan = { tokenIn, tokenOut, amountIn, legs: planLegs, expectedAmountOut: planLegs.reduce((s, l) => s + l.expectedAmountOut, 0n) }
    const state = sim.openState(source.latest())
    await writer.setBalance(state, tokenIn, USER, 2n * amountIn)
    await writer.setAllowance(state, tokenIn, USER, router, MAX_UINT256)
    await writer.setBalance(state, tokenOut, USER, 1n)
    const r = await sim.call(state, { from: USER, to: router, data: encodeSwapPlanCall({ plan, minAmountOut: plan.expectedAmountOut, deadline: 2n ** 40n, recipient: USER }) })
    if (r.status !== 'success') throw new Error(`${shape} ${amount}: ${r.status} ${r.revertReason ?? r.error}`)
    const balance = await sim.call(r.state, { from: USER, to: tokenOut, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [USER] }) })
    const received = decodeFunctionResult({ abi: ERC20, functionName: 'balanceOf', data: bytesToHexString(balance.returnData) }) - 1n
    if (received !== plan.expectedAmountOut) throw new Error(`${shape} ${amount}: received ${received}, expected ${plan.expectedAmountOut}`)
    const v2 = legs.flat().filter((h) => h[0] === 'v2').length
    const v3 = legs.flat().length - v2
    // the plan's ticks all on its first leg: the model only adds them up
    const estimate = planGas(DEFAULT_GAS_MODEL, planLegs.map((l, i) => ({ protocols: l.hops.map((h) => h.protocol), ticksCrossed: i === 0 ? ticks : 0 })))
    rows.push({ name: `${shape} ${Number(amount) / 1e18} ETH`, gas: Number(r.gasUsed), features: [1, legs.length, v2, v3, ticks], estimate })
  }
}

/** least squares by the normal equations (5 unknowns, Gaussian elimination with pivoting) */
function leastSquares(x: number[][], y: number[]): number[] {
  const n = x[0].length
  const a = Array.from({ length: n }, (_, i) => [...Array.from({ length: n }, (_, j) => x.reduce((s, row) => s + row[i] * row[j], 0)), x.reduce((s, row, k) => s + row[i] * y[k], 0)])
  for (let c = 0; c < n; c++) {
    let p = c
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r
    ;[a[c], a[p]] = [a[p], a[c]]
    for (let r = 0; r < n; r++) {
      if (r === c) continue
      const f = a[r][c] / a[c][c]
      for (let k = c; k <= n; k++) a[r][k] -= f * a[c][k]
    }
  }
  return a.map((row, i) => row[n] / row[i])
}

const fit = leastSquares(
  rows.map((r) => r.features),
  rows.map((r) => r.gas),
)
console.log(`${rows.length} plans; least squares: base ${fit[0].toFixed(0)}, leg ${fit[1].toFixed(0)}, V2 hop ${fit[2].toFixed(0)}, V3 hop ${fit[3].toFixed(0)}, tick ${fit[4].toFixed(0)}`)
// the same with no per-leg term
const noLeg = leastSquares(
  rows.map((r) => [r.features[0], ...r.features.slice(2)]),
  rows.map((r) => r.gas),
)
console.log(`without a leg term: base ${noLeg[0].toFixed(0)}, V2 hop ${noLeg[1].toFixed(0)}, V3 hop ${noLeg[2].toFixed(0)}, tick ${noLeg[3].toFixed(0)}`)
let worst = 0
let sum = 0
for (const r of rows) {
  const err = (Number(r.estimate) - r.gas) / r.gas
  worst = Math.max(worst, Math.abs(err))
  sum += Math.abs(err)
  console.log(`${r.name.padEnd(32)} gas ${r.gas}  model ${r.estimate}  ${(err * 100).toFixed(1)}%`)
}
console.log(`DEFAULT_GAS_MODEL: largest error ${(worst * 100).toFixed(1)}%, mean ${((sum / rows.length) * 100).toFixed(1)}%`)
