/**
 * bench:backrun's brute-force reference (issue 15): after a user's swap, EVERY cycle of two or three
 * pools over ALL the devnet's pools (the registry's, whatever moved), in both directions and from
 * every start token, optimized on the exact native math (optimal-input.ts: the closed form for all-V2
 * cycles, the bracketed search otherwise, with the search's own settings but no budget), then the
 * best rotation of every directed cycle that shows a gross profit executed in the EVM
 * (BackrunExecutor.backrun on the post-swap state, from the synthetic user, as eth_backrun does) for
 * its exact gross profit and gas. Net = the gross profit's sale for WETH (profit-valuation.ts, the
 * valuation eth_backrun uses) - (gas - 21,000) x (next base fee + priority fee).
 *
 * Its enumeration is its own (a plain recursion over the pool list), not cycle-enumeration.ts, so a
 * cycle the service's bounds leave out still counts here. Every pool the executor can swap in takes
 * part: V4 pools of native ETH (as WETH pools) and with hooks included. Through a pool whose hook
 * may change the swap (beforeSwap, return deltas: hookAltersSwap) the native math is only an
 * estimate, so a cycle through one that the estimate shows profitable is optimized again in the EVM
 * (a ternary search on BackrunExecutor.backrun's gross profit over [0, 4x the estimate's input]):
 * the reference's profit there is the EVM's best, not the estimate's.
 */
import { decodeAbiParameters } from 'viem'
import { encodeBackrunCall } from '../../src/backrun/backrun-calldata.ts'
import { SYNTHETIC_USER } from '../../src/backrun/backrun-engine.ts'
import { cycleHasEstimatedHops, toPlanHop } from '../../src/backrun/cycle-search.ts'
import { maximizeProfit, optimalConstantProductInput } from '../../src/backrun/optimal-input.ts'
import { ProfitValuer, valuationGraph } from '../../src/backrun/profit-valuation.ts'
import type { BackrunRequest } from '../../src/backrun/types.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import type { ExecutionResult, SimulationState } from '../../src/evm/simulator.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import type { DomainServices } from '../../src/node/domain.ts'
import { quotePath, V2_FEE_BPS, type PathHop, type PoolRef, type PoolSnapshot } from '../../src/pools/index.ts'
import { v4KeyZeroForOne } from '../../src/pools/uniswap-v4.ts'
import { ternaryMaximum } from './ternary-search.ts'

const NATIVE = new Set(['0x0000000000000000000000000000000000000000', '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'])
const TX_BASE_GAS = 21_000n

export interface ReferenceCycle {
  /** pool addresses in trading order from startToken, and the start token */
  pools: Address[]
  startToken: Address
  /** rotation-invariant identity of the directed cycle (pool:tokenIn, rotated to the smallest) */
  key: string
  grossProfit: bigint
  gas: bigint
  netWei: bigint
}

export interface ReferenceResult {
  /** directed cycles of <= 3 pools over all the pools */
  cycles: number
  /** those with a positive net profit, best first */
  positive: ReferenceCycle[]
}

/** the identity of a directed cycle, whatever token it starts at */
export function directedCycleKey(hops: ReadonlyArray<{ pool: string; tokenIn: string }>): string {
  const ids = hops.map((h) => `${h.pool.toLowerCase()}:${h.tokenIn.toLowerCase()}`)
  let min = 0
  for (let i = 1; i < ids.length; i++) if (ids[i] < ids[min]) min = i
  return [...ids.slice(min), ...ids.slice(0, min)].join('>')
}

/** every directed cycle of 2..3 distinct pools, from every start token (each rotation once) */
function allCycles(pools: readonly PoolSnapshot[]): PathHop[][] {
  const out: PathHop[][] = []
  const tokens = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))]
  const hop = (pool: PoolSnapshot, tokenIn: Address): PathHop => ({ pool, tokenIn, tokenOut: tokenIn === pool.token0 ? pool.token1 : pool.token0, zeroForOne: tokenIn === pool.token0 })
  for (const start of tokens) {
    const extend = (path: PathHop[], seen: Address[]) => {
      const at = path.length === 0 ? start : path[path.length - 1].tokenOut
      for (const pool of pools) {
        if ((pool.token0 !== at && pool.token1 !== at) || path.some((h) => h.pool === pool)) continue
        const next = hop(pool, at)
        if (next.tokenOut === start && path.length >= 1) out.push([...path, next])
        else if (!seen.includes(next.tokenOut) && next.tokenOut !== start && path.length < 2) extend([...path, next], [...seen, next.tokenOut])
      }
    }
    extend([], [start])
  }
  return out
}

/** ~1e-6 of the first hop's (virtual) reserve in: a first input that does not round to nothing */
function startAmount(hop: PathHop): bigint {
  const pool = hop.pool
  // a native-ETH V4 key may hold the ref's tokens in the other order (its state is the key's)
  const zeroForOne = pool.protocol === 'uniswap-v4' ? v4KeyZeroForOne(pool, hop.zeroForOne) : hop.zeroForOne
  const reserveIn =
    pool.protocol === 'uniswap-v2'
      ? zeroForOne ? pool.reserve0 : pool.reserve1
      : zeroForOne ? (pool.state.liquidity << 96n) / pool.state.sqrtPriceX96 : (pool.state.liquidity * pool.state.sqrtPriceX96) >> 96n
  return reserveIn >> 20n > 0n ? reserveIn >> 20n : 1n
}

