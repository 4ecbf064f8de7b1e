/**
 * BackrunExecutor's Uniswap V4 hops (src/contracts/BackrunExecutor.sol), on the devnet's
 * PoolManager, in-process (Simulator) and on a real anvil loaded with the same genesis.
 *
 * After the fixture swap that moves the V4 WETH/USDT pool (v4-swap-weth-usdt-large), cycles that
 * put V4 hops in each place the contract handles them:
 * - a cycle that starts in a V4 pool and crosses a V3 pool: the whole cycle runs in one
 *   PoolManager.unlock, the first swap's input owed (flash accounting) until the proceeds settle it;
 * - three V4 pools in one unlock: the later V4 hops swap and settle inside the first one's unlock;
 * - a V2 flash swap first, then a V4 hop in an unlock of its own;
 * - the native ETH/USDC pool (currency0 = address(0)) first: its ETH input owed until the end,
 *   then paid with WETH unwrapped and settled as value;
 * - a V3 flash swap first, then two V4 hops in unlocks of their own, the native pool's ETH input
 *   unwrapped from WETH;
 * - the native pool inside a V4 cycle: its ETH output taken and wrapped, the cycle's WETH.
 * For each, the best of a scan of inputs (in the EVM) is mined on anvil in one block right behind
 * the user's swap: the beneficiary gets exactly the simulated gross profit, the transaction uses
 * exactly the simulated gas, and the executor keeps nothing.
 *
 * And the guards: unlockCallback answers only the PoolManager, and only during the executor's own
 * unlock; a V4 hop must name the configured PoolManager; a wrong tick spacing names no pool (the
 * PoolManager refuses it).
 */
import { encodeFunctionData, parseAbi, toFunctionSelector, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, mineTogether, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { BENEFICIARY, EXECUTOR, fixtures, registry } from './backrun-executor-devnet.ts'
import { BLOCK_TIME_SECONDS } from '../../scripts/devnet/execute-at-genesis.ts'
import type { RecordedTx } from '../../scripts/devnet/fixture-file.ts'
import { GENESIS_PATH } from '../../scripts/devnet/paths.ts'
import { tokenBySymbol } from '../../scripts/devnet/registry.ts'
import type { TokenSymbol } from '../../scripts/devnet/layout.ts'
import { BACKRUN_EXECUTOR_ABI, decodeBackrunEvents, decodeBackrunResult, decodeBackrunRevert, encodeBackrunCall } from '../../src/backrun/backrun-calldata.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { nextBlockContext } from '../../src/evm/block-context.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator, type ExecutionResult, type SimulationState } from '../../src/evm/simulator.ts'
import { applyAccountOverrides } from '../../src/evm/state-overrides.ts'
import type { PlanHop } from '../../src/routing/swap-plan.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'

const POOL_MANAGER = registry.v4.poolManager.toLowerCase() as Address
const BACKRUNNER = registry.devAccounts.accounts[9]!.address.toLowerCase() as Address
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const GAS_LIMIT = 2_000_000n
const GWEI = 10n ** 9n

const lower = (a: string) => a.toLowerCase() as Address
const hex = (b: Uint8Array) => bytesToHexString(b) as Hex
const token = (s: TokenSymbol | 'WETH') => lower(s === 'WETH' ? registry.weth : tokenBySymbol(registry, s).address)
const fixture = (name: string): RecordedTx => {
  const f = fixtures.find((x) => x.name === name)
  if (!f) throw new Error(`no fixture transaction ${name}`)
  return f
}

// ---------------------------------------------------------------- hops

/** a V4 pool of the devnet by its registry name ('WETH/USDT 0.05% ts10') */
function v4Pool(name: string) {
  const p = registry.v4.pools.find((x) => x.name === name)
  if (!p) throw new Error(`no V4 pool ${name}`)
  return p
}

function v4Hop(name: string, tokenIn: Address, tokenOut: Address): PlanHop {
  const p = v4Pool(name)
  // a native key holds ETH where the cycle holds WETH
  const nativeEth = /^0x0{40}$/.test(p.currency0)
  return { protocol: 'uniswap-v4', pool: lower(p.poolId), tokenIn, tokenOut, fee: p.fee, zeroForOne: tokenIn < tokenOut, v4: { poolManager: POOL_MANAGER, tickSpacing: p.tickSpacing, ...(nativeEth ? { nativeEth } : {}) } }
}

function v3Hop(name: string, tokenIn: Address, tokenOut: Address): PlanHop {
  const p = registry.v3.pools.find((x) => x.name === name)
  if (!p) throw new Error(`no V3 pool ${name}`)
  return { protocol: 'uniswap-v3', pool: lower(p.address), tokenIn, tokenOut, fee: p.fee, zeroForOne: tokenIn < tokenOut }
}

