/**
 * The eth_backrun engine on the devnet fixtures, V2, V3 and V4 swaps alike, checked against the
 * EVM and against anvil:
 * - every fixture swap that creates arbitrage gives a backrun; every other one gives null;
 * - no false positive: each backrun, mined on anvil in one block right behind the user's own
 *   signed transaction, pays the beneficiary exactly the reported gross profit, for exactly the
 *   reported gas;
 * - the profit is at least 99.9% of a brute-force grid over the input executed in the EVM;
 * - composed into one transaction (a swap through our router with the backrun as its post-swap
 *   call), it is atomic, leaves the user's output unchanged and pays exactly grossProfit.
 */
import { decodeFunctionData, encodeFunctionData, parseAbi, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, anvilTokenBalance, mineTogether, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { BACKRUN_EXECUTOR_ABI, decodeBackrunEvents, encodeBackrunCall, splitBackrunProfit } from '../../src/backrun/backrun-calldata.ts'
import type { BackrunFound, BackrunRequest } from '../../src/backrun/types.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { SWAP_PLAN_ROUTER_ABI } from '../../src/quote/router-calldata.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { fixtureBackrunRequest, GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress, type FixtureTx } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry()
const EXECUTOR = lower(registry.backrun.executor)
const BENEFICIARY = lower(registry.backrun.beneficiary)
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const VIEWER = '0x0000000000000000000000000000000000000b0b' as Address
const BLOCK_1_TIMESTAMP = Number(registry.genesisTimestamp) + 12

/** the fixture as a partner would describe it: tokenIn and amountIn are what its sender spent */
const swaps = loadFixtureTxs().filter((f) => f.expected.status === 1 && f.name !== 'eth-transfer')
const POOL_MANAGER = lower(registry.v4.poolManager)
/** the pools a fixture moved: its V2/V3 pools, and the PoolIds of the V4 pools its PoolManager events name */
const movedPools = (fx: FixtureTx): Address[] => [
  ...fx.pools.map(lower).filter((p) => p !== POOL_MANAGER),
  ...fx.expected.logs.filter((l) => lower(l.address) === POOL_MANAGER && l.topics.length === 3).map((l) => lower(l.topics[1]!)),
]

let services: DomainServices
const found = new Map<string, { fx: FixtureTx; result: BackrunFound }>()

beforeAll(async () => {
  services = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
  for (const fx of swaps) {
    const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: services.simulator.common })
    const result = await services.backrun.backrun(fixtureBackrunRequest(fx, bytesToHexString(tx.tx.data)))
    if (result !== null) found.set(fx.name, { fx, result })
  }
})
afterAll(() => services?.close())

describe('eth_backrun engine on the devnet fixtures', () => {
  it.each(swaps.map((f) => [f.name, f] as const))('%s: a backrun exactly when the swap creates arbitrage', (_name, fx) => {
    const r = found.get(fx.name)?.result
    if (!fx.createsArbitrage) {
      expect(r).toBeUndefined()
      return
    }
    expect(r).toBeDefined()
    expect(r!.contract).toBe(EXECUTOR)
    expect(r!.grossProfit).toBeGreaterThan(0n)
    expect(r!.netProfitWei).toBeGreaterThan(0n)
    expect(r!.netProfitUsd).toBeGreaterThan(0n)
    expect(r!.hops.length === 2 || r!.hops.length === 3).toBe(true)
    // the cycle goes through a pool the user moved
    expect(r!.hops.some((h) => movedPools(fx).includes(h.pool))).toBe(true)
  })

  it('backruns V4 swaps: the large WETH/USDT V4 swap through a cycle that crosses V4 and V3, and a cycle that starts in a V4 pool', () => {
    const v4Swap = found.get('v4-swap-weth-usdt-large')?.result
    expect(v4Swap).toBeDefined()
    expect(new Set(v4Swap!.hops.map((h) => h.protocol))).toEqual(new Set(['uniswap-v4', 'uniswap-v3']))
    const v4Hop = v4Swap!.hops.find((h) => h.protocol === 'uniswap-v4')!
    const key = registry.v4.pools.find((p) => lower(p.poolId) === v4Hop.pool)!
    expect(key.name).toMatch(/WETH\/USDT/)
    expect(v4Hop.v4).toEqual({ poolManager: POOL_MANAGER, tickSpacing: key.tickSpacing })
    // somewhere the search took a V4 pool as the cycle's first pool: the whole cycle in one unlock
    expect([...found.values()].some(({ result }) => result.hops[0]!.protocol === 'uniswap-v4')).toBe(true)
  })

  it('gives null when the user call reverts, and counts it', async () => {
    const fx = loadFixtureTxs().find((f) => f.name === 'revert-v2-expired-deadline')!
    const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: services.simulator.common })
    const before = services.backrun.stats().userCallReverted
    const request: BackrunRequest = { to: lower(fx.to), calldata: bytesToHexString(tx.tx.data), value: 0n, tokenIn: tokenAddress(registry, 'USDC'), amountIn: 10n ** 12n }
    expect(await services.backrun.backrun(request)).toBeNull()
    expect(services.backrun.stats().userCallReverted).toBe(before + 1)
  })

  it('finds at least 99.9% of the best gross profit of a grid over the input, executed in the EVM', async () => {
    expect(found.size).toBeGreaterThan(0)
    const { simulator, chain } = services
    for (const { fx, result } of found.values()) {
      const base = simulator.openState(chain.latest())
      const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: simulator.common })
      const after = (await simulator.transaction(base, tx.tx)).state
      const profitAt = async (amountIn: bigint): Promise<bigint> => {
        const data = encodeBackrunCall({ startToken: result.profitToken, amountIn, hops: result.hops.map((h, i) => ({ ...h, zeroForOne: h.tokenIn < h.tokenOut, tokenIn: i === 0 ? result.profitToken : h.tokenIn })), minProfit: 1n, refundBps: 0 })
        const r = await simulator.call(after, { from: lower(fx.from), to: EXECUTOR, data })
        return r.status === 'success' ? BigInt(bytesToHexString(r.returnData.subarray(0, 32))) : 0n
      }
      let gridBest = 0n
      // 80 points from 1% to 400% of the engine's input
      for (let i = 1; i <= 80; i++) {
        const p = await profitAt((result.amountIn * BigInt(i * 5)) / 100n)
        if (p > gridBest) gridBest = p
      }
      expect(result.grossProfit * 1000n, fx.name).toBeGreaterThanOrEqual(gridBest * 999n)
    }
  })
})

