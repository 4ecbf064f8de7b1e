/**
 * The gas model: its formula, and its calibration against the gas real transactions used, the
 * token-to-token exact-input swaps of fixtures/txs (recorded on anvil through Uniswap's Router02,
 * SwapRouter and SwapRouter02). The project's own router is checked in plan-execution.test.ts.
 */
import { readFileSync } from 'node:fs'
import { decodeFunctionData, parseTransaction, type Abi, type Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/chain/types.ts'
import { quotePath, type PathHop, type PoolProtocol } from '../../src/pools/index.ts'
import { DEFAULT_GAS_MODEL, legGas, planGas, RoutingEngine } from '../../src/routing/index.ts'
import { loadFixtureTxs } from '../support/devnet.ts'
import { DEX, lower, sim, source } from './helpers.ts'

const artifactAbi = (path: string) => (JSON.parse(readFileSync(new URL(`../../node_modules/${path}`, import.meta.url), 'utf8')) as { abi: Abi }).abi
const ROUTER_ABIS = [
  artifactAbi('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
  artifactAbi('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json'),
  artifactAbi('@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json'),
]

interface FixtureHop {
  protocol: PoolProtocol
  tokenIn: Address
  tokenOut: Address
  fee: number
}

/** the path and input of an exact-input token-to-token swap, or undefined for any other call */
function decodeSwap(data: Hex): { hops: FixtureHop[]; amountIn: bigint } | undefined {
  for (const abi of ROUTER_ABIS) {
    let decoded: { functionName: string; args: readonly unknown[] }
    try {
      decoded = decodeFunctionData({ abi, data }) as { functionName: string; args: readonly unknown[] }
    } catch {
      continue
    }
    const { functionName, args } = decoded
    if (functionName === 'swapExactTokensForTokens') {
      const path = (args[2] as string[]).map(lower)
      return { amountIn: args[0] as bigint, hops: path.slice(1).map((tokenOut, i) => ({ protocol: 'uniswap-v2', tokenIn: path[i], tokenOut, fee: 3000 })) }
    }
    if (functionName === 'exactInputSingle') {
      const p = args[0] as { tokenIn: string; tokenOut: string; fee: number; amountIn: bigint }
      return { amountIn: p.amountIn, hops: [{ protocol: 'uniswap-v3', tokenIn: lower(p.tokenIn), tokenOut: lower(p.tokenOut), fee: p.fee }] }
    }
    if (functionName === 'exactInput') {
      const p = args[0] as { path: Hex; amountIn: bigint }
      // token (20 bytes) then (fee 3 bytes, token 20 bytes) per hop
      const raw = p.path.slice(2)
      const hops: FixtureHop[] = []
      for (let i = 40; i < raw.length; i += 46) {
        hops.push({ protocol: 'uniswap-v3', tokenIn: lower(`0x${raw.slice(i - 40, i)}`), fee: parseInt(raw.slice(i, i + 6), 16), tokenOut: lower(`0x${raw.slice(i + 6, i + 46)}`) })
      }
      return { amountIn: p.amountIn, hops }
    }
    return undefined
  }
  return undefined
}

describe('gas model', () => {
  it('adds base, per-leg, per-hop and per-tick costs', () => {
    const m = DEFAULT_GAS_MODEL
    expect(legGas(m, ['uniswap-v2', 'uniswap-v3'], 2)).toBe(m.perLeg + m.perHop['uniswap-v2'] + m.perHop['uniswap-v3'] + 2n * m.perV3TickCrossed)
    expect(planGas(m, [])).toBe(m.base)
    expect(
      planGas(m, [
        { protocols: ['uniswap-v3'], ticksCrossed: 1 },
        { protocols: ['uniswap-v2', 'uniswap-v2'], ticksCrossed: 0 },
      ]),
    ).toBe(m.base + 2n * m.perLeg + m.perHop['uniswap-v3'] + 2n * m.perHop['uniswap-v2'] + m.perV3TickCrossed)
  })

  it("is within 12% of every token-to-token exact-input fixture transaction's gas (Uniswap's routers)", async () => {
    const engine = new RoutingEngine(sim, { dex: DEX })
    const errors: string[] = []
    let checked = 0
    for (const fixture of loadFixtureTxs()) {
      if (fixture.expected.status !== 1) continue
      const tx = parseTransaction(fixture.raw)
      if ((tx.value ?? 0n) > 0n || tx.data === undefined) continue
      const swap = decodeSwap(tx.data)
      if (swap === undefined) continue
      const { pools } = await engine.loadPools(source.latest(), swap.hops[0].tokenIn, swap.hops[swap.hops.length - 1].tokenOut)
      const path: PathHop[] = swap.hops.map((h) => {
        const pool = pools.find((p) => p.protocol === h.protocol && p.fee === h.fee && [p.token0, p.token1].includes(h.tokenIn) && [p.token0, p.token1].includes(h.tokenOut))
        if (pool === undefined) throw new Error(`${fixture.name}: no pool for ${h.tokenIn} -> ${h.tokenOut}`)
        return { pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, zeroForOne: h.tokenIn === pool.token0 }
      })
      const quote = quotePath(path, swap.amountIn)
      if (quote === undefined) throw new Error(`${fixture.name}: no quote`)
      const estimate = planGas(DEFAULT_GAS_MODEL, [{ protocols: path.map((h) => h.pool.protocol), ticksCrossed: quote.ticksCrossed }])
      const actual = BigInt(fixture.expected.gasUsed)
      const errorPct = (Number(estimate - actual) / Number(actual)) * 100
      errors.push(`${fixture.name} ${actual} vs ${estimate} (${errorPct.toFixed(1)}%)`)
      expect(Math.abs(errorPct), fixture.name).toBeLessThan(12)
      checked++
    }
    expect(checked).toBe(10)
    console.info(`gas model vs fixture transactions:\n  ${errors.join('\n  ')}`)
  })
})