function v2Hop(name: string, tokenIn: Address, tokenOut: Address): PlanHop {
  const p = registry.v2.pairs.find((x) => x.name === name)
  if (!p) throw new Error(`no V2 pair ${name}`)
  return { protocol: 'uniswap-v2', pool: lower(p.address), tokenIn, tokenOut, fee: 3000, zeroForOne: tokenIn < tokenOut }
}

const [WETH, USDT, USDC] = [token('WETH'), token('USDT'), token('USDC')]
const ZERO: Address = '0x0000000000000000000000000000000000000000'

interface Cycle {
  title: string
  startToken: Address
  /** one unit of startToken, the scan's scale */
  unit: bigint
  hops: PlanHop[]
}

const CYCLES: Cycle[] = [
  {
    title: 'starts in V4 and crosses V3: the whole cycle in one unlock',
    startToken: USDT,
    unit: 10n ** 6n,
    hops: [v4Hop('WETH/USDT 0.05% ts10', USDT, WETH), v3Hop('WETH/USDT 0.05%', WETH, USDT)],
  },
  {
    title: 'three V4 pools in one unlock',
    startToken: USDT,
    unit: 10n ** 6n,
    hops: [v4Hop('WETH/USDT 0.05% ts10', USDT, WETH), v4Hop('USDC/WETH 0.3% ts60', WETH, USDC), v4Hop('USDC/USDT 0.08% ts1', USDC, USDT)],
  },
  {
    title: 'a V2 flash swap first, then a V4 hop in an unlock of its own',
    startToken: WETH,
    unit: 10n ** 18n,
    hops: [v2Hop('WETH/USDT', WETH, USDT), v4Hop('WETH/USDT 0.05% ts10', USDT, WETH)],
  },
  {
    title: 'starts in the native ETH pool: its ETH owed until the proceeds, unwrapped, settle it',
    startToken: WETH,
    unit: 10n ** 18n,
    hops: [v4Hop('ETH/USDC 0.3% ts60', WETH, USDC), v4Hop('USDC/USDT 0.08% ts1', USDC, USDT), v4Hop('WETH/USDT 0.05% ts10', USDT, WETH)],
  },
  {
    title: 'a V3 flash swap first, then the native ETH pool in an unlock of its own, paid with unwrapped WETH',
    startToken: USDC,
    unit: 10n ** 6n,
    hops: [v3Hop('USDC/USDT 0.05%', USDC, USDT), v4Hop('WETH/USDT 0.05% ts10', USDT, WETH), v4Hop('ETH/USDC 0.3% ts60', WETH, USDC)],
  },
  {
    title: 'the native ETH pool inside a V4 cycle: its ETH output taken and wrapped',
    startToken: USDT,
    unit: 10n ** 6n,
    hops: [v4Hop('WETH/USDT 0.05% ts10', USDT, WETH), v4Hop('ETH/USDC 0.3% ts60', WETH, USDC), v3Hop('USDC/USDT 0.05%', USDC, USDT)],
  },
]

// ---------------------------------------------------------------- EVM

const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const sim = new Simulator({ common: commonForChain(source.chainId) })
const USER_SWAP = fixture('v4-swap-weth-usdt-large')

/** block 1 as anvil mines it, after the fixture's V4 swap */
async function afterUserSwap(): Promise<SimulationState> {
  const reader = source.latest()
  const state = sim.openState(reader, { ...nextBlockContext(reader.block, BLOCK_TIME_SECONDS), prevRandao: USER_SWAP.block.mixHash })
  const tx = decodeSignedTransaction(USER_SWAP.raw, { chainId: BigInt(registry.chainId), common: sim.common }).tx
  const r = await sim.transaction(state, tx)
  expect(r.status).toBe('success')
  return r.state
}

const callExecutor = (state: SimulationState, from: Address, data: Hex) => sim.call(state, { from, to: EXECUTOR, data, gasLimit: GAS_LIMIT })

function revertOf(result: ExecutionResult): { errorName: string; args: readonly unknown[] } {
  expect(result.status, 'expected a revert').toBe('reverted')
  return decodeBackrunRevert(hex(result.returnData)) ?? { errorName: hex(result.returnData).slice(0, 10), args: [] }
}

