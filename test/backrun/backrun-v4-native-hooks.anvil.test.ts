/**
 * Issue 15: backruns through the V4 pools that used to be left out of every cycle, on the devnet,
 * checked against anvil (the independent EVM).
 *
 * A user's swap through our router moves one of them:
 * - 60 WETH -> USDC in the native ETH/USDC pool (currency0 = address(0)): the backrun's cycle
 *   crosses it as a WETH pool, the executor unwrapping and wrapping WETH around its hop;
 * - 30 WETH -> UNI in the WETH/UNI pool of DevnetSwapCounterHook (afterSwap only): searched with
 *   the exact math, like a plain pool;
 * - 90 WETH -> LINK in the WETH/LINK pool of DevnetDirectionalFeeHook (beforeSwap with an LP-fee
 *   override of 1% for LINK -> WETH where slot0 says 0.05%): the search's math is only an
 *   estimate there, so the profit eth_backrun reports is its execution's in the EVM. After 30 WETH
 *   the estimate shows a profit that the 1% fee takes: the EVM's execution drops it (null).
 * Each planned backrun (eth_backrun's `backrun` calldata, and the exact-profit `backrunExact` a
 * searcher's bundle signs from it with the reported profit), sent on anvil in the same block right
 * behind the user's swap, pays the beneficiary exactly the reported gross profit and uses exactly
 * the reported gas.
 */
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilFees, anvilRpc, anvilTokenBalance, mineTogether, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { toExactBackrunCall } from '../../src/backrun/backrun-calldata.ts'
import type { BackrunFound } from '../../src/backrun/types.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import type { V4PoolRef } from '../../src/pools/pools.ts'
import { v4PlanKey, v4PoolRef } from '../../src/pools/uniswap-v4.ts'
import { encodeSwapPlanCall } from '../../src/quote/router-calldata.ts'
import type { SwapPlan } from '../../src/routing/swap-plan.ts'
import { GENESIS_PATH, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const BENEFICIARY = lower(registry.backrun.beneficiary)
const BLOCK_1_TIMESTAMP = Number(registry.genesisTimestamp) + 12
const USER = lower(registry.devAccounts.accounts[4].address)
const BACKRUNNER = lower(registry.devAccounts.accounts[9].address)
const [WETH, USDC, UNI, LINK] = ['WETH', 'USDC', 'UNI', 'LINK'].map((s) => tokenAddress(registry, s))
const E18 = 10n ** 18n

interface Case {
  name: string
  /** the registry's V4 pool name */
  pool: string
  tokenOut: Address
  amountIn: bigint
  /** the search's math is only an estimate for this pool's hook */
  estimated: boolean
  ref?: V4PoolRef
  calldata?: Hex
  found?: BackrunFound | null
}

const cases: Case[] = [
  { name: '60 WETH -> USDC in the native ETH/USDC pool', pool: 'ETH/USDC 0.3% ts60', tokenOut: USDC, amountIn: 60n * E18, estimated: false },
  { name: '30 WETH -> UNI in the afterSwap counter hook\'s pool', pool: 'WETH/UNI dynamic 0.05% ts10 swap-counter', tokenOut: UNI, amountIn: 30n * E18, estimated: false },
  { name: '90 WETH -> LINK in the beforeSwap directional-fee hook\'s pool', pool: 'WETH/LINK dynamic 0.05% ts10 directional-fee', tokenOut: LINK, amountIn: 90n * E18, estimated: true },
]
/** the estimate's candidate after 30 WETH -> LINK, which its execution shows to lose */
const estimateOnly: Case = { name: '30 WETH -> LINK', pool: 'WETH/LINK dynamic 0.05% ts10 directional-fee', tokenOut: LINK, amountIn: 30n * E18, estimated: true }
/** executions of the executor while eth_backrun answered that request, and the verification misses it counted */
let estimateOnlyExecutions = 0
let estimateOnlyMisses = 0

let services: DomainServices

/** the router's calldata for amountIn of WETH through `ref` alone, paid to the user */
function userSwap(router: Address, ref: V4PoolRef, tokenOut: Address, amountIn: bigint): Hex {
  const hop = { protocol: 'uniswap-v4' as const, pool: ref.address, tokenIn: WETH, tokenOut, fee: ref.fee, zeroForOne: WETH === ref.token0, v4: v4PlanKey(ref) }
  const plan: SwapPlan = { tokenIn: WETH, tokenOut, amountIn, legs: [{ amountIn, hops: [hop], expectedAmountOut: 0n }], expectedAmountOut: 0n }
  return encodeSwapPlanCall({ plan, minAmountOut: 1n, recipient: USER, deadline: BigInt(BLOCK_1_TIMESTAMP + 3600) })
}

beforeAll(async () => {
  services = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' }), { log: { warn: () => {} } })
  const v4 = services.contracts.venues.find((v) => v.protocol === 'uniswap-v4')
  if (v4 === undefined || v4.protocol !== 'uniswap-v4') throw new Error('the devnet configures no V4 venue')
  const router = services.contracts.router
  for (const c of [...cases, estimateOnly]) {
    const entry = registry.v4.pools.find((p) => p.name === c.pool)
    if (entry === undefined) throw new Error(`no V4 pool ${c.pool}`)
    const key = v4.pools.find((k) => lower(k.currency0) === lower(entry.currency0) && lower(k.currency1) === lower(entry.currency1) && k.fee === entry.fee && lower(k.hooks) === lower(entry.hooks))
    if (key === undefined) throw new Error(`the V4 venue lists no key for ${c.pool}`)
    c.ref = v4PoolRef(v4.poolManager, key, v4.name, WETH)
    c.calldata = userSwap(router, c.ref, c.tokenOut, c.amountIn)
    const misses = services.backrun.stats().verificationMisses
    // count the engine's executions of the executor (its candidates) during this request
    const call = services.simulator.call.bind(services.simulator)
    let executions = 0
    services.simulator.call = (state, tx) => {
      if (tx.to === services.contracts.backrunExecutor) executions++
      return call(state, tx)
    }
    try {
      c.found = await services.backrun.backrun({ to: router, calldata: c.calldata, value: 0n, tokenIn: WETH, amountIn: c.amountIn })
    } finally {
      services.simulator.call = call
    }
    if (c === estimateOnly) {
      estimateOnlyExecutions = executions
      estimateOnlyMisses = services.backrun.stats().verificationMisses - misses
    }
  }
}, 120_000)
afterAll(() => services?.close())

describe('eth_backrun after a swap in a native-ETH or hooked V4 pool (issue 15)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: a cycle through that pool, profitable net of gas', (_name, c) => {
    const r = c.found
    if (!r) throw new Error('no backrun')
    const hop = r.hops.find((h) => h.pool === c.ref!.address)
    expect(hop, 'the cycle crosses the moved pool').toBeDefined()
    expect(hop!.protocol).toBe('uniswap-v4')
    // the cycle holds WETH where the key holds ETH
    expect([hop!.tokenIn, hop!.tokenOut]).toContain(WETH)
    expect(r.grossProfit).toBeGreaterThan(0n)
    expect(r.netProfitWei).toBeGreaterThan(0n)
    expect(c.ref!.hookAltersSwap).toBe(c.estimated)
  })

  it('30 WETH -> LINK in the directional-fee pool: the estimate\'s profitable cycle loses in the EVM, so no backrun, and no math/EVM miss is counted', () => {
    expect(estimateOnly.ref!.hookAltersSwap).toBe(true)
    expect(estimateOnly.found).toBeNull()
    // the estimate found a candidate, which was executed (and reverted: no final execution)
    expect(estimateOnlyExecutions).toBeGreaterThan(0)
    expect(estimateOnlyMisses).toBe(0)
  })
})