function optimize(hops: readonly PathHop[]): { amountIn: bigint; profit: bigint } | undefined {
  if (hops.every((h) => h.pool.protocol === 'uniswap-v2')) {
    const r = optimalConstantProductInput(
      hops.map((h) => {
        const p = h.pool as Extract<PoolSnapshot, { protocol: 'uniswap-v2' }>
        return h.zeroForOne ? { reserveIn: p.reserve0, reserveOut: p.reserve1, feeBps: V2_FEE_BPS } : { reserveIn: p.reserve1, reserveOut: p.reserve0, feeBps: V2_FEE_BPS }
      }),
    )
    return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit }
  }
  const r = maximizeProfit((x) => {
    const q = quotePath(hops, x)
    return q === undefined ? undefined : q.amountOut - x
  }, { start: startAmount(hops[0]), maxEvaluations: 400 })
  return r === undefined ? undefined : { amountIn: r.amountIn, profit: r.profit }
}

/**
 * The input in [0, 4 x estimateIn] where the executed cycle's gross profit is highest, by a ternary
 * search on the EVM's answers (a revert counts as a loss); estimateIn when no input shows a profit.
 */
async function evmBestInput(call: (amountIn: bigint) => Promise<ExecutionResult>, estimateIn: bigint): Promise<bigint> {
  const profit = async (x: bigint): Promise<bigint> => {
    if (x <= 0n) return -1n
    const r = await call(x)
    if (r.status !== 'success' || r.returnData.length < 32) return -1n
    return decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(r.returnData))[0]
  }
  const x = await ternaryMaximum(profit, 0n, estimateIn * 4n, 1_000_000n)
  return (await profit(x)) > 0n ? x : estimateIn
}

/** the state after the request's call from the synthetic user, funded as eth_backrun funds it */
export async function stateAfterRequest(local: DomainServices, request: BackrunRequest): Promise<{ base: SimulationState; after: SimulationState } | undefined> {
  const { simulator, chain } = local
  const base = simulator.openState(chain.latest())
  const funded = base.fork()
  if (request.value > 0n) await applyAccountOverrides(funded, new Map([[SYNTHETIC_USER, { balance: request.value }]]))
  if (!NATIVE.has(request.tokenIn)) {
    const erc20 = new Erc20StateWriter(simulator)
    await erc20.setBalance(funded, request.tokenIn, SYNTHETIC_USER, request.amountIn)
    await erc20.setAllowance(funded, request.tokenIn, SYNTHETIC_USER, request.to, (1n << 256n) - 1n)
  }
  const user = await simulator.call(funded, { from: SYNTHETIC_USER, to: request.to, data: request.calldata, value: request.value })
  return user.status === 'success' ? { base, after: user.state } : undefined
}

/** the brute-force reference after `request` (see the module comment) */
export async function bruteForceBackruns(local: DomainServices, request: BackrunRequest, poolRefs: readonly PoolRef[], executor: Address, priorityFeeWei: bigint): Promise<ReferenceResult> {
  const states = await stateAfterRequest(local, request)
  if (states === undefined) return { cycles: 0, positive: [] }
  const { base, after } = states
  const pools = await Promise.all(poolRefs.map((ref) => local.routing.poolStates.loadAt(after, ref)))
  const valuer = new ProfitValuer(valuationGraph(pools), local.contracts.weth)
  const gasPrice = (base.block.baseFeePerGas ?? 0n) + priorityFeeWei
  // the best rotation (by the value of its native-math profit) of every directed cycle
  const best = new Map<string, { hops: PathHop[]; amountIn: bigint; valueWei: bigint }>()
  for (const hops of allCycles(pools)) {
    const r = optimize(hops)
    if (r === undefined || r.profit <= 0n) continue
    const avoid = new Set(hops.map((h) => h.pool.address))
    const valueWei = valuer.toWei(hops[0].tokenIn, r.profit, avoid)
    if (valueWei === undefined || valueWei <= 0n) continue
    const key = directedCycleKey(hops.map((h) => ({ pool: h.pool.address, tokenIn: h.tokenIn })))
    const seen = best.get(key)
    if (seen === undefined || valueWei > seen.valueWei) best.set(key, { hops, amountIn: r.amountIn, valueWei })
  }
  const cycles = new Set(allCycles(pools).map((hops) => directedCycleKey(hops.map((h) => ({ pool: h.pool.address, tokenIn: h.tokenIn }))))).size
  const positive: ReferenceCycle[] = []
  for (const [key, { hops, amountIn: estimateIn }] of best) {
    const startToken = hops[0].tokenIn
    const planHops = hops.map(toPlanHop)
    const call = (amountIn: bigint) => local.simulator.call(after, { from: SYNTHETIC_USER, to: executor, data: encodeBackrunCall({ startToken, amountIn, hops: planHops, minProfit: 1n, refundBps: 0 }) })
    const amountIn = cycleHasEstimatedHops(planHops) ? await evmBestInput(call, estimateIn) : estimateIn
    const r = await call(amountIn)
    if (r.status !== 'success' || r.returnData.length < 32) continue
    const [grossProfit] = decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(r.returnData))
    const gas = r.gasUsed > TX_BASE_GAS ? r.gasUsed - TX_BASE_GAS : 0n
    const netWei = (valuer.toWei(startToken, grossProfit, new Set(hops.map((h) => h.pool.address))) ?? 0n) - gas * gasPrice
    if (netWei > 0n) positive.push({ pools: hops.map((h) => h.pool.address), startToken, key, grossProfit, gas, netWei })
  }
  positive.sort((a, b) => (a.netWei > b.netWei ? -1 : a.netWei < b.netWei ? 1 : 0))
  return { cycles, positive }
}
