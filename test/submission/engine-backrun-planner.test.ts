/**
 * The engine-backed BackrunPlanner and SubmissionSimulator on the devnet fixtures:
 * - a fixture swap that creates arbitrage gives a signed EIP-1559 backrun from the searcher which,
 *   executed right after the user's transaction, pays the beneficiary exactly grossProfit;
 * - a swap that creates none, or a reverting one, gives null;
 * - bundles (backrun behind the last tx), notify, and a searcher that is also the user's sender
 *   (nonce after the user tx);
 * - the simulator reports success / revert reason / not includable.
 */
import { inspect } from 'node:util'

import { decodeFunctionData, encodeFunctionData, parseAbi } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BACKRUN_EXECUTOR_ABI, decodeBackrunRevert } from '../../src/backrun/backrun-calldata.ts'

import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import type { SimulationState } from '../../src/evm/simulator.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { EngineBackrunPlanner, privateKeyBackrunSigner, type BackrunTransactionSigner } from '../../src/submission/engine-backrun-planner.ts'
import { engineSubmissionSimulator } from '../../src/submission/engine-simulator.ts'
import type { BackrunPlan, BackrunPlanInput, SubmissionSimulator } from '../../src/submission/index.ts'
import { submissionId, type SubmissionKind } from '../../src/submission/index.ts'
import { decodeSignedTransaction, type DecodedTransaction, type DecodedFeeMarketTransaction } from '../../src/tx/index.ts'
import { loadFixtureTxs, loadRegistry, lower, type FixtureTx } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry() as ReturnType<typeof loadRegistry> & { backrun: { executor: string; beneficiary: string } }
const CHAIN_ID = BigInt(registry.chainId)
const EXECUTOR = lower(registry.backrun.executor)
const BENEFICIARY = lower(registry.backrun.beneficiary)
const SEARCHER = registry.devAccounts.accounts[8]
const PRIORITY_FEE = 1_500_000_000n
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const VIEWER = '0x0000000000000000000000000000000000000b0b' as Address

const fixtures = loadFixtureTxs()
const fx = (name: string): FixtureTx => {
  const found = fixtures.find((f) => f.name === name)
  if (found === undefined) throw new Error(`no fixture ${name}`)
  return found
}
/** decoded as the Dispatcher decodes stored txs: chain id and hardfork, not the simulator's Common */
const decode = (raw: string): DecodedTransaction => decodeSignedTransaction(raw, { chainId: CHAIN_ID, hardfork: 'prague' })

let services: DomainServices
let signer: BackrunTransactionSigner
/** a planner with its own key pool: each test plans for the same block, and one key carries one backrun per block */
let newPlanner: () => EngineBackrunPlanner
let simulate: SubmissionSimulator

beforeAll(async () => {
  services = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
  signer = privateKeyBackrunSigner(SEARCHER.privateKey)
  newPlanner = () => new EngineBackrunPlanner({ chain: services.chain, simulator: services.simulator, engine: services.backrun, signer, maxPriorityFeePerGas: PRIORITY_FEE })
  simulate = engineSubmissionSimulator({ chain: services.chain, simulator: services.simulator })
})
afterAll(() => services?.close())

function input(kind: SubmissionKind, txs: readonly FixtureTx[], simulation?: BackrunPlanInput['simulation']): BackrunPlanInput {
  const userTxs = txs.map((t) => decode(t.raw))
  return { id: submissionId(kind, userTxs[userTxs.length - 1].hash), kind, userTxs, simulation, signal: new AbortController().signal }
}

async function balanceOf(state: SimulationState, token: Address, holder: Address): Promise<bigint> {
  const r = await services.simulator.call(state, { from: VIEWER, to: token, data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] }) })
  expect(r.status).toBe('success')
  return BigInt(bytesToHexString(r.returnData))
}

async function nonceAt(state: SimulationState, address: string): Promise<bigint> {
  return (await state.overlay.readAccount(lower(address)))?.nonce ?? 0n
}