describe('searchAfter: the refund recipient of a backrun transaction of its own', () => {
  it('encodes refundRecipient into the calldata it verifies and returns: signed by the searcher, the refund goes to the user; omitted, to tx.origin', async () => {
    const { simulator, chain } = services
    const fx = found.get('v2-swapExactETHForTokens-large')!.fx
    const user = lower(fx.from)
    const searcher = lower(registry.devAccounts.accounts[registry.devAccounts.searcherIndexes[0]!]!.address)
    expect(user).not.toBe(searcher)
    const base = simulator.openState(chain.latest())
    const userRun = await simulator.transaction(base, decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: simulator.common }).tx)
    expect(userRun.status).toBe('success')
    const balance = async (state: typeof base, token: Address, holder: Address) => {
      const r = await simulator.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
      return BigInt(bytesToHexString(r.returnData))
    }
    const refundBps = 2500
    const explicit = await services.backrun.searchAfter(base, userRun.state, userRun.logs, { origin: searcher, refundBps, refundRecipient: user })
    const implicit = await services.backrun.searchAfter(base, userRun.state, userRun.logs, { origin: searcher, refundBps })
    expect(explicit).not.toBeNull()
    expect(implicit).not.toBeNull()
    const args = (data: Hex) => decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data }).args as readonly unknown[]
    expect(args(explicit!.calldata)[4]).toBe(refundBps)
    expect(lower(args(explicit!.calldata)[5] as string)).toBe(user)
    expect(args(implicit!.calldata)[5]).toBe('0x0000000000000000000000000000000000000000')
    // the same cycle and amount either way (minProfit, the backrun's own gas cost, may differ: the
    // refund to a named account is a cold access where tx.origin is warm)
    expect(args(implicit!.calldata).slice(0, 3)).toEqual(args(explicit!.calldata).slice(0, 3))
    expect(explicit!.gas).toBeGreaterThan(implicit!.gas)
    expect(explicit!.grossProfit).toBe(implicit!.grossProfit)

    const { refund, beneficiary } = splitBackrunProfit(explicit!.grossProfit, refundBps)
    expect(refund).toBeGreaterThan(0n)
    const token = explicit!.profitToken
    for (const [found_, refundedTo] of [[explicit!, user], [implicit!, searcher]] as const) {
      const r = await simulator.call(userRun.state, { from: searcher, to: EXECUTOR, data: found_.calldata })
      expect(r.status).toBe('success')
      expect(decodeBackrunEvents(r.logs, EXECUTOR)).toEqual([{ executor: EXECUTOR, startToken: token, grossProfit: found_.grossProfit, refund }])
      for (const holder of [user, searcher]) {
        expect((await balance(r.state, token, holder)) - (await balance(userRun.state, token, holder)), holder).toBe(holder === refundedTo ? refund : 0n)
      }
      expect((await balance(r.state, token, BENEFICIARY)) - (await balance(userRun.state, token, BENEFICIARY))).toBe(beneficiary)
    }
  })
})