async function balanceOf(state: SimulationState, tokenAddress: Address, holder: Address): Promise<bigint> {
  const r = await sim.call(state, { from: VIEWER, to: tokenAddress, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
  return BigInt(hex(r.returnData))
}

interface Best {
  amountIn: bigint
  grossProfit: bigint
  gasUsed: bigint
  calldata: Hex
}

/** the most profitable of a scan of inputs (1 to 50,000 units), each executed in the EVM */
async function bestInput(state: SimulationState, cycle: Cycle): Promise<Best | undefined> {
  let best: Best | undefined
  for (const units of [1n, 2n, 5n, 10n, 20n, 50n, 100n, 200n, 500n, 1000n, 2000n, 5000n, 10_000n, 20_000n, 50_000n]) {
    const amountIn = units * cycle.unit
    const calldata = encodeBackrunCall({ startToken: cycle.startToken, amountIn, hops: cycle.hops, minProfit: 1n, refundBps: 0 })
    const r = await callExecutor(state, BACKRUNNER, calldata)
    if (r.status !== 'success') continue
    const grossProfit = decodeBackrunResult(hex(r.returnData))
    if (best === undefined || grossProfit > best.grossProfit) best = { amountIn, grossProfit, gasUsed: r.gasUsed, calldata }
  }
  return best
}

// ================================================================ in-process

describe('BackrunExecutor V4 hops in-process', () => {
  let after: SimulationState
  const best = new Map<string, Best>()
  beforeAll(async () => {
    after = await afterUserSwap()
    for (const c of CYCLES) {
      const b = await bestInput(after, c)
      if (b !== undefined) best.set(c.title, b)
    }
  })

  it('is deployed with the devnet PoolManager', async () => {
    const r = await sim.call(after, { from: VIEWER, to: EXECUTOR, data: encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'poolManager' }) })
    expect(lower(`0x${hex(r.returnData).slice(26)}`)).toBe(POOL_MANAGER)
  })

  it.each(CYCLES.map((c) => [c.title, c] as const))('%s: profits, pays the beneficiary exactly, keeps nothing', async (title, c) => {
    const b = best.get(title)
    expect(b, title).toBeDefined()
    expect(b!.grossProfit).toBeGreaterThan(0n)
    const r = await callExecutor(after, BACKRUNNER, b!.calldata)
    expect(r.status).toBe('success')
    expect(decodeBackrunEvents(r.logs, EXECUTOR)).toEqual([{ executor: EXECUTOR, startToken: c.startToken, grossProfit: b!.grossProfit, refund: 0n }])
    expect((await balanceOf(r.state, c.startToken, BENEFICIARY)) - (await balanceOf(after, c.startToken, BENEFICIARY))).toBe(b!.grossProfit)
    for (const t of new Set(c.hops.flatMap((h) => [h.tokenIn, h.tokenOut]))) expect(await balanceOf(r.state, t, EXECUTOR), t).toBe(0n)
    expect((await r.state.overlay.readAccount(EXECUTOR))?.balance ?? 0n).toBe(0n)
    // the PoolManager's flash accounting closed: it swapped, and the call did not revert
    expect(r.logs.some((l) => lower(l.address) === POOL_MANAGER)).toBe(true)
  })

  it('unlockCallback refuses any caller but the PoolManager, and the PoolManager outside the executor\'s own unlock', async () => {
    const data = encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'unlockCallback', args: ['0x'] })
    expect(revertOf(await callExecutor(after, VIEWER, data)).errorName).toBe('UnexpectedCallback')
    expect(revertOf(await callExecutor(after, BACKRUNNER, data)).errorName).toBe('UnexpectedCallback')
    // the PoolManager's own address, but no unlock of the executor in flight (its code set aside in
    // a fork of the state: a call's sender may not have code, EIP-3607)
    const asPoolManager = after.fork()
    await applyAccountOverrides(asPoolManager, new Map([[POOL_MANAGER, { code: '0x' as Hex }]]))
    expect(revertOf(await callExecutor(asPoolManager, POOL_MANAGER, data)).errorName).toBe('UnexpectedCallback')
    // with a cycle's data, as the first call of an attack would send it
    const cycle = encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'unlockCallback', args: [`0x${best.get(CYCLES[0]!.title)!.calldata.slice(10)}`] })
    expect(revertOf(await callExecutor(asPoolManager, POOL_MANAGER, cycle)).errorName).toBe('UnexpectedCallback')
    // the same sender passes the check during the executor's own unlock: the cycles above ran through it
  })

  it('refuses a V4 hop that does not name the configured PoolManager, and one whose key the PoolManager does not hold', async () => {
    const c = CYCLES[0]!
    const b = best.get(c.title)!
    const raw = (hops: Array<{ protocol: number; pool: Address; tokenOut: Address; fee: number; tickSpacing: number; hooks: Address }>) =>
      encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrun', args: [c.startToken, b.amountIn, hops, 1n, 0, ZERO] })
    const v4 = { protocol: 2, pool: POOL_MANAGER, tokenOut: WETH, fee: 500, tickSpacing: 10, hooks: ZERO }
    const v3 = { protocol: 1, pool: c.hops[1]!.pool, tokenOut: USDT, fee: 500, tickSpacing: 0, hooks: ZERO }
    // the executor checks the PoolManager before anything moves
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, pool: v3.pool }, v3])))).toEqual({ errorName: 'InvalidPool', args: [expect.stringMatching(new RegExp(v3.pool.slice(2), 'i'))] })
    // a wrong spacing or fee is another key: the PoolManager has no such pool
    const notInitialized = toFunctionSelector('PoolNotInitialized()')
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, tickSpacing: 60 }, v3]))).errorName).toBe(notInitialized)
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, fee: 3000 }, v3]))).errorName).toBe(notInitialized)
    // a hooks address is part of the key: another one names a pool the PoolManager does not have
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, hooks: lower(registry.v4.hooks[0]!.address) }, v3]))).errorName).toBe(notInitialized)
    // a V2 or V3 hop names no hooks
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([v4, { ...v3, hooks: POOL_MANAGER }]))).errorName).toBe('InvalidPool')
    // a native hop must have WETH on one side; protocols stop at 3
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, protocol: 3, tokenOut: USDC }, v3]))).errorName).toBe('InvalidPool')
    expect(revertOf(await callExecutor(after, BACKRUNNER, raw([{ ...v4, protocol: 4 }, v3]))).errorName).toBe('InvalidProtocol')
    // the right key succeeds
    expect((await callExecutor(after, BACKRUNNER, raw([v4, v3]))).status).toBe('success')
  })

  it('accepts ETH only from WETH and the PoolManager, mid-backrun', async () => {
    const funded = after.fork()
    await applyAccountOverrides(funded, new Map([[VIEWER, { balance: 10n ** 18n }]]))
    const r = await sim.call(funded, { from: VIEWER, to: EXECUTOR, data: '0x', value: 1n, gasLimit: GAS_LIMIT })
    expect(revertOf(r).errorName).toBe('UnexpectedEth')
  })

  // ============================================================== anvil

  describe('on anvil, in one block right behind the user\'s swap', () => {
    let anvil: AnvilInstance
    beforeAll(async () => {
      anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
    })
    afterAll(() => anvil?.stop())

    const onAnvil = async (tokenAddress: Address, holder: Address) =>
      BigInt(await anvilRpc<Hex>(anvil.url, 'eth_call', [{ from: VIEWER, to: tokenAddress, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) }, 'latest']))


    it.each(CYCLES.map((c) => [c.title, c] as const))('%s: the same profit and gas as in-process', async (title, c) => {
      const b = best.get(title)!
      const snapshot = await anvilRpc<string>(anvil.url, 'evm_snapshot')
      try {
        const before = await onAnvil(c.startToken, BENEFICIARY)
        await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(USER_SWAP.block.timestamp)])
        // the user's legacy transaction pays 2 gwei; the backrun caps its fee at 1 gwei (the
        // genesis base fee) and tips less, so anvil orders the user's swap first
        const userHash = await anvilRpc<string>(anvil.url, 'eth_sendRawTransaction', [USER_SWAP.raw])
        const backrunHash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: BACKRUNNER, to: EXECUTOR, data: b.calldata, gas: `0x${GAS_LIMIT.toString(16)}`, maxFeePerGas: `0x${GWEI.toString(16)}`, maxPriorityFeePerGas: `0x${(GWEI / 20n).toString(16)}` },
        ])
        const [u, r] = await mineTogether(anvil.url, [userHash, backrunHash])
        expect(`user ${u.status} backrun ${r.status}`).toBe('user 0x1 backrun 0x1')
        expect([u.blockNumber, u.transactionIndex, r.blockNumber, r.transactionIndex].map(Number)).toEqual([1, 0, 1, 1])
        expect((await onAnvil(c.startToken, BENEFICIARY)) - before).toBe(b.grossProfit)
        expect(BigInt(r.gasUsed)).toBe(b.gasUsed)
        for (const t of new Set(c.hops.flatMap((h) => [h.tokenIn, h.tokenOut]))) expect(await onAnvil(t, EXECUTOR), t).toBe(0n)
      } finally {
        await anvilRpc(anvil.url, 'evm_revert', [snapshot])
      }
    })
  })
})