/** Runs the user txs then the signed backrun on the current head; checks the tx and returns the beneficiary's gain. */
async function executeWithBackrun(txs: readonly FixtureTx[], plan: BackrunPlan): Promise<{ gain: bigint; backrun: DecodedFeeMarketTransaction }> {
  const { simulator, chain } = services
  const base = simulator.openState(chain.latest())
  const users = await simulator.bundle(base, txs.map((t) => decodeSignedTransaction(t.raw, { chainId: CHAIN_ID, common: simulator.common }).tx))
  expect(users.success).toBe(true)
  const backrun = decodeSignedTransaction(plan.rawBackrunTx, { chainId: CHAIN_ID, common: simulator.common })
  if (backrun.type !== 2) throw new Error(`backrun is type ${backrun.type}, not EIP-1559`)
  expect(backrun.sender).toBe(lower(SEARCHER.address))
  expect(backrun.chainId).toBe(CHAIN_ID)
  expect(backrun.to).toBe(EXECUTOR)
  expect(backrun.value).toBe(0n)
  expect(backrun.nonce).toBe(await nonceAt(users.state, SEARCHER.address))
  expect(backrun.maxPriorityFeePerGas).toBe(PRIORITY_FEE)
  expect(backrun.maxFeePerGas).toBe(2n * (base.block.baseFeePerGas ?? 0n) + PRIORITY_FEE)
  const before = await balanceOf(users.state, plan.profitToken, BENEFICIARY)
  const executed = await simulator.transaction(users.state, backrun.tx)
  expect(executed.status, executed.revertReason ?? executed.error).toBe('success')
  expect(executed.gasUsed).toBe(plan.gasUsed)
  expect(backrun.gasLimit).toBeGreaterThan(executed.gasUsed)
  const after = await balanceOf(executed.state, plan.profitToken, BENEFICIARY)
  return { gain: after - before, backrun }
}