describe('backruns executed on anvil', () => {
  let anvil: AnvilInstance
  beforeAll(async () => {
    // blocks are mined by the test: the user's swap and its backrun share one block, as a bundle does
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
  })
  afterAll(() => anvil?.stop())



  it('every backrun, mined in one block right behind the user\'s own transaction, pays exactly grossProfit for exactly its gas', async () => {
    expect(found.size).toBeGreaterThan(0)
    const backrunner = lower(registry.devAccounts.accounts[9].address)
    for (const { fx, result } of found.values()) {
      const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
      try {
        const before = await anvilTokenBalance(anvil.url, result.profitToken, BENEFICIARY)
        // the user's transaction and the backrun together in block 1 (the block the engine
        // simulated): in separate blocks a V3 pool the backrun crosses would write a new oracle
        // observation (a later timestamp) and the gas would differ. The backrun tips less than
        // the user, and offers a lower fee cap too (every fixture's is above 1 gwei), so anvil
        // orders the user's transaction first.
        const baseFee = BigInt(fx.block.baseFeePerGas)
        const userTip = effectiveTip(decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: services.simulator.common }).tx, baseFee)
        expect(userTip, fx.name).toBeGreaterThan(0n)
        const tip = userTip / 2n
        await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [BLOCK_1_TIMESTAMP])
        const userHash = await anvilRpc<string>(anvil.url, 'eth_sendRawTransaction', [fx.raw])
        const backrunHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: backrunner, to: EXECUTOR, data: result.calldata, gas: '0x1e8480', maxFeePerGas: quantity(BACKRUN_MAX_FEE), maxPriorityFeePerGas: quantity(tip) },
        ])
        const [u, b] = await mineTogether(anvil.url, [userHash, backrunHash])
        expect(`${fx.name} user ${u.status} backrun ${b.status}`).toBe(`${fx.name} user 0x1 backrun 0x1`)
        expect([u.blockNumber, u.transactionIndex, b.blockNumber, b.transactionIndex].map(Number), fx.name).toEqual([1, 0, 1, 1])
        expect((await anvilTokenBalance(anvil.url, result.profitToken, BENEFICIARY)) - before, fx.name).toBe(result.grossProfit)
        // the backrun's gas on anvil, less the 21,000 of its own transaction, is the reported gas
        expect(BigInt(b.gasUsed) - 21_000n, fx.name).toBe(result.gas)
      } finally {
        await anvilRpc(anvil.url, 'evm_revert', [snapshot])
      }
    }
  })

  it('composed into the user\'s swap through our router, the single transaction is atomic, keeps the user\'s output and pays exactly grossProfit', async () => {
    const user = lower(registry.devAccounts.accounts[2].address)
    const weth = tokenAddress(registry, 'WETH')
    const usdc = tokenAddress(registry, 'USDC')
    const amountIn = 66n * 10n ** 18n
    const quote = await services.quote.quote({ tokenIn: weth, tokenOut: usdc, amountIn, sender: user })
    const backrun = await services.backrun.backrun({ to: quote.router, calldata: quote.calldata, value: 0n, tokenIn: weth, amountIn })
    expect(backrun).not.toBeNull()
    // the same swap with the backrun plugged in as the router's post-swap call, calldata as is
    const decoded = decodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, data: quote.calldata })
    const args = [...(decoded.args as readonly unknown[])]
    args[4] = backrun!.contract
    args[5] = backrun!.calldata
    const composed = encodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'swap', args })

    const send = async (data: Hex) => {
      const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
      try {
        const [outBefore, profitBefore] = [await anvilTokenBalance(anvil.url, usdc, user), await anvilTokenBalance(anvil.url, backrun!.profitToken, BENEFICIARY)]
        await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [BLOCK_1_TIMESTAMP])
        const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: user, to: quote.router, data, gas: '0x2dc6c0' }])
        const [r] = await mineTogether(anvil.url, [hash])
        return { status: r.status, received: (await anvilTokenBalance(anvil.url, usdc, user)) - outBefore, profit: (await anvilTokenBalance(anvil.url, backrun!.profitToken, BENEFICIARY)) - profitBefore }
      } finally {
        await anvilRpc(anvil.url, 'evm_revert', [snapshot])
      }
    }
    const ok = await send(composed)
    expect(ok.status).toBe('0x1')
    expect(ok.received).toBe(quote.amountOut)
    expect(ok.profit).toBe(backrun!.grossProfit)

    // atomic: a backrun that cannot reach its minimum reverts the whole transaction, swap included
    const greedy = encodeBackrunCall({
      startToken: backrun!.profitToken,
      amountIn: backrun!.amountIn,
      hops: backrun!.hops.map((h) => ({ ...h, zeroForOne: h.tokenIn < h.tokenOut })),
      minProfit: backrun!.grossProfit + 1n,
      refundBps: 0,
    })
    args[5] = greedy
    const failed = await send(encodeFunctionData({ abi: SWAP_PLAN_ROUTER_ABI, functionName: 'swap', args }))
    expect(failed.status).toBe('0x0')
    expect(failed.received).toBe(0n)
    expect(failed.profit).toBe(0n)
  })
})

const quantity = (n: bigint) => `0x${n.toString(16)}`
/** the backrun's fee cap: the genesis base fee, the least anvil accepts before block 1 */
const BACKRUN_MAX_FEE = 10n ** 9n

/** what a transaction pays its block's coinbase per gas at `baseFee` */
function effectiveTip(tx: { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }, baseFee: bigint): bigint {
  if (tx.maxFeePerGas !== undefined && tx.maxPriorityFeePerGas !== undefined) {
    const room = tx.maxFeePerGas - baseFee
    return tx.maxPriorityFeePerGas < room ? tx.maxPriorityFeePerGas : room
  }
  return tx.gasPrice! - baseFee
}