describe('the backruns executed on anvil, in the user\'s block', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
  })
  afterAll(() => anvil?.stop())



  /** the user's swap and `data` on the executor mined in block 1, the user's first (it tips more) */
  async function mineBehindUser(c: Case, data: Hex): Promise<{ profit: bigint; gas: bigint; executorEth: bigint; executorWeth: bigint }> {
    const r = c.found!
    const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
    try {
      const before = await anvilTokenBalance(anvil.url, r.profitToken, BENEFICIARY)
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [BLOCK_1_TIMESTAMP])
      const userHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: USER, to: services.contracts.router, data: c.calldata, gas: '0x2dc6c0', ...anvilFees(2n) }])
      const backrunHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: BACKRUNNER, to: r.contract, data, gas: '0x1e8480', ...anvilFees(1n) }])
      const [u, b] = await mineTogether(anvil.url, [userHash, backrunHash])
      expect(`user ${u.status} backrun ${b.status}`).toBe('user 0x1 backrun 0x1')
      expect([u.blockNumber, u.transactionIndex, b.blockNumber, b.transactionIndex].map(Number)).toEqual([1, 0, 1, 1])
      return {
        profit: (await anvilTokenBalance(anvil.url, r.profitToken, BENEFICIARY)) - before,
        gas: BigInt(b.gasUsed) - 21_000n,
        executorEth: BigInt(await anvilRpc<Hex>(anvil.url, 'eth_getBalance', [r.contract, 'latest'])),
        executorWeth: await anvilTokenBalance(anvil.url, WETH, r.contract),
      }
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  }

  it.each(cases.map((c) => [c.name, c] as const))('%s: backrun pays exactly grossProfit for exactly gas, and the executor keeps no ETH or WETH', async (_name, c) => {
    const r = c.found
    if (!r) throw new Error('no backrun')
    const mined = await mineBehindUser(c, r.calldata)
    expect(mined).toEqual({ profit: r.grossProfit, gas: r.gas, executorEth: 0n, executorWeth: 0n })
  })

  it.each(cases.map((c) => [c.name, c] as const))('%s: the exact-profit backrun signed with the reported profit lands at it', async (_name, c) => {
    const r = c.found
    if (!r) throw new Error('no backrun')
    const mined = await mineBehindUser(c, toExactBackrunCall(r.calldata, r.grossProfit))
    expect(mined.profit).toBe(r.grossProfit)
  })
})