describe('EngineBackrunPlanner on the devnet', () => {
  it('a swap that creates arbitrage: a signed backrun that pays the beneficiary exactly grossProfit', async () => {
    const user = fx('v2-swapExactETHForTokens-large')
    expect(user.createsArbitrage).toBe(true)
    const plan = await newPlanner().plan(input('private-tx', [user]))
    expect(plan).not.toBeNull()
    expect(plan!.grossProfit).toBeGreaterThan(0n)
    expect(plan!.netProfitWei).toBeGreaterThan(0n)
    const { gain, backrun } = await executeWithBackrun([user], plan!)
    expect(gain).toBe(plan!.grossProfit)
    expect(backrun.nonce).toBe(0n)
    expect(plan!.rawBackrunTx).toBe(backrun.rawHex)
  })

  it('refund in bundle mode: the refund share goes to the user (the signer of the user tx), not to tx.origin (the searcher)', async () => {
    const user = fx('v2-swapExactETHForTokens-large')
    const refundBps = 2_500
    const planner = new EngineBackrunPlanner({ chain: services.chain, simulator: services.simulator, engine: services.backrun, signer, refundBps, maxPriorityFeePerGas: PRIORITY_FEE })
    const plan = await planner.plan(input('private-tx', [user]))
    expect(plan).not.toBeNull()
    const { simulator, chain } = services
    const base = simulator.openState(chain.latest())
    const users = await simulator.bundle(base, [decodeSignedTransaction(user.raw, { chainId: CHAIN_ID, common: simulator.common }).tx])
    const backrun = decodeSignedTransaction(plan!.rawBackrunTx, { chainId: CHAIN_ID, common: simulator.common })
    const userBefore = await balanceOf(users.state, plan!.profitToken, lower(user.from))
    const searcherBefore = await balanceOf(users.state, plan!.profitToken, lower(SEARCHER.address))
    const executed = await simulator.transaction(users.state, backrun.tx)
    expect(executed.status).toBe('success')
    const refund = (plan!.grossProfit * BigInt(refundBps)) / 10_000n
    expect(refund).toBeGreaterThan(0n)
    expect((await balanceOf(executed.state, plan!.profitToken, lower(user.from))) - userBefore).toBe(refund)
    expect(await balanceOf(executed.state, plan!.profitToken, lower(SEARCHER.address))).toBe(searcherBefore)
  })

  it('a tip floor: the bundle [user, backrun] pays the builder more per gas than the floor, on the gas the receipts show', async () => {
    // a builder ordering by payment per gas must merge it before a swap that tips the floor; the
    // tip set on the search's gas figure alone paid a hair under it (the receipt's gas is lower)
    const user = fx('v2-swapExactETHForTokens-large')
    const { simulator, chain } = services
    const base = simulator.openState(chain.latest())
    const baseFee = base.block.baseFeePerGas ?? 0n
    const userTx = decodeSignedTransaction(user.raw, { chainId: CHAIN_ID, common: simulator.common })
    if (userTx.type !== 2) throw new Error('the fixture is not EIP-1559')
    const userTip = userTx.maxPriorityFeePerGas < userTx.maxFeePerGas - baseFee ? userTx.maxPriorityFeePerGas : userTx.maxFeePerGas - baseFee
    const tipFloor = userTip + 2_000_000_000n
    const plan = await newPlanner().plan({ ...input('private-tx', [user]), tipFloor })
    expect(plan).not.toBeNull()
    const users = await simulator.bundle(base, [userTx.tx])
    const backrun = decodeSignedTransaction(plan!.rawBackrunTx, { chainId: CHAIN_ID, common: simulator.common })
    if (backrun.type !== 2) throw new Error('the backrun is not EIP-1559')
    const executed = await simulator.transaction(users.state, backrun.tx)
    expect(executed.status).toBe('success')
    const userGas = users.results[0].gasUsed
    const paid = userTip * userGas + backrun.maxPriorityFeePerGas * executed.gasUsed
    expect(paid).toBeGreaterThan(tipFloor * (userGas + executed.gasUsed))
    // and not by more than the rounding of one wei per gas
    expect(paid).toBeLessThanOrEqual((tipFloor + 1n) * (userGas + executed.gasUsed) + executed.gasUsed)
  })

  it('the signed backrun realizes exactly the gross profit reported or reverts (a state moved by an earlier bundle, down or up, fails its bundle instead)', async () => {
    const user = fx('v2-swapExactETHForTokens-large')
    const plan = await newPlanner().plan(input('private-tx', [user]))
    expect(plan).not.toBeNull()
    const { simulator, chain } = services
    const common = { chainId: CHAIN_ID, common: simulator.common }
    const signed = decodeSignedTransaction(plan!.rawBackrunTx, common)
    const { functionName, args } = decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data: bytesToHexString(signed.data) })
    expect(functionName).toBe('backrunExact')
    expect((args as readonly unknown[])[3]).toBe(plan!.grossProfit)
    // another user's swap against the same pool lands first, in either direction: the profit moves
    for (const earlier of ['v2-swapExactTokensForETH-small', 'v2-swapExactETHForTokens-small']) {
      const moved = await simulator.bundle(simulator.openState(chain.latest()), [decodeSignedTransaction(fx(earlier).raw, common).tx, decodeSignedTransaction(user.raw, common).tx])
      expect(moved.success).toBe(true)
      const executed = await simulator.transaction(moved.state, signed.tx)
      expect(executed.status, earlier).toBe('reverted')
      expect(decodeBackrunRevert(bytesToHexString(executed.returnData))?.errorName).toBe('ProfitMismatch')
    }
  })

  it('a V3 swap that creates arbitrage, notified: the backrun behind the notified tx alone', async () => {
    const user = fx('v3-exactInputSingle-large')
    expect(user.createsArbitrage).toBe(true)
    const plan = await newPlanner().plan(input('notify', [user]))
    expect(plan).not.toBeNull()
    expect((await executeWithBackrun([user], plan!)).gain).toBe(plan!.grossProfit)
  })

  it('the searcher is also the user: the backrun takes the nonce after the user tx', async () => {
    const user = fx('v2-swapExactTokensForTokens-stable-large')
    expect(lower(user.from)).toBe(lower(SEARCHER.address))
    expect(user.createsArbitrage).toBe(true)
    const plan = await newPlanner().plan(input('private-tx', [user]))
    expect(plan).not.toBeNull()
    const { gain, backrun } = await executeWithBackrun([user], plan!)
    expect(backrun.nonce).toBe(decode(user.raw).nonce + 1n)
    expect(gain).toBe(plan!.grossProfit)
  })

  it('a bundle: the backrun goes behind the last tx, after all of them', async () => {
    const txs = [fx('eth-transfer'), fx('v2-swapExactTokensForETH-large')]
    expect(txs[1].createsArbitrage).toBe(true)
    const plan = await newPlanner().plan(input('bundle', txs))
    expect(plan).not.toBeNull()
    expect((await executeWithBackrun(txs, plan!)).gain).toBe(plan!.grossProfit)
  })

  it('a swap that creates no arbitrage gives null', async () => {
    for (const name of ['v2-swapExactETHForTokens-small', 'v3-exactInputSingle-small', 'eth-transfer']) {
      const user = fx(name)
      expect(user.createsArbitrage).toBe(false)
      expect(await newPlanner().plan(input('private-tx', [user])), name).toBeNull()
    }
  })

  it('a reverting user tx gives null, whether the simulation said so or not', async () => {
    const user = fx('revert-v2-expired-deadline')
    expect(await newPlanner().plan(input('private-tx', [user]))).toBeNull()
    expect(await newPlanner().plan(input('private-tx', [fx('v2-swapExactETHForTokens-large')], { success: false, revertReason: 'x', failedTxIndex: 0 }))).toBeNull()
  })

  it('user txs that cannot be executed on this head: a BackrunPlanError saying why', async () => {
    // the same sender twice with the same nonce: the second is not includable
    await expect(newPlanner().plan(input('bundle', [fx('v2-swapExactETHForTokens-small'), fx('v3-exactInputSingle-large')]))).rejects.toMatchObject({
      name: 'BackrunPlanError',
      reason: 'user-txs-not-includable',
      message: expect.stringMatching(/transaction 1: .*nonce/i),
    })
  })

  it('an aborted plan stops', async () => {
    const controller = new AbortController()
    controller.abort(new Error('prepare timeout'))
    await expect(newPlanner().plan({ ...input('private-tx', [fx('v2-swapExactETHForTokens-large')]), signal: controller.signal })).rejects.toThrow('prepare timeout')
  })

  it('a signer whose signature recovers to another address is refused', async () => {
    const other = privateKeyBackrunSigner(registry.devAccounts.accounts[7].privateKey)
    const lying: BackrunTransactionSigner = { address: signer.address, signTransaction: (r) => other.signTransaction(r) }
    const bad = new EngineBackrunPlanner({ chain: services.chain, simulator: services.simulator, engine: services.backrun, signer: lying, maxPriorityFeePerGas: PRIORITY_FEE })
    await expect(bad.plan(input('private-tx', [fx('v2-swapExactETHForTokens-large')]))).rejects.toMatchObject({ reason: 'signer-mismatch' })
  })

  it('the signer never shows its key', () => {
    const keyDigits = SEARCHER.privateKey.slice(2)
    for (const shown of [String(signer), JSON.stringify({ signer }), inspect(signer), `${signer}`]) {
      expect(shown).not.toContain(keyDigits)
      expect(shown).toContain(signer.address)
    }
    expect(() => privateKeyBackrunSigner('0x1234')).toThrow(/32-byte/)
    expect(() => privateKeyBackrunSigner(`0x${'0'.repeat(64)}`)).toThrow(/not a valid/)
  })
})

