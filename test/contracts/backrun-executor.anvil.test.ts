/**
 * BackrunExecutor (src/contracts/BackrunExecutor.sol), deployed in the devnet at
 * registry.backrun.executor with registry.backrun.beneficiary as its beneficiary.
 *
 * A fixture user transaction that leaves an arbitrage (fixtures/txs: createsArbitrage) runs first;
 * a brute-force scan (a few amounts, both orders of the other pools) then finds the best amount
 * for a cycle whose first pool is given, and backrun() is executed as a signed transaction of the
 * same user, so tx.origin is the user (refundRecipient zero: the refund goes to tx.origin); a
 * searcher's backrun transaction after the user's names the user (or anyone) as refundRecipient
 * instead. Everything runs in-process with the Simulator, and the same
 * two transactions run in one block on a real anvil loaded with the same genesis: status, gasUsed,
 * logs and the profit must agree.
 *
 * backrunExact (the variant that lands only at exactly its expectedProfit) runs the same scenarios,
 * paying exactly as backrun does, and is then sent by the searcher after another transaction that
 * moved the cycle's pools (a swap that raised the profit, a rival's partial backrun that lowered
 * it): it reverts with ProfitMismatch(realized profit, expectedProfit), where backrun with
 * minProfit = expectedProfit would have landed at the higher profit. Same comparisons with anvil.
 *
 * The attacks (direct callback calls, a fake pool, a genuine pair's flash swap aimed at the
 * executor, reentrancy through a token) use small helper contracts compiled here with the pinned
 * solc and installed by code override (simulator) or anvil_setCode (anvil).
 */
import {
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  getCreate2Address,
  keccak256,
  parseAbi,
  parseEther,
  toFunctionSelector,
  type Abi,
  type Hex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { BENEFICIARY, EXECUTOR, fixtures, registry } from './backrun-executor-devnet.ts'
import { compileSolidity } from '../support/solidity.ts'
import { BLOCK_TIME_SECONDS, nextBaseFee } from '../../scripts/devnet/execute-at-genesis.ts'
import type { RecordedTx } from '../../scripts/devnet/fixture-file.ts'
import { BACKRUN_EXECUTOR_LABEL, venueArgs } from '../../scripts/devnet/fixed-deployments.ts'
import type { TokenSymbol } from '../../scripts/devnet/layout.ts'
import { GENESIS_PATH } from '../../scripts/devnet/paths.ts'
import { tokenBySymbol, type DevnetRegistry, type RegistryKeyedAccount } from '../../scripts/devnet/registry.ts'
import {
  BACKRUN_EXECUTOR_ABI,
  decodeBackrunEvents,
  decodeBackrunResult,
  decodeBackrunRevert,
  encodeBackrunCall,
  encodeBackrunExactCall,
  splitBackrunProfit,
  toExactBackrunCall,
  type BackrunEvent,
} from '../../src/backrun/backrun-calldata.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { nextBlockContext } from '../../src/evm/block-context.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator, type ExecutionResult, type SimulationLog, type SimulationState, type TransactionResult } from '../../src/evm/simulator.ts'
import { applyAccountOverrides, setStorage } from '../../src/evm/state-overrides.ts'
import { encodeSwapPlanCall } from '../../src/quote/router-calldata.ts'
import type { PlanHop } from '../../src/routing/swap-plan.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'

const ROUTER = registry.extensions['swap-plan-router']!.toLowerCase() as Address
const CHAIN_ID = BigInt(registry.chainId)
const TOKENS = registry.tokens.map((t) => t.address.toLowerCase() as Address)
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)', 'function transfer(address, uint256) returns (bool)'])
const V2_PAIR = parseAbi(['function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes data)'])
const VIEWER: Address = '0x0000000000000000000000000000000000000b0b'
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'
const GAS_LIMIT = 1_500_000n
const FEES = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }

const lower = (a: string) => a.toLowerCase() as Address
const token = (s: TokenSymbol) => lower(tokenBySymbol(registry, s).address)
const decimalsOf = (address: string) => registry.tokens.find((t) => lower(t.address) === lower(address))!.decimals
const accountOf = (address: string): RegistryKeyedAccount => {
  const a = registry.devAccounts.accounts.find((x) => lower(x.address) === lower(address))
  if (!a) throw new Error(`${address} is not a dev account`)
  return a
}
const fixture = (name: string): RecordedTx => {
  const f = fixtures.find((x) => x.name === name)
  if (!f) throw new Error(`no fixture transaction ${name}`)
  return f
}

// ---------------------------------------------------------------- pools and cycles

interface Pool {
  label: string
  protocol: PlanHop['protocol']
  address: Address
  token0: Address
  token1: Address
  fee: number
}

const POOLS: Pool[] = [
  ...registry.v2.pairs.map((p) => ({ label: `V2 ${p.name}`, protocol: 'uniswap-v2' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: 3000 })),
  ...registry.v3.pools.map((p) => ({ label: `V3 ${p.name}`, protocol: 'uniswap-v3' as const, address: lower(p.address), token0: lower(p.token0), token1: lower(p.token1), fee: p.fee })),
]
const pool = (label: string): Pool => {
  const p = POOLS.find((x) => x.label === label)
  if (!p) throw new Error(`no pool ${label}`)
  return p
}

/** The hops through `pools` in this order from `start`, or undefined when they do not chain back to start. */
function cycle(start: Address, pools: Pool[]): PlanHop[] | undefined {
  let tokenIn = start
  const hops: PlanHop[] = []
  for (const p of pools) {
    if (tokenIn !== p.token0 && tokenIn !== p.token1) return undefined
    const tokenOut = tokenIn === p.token0 ? p.token1 : p.token0
    hops.push({ protocol: p.protocol, pool: p.address, tokenIn, tokenOut, fee: p.fee, zeroForOne: tokenIn === p.token0 })
    tokenIn = tokenOut
  }
  return tokenIn === start ? hops : undefined
}

/** Every cycle from `start` that begins with `first` and goes through all of `others` in some order. */
function candidateCycles(start: Address, first: Pool, others: Pool[]): PlanHop[][] {
  const orders = others.length === 1 ? [others] : [others, [...others].reverse()]
  return orders.map((o) => cycle(start, [first, ...o])).filter((c): c is PlanHop[] => c !== undefined)
}

/** a few amounts: 1 and 3 times 10^(decimals - 2 .. decimals + 3) */
function scanAmounts(decimals: number): bigint[] {
  const out: bigint[] = []
  for (let e = decimals - 2; e <= decimals + 3; e++) for (const m of [1n, 3n]) out.push(m * 10n ** BigInt(e))
  return out
}

// ---------------------------------------------------------------- simulator

const source = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const sim = new Simulator({ common: commonForChain(source.chainId) })
const hex = (b: Uint8Array) => bytesToHexString(b) as Hex

/** The state the fixture transactions were recorded in front of: block 1 as anvil mined it. */
function block1State(): SimulationState {
  const reader = source.latest()
  return sim.openState(reader, { ...nextBlockContext(reader.block, BLOCK_TIME_SECONDS), prevRandao: fixtures[0]!.block.mixHash })
}

