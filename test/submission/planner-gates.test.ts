/**
 * The gates of EngineBackrunPlanner that stop a loss-making backrun transaction, on scenarios built
 * here on the devnet: a signed backrun that reverts right after the user's transaction (the engine
 * reports more profit than the state pays, so the profit guard cannot be met), and an arbitrage that
 * the engine finds profitable (its net counts the backrun's execution gas only) but that nets <= 0
 * once the backrun pays a transaction's own 21,000 base gas: at a gas price between
 * gross / (gas + 21,000) and gross / gas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackrunEngine, type BackrunEngineOptions } from '../../src/backrun/backrun-engine.ts'
import type { BackrunFound } from '../../src/backrun/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { BackrunPlanError, EngineBackrunPlanner, privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { submissionId, type BackrunPlanInput } from '../../src/submission/index.ts'
import { DEVNET_SEARCHER_ACCOUNT_INDEX } from '../../src/node/submission.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { loadFixtureTxs, loadRegistry } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry() as ReturnType<typeof loadRegistry> & { devAccounts: { searcherIndexes?: number[] } }
const CHAIN_ID = BigInt(registry.chainId)
const SEARCHER_INDEX = registry.devAccounts.searcherIndexes?.[0] ?? DEVNET_SEARCHER_ACCOUNT_INDEX
const SEARCHER = registry.devAccounts.accounts.find((a) => a.index === SEARCHER_INDEX)!
/** a V2 swap of 100 ETH that leaves an arbitrage */
const FIXTURE = loadFixtureTxs().find((f) => f.name === 'v2-swapExactETHForTokens-large')!

let services: DomainServices
let baseFee: bigint

function engine(overrides: Partial<BackrunEngineOptions> = {}): BackrunEngine {
  const c = services.contracts
  return new BackrunEngine({
    chain: services.chain,
    simulator: services.simulator,
    erc20: new Erc20StateWriter(services.simulator),
    routing: services.routing,
    weth: c.weth,
    baseTokens: c.baseTokens,
    executor: c.backrunExecutor,
    ethUsdFeed: c.ethUsdFeed,
    minNetProfitWei: 0n,
    priorityFeeWei: 0n,
    refundBps: 0,
    log: { warn: () => {} },
    ...overrides,
  })
}

/** the planner over `searchAfter`, which may alter what the real engine found */
function planner(search: Pick<BackrunEngine, 'searchAfter'>, maxPriorityFeePerGas: bigint): EngineBackrunPlanner {
  return new EngineBackrunPlanner({ chain: services.chain, simulator: services.simulator, engine: search, signer: privateKeyBackrunSigner(SEARCHER.privateKey), maxPriorityFeePerGas })
}

function input(): BackrunPlanInput {
  const userTx = decodeSignedTransaction(FIXTURE.raw, { chainId: CHAIN_ID, hardfork: 'prague' })
  return { id: submissionId('private-tx', userTx.hash), kind: 'private-tx', userTxs: [userTx], simulation: undefined, signal: new AbortController().signal }
}

/** the engine, recording what searchAfter answered */
function recording(e: BackrunEngine, alter: (found: BackrunFound) => BackrunFound = (f) => f) {
  const seen: Array<BackrunFound | null> = []
  const search: Pick<BackrunEngine, 'searchAfter'> = {
    searchAfter: async (...args) => {
      const found = await e.searchAfter(...args)
      seen.push(found)
      return found === null ? null : alter(found)
    },
  }
  return { search, seen }
}

beforeAll(async () => {
  services = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
  baseFee = services.chain.latest().block.baseFeePerGas ?? 0n
})
afterAll(() => services?.close())

describe('EngineBackrunPlanner gates', () => {
  it('the scenario: with no tip the backrun is planned', async () => {
    const plan = await planner(engine(), 0n).plan(input())
    expect(plan).not.toBeNull()
    expect(plan!.netProfitWei).toBeGreaterThan(0n)
  })

  it('a signed backrun that reverts right after the user transaction is a backrun-failed error, never a plan', async () => {
    // the engine reports one wei more than the state pays: the guard (minProfit = reported gross) reverts it
    const { search, seen } = recording(engine(), (f) => ({ ...f, grossProfit: f.grossProfit + 1n }))
    const err = await planner(search, 0n).plan(input()).catch((e: unknown) => e)
    expect(seen[0]).not.toBeNull()
    expect(err).toBeInstanceOf(BackrunPlanError)
    expect((err as BackrunPlanError).reason).toBe('backrun-failed')
    expect((err as BackrunPlanError).message).toMatch(/reverted/)
  })

  it('profitable for the engine, not once the transaction pays its base gas: no plan', async () => {
    // the reference: gross profit in wei and the backrun's execution gas (profit token WETH here)
    const ref = await engine().searchAfter(...(await userState()))
    expect(ref).not.toBeNull()
    const grossWei = ref!.netProfitWei + ref!.gas * baseFee
    // a gas price p with gross - gas * p > 0 but gross - (gas + 21,000) * p < 0
    const price = (grossWei * 2n) / (2n * ref!.gas + 21_000n)
    const tip = price - baseFee
    expect(tip).toBeGreaterThan(0n)
    const { search, seen } = recording(engine({ priorityFeeWei: tip }))
    const plan = await planner(search, tip).plan(input())
    // the engine found it profitable after its own gas count...
    expect(seen[0]).not.toBeNull()
    expect(seen[0]!.netProfitWei).toBeGreaterThan(0n)
    expect(seen[0]!.netProfitWei).toBeLessThan(21_000n * price)
    // ...and the planner, counting the transaction's base gas, declines it
    expect(plan).toBeNull()
  })
})

/** base state, the state after the fixture's user tx, its logs, and the searcher as origin */
async function userState(): Promise<Parameters<BackrunEngine['searchAfter']>> {
  const { simulator, chain } = services
  const base = simulator.openState(chain.latest())
  const users = await simulator.bundle(base, [decodeSignedTransaction(FIXTURE.raw, { chainId: CHAIN_ID, common: simulator.common }).tx])
  expect(users.success).toBe(true)
  const user = decodeSignedTransaction(FIXTURE.raw, { chainId: CHAIN_ID, common: simulator.common }).sender
  return [base, users.state, users.results.flatMap((r) => r.logs), { origin: SEARCHER.address.toLowerCase() as `0x${string}`, refundBps: 0, refundRecipient: user }]
}