describe('engineSubmissionSimulator on the devnet', () => {
  const sim = async (kind: SubmissionKind, txs: readonly FixtureTx[]) => simulate(input(kind, txs))

  it('success: the receipt gas of the fixture, summed over a bundle', async () => {
    const a = fx('v2-swapExactETHForTokens-large')
    const b = fx('eth-transfer')
    expect(await sim('private-tx', [a])).toEqual({ success: true, gasUsed: BigInt(a.expected.gasUsed), blockNumber: services.chain.latest().block.number })
    const both = await sim('bundle', [b, a])
    expect(both.success).toBe(true)
    expect(both.gasUsed).toBe(BigInt(a.expected.gasUsed) + BigInt(b.expected.gasUsed))
  })

  it('a revert: the index and the decoded reason', async () => {
    const reverting = fx('revert-v2-expired-deadline')
    const r = await sim('bundle', [fx('eth-transfer'), reverting])
    expect(r).toMatchObject({ success: false, failedTxIndex: 1, revertReason: 'UniswapV2Router: EXPIRED' })
  })

  it('a tx that cannot be included on this head: not includable, with its index', async () => {
    const r = await sim('bundle', [fx('v2-swapExactETHForTokens-small'), fx('v3-exactInputSingle-large')])
    expect(r.success).toBe(false)
    expect(r.failedTxIndex).toBe(1)
    expect(r.revertReason).toMatch(/^not includable: .*nonce/i)
  })
})