async function balanceOf(state: SimulationState, tokenAddress: Address, holder: Address): Promise<bigint> {
  const r = await sim.call(state, { from: VIEWER, to: tokenAddress, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
  expect(r.status).toBe('success')
  return decodeFunctionResult({ abi: ERC20, functionName: 'balanceOf', data: hex(r.returnData) })
}

/** What the executor holds: nothing, of any registry token, nor ETH. */
async function executorHoldings(state: SimulationState): Promise<bigint[]> {
  const out: bigint[] = []
  for (const t of TOKENS) out.push(await balanceOf(state, t, EXECUTOR))
  out.push((await state.overlay.readAccount(EXECUTOR))?.balance ?? 0n)
  return out
}

async function signTx(from: RegistryKeyedAccount, nonce: number, to: Address, data: Hex): Promise<Hex> {
  return privateKeyToAccount(from.privateKey).signTransaction({ type: 'eip1559', chainId: registry.chainId, nonce, to, data, gas: GAS_LIMIT, value: 0n, ...FEES })
}

const decodeTx = (raw: Hex) => decodeSignedTransaction(raw, { chainId: CHAIN_ID, common: sim.common }).tx

/** The revert of `result`: the executor's custom error, else the bubbled reason. */
function revertOf(result: ExecutionResult): { errorName: string; args: readonly unknown[] } {
  expect(result.status, 'expected a revert').toBe('reverted')
  return decodeBackrunRevert(hex(result.returnData)) ?? { errorName: 'Error', args: [result.revertReason ?? ''] }
}

const callExecutor = (state: SimulationState, from: Address, data: Hex) => sim.call(state, { from, to: EXECUTOR, data, gasLimit: GAS_LIMIT })

interface Best {
  hops: PlanHop[]
  amountIn: bigint
  grossProfit: bigint
}

/** The most profitable (cycle, amount) among the candidates, by simulating backrun() for each. */
async function scan(state: SimulationState, user: Address, start: Address, cycles: PlanHop[][]): Promise<Best | undefined> {
  let best: Best | undefined
  for (const hops of cycles) {
    for (const amountIn of scanAmounts(decimalsOf(start))) {
      const r = await callExecutor(state, user, encodeBackrunCall({ startToken: start, amountIn, hops, minProfit: 0n, refundBps: 0 }))
      if (r.status !== 'success') continue
      const grossProfit = decodeBackrunResult(hex(r.returnData))
      if (!best || grossProfit > best.grossProfit) best = { hops, amountIn, grossProfit }
    }
  }
  return best
}

// ---------------------------------------------------------------- scenarios

interface Scenario {
  title: string
  /** the user transaction that leaves the arbitrage */
  fixture: string
  start: TokenSymbol
  /** the pool the cycle borrows from */
  first: string
  others: string[]
  refundBps: number
}

const SCENARIOS: Scenario[] = [
  { title: '2 hops V3 -> V2 (same pair)', fixture: 'v2-swapExactETHForTokens-large', start: 'WETH', first: 'V3 USDC/WETH 0.05%', others: ['V2 USDC/WETH'], refundBps: 2500 },
  { title: '2 hops V2 -> V3 (V2 flash swap)', fixture: 'v2-swapExactTokensForETH-large', start: 'WETH', first: 'V2 USDC/WETH', others: ['V3 USDC/WETH 0.05%'], refundBps: 0 },
  { title: '2 hops V3 -> V3 (two fee tiers)', fixture: 'v3-exactOutputSingle-large', start: 'WETH', first: 'V3 USDC/WETH 0.3%', others: ['V3 USDC/WETH 0.05%'], refundBps: 10_000 },
  { title: '2 hops V3 -> V2 (USDC/USDT, 6 decimals)', fixture: 'v2-swapExactTokensForTokens-stable-large', start: 'USDC', first: 'V3 USDC/USDT 0.05%', others: ['V2 USDC/USDT'], refundBps: 5000 },
  { title: '3 hops through WETH: V3 -> V2 -> V2', fixture: 'v2-swapETHForExactTokens-large', start: 'WETH', first: 'V3 USDC/WETH 0.05%', others: ['V2 WBTC/USDC', 'V2 WBTC/WETH'], refundBps: 3000 },
  { title: '3 hops through WETH: V2 -> V2 -> V3 (from USDC)', fixture: 'v2-swapETHForExactTokens-large', start: 'USDC', first: 'V2 WBTC/USDC', others: ['V2 WBTC/WETH', 'V3 USDC/WETH 0.05%'], refundBps: 1234 },
  { title: '3 hops through WETH: V2 -> V3 -> V3 (from DAI)', fixture: 'v2-swapExactTokensForTokens-large', start: 'DAI', first: 'V2 WETH/DAI', others: ['V3 USDC/WETH 0.05%', 'V3 USDC/DAI 0.05%'], refundBps: 100 },
]

interface Prepared {
  user: RegistryKeyedAccount
  userTx: RecordedTx
  best: Best
  backrunRaw: Hex
  startToken: Address
  /** the user transaction, then the backrun, in one block */
  results: TransactionResult[]
  /** state after the user transaction */
  afterUser: SimulationState
}

const prepared = new Map<string, Promise<Prepared>>()
const gasReport: Record<string, number> = {}

/** User transaction, scan and the backrun transaction, in-process; memoised per scenario. */
function prepare(s: Scenario): Promise<Prepared> {
  let p = prepared.get(s.title)
  if (!p) {
    p = (async () => {
      const userTx = fixture(s.fixture)
      expect(userTx.createsArbitrage).toBe(true)
      const user = accountOf(userTx.from)
      const startToken = token(s.start)
      const first = await sim.transaction(block1State(), decodeTx(userTx.raw))
      expect(first.status).toBe('success')
      expect(first.gasUsed.toString()).toBe(userTx.expected.gasUsed)
      const afterUser = first.state
      const best = await scan(afterUser, lower(user.address), startToken, candidateCycles(startToken, pool(s.first), s.others.map(pool)))
      if (!best || best.grossProfit === 0n) throw new Error(`${s.title}: no profitable amount found`)
      // minProfit = the simulated profit: the tightest bound that still passes
      const data = encodeBackrunCall({ startToken, amountIn: best.amountIn, hops: best.hops, minProfit: best.grossProfit, refundBps: s.refundBps })
      const backrunRaw = await signTx(user, userTx.nonce + 1, EXECUTOR, data)
      const bundle = await sim.bundle(block1State(), [decodeTx(userTx.raw), decodeTx(backrunRaw)])
      expect(bundle.success).toBe(true)
      return { user, userTx, best, backrunRaw, startToken, results: bundle.results, afterUser }
    })()
    prepared.set(s.title, p)
  }
  return p
}

function backrunEvents(logs: readonly SimulationLog[] | readonly { address: string; topics: readonly Hex[]; data: Hex }[]): BackrunEvent[] {
  return decodeBackrunEvents(logs as { address: string; topics: Hex[]; data: Hex }[], EXECUTOR)
}


// ---------------------------------------------------------------- a searcher's backrun transaction

/**
 * The devnet searcher key (the first of devAccounts.searcherIndexes, dev account 8, the service's
 * default): in a bundle the backrun is a transaction of its own, signed by the searcher, after the
 * user's. tx.origin is then the searcher, so the user is refunded only through an explicit
 * refundRecipient.
 */
const SEARCHER = registry.devAccounts.accounts[registry.devAccounts.searcherIndexes[0]!]!
/** An address that is neither user, searcher nor beneficiary, with no balance at genesis. */
const THIRD_PARTY: Address = '0x00000000000000000000000000000000000ca5e0'

type RefundTo = 'user' | 'zero' | 'third-party'
/** The scenarios whose users are not the searcher: 2 hops from WETH, 3 hops from USDC. */
const SEARCHER_SCENARIOS = [SCENARIOS[0]!, SCENARIOS[5]!]
const REFUND_TARGETS: RefundTo[] = ['user', 'zero', 'third-party']

interface SearcherBackrun {
  p: Prepared
  refundRecipient: Address
  /** who must receive the refund */
  refundedTo: Address
  backrunRaw: Hex
  /** the user transaction, then the searcher's backrun, in one block */
  results: TransactionResult[]
}

const searcherBackruns = new Map<string, Promise<SearcherBackrun>>()

/** The scenario's user transaction followed by the searcher's backrun transaction paying the refund as `to` says. */
function searcherBackrun(s: Scenario, to: RefundTo): Promise<SearcherBackrun> {
  const key = `${s.title} ${to}`
  let r = searcherBackruns.get(key)
  if (!r) {
    r = (async () => {
      const p = await prepare(s)
      const user = lower(p.user.address)
      expect(user).not.toBe(lower(SEARCHER.address))
      const refundRecipient = to === 'user' ? user : to === 'third-party' ? THIRD_PARTY : ZERO_ADDRESS
      const refundedTo = to === 'zero' ? lower(SEARCHER.address) : refundRecipient
      const data = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, minProfit: p.best.grossProfit, refundBps: s.refundBps, refundRecipient })
      const backrunRaw = await signTx(SEARCHER, 0, EXECUTOR, data)
      const bundle = await sim.bundle(block1State(), [decodeTx(p.userTx.raw), decodeTx(backrunRaw)])
      expect(bundle.success).toBe(true)
      return { p, refundRecipient, refundedTo, backrunRaw, results: bundle.results }
    })()
    searcherBackruns.set(key, r)
  }
  return r
}

const SEARCHER_CASES = SEARCHER_SCENARIOS.flatMap((s) => REFUND_TARGETS.map((to) => [`${s.title}, refundRecipient ${to}`, s, to] as const))

// ---------------------------------------------------------------- backrunExact

interface ExactBackrun {
  p: Prepared
  /** backrunExact calldata: the scenario's backrun with expectedProfit = the planned gross profit */
  data: Hex
  /** signed by the scenario's user right after its swap, as p.backrunRaw */
  raw: Hex
  /** the user transaction, then backrunExact, in one block */
  results: TransactionResult[]
}

const exactBackruns = new Map<string, Promise<ExactBackrun>>()

/** The scenario's backrun as backrunExact (converted from its backrun calldata), on the state it was planned on. */
function exactBackrun(s: Scenario): Promise<ExactBackrun> {
  let r = exactBackruns.get(s.title)
  if (!r) {
    r = (async () => {
      const p = await prepare(s)
      const params = { startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, refundBps: s.refundBps }
      const data = toExactBackrunCall(encodeBackrunCall({ ...params, minProfit: p.best.grossProfit }), p.best.grossProfit)
      expect(data).toBe(encodeBackrunExactCall({ ...params, expectedProfit: p.best.grossProfit }))
      const raw = await signTx(p.user, p.userTx.nonce + 1, EXECUTOR, data)
      const bundle = await sim.bundle(block1State(), [decodeTx(p.userTx.raw), decodeTx(raw)])
      expect(bundle.success).toBe(true)
      return { p, data, raw, results: bundle.results }
    })()
    exactBackruns.set(s.title, r)
  }
  return r
}

/** How the pools moved between the user's swap and the searcher's backrun (another bundle placed first). */
type Move = 'higher' | 'lower'
const MOVES: Move[] = ['higher', 'lower']
/** The scenario the moves are played on: WETH -> USDC (V3 0.05%) -> WETH (V2 USDC/WETH), after a large ETH -> USDC swap on the V2 pair. */
const MOVE_SCENARIO = SCENARIOS[0]!
/** Swaps WETH for USDC on the V2 pair (the user's direction again): dev account 11, neither a fixture user, the router user nor a searcher key. */
const MOVER = registry.devAccounts.accounts[11]!
/** A rival searcher (the second searcher key) whose partial backrun of the same cycle lands first. */
const RIVAL = registry.devAccounts.accounts[registry.devAccounts.searcherIndexes[1]!]!
const MOVER_SWAP_IN = parseEther('20')

interface MovedExact {
  p: Prepared
  move: Move
  /** the transaction placed between the user's and the searcher's */
  moverRaw: Hex
  /** the searcher's backrunExact (refund to the user), expectedProfit = the planned gross profit */
  exactData: Hex
  exactRaw: Hex
  /** user, mover, backrunExact, each on the previous one's state */
  results: TransactionResult[]
  /** what the cycle would have realized after the move (backrun with minProfit 0) */
  movedProfit: bigint
}

const movedExacts = new Map<Move, Promise<MovedExact>>()

function movedExact(move: Move): Promise<MovedExact> {
  let r = movedExacts.get(move)
  if (!r) {
    r = (async () => {
      const p = await prepare(MOVE_SCENARIO)
      const user = lower(p.user.address)
      for (const a of [MOVER, RIVAL]) {
        expect(fixtures.some((f) => lower(f.from) === lower(a.address))).toBe(false)
        expect(lower(a.address)).not.toBe(lower(SEARCHER.address))
      }
      expect(registry.devAccounts.searcherIndexes).not.toContain(MOVER.index)
      const weth = token('WETH')
      const usdc = token('USDC')
      let moverRaw: Hex
      if (move === 'higher') {
        // the user's swap again, smaller: the pair's USDC gets cheaper still, the cycle's V2 leg pays more
        const v2Pair = pool('V2 USDC/WETH')
        const plan = {
          tokenIn: weth,
          tokenOut: usdc,
          amountIn: MOVER_SWAP_IN,
          expectedAmountOut: 0n,
          legs: [{ amountIn: MOVER_SWAP_IN, expectedAmountOut: 0n, hops: [{ protocol: 'uniswap-v2' as const, pool: v2Pair.address, tokenIn: weth, tokenOut: usdc, fee: 3000, zeroForOne: weth < usdc }] }],
        }
        moverRaw = await signTx(MOVER, 0, ROUTER, encodeSwapPlanCall({ plan, minAmountOut: 0n, deadline: 1n << 64n }))
      } else {
        // a rival takes a third of the opportunity first
        const rival = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn / 3n, hops: p.best.hops, minProfit: 1n, refundBps: 0 })
        moverRaw = await signTx(RIVAL, 0, EXECUTOR, rival)
      }
      const params = { startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, refundBps: MOVE_SCENARIO.refundBps, refundRecipient: user }
      const exactData = encodeBackrunExactCall({ ...params, expectedProfit: p.best.grossProfit })
      const exactRaw = await signTx(SEARCHER, 0, EXECUTOR, exactData)
      const userResult = await sim.transaction(block1State(), decodeTx(p.userTx.raw))
      const moverResult = await sim.transaction(userResult.state, decodeTx(moverRaw))
      expect(moverResult.status, moverResult.revertReason).toBe('success')
      const exactResult = await sim.transaction(moverResult.state, decodeTx(exactRaw))
      const probe = await callExecutor(moverResult.state, lower(SEARCHER.address), encodeBackrunCall({ ...params, minProfit: 0n }))
      expect(probe.status).toBe('success')
      const movedProfit = decodeBackrunResult(hex(probe.returnData))
      return { p, move, moverRaw, exactData, exactRaw, results: [userResult, moverResult, exactResult], movedProfit }
    })()
    movedExacts.set(move, r)
  }
  return r
}

// ---------------------------------------------------------------- helper contracts

const HELPERS_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Not a pool: relays calls, so they come from a contract that is not the factory's pool.
contract Relay {
    function relay(address target, bytes calldata data) external returns (bytes memory ret) {
        bool ok;
        (ok, ret) = target.call(data);
        if (!ok) assembly ("memory-safe") { revert(add(ret, 0x20), mload(ret)) }
    }

    /// two calls in one transaction; either failing reverts both
    function relayTwice(address target, bytes calldata a, bytes calldata b) external {
        (bool ok, bytes memory ret) = target.call(a);
        if (!ok) assembly ("memory-safe") { revert(add(ret, 0x20), mload(ret)) }
        (ok, ret) = target.call(b);
        if (!ok) assembly ("memory-safe") { revert(add(ret, 0x20), mload(ret)) }
    }
}

/// Installed at a token's address, with the token's own code at IMPL: a token with a transfer
/// hook. On its first transfer it calls TARGET.backrun(0, 0, [], 0, 0, 0), records the first word of
/// what came back (| 1) at RESULT, then runs the token's code (delegatecall: same storage).
contract ReentrantToken {
    fallback() external payable {
        assembly {
            let implSlot := 0xbac0000000000000000000000000000000000000000000000000000000000001
            let targetSlot := 0xbac0000000000000000000000000000000000000000000000000000000000002
            let resultSlot := 0xbac0000000000000000000000000000000000000000000000000000000000003
            if eq(shr(224, calldataload(0)), 0xa9059cbb) {
                let target := sload(targetSlot)
                if and(gt(target, 0), iszero(sload(resultSlot))) {
                    let m := mload(0x40)
                    mstore(m, shl(224, BACKRUN_SELECTOR))
                    mstore(add(m, 0x04), 0)
                    mstore(add(m, 0x24), 0)
                    mstore(add(m, 0x44), 0xc0)
                    mstore(add(m, 0x64), 0)
                    mstore(add(m, 0x84), 0)
                    mstore(add(m, 0xa4), 0)
                    mstore(add(m, 0xc4), 0)
                    pop(call(gas(), target, 0, m, 0xe4, 0, 0))
                    mstore(m, 0)
                    let size := returndatasize()
                    if gt(size, 0x20) { size := 0x20 }
                    returndatacopy(m, 0, size)
                    sstore(resultSlot, or(mload(m), 1))
                }
            }
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), sload(implSlot), 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}
`
const HOOK = { impl: 0xbac0000000000000000000000000000000000000000000000000000000000001n, target: 0xbac0000000000000000000000000000000000000000000000000000000000002n, result: 0xbac0000000000000000000000000000000000000000000000000000000000003n }
const RELAY_ADDRESS: Address = '0x00000000000000000000000000000000000fa4e1'
const TOKEN_IMPL_ADDRESS: Address = '0x00000000000000000000000000000000000001a1'

interface Helpers {
  relay: { abi: Abi; code: Hex }
  reentrantToken: { code: Hex }
}

async function compileHelpers(): Promise<Helpers> {
  const selector = toFunctionSelector('backrun(address,uint256,(uint8,address,address,uint24,int24,address)[],uint256,uint16,address)')
  const c = await compileSolidity('Helpers.sol', HELPERS_SOURCE.replace('BACKRUN_SELECTOR', selector))
  return { relay: c.Relay!, reentrantToken: { code: c.ReentrantToken!.code } }
}

/** Raw backrun calldata, without the encoder's checks: what any caller can send. */
function rawBackrun(
  startToken: Address,
  amountIn: bigint,
  hops: RawHop[],
  minProfit = 0n,
  refundBps = 0,
  refundRecipient: Address = ZERO_ADDRESS,
): Hex {
  return encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrun', args: [startToken, amountIn, hops.map(withSpacing), minProfit, refundBps, refundRecipient] })
}
/** rawBackrun's backrunExact twin */
function rawBackrunExact(
  startToken: Address,
  amountIn: bigint,
  hops: RawHop[],
  expectedProfit = 0n,
  refundBps = 0,
  refundRecipient: Address = ZERO_ADDRESS,
): Hex {
  return encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'backrunExact', args: [startToken, amountIn, hops.map(withSpacing), expectedProfit, refundBps, refundRecipient] })
}
/** a hop as the contract takes it; tickSpacing and hooks (V4 only) default to 0 */
interface RawHop {
  protocol: number
  pool: Address
  tokenOut: Address
  fee: number
  tickSpacing?: number
  hooks?: Address
}
const withSpacing = (h: RawHop) => ({ ...h, tickSpacing: h.tickSpacing ?? 0, hooks: h.hooks ?? ZERO_ADDRESS })
const onchain = (h: PlanHop) => ({ protocol: h.protocol === 'uniswap-v2' ? 0 : 1, pool: h.pool, tokenOut: h.tokenOut, fee: h.fee, tickSpacing: 0, hooks: ZERO_ADDRESS })

const v3Callback = (amount0: bigint, amount1: bigint, data: Hex) =>
  encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'uniswapV3SwapCallback', args: [amount0, amount1, data] })
const v2Callback = (sender: Address, amount0: bigint, amount1: bigint, data: Hex) =>
  encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName: 'uniswapV2Call', args: [sender, amount0, amount1, data] })

/** Callback calls an attacker would try: pay me `token` (later-hop form) or run a cycle (first-pool form). */
function callbackAttacks(): Hex[] {
  const tokenData = encodeAbiParameters([{ type: 'address' }], [registry.weth])
  // the first pool's callback data: abi.encode(amountIn, profit, exact, hops)
  const cycleData = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'bool' }, { type: 'tuple[]', components: [{ type: 'uint8' }, { type: 'address' }, { type: 'address' }, { type: 'uint24' }, { type: 'int24' }] }],
    [10n ** 18n, 0n, false, []],
  )
  return [
    v3Callback(10n ** 18n, 0n, tokenData),
    v3Callback(0n, 10n ** 18n, cycleData),
    v2Callback(EXECUTOR, 10n ** 18n, 0n, cycleData),
    v2Callback(VIEWER, 0n, 10n ** 18n, cycleData),
  ]
}

// ================================================================ in-process

describe('BackrunExecutor in-process (Simulator on the embedded devnet)', () => {
  let helpers: Helpers
  beforeAll(async () => {
    helpers = await compileHelpers()
  })
  afterAll(() => {
    if (Object.keys(gasReport).length > 0) console.log(`BackrunExecutor gasUsed (backrun transaction): ${JSON.stringify(gasReport)}`)
  })

  it('is deployed with the registry contracts and the registry beneficiary, which has no code and no balance', async () => {
    const state = block1State()
    expect(registry.extensions[BACKRUN_EXECUTOR_LABEL]?.toLowerCase()).toBe(EXECUTOR)
    const read = async (functionName: string) => {
      const r = await sim.call(state, { from: VIEWER, to: EXECUTOR, data: encodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, functionName }) })
      return decodeFunctionResult({ abi: BACKRUN_EXECUTOR_ABI, functionName, data: hex(r.returnData) })
    }
    const [v2Venues, v3Venues] = venueArgs(registry as unknown as DevnetRegistry)
    expect(await read('v2Venues')).toEqual(v2Venues.map((v) => ({ ...v, factory: getAddress(v.factory) })))
    expect(await read('v3Venues')).toEqual(v3Venues.map((v) => ({ ...v, poolDeployer: getAddress(v.poolDeployer) })))
    expect(v2Venues.map((v) => v.feeBps)).toEqual([30, 25])
    expect(lower((await read('beneficiary')) as string)).toBe(BENEFICIARY)
    // V4 hops swap in the devnet's PoolManager, as the router's do
    expect(lower((await read('poolManager')) as string)).toBe(lower(registry.v4.poolManager))
    expect((await state.overlay.readCode(BENEFICIARY)).length).toBe(0)
    expect((await state.overlay.readAccount(BENEFICIARY))?.balance ?? 0n).toBe(0n)
    for (const t of TOKENS) expect(await balanceOf(state, t, BENEFICIARY)).toBe(0n)
    expect(await executorHoldings(state)).toEqual(TOKENS.map(() => 0n).concat(0n))
  })

  it.each(SCENARIOS.map((s) => [s.title, s] as const))('%s: pays grossProfit minus the refund to the beneficiary and the refund to tx.origin, keeps nothing', async (_t, s) => {
    const p = await prepare(s)
    const [userResult, backrun] = p.results as [TransactionResult, TransactionResult]
    const user = lower(p.user.address)
    expect(backrun.status).toBe('success')
    expect(backrun.from).toBe(user)
    const gross = decodeBackrunResult(hex(backrun.returnData))
    expect(gross).toBe(p.best.grossProfit)
    expect(gross).toBeGreaterThan(0n)
    const { refund, beneficiary } = splitBackrunProfit(gross, s.refundBps)
    expect(backrunEvents(backrun.logs)).toEqual([{ executor: EXECUTOR, startToken: p.startToken, grossProfit: gross, refund }])
    expect(refund).toBe((gross * BigInt(s.refundBps)) / 10_000n)

    const before = userResult.state
    const after = backrun.state
    expect((await balanceOf(after, p.startToken, BENEFICIARY)) - (await balanceOf(before, p.startToken, BENEFICIARY))).toBe(beneficiary)
    expect((await balanceOf(after, p.startToken, user)) - (await balanceOf(before, p.startToken, user))).toBe(refund)
    expect(await executorHoldings(after)).toEqual(TOKENS.map(() => 0n).concat(0n))
    // every other token of the user is untouched: the backrun only ever pays it
    for (const t of TOKENS.filter((x) => x !== p.startToken)) expect(await balanceOf(after, t, user), t).toBe(await balanceOf(before, t, user))
    gasReport[s.title] = Number(backrun.gasUsed)

    // the same call asking one unit more reverts with InsufficientProfit(profit, minProfit)
    const tooMuch = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, minProfit: gross + 1n, refundBps: s.refundBps })
    expect(revertOf(await callExecutor(p.afterUser, user, tooMuch))).toEqual({ errorName: 'InsufficientProfit', args: [gross, gross + 1n] })
    // and without the user's swap there is nothing to take: the cycle loses
    const atGenesis = await callExecutor(block1State(), user, tooMuch)
    const loss = revertOf(atGenesis)
    expect(loss.errorName).toBe('InsufficientProfit')
    expect(loss.args[0] as bigint).toBeLessThan(0n)
  })

  it.each(SEARCHER_CASES)('a searcher\'s backrun transaction after the user\'s (%s): the refund goes to refundRecipient (tx.origin when zero), the rest to the beneficiary', async (_t, s, to) => {
    const { p, refundedTo, results } = await searcherBackrun(s, to)
    const [userResult, backrun] = results as [TransactionResult, TransactionResult]
    const searcher = lower(SEARCHER.address)
    expect(backrun.status).toBe('success')
    expect(backrun.from).toBe(searcher)
    const gross = decodeBackrunResult(hex(backrun.returnData))
    expect(gross).toBe(p.best.grossProfit)
    const { refund, beneficiary } = splitBackrunProfit(gross, s.refundBps)
    expect(refund).toBeGreaterThan(0n)
    expect(backrunEvents(backrun.logs)).toEqual([{ executor: EXECUTOR, startToken: p.startToken, grossProfit: gross, refund }])
    const before = userResult.state
    const after = backrun.state
    const delta = async (holder: Address) => (await balanceOf(after, p.startToken, holder)) - (await balanceOf(before, p.startToken, holder))
    expect(await delta(BENEFICIARY)).toBe(beneficiary)
    for (const holder of [lower(p.user.address), searcher, THIRD_PARTY]) expect(await delta(holder), holder).toBe(holder === refundedTo ? refund : 0n)
    expect(await executorHoldings(after)).toEqual(TOKENS.map(() => 0n).concat(0n))
  })

  it.each(SCENARIOS.map((s) => [s.title, s] as const))('%s: backrunExact at the planned profit returns, emits and pays exactly what backrun does', async (_t, s) => {
    const { p, data, results } = await exactBackrun(s)
    const [userResult, exact] = results as [TransactionResult, TransactionResult]
    const plain = p.results[1]!
    expect(exact.status, exact.revertReason).toBe('success')
    expect(decodeBackrunResult(hex(exact.returnData))).toBe(p.best.grossProfit)
    expect(hex(exact.returnData)).toBe(hex(plain.returnData))
    // the same transfers (repayment, refund to tx.origin, beneficiary) and Backrun event, in the same order
    expect(exact.logs).toEqual(plain.logs)
    const { refund } = splitBackrunProfit(p.best.grossProfit, s.refundBps)
    expect(backrunEvents(exact.logs)).toEqual([{ executor: EXECUTOR, startToken: p.startToken, grossProfit: p.best.grossProfit, refund }])
    const holders = [BENEFICIARY, lower(p.user.address), EXECUTOR]
    for (const t of TOKENS) {
      for (const h of holders) {
        const exactDelta = (await balanceOf(exact.state, t, h)) - (await balanceOf(userResult.state, t, h))
        const plainDelta = (await balanceOf(plain.state, t, h)) - (await balanceOf(p.results[0]!.state, t, h))
        expect(exactDelta, `${t} ${h}`).toBe(plainDelta)
      }
    }
    gasReport[`${s.title} (backrunExact)`] = Number(exact.gasUsed)

    // one unit off either way on the same state: ProfitMismatch(realized profit, expectedProfit)
    const at = (expectedProfit: bigint) => encodeBackrunExactCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, expectedProfit, refundBps: s.refundBps })
    expect(at(p.best.grossProfit)).toBe(data)
    const user = lower(p.user.address)
    for (const expected of [p.best.grossProfit + 1n, p.best.grossProfit - 1n, 0n]) {
      expect(revertOf(await callExecutor(p.afterUser, user, at(expected)))).toEqual({ errorName: 'ProfitMismatch', args: [p.best.grossProfit, expected] })
    }
    // before the user's swap the cycle loses: a ProfitMismatch with the negative profit
    const atGenesis = revertOf(await callExecutor(block1State(), user, data))
    expect(atGenesis.errorName).toBe('ProfitMismatch')
    expect(atGenesis.args[0] as bigint).toBeLessThan(0n)
    expect(atGenesis.args[1]).toBe(p.best.grossProfit)
  })

  it.each(MOVES)('the pools moved between the user\'s swap and the searcher\'s backrunExact so the profit is %s: ProfitMismatch, nothing paid', async (move) => {
    const { p, exactData, results, movedProfit } = await movedExact(move)
    const [, moverResult, exact] = results as [TransactionResult, TransactionResult, TransactionResult]
    const expected = p.best.grossProfit
    if (move === 'higher') expect(movedProfit).toBeGreaterThan(expected)
    else expect(movedProfit).toBeLessThan(expected)
    expect(movedProfit).toBeGreaterThan(0n)
    expect(revertOf(exact)).toEqual({ errorName: 'ProfitMismatch', args: [movedProfit, expected] })
    expect(exact.logs).toEqual([])
    const searcher = lower(SEARCHER.address)
    for (const h of [BENEFICIARY, lower(p.user.address), searcher]) expect(await balanceOf(exact.state, p.startToken, h), h).toBe(await balanceOf(moverResult.state, p.startToken, h))
    expect(await executorHoldings(exact.state)).toEqual(TOKENS.map(() => 0n).concat(0n))
    gasReport[`backrunExact reverted, profit ${move}`] = Number(exact.gasUsed)

    // what backrun with minProfit = the reported profit does on that state: lands above it, refuses below it
    const user = lower(p.user.address)
    const plainData = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, minProfit: expected, refundBps: MOVE_SCENARIO.refundBps, refundRecipient: user })
    const plain = await callExecutor(moverResult.state, searcher, plainData)
    if (move === 'higher') {
      expect(plain.status).toBe('success')
      expect(decodeBackrunResult(hex(plain.returnData))).toBe(movedProfit)
    } else {
      expect(revertOf(plain)).toEqual({ errorName: 'InsufficientProfit', args: [movedProfit, expected] })
    }
    // and backrunExact re-planned on the moved state (expectedProfit = the new profit) lands
    const replanned = toExactBackrunCall(exactData, movedProfit)
    const ok = await callExecutor(moverResult.state, searcher, replanned)
    expect(ok.status, ok.revertReason).toBe('success')
    expect(backrunEvents(ok.logs).map((e) => e.grossProfit)).toEqual([movedProfit])
  })

  it('backrunExact rejects malformed cycles as backrun does', async () => {
    const state = block1State()
    const weth = token('WETH')
    const from = lower(registry.devAccounts.accounts[0]!.address)
    const v3 = onchain(cycle(weth, [pool('V3 USDC/WETH 0.05%')].concat(pool('V2 USDC/WETH')))![0]!)
    const v2 = { protocol: 0, pool: pool('V2 USDC/WETH').address, tokenOut: weth, fee: 3000 }
    const one = 10n ** 18n
    const expectRevert = async (data: Hex, errorName: string, args: readonly unknown[]) =>
      expect(revertOf(await callExecutor(state, from, data))).toEqual({ errorName, args })
    await expectRevert(rawBackrunExact(weth, one, [v3]), 'InvalidHopCount', [1n])
    await expectRevert(rawBackrunExact(weth, one, [v3, { protocol: 0, pool: pool('V2 USDC/DAI').address, tokenOut: token('DAI'), fee: 3000 }]), 'CycleNotClosed', [getAddress(token('DAI'))])
    await expectRevert(rawBackrunExact(weth, one, [{ ...v3, fee: 3000 }, v2]), 'InvalidPool', [getAddress(v3.pool)])
    await expectRevert(rawBackrunExact(weth, 0n, [v3, v2]), 'InvalidAmountIn', [0n])
    await expectRevert(rawBackrunExact(weth, one, [v3, v2], 0n, 10_001), 'InvalidRefundBps', [10_001n])
    await expectRevert(rawBackrunExact(weth, one, [v3, v2], 0n, 5000, EXECUTOR), 'InvalidRefundRecipient', [getAddress(EXECUTOR)])
  })

  it('the reverse cycle loses: InsufficientProfit with the (negative) profit', async () => {
    const p = await prepare(SCENARIOS[0]!)
    const reversed = cycle(p.startToken, [...p.best.hops].reverse().map((h) => POOLS.find((x) => x.address === h.pool)!))!
    const r = revertOf(await callExecutor(p.afterUser, lower(p.user.address), encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: reversed, minProfit: 0n, refundBps: 0 })))
    expect(r.errorName).toBe('InsufficientProfit')
    expect(r.args[0] as bigint).toBeLessThan(0n)
    expect(r.args[1]).toBe(0n)
  })

  it('rejects malformed cycles before anything moves', async () => {
    const state = block1State()
    const weth = token('WETH')
    const usdc = token('USDC')
    const from = lower(registry.devAccounts.accounts[0]!.address)
    const v3 = onchain(cycle(weth, [pool('V3 USDC/WETH 0.05%')].concat(pool('V2 USDC/WETH')))![0]!)
    const v2 = { protocol: 0, pool: pool('V2 USDC/WETH').address, tokenOut: weth, fee: 3000 }
    const one = 10n ** 18n
    const expectRevert = async (data: Hex, errorName: string, args: readonly unknown[]) =>
      expect(revertOf(await callExecutor(state, from, data))).toEqual({ errorName, args })
    await expectRevert(rawBackrun(weth, one, [v3]), 'InvalidHopCount', [1n])
    await expectRevert(rawBackrun(weth, one, [v3, v2, v3, v2]), 'InvalidHopCount', [4n])
    await expectRevert(rawBackrun(weth, one, []), 'InvalidHopCount', [0n])
    // hops that do not close on startToken
    await expectRevert(rawBackrun(weth, one, [v3, { ...v2, tokenOut: usdc }]), 'InvalidPool', [getAddress(v2.pool)]) // USDC -> USDC is no pair
    await expectRevert(rawBackrun(weth, one, [v3, { protocol: 0, pool: pool('V2 USDC/DAI').address, tokenOut: token('DAI'), fee: 3000 }]), 'CycleNotClosed', [getAddress(token('DAI'))])
    // pools that are not the factory's pool for the hop's tokens (and fee)
    await expectRevert(rawBackrun(weth, one, [{ ...v3, fee: 3000 }, v2]), 'InvalidPool', [getAddress(v3.pool)])
    await expectRevert(rawBackrun(weth, one, [{ ...v3, protocol: 0 }, v2]), 'InvalidPool', [getAddress(v3.pool)])
    await expectRevert(rawBackrun(weth, one, [v3, { ...v2, pool: pool('V2 WETH/DAI').address }]), 'InvalidPool', [getAddress(pool('V2 WETH/DAI').address)])
    // protocols 2 and 3 are V4 hops (3: native ETH), which must name the PoolManager; 4 is no protocol
    await expectRevert(rawBackrun(weth, one, [{ ...v3, protocol: 2 }, v2]), 'InvalidPool', [getAddress(v3.pool)])
    await expectRevert(rawBackrun(weth, one, [{ ...v3, protocol: 3 }, v2]), 'InvalidPool', [getAddress(v3.pool)])
    await expectRevert(rawBackrun(weth, one, [{ ...v3, protocol: 4 }, v2]), 'InvalidProtocol', [4])
    // amounts and refund
    await expectRevert(rawBackrun(weth, 0n, [v3, v2]), 'InvalidAmountIn', [0n])
    await expectRevert(rawBackrun(weth, 1n << 255n, [v3, v2]), 'InvalidAmountIn', [1n << 255n])
    await expectRevert(rawBackrun(weth, one, [v3, v2], 0n, 10_001), 'InvalidRefundBps', [10_001n])
    // a refund paid to the executor itself would be stuck there
    await expectRevert(rawBackrun(weth, one, [v3, v2], 0n, 5000, EXECUTOR), 'InvalidRefundRecipient', [getAddress(EXECUTOR)])
  })

  it('rejects pools the factory could have but that do not exist (no code), as first and as later hop', async () => {
    const state = block1State()
    const from = lower(registry.devAccounts.accounts[0]!.address)
    const [uni, link, weth] = [token('UNI'), token('LINK'), token('WETH')]
    const [t0, t1] = uni < link ? [uni, link] : [link, uni]
    const ghostV3 = lower(getCreate2Address({ from: registry.v3.factory, salt: keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [t0, t1, 500])), bytecodeHash: registry.v3.poolInitCodeHash }))
    const ghostV2 = lower(getCreate2Address({ from: registry.v2.factory, salt: keccak256(encodePacked(['address', 'address'], [t0, t1])), bytecodeHash: registry.v2.pairInitCodeHash }))
    expect((await state.overlay.readCode(ghostV3)).length).toBe(0)
    expect((await state.overlay.readCode(ghostV2)).length).toBe(0)
    const toLink = { protocol: 1, pool: pool('V3 WETH/LINK 1%').address, tokenOut: link, fee: 10000 }
    const ghostV3Hop = { protocol: 1, pool: ghostV3, tokenOut: uni, fee: 500 }
    const ghostV2Hop = { protocol: 0, pool: ghostV2, tokenOut: uni, fee: 3000 }
    const toWeth = { protocol: 1, pool: pool('V3 WETH/UNI 0.3%').address, tokenOut: weth, fee: 3000 }
    const cases: [Hex, Address][] = [
      [rawBackrun(link, 10n ** 18n, [{ ...ghostV3Hop }, { protocol: 0, pool: pool('V2 WETH/UNI').address, tokenOut: weth, fee: 3000 }, { protocol: 0, pool: pool('V2 WETH/LINK').address, tokenOut: link, fee: 3000 }]), ghostV3],
      [rawBackrun(link, 10n ** 18n, [{ ...ghostV2Hop }, { protocol: 0, pool: pool('V2 WETH/UNI').address, tokenOut: weth, fee: 3000 }, { protocol: 0, pool: pool('V2 WETH/LINK').address, tokenOut: link, fee: 3000 }]), ghostV2],
      [rawBackrun(weth, 10n ** 18n, [toLink, ghostV3Hop, toWeth]), ghostV3],
      [rawBackrun(weth, 10n ** 18n, [toLink, ghostV2Hop, toWeth]), ghostV2],
    ]
    for (const [data, ghost] of cases) expect(revertOf(await callExecutor(state, from, data))).toEqual({ errorName: 'InvalidPool', args: [getAddress(ghost)] })
  })

  // (a genuine pool's address calling outside a backrun is on anvil below: ethereumjs refuses a
  // call from an address with code, EIP-3607)
  it('accepts callbacks from nobody but the pool it is swapping with: EOAs, a fake pool contract', async () => {
    const state = block1State().fork()
    await applyAccountOverrides(state, new Map([[RELAY_ADDRESS, { code: helpers.relay.code }]]))
    const eoa = lower(registry.devAccounts.accounts[9]!.address)
    for (const data of callbackAttacks()) {
      expect(revertOf(await callExecutor(state, eoa, data))).toEqual({ errorName: 'UnexpectedCallback', args: [] })
      const viaRelay = encodeFunctionData({ abi: helpers.relay.abi, functionName: 'relay', args: [EXECUTOR, data] })
      expect(revertOf(await sim.call(state, { from: eoa, to: RELAY_ADDRESS, data: viaRelay }))).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    }
    // the fake pool as a hop's pool: rejected before anything is called
    const weth = token('WETH')
    const fake = rawBackrun(weth, 10n ** 18n, [{ protocol: 1, pool: RELAY_ADDRESS, tokenOut: token('USDC'), fee: 500 }, { protocol: 0, pool: pool('V2 USDC/WETH').address, tokenOut: weth, fee: 3000 }])
    expect(revertOf(await callExecutor(state, eoa, fake))).toEqual({ errorName: 'InvalidPool', args: [getAddress(RELAY_ADDRESS)] })
  })

  it('a flash swap of a genuine V2 pair aimed at the executor reverts: the pair calls back, the executor refuses', async () => {
    const state = block1State()
    const attacker = lower(registry.devAccounts.accounts[9]!.address)
    const pair = pool('V2 USDC/WETH')
    const data = encodeFunctionData({ abi: V2_PAIR, functionName: 'swap', args: [10n ** 6n, 0n, EXECUTOR, '0x01'] })
    const r = await sim.call(state, { from: attacker, to: pair.address, data, gasLimit: GAS_LIMIT })
    expect(revertOf(r)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
  })

  it('is not reentrant: a token hook calling backrun() during a backrun gets Reentrancy(), and the lock is released at the end', async () => {
    const s = SCENARIOS[0]! // WETH -> USDC (V3) -> WETH (V2): USDC moves from the V3 pool to the pair mid-cycle
    const p = await prepare(s)
    const usdc = token('USDC')
    const user = lower(p.user.address)
    const install = async (base: SimulationState) => {
      const state = base.fork()
      const original = await state.overlay.readCode(usdc)
      await applyAccountOverrides(state, new Map([
        [TOKEN_IMPL_ADDRESS, { code: original }],
        [usdc, { code: helpers.reentrantToken.code }],
        [RELAY_ADDRESS, { code: helpers.relay.code }],
      ]))
      await setStorage(state, usdc, HOOK.impl, BigInt(TOKEN_IMPL_ADDRESS))
      await setStorage(state, usdc, HOOK.target, BigInt(EXECUTOR))
      return state
    }
    const hookResult = async (state: SimulationState) => {
      const word = await state.overlay.readStorage(usdc, HOOK.result)
      return `0x${(word >> 224n).toString(16).padStart(8, '0')}`
    }
    const selector = (name: string) => toFunctionSelector(`${name}()`)

    const data = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, minProfit: p.best.grossProfit, refundBps: s.refundBps })
    const hooked = await install(p.afterUser)
    const r = await callExecutor(hooked, user, data)
    expect(r.status).toBe('success')
    expect(decodeBackrunResult(hex(r.returnData))).toBe(p.best.grossProfit)
    expect(await hookResult(r.state)).toBe(selector('Reentrancy'))
    // backrunExact holds the same lock
    const exactData = encodeBackrunExactCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, expectedProfit: p.best.grossProfit, refundBps: s.refundBps })
    const hookedExact = await install(p.afterUser)
    const rExact = await callExecutor(hookedExact, user, exactData)
    expect(rExact.status).toBe('success')
    expect(decodeBackrunResult(hex(rExact.returnData))).toBe(p.best.grossProfit)
    expect(await hookResult(rExact.state)).toBe(selector('Reentrancy'))

    // control: the same hook outside a backrun reaches backrun() and fails on its arguments instead
    const control = await install(p.afterUser)
    const transfer = await sim.call(control, { from: user, to: usdc, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [VIEWER, 1n] }) })
    expect(transfer.status).toBe('success')
    expect(await hookResult(transfer.state)).toBe(toFunctionSelector('InvalidAmountIn(uint256)'))

    // two backruns in one transaction: the first releases the lock (each takes part of the opportunity)
    const third = p.best.amountIn / 3n
    const part = encodeBackrunCall({ startToken: p.startToken, amountIn: third, hops: p.best.hops, minProfit: 1n, refundBps: 0 })
    const plain = p.afterUser.fork()
    await applyAccountOverrides(plain, new Map([[RELAY_ADDRESS, { code: helpers.relay.code }]]))
    const twice = await sim.call(plain, { from: user, to: RELAY_ADDRESS, data: encodeFunctionData({ abi: helpers.relay.abi, functionName: 'relayTwice', args: [EXECUTOR, part, part] }) })
    expect(twice.status, twice.revertReason).toBe('success')
    const events = backrunEvents(twice.logs)
    expect(events).toHaveLength(2)
    expect(events[0]!.grossProfit).toBeGreaterThan(events[1]!.grossProfit)
    expect(await executorHoldings(twice.state)).toEqual(TOKENS.map(() => 0n).concat(0n))
  })

  it('runs as SwapPlanRouter\'s post-swap call: msg.sender is the router\'s proxy, the refund still goes to tx.origin', async () => {
    const { user, composedRaw, best, refundBps } = await routerComposition()
    const base = block1State()
    const r = await sim.transaction(base, decodeTx(composedRaw))
    expect(r.status, r.revertReason).toBe('success')
    const events = backrunEvents(r.logs)
    expect(events).toHaveLength(1)
    expect(events[0]!.grossProfit).toBe(best.grossProfit)
    const { refund, beneficiary } = splitBackrunProfit(best.grossProfit, refundBps)
    expect(events[0]!.refund).toBe(refund)
    const weth = token('WETH')
    expect((await balanceOf(r.state, weth, BENEFICIARY)) - (await balanceOf(base, weth, BENEFICIARY))).toBe(beneficiary)
    // the user paid ROUTER_SWAP_IN WETH and got the refund back, in the same transaction
    expect((await balanceOf(r.state, weth, lower(user.address))) - (await balanceOf(base, weth, lower(user.address)))).toBe(refund - ROUTER_SWAP_IN)
    expect(await executorHoldings(r.state)).toEqual(TOKENS.map(() => 0n).concat(0n))
    gasReport['SwapPlanRouter V2 swap + post-call backrun (one transaction)'] = Number(r.gasUsed)
  })
})

// ---------------------------------------------------------------- SwapPlanRouter composition

const ROUTER_SWAP_IN = parseEther('60')

interface Composition {
  user: RegistryKeyedAccount
  composedRaw: Hex
  best: Best
  refundBps: number
}

let composition: Promise<Composition> | undefined

/**
 * A user (dev account 10, not a searcher key) swaps 60 WETH for USDC through SwapPlanRouter on the V2 pair, with the
 * backrun (WETH -> USDC on V3 0.05% -> WETH on the V2 pair) as the post-swap call. The backrun's
 * amount comes from a scan on the state after the swap alone.
 */
function routerComposition(): Promise<Composition> {
  composition ??= (async () => {
    const user = registry.devAccounts.accounts[10]!
    expect(registry.devAccounts.searcherIndexes).not.toContain(user.index)
    const from = lower(user.address)
    const weth = token('WETH')
    const usdc = token('USDC')
    const v2Pair = pool('V2 USDC/WETH')
    const plan = {
      tokenIn: weth,
      tokenOut: usdc,
      amountIn: ROUTER_SWAP_IN,
      expectedAmountOut: 0n,
      legs: [{ amountIn: ROUTER_SWAP_IN, expectedAmountOut: 0n, hops: [{ protocol: 'uniswap-v2' as const, pool: v2Pair.address, tokenIn: weth, tokenOut: usdc, fee: 3000, zeroForOne: weth < usdc }] }],
    }
    const deadline = 1n << 64n
    const swapOnly = await sim.call(block1State(), { from, to: ROUTER, data: encodeSwapPlanCall({ plan, minAmountOut: 0n, deadline }), gasLimit: GAS_LIMIT })
    expect(swapOnly.status).toBe('success')
    const best = await scan(swapOnly.state, from, weth, candidateCycles(weth, pool('V3 USDC/WETH 0.05%'), [v2Pair]))
    if (!best) throw new Error('no profitable backrun after the router swap')
    const refundBps = 5000
    const backrunData = encodeBackrunCall({ startToken: weth, amountIn: best.amountIn, hops: best.hops, minProfit: best.grossProfit, refundBps })
    const data = encodeSwapPlanCall({ plan, minAmountOut: 0n, deadline, postCall: { target: EXECUTOR, data: backrunData } })
    const composedRaw = await signTx(user, 0, ROUTER, data)
    return { user, composedRaw, best, refundBps }
  })()
  return composition
}

// ================================================================ anvil

interface RpcReceipt {
  status: Hex
  gasUsed: Hex
  blockNumber: Hex
  transactionIndex: Hex
  logs: { address: string; topics: Hex[]; data: Hex }[]
}

describe('BackrunExecutor on anvil, against the simulator', () => {
  let anvil: AnvilInstance

  beforeAll(async () => {
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--no-mining'] })
  })
  afterAll(async () => {
    await anvil?.stop()
  })

  /** Sends the raw transactions and mines them together in block 1 (as the fixtures were), then puts anvil back. */
  async function mineTogether(raws: Hex[], inspect: (receipts: RpcReceipt[]) => Promise<void>, ordered = true): Promise<RpcReceipt[]> {
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    try {
      const genesis = await anvilRpc<{ gasLimit: Hex; gasUsed: Hex; baseFeePerGas: Hex; timestamp: Hex }>(anvil.url, 'eth_getBlockByNumber', ['0x0', false])
      const baseFee = nextBaseFee({ gasLimit: BigInt(genesis.gasLimit), gasUsed: BigInt(genesis.gasUsed), baseFeePerGas: BigInt(genesis.baseFeePerGas) })
      await anvilRpc(anvil.url, 'anvil_setNextBlockBaseFeePerGas', [`0x${baseFee.toString(16)}`])
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(BigInt(genesis.timestamp) + BLOCK_TIME_SECONDS)])
      const hashes: Hex[] = []
      for (const raw of raws) hashes.push(await anvilRpc<Hex>(anvil.url, 'eth_sendRawTransaction', [raw]))
      await anvilRpc(anvil.url, 'evm_mine')
      const receipts: RpcReceipt[] = []
      for (const h of hashes) receipts.push(await anvilRpc<RpcReceipt>(anvil.url, 'eth_getTransactionReceipt', [h]))
      receipts.forEach((r, i) => {
        expect(r.blockNumber).toBe('0x1')
        if (ordered) expect(Number(r.transactionIndex)).toBe(i)
      })
      await inspect(receipts)
      return receipts
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  }

  const anvilBalance = async (tokenAddress: Address, holder: Address, block: Hex) =>
    BigInt(await anvilRpc<Hex>(anvil.url, 'eth_call', [{ to: tokenAddress, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) }, block]))

  const sameLogs = (receipt: RpcReceipt) => receipt.logs.map((l) => ({ address: lower(l.address), topics: l.topics.map((t) => t.toLowerCase()), data: l.data.toLowerCase() }))

  it.each(SCENARIOS.map((s) => [s.title, s] as const))('%s: user transaction + backrun in one block give the simulator\'s gasUsed, logs and profit', async (_t, s) => {
    const p = await prepare(s)
    const [simUser, simBackrun] = p.results as [TransactionResult, TransactionResult]
    await mineTogether([p.userTx.raw, p.backrunRaw], async ([user, backrun]) => {
      expect(user!.status).toBe('0x1')
      expect(backrun!.status).toBe('0x1')
      expect(BigInt(user!.gasUsed)).toBe(simUser.gasUsed)
      expect(BigInt(backrun!.gasUsed)).toBe(simBackrun.gasUsed)
      expect(sameLogs(backrun!)).toEqual(simBackrun.logs)
      const events = backrunEvents(backrun!.logs)
      expect(events.map((e) => e.grossProfit)).toEqual([p.best.grossProfit])
      const { refund, beneficiary } = splitBackrunProfit(p.best.grossProfit, s.refundBps)
      expect(events[0]!.refund).toBe(refund)
      expect(await anvilBalance(p.startToken, BENEFICIARY, '0x1')).toBe(beneficiary)
      for (const t of TOKENS) expect(await anvilBalance(t, EXECUTOR, '0x1')).toBe(0n)
    })
  })

  it.each(SEARCHER_CASES)('a searcher\'s backrun transaction after the user\'s in one block (%s): the refund goes to refundRecipient (tx.origin when zero) as in the simulator', async (_t, s, to) => {
    const { p, refundedTo, backrunRaw, results } = await searcherBackrun(s, to)
    const [simUser, simBackrun] = results as [TransactionResult, TransactionResult]
    const searcher = lower(SEARCHER.address)
    const user = lower(p.user.address)
    const { refund, beneficiary } = splitBackrunProfit(p.best.grossProfit, s.refundBps)
    expect(refund).toBeGreaterThan(0n)
    // what the user's own swap does to its startToken balance (the fixture's swap, as recorded)
    const swapDelta = (await balanceOf(simUser.state, p.startToken, user)) - (await balanceOf(block1State(), p.startToken, user))
    await mineTogether([p.userTx.raw, backrunRaw], async ([userReceipt, backrunReceipt]) => {
      expect(userReceipt!.status).toBe('0x1')
      expect(backrunReceipt!.status).toBe('0x1')
      expect(BigInt(backrunReceipt!.gasUsed)).toBe(simBackrun.gasUsed)
      expect(sameLogs(backrunReceipt!)).toEqual(simBackrun.logs)
      const events = backrunEvents(backrunReceipt!.logs)
      expect(events).toEqual([{ executor: EXECUTOR, startToken: p.startToken, grossProfit: p.best.grossProfit, refund }])
      const delta = async (holder: Address) => (await anvilBalance(p.startToken, holder, '0x1')) - (await anvilBalance(p.startToken, holder, '0x0'))
      expect(await delta(BENEFICIARY)).toBe(beneficiary)
      expect(await delta(user)).toBe(swapDelta + (refundedTo === user ? refund : 0n))
      expect(await delta(searcher)).toBe(refundedTo === searcher ? refund : 0n)
      expect(await delta(THIRD_PARTY)).toBe(refundedTo === THIRD_PARTY ? refund : 0n)
      for (const t of TOKENS) expect(await anvilBalance(t, EXECUTOR, '0x1')).toBe(0n)
    })
  })

  it.each(SCENARIOS.map((s) => [s.title, s] as const))('%s: user transaction + backrunExact at the planned profit give the simulator\'s gasUsed, logs and profit', async (_t, s) => {
    const { p, raw, results } = await exactBackrun(s)
    const [simUser, simExact] = results as [TransactionResult, TransactionResult]
    await mineTogether([p.userTx.raw, raw], async ([user, exact]) => {
      expect(user!.status).toBe('0x1')
      expect(exact!.status).toBe('0x1')
      expect(BigInt(user!.gasUsed)).toBe(simUser.gasUsed)
      expect(BigInt(exact!.gasUsed)).toBe(simExact.gasUsed)
      expect(sameLogs(exact!)).toEqual(simExact.logs)
      const { refund, beneficiary } = splitBackrunProfit(p.best.grossProfit, s.refundBps)
      expect(backrunEvents(exact!.logs)).toEqual([{ executor: EXECUTOR, startToken: p.startToken, grossProfit: p.best.grossProfit, refund }])
      expect(await anvilBalance(p.startToken, BENEFICIARY, '0x1')).toBe(beneficiary)
      for (const t of TOKENS) expect(await anvilBalance(t, EXECUTOR, '0x1')).toBe(0n)
    })
  })

  it.each(MOVES)('user, a transaction that moves the pools (profit %s), the searcher\'s backrunExact in one block: it reverts with ProfitMismatch, with the simulator\'s gasUsed', async (move) => {
    const { p, moverRaw, exactData, exactRaw, results, movedProfit } = await movedExact(move)
    const [simUser, simMover, simExact] = results as [TransactionResult, TransactionResult, TransactionResult]
    expect(simExact.status).toBe('reverted')
    await mineTogether([p.userTx.raw, moverRaw, exactRaw], async ([user, mover, exact]) => {
      expect(user!.status).toBe('0x1')
      expect(mover!.status).toBe('0x1')
      expect(exact!.status).toBe('0x0')
      expect(BigInt(user!.gasUsed)).toBe(simUser.gasUsed)
      expect(BigInt(mover!.gasUsed)).toBe(simMover.gasUsed)
      expect(sameLogs(mover!)).toEqual(simMover.logs)
      expect(BigInt(exact!.gasUsed)).toBe(simExact.gasUsed)
      expect(exact!.logs).toEqual([])
      // the revert, by replaying the call on block 1 (the failed backrunExact changed no balance)
      expect(await ethCallRevert(SEARCHER.address, EXECUTOR, exactData, '0x1')).toEqual({ errorName: 'ProfitMismatch', args: [movedProfit, p.best.grossProfit] })
      const beneficiaryAfterMover = move === 'lower' ? backrunEvents(mover!.logs).reduce((sum, e) => sum + e.grossProfit - e.refund, 0n) : 0n
      expect(await anvilBalance(p.startToken, BENEFICIARY, '0x1')).toBe(beneficiaryAfterMover)
      for (const t of TOKENS) expect(await anvilBalance(t, EXECUTOR, '0x1')).toBe(0n)
    })
  })

  it('the backrun as SwapPlanRouter\'s post-swap call: same gasUsed, logs and profit as the simulator', async () => {
    const { composedRaw, best, refundBps } = await routerComposition()
    const r = await sim.transaction(block1State(), decodeTx(composedRaw))
    expect(r.status).toBe('success')
    await mineTogether([composedRaw], async ([receipt]) => {
      expect(receipt!.status).toBe('0x1')
      expect(BigInt(receipt!.gasUsed)).toBe(r.gasUsed)
      expect(sameLogs(receipt!)).toEqual(r.logs)
      const events = backrunEvents(receipt!.logs)
      expect(events.map((e) => e.grossProfit)).toEqual([best.grossProfit])
      expect(await anvilBalance(token('WETH'), BENEFICIARY, '0x1')).toBe(splitBackrunProfit(best.grossProfit, refundBps).beneficiary)
    })
  })

  /** The decoded revert of an eth_call (from any address: anvil impersonates contracts too). */
  async function ethCallRevert(from: string, to: string, data: Hex, block: Hex | 'latest' = 'latest') {
    const res = await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ from, to, data, gas: `0x${GAS_LIMIT.toString(16)}` }, block] }),
    })
    const body = (await res.json()) as { result?: Hex; error?: { message: string; data?: Hex } }
    if (!body.error?.data) throw new Error(`expected a revert with data, got ${JSON.stringify(body)}`)
    return decodeBackrunRevert(body.error.data)
  }

  it('rejects callbacks from genuine pools outside a backrun (impersonated with eth_call)', async () => {
    for (const g of [pool('V3 USDC/WETH 0.05%').address, pool('V2 USDC/WETH').address, pool('V3 WETH/UNI 1%').address]) {
      for (const data of callbackAttacks()) expect(await ethCallRevert(g, EXECUTOR, data)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
    }
  })

  it('rejects direct callback calls and the insufficient-profit backrun on chain too', async () => {
    const eoa = registry.devAccounts.accounts[9]!
    const p = await prepare(SCENARIOS[0]!)
    const tooMuch = encodeBackrunCall({ startToken: p.startToken, amountIn: p.best.amountIn, hops: p.best.hops, minProfit: p.best.grossProfit + 1n, refundBps: 0 })
    const raws = [...callbackAttacks().map((data, i) => signTx(eoa, i, EXECUTOR, data))]
    const signed = await Promise.all(raws)
    await mineTogether([p.userTx.raw, await signTx(p.user, p.userTx.nonce + 1, EXECUTOR, tooMuch), ...signed], async ([user, backrun, ...attacks]) => {
      expect(user!.status).toBe('0x1')
      expect(backrun!.status).toBe('0x0')
      for (const a of attacks) expect(a!.status).toBe('0x0')
      // the revert data, by replaying the same calls as eth_call on block 1
      for (const data of callbackAttacks()) expect(await ethCallRevert(eoa.address, EXECUTOR, data, '0x1')).toEqual({ errorName: 'UnexpectedCallback', args: [] })
      // the failed backrun left block 1 at the state after the user's swap: the same profit, one short
      expect(await ethCallRevert(p.user.address, EXECUTOR, tooMuch, '0x1')).toEqual({ errorName: 'InsufficientProfit', args: [p.best.grossProfit, p.best.grossProfit + 1n] })
      for (const t of TOKENS) expect(await anvilBalance(t, EXECUTOR, '0x1')).toBe(0n)
    }, false)
  })

  it('an address that is not a pool cannot call the callbacks (helper contract installed with anvil_setCode)', async () => {
    const helpers = await compileHelpers()
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    try {
      await anvilRpc(anvil.url, 'anvil_setCode', [RELAY_ADDRESS, helpers.relay.code])
      for (const data of callbackAttacks()) {
        const viaRelay = encodeFunctionData({ abi: helpers.relay.abi, functionName: 'relay', args: [EXECUTOR, data] })
        expect(await ethCallRevert(VIEWER, RELAY_ADDRESS, viaRelay)).toEqual({ errorName: 'UnexpectedCallback', args: [] })
      }
    } finally {
      await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    }
  })
})
