/**
 * The dispatcher's work in the pool gives the answers it gives on the main thread: on the embedded
 * devnet, the pooled simulator and planner (WORKERS=2, src/workers) against engineSubmissionSimulator
 * and EngineBackrunPlanner over the engines WORKERS=0 builds, on the very same chain, input by
 * input: every fixture transaction (arbitrage ones, small ones, reverting ones), a notify, bundles,
 * a bundle whose second tx reuses a nonce, and, after a block lands one of them, that transaction
 * again (its nonce used). Reports, plans (the signed backrun byte for byte, profits, pools) and
 * errors (class, reason, message) must be equal.
 *
 * The searcher keys stay on this thread: each side leases from its own SearcherKeyPool holding the
 * same keys, and a key leased by a pooled plan is found leased in this thread's pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackrunEngine } from '../../src/backrun/backrun-engine.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { DomainServices } from '../../src/node/domain.ts'
import { EngineBackrunPlanner, privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { engineSubmissionSimulator } from '../../src/submission/engine-simulator.ts'
import type { BackrunPlanInput, BackrunPlanner, SimulationReport, SubmissionSimulator } from '../../src/submission/dispatcher-ports.ts'
import { Limiter } from '../../src/submission/limiter.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'
import { submissionId, type SubmissionKind } from '../../src/submission/types.ts'
import { decodeSignedTransaction, type DecodedTransaction } from '../../src/tx/index.ts'
import { PooledBackrunPlanner } from '../../src/workers/pooled-backrun-planner.ts'
import { pooledSubmissionSimulator } from '../../src/workers/pooled-submission-simulator.ts'
import { loadFixtureTxs, loadRegistry, type FixtureTx } from '../support/devnet.ts'
import { openPooledBesideInProcess } from '../support/pooled-domain.ts'

const registry = loadRegistry()
const CHAIN_ID = BigInt(registry.chainId)
const PRIORITY_FEE = 1_000_000_000n
const searcherKeys = registry.devAccounts.searcherIndexes.map((index) => registry.devAccounts.accounts.find((a) => a.index === index)!.privateKey)
const fixtures = loadFixtureTxs()
const fx = (name: string): FixtureTx => fixtures.find((f) => f.name === name)!

interface Case {
  name: string
  kind: SubmissionKind
  txs: FixtureTx[]
}

const CASES: Case[] = [
  ...fixtures.map((f): Case => ({ name: f.name, kind: 'private-tx', txs: [f] })),
  { name: 'notify v3-exactInputSingle-large', kind: 'notify', txs: [fx('v3-exactInputSingle-large')] },
  { name: 'bundle eth-transfer, v2-swapExactTokensForETH-large', kind: 'bundle', txs: [fx('eth-transfer'), fx('v2-swapExactTokensForETH-large')] },
  { name: 'bundle eth-transfer, reverting swap', kind: 'bundle', txs: [fx('eth-transfer'), fx('revert-v2-expired-deadline')] },
  // one sender, one nonce, twice: the second cannot be included (its nonce is used by the first)
  { name: 'bundle reusing a nonce', kind: 'bundle', txs: [fx('v2-swapExactETHForTokens-small'), fx('v3-exactInputSingle-large')] },
]

let domain: DomainServices
const inProcess: { simulate?: SubmissionSimulator; engine?: BackrunEngine; simulator?: DomainServices['simulator'] } = {}
let pooledSimulate: SubmissionSimulator
const share = new Limiter(2)

const keyPool = (keys = searcherKeys.length): SearcherKeyPool => new SearcherKeyPool(searcherKeys.slice(0, keys).map((k) => privateKeyBackrunSigner(k)))
const localPlanner = (keys: SearcherKeyPool): BackrunPlanner =>
  new EngineBackrunPlanner({ chain: domain.chain, simulator: inProcess.simulator!, engine: inProcess.engine!, signer: keys, maxPriorityFeePerGas: PRIORITY_FEE })
/**
 * every plan of a comparison is sent at once: room for all in the planners' share (no dispatcher
 * bounds its wait here), two per case (with and without a report), however many fixtures
 */
const planShare = new Limiter(2 * CASES.length)
const pooledPlanner = (keys: SearcherKeyPool): BackrunPlanner => new PooledBackrunPlanner(domain.workers!, { keys, share: planShare, maxPriorityFeePerGas: PRIORITY_FEE })

beforeAll(async () => {
  const opened = await openPooledBesideInProcess({ WORKERS: '2' })
  domain = opened.domain
  const engines = opened.inProcess
  inProcess.simulator = engines.simulator
  inProcess.engine = new BackrunEngine(engines.backrunOptions)
  inProcess.simulate = engineSubmissionSimulator({ chain: domain.chain, simulator: engines.simulator })
  pooledSimulate = pooledSubmissionSimulator(domain.workers!, share)
}, 120_000)

afterAll(async () => {
  await domain?.close()
})

/** decoded as the dispatcher decodes stored txs (src/node/submission.ts) */
function decodeAll(txs: readonly FixtureTx[]): DecodedTransaction[] {
  return txs.map((t) => decodeSignedTransaction(t.raw, { chainId: CHAIN_ID, common: domain.simulator.common }))
}

function planInput(c: Case, simulation: SimulationReport | undefined): BackrunPlanInput {
  const userTxs = decodeAll(c.txs)
  return { id: submissionId(c.kind, userTxs[userTxs.length - 1].hash), kind: c.kind, userTxs, simulation, signal: new AbortController().signal, tipFloor: 2_000_000_000n }
}

/** what an answer is, for comparison: the value, or the error's class and the fields it carries */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await run() }
  } catch (err) {
    const e = err as Error & Record<string, unknown>
    return { error: e.name, message: e.message, reason: e.reason }
  }
}

interface Tally {
  simulatedOk: number
  reverted: number
  nonceUsed: number
  plans: number
  noPlan: number
  planErrors: number
}

/** Every case on the current head, both ways; plans with a fresh key pool per case and side (each plan may take the first key). */
async function compareAll(cases: readonly Case[]): Promise<Tally> {
  const tally: Tally = { simulatedOk: 0, reverted: 0, nonceUsed: 0, plans: 0, noPlan: 0, planErrors: 0 }
  // all at once on the pooled side, so both workers take tasks
  const pooledReports = await Promise.all(cases.map((c) => outcome(() => pooledSimulate(planInput(c, undefined)))))
  const reports: Array<SimulationReport | undefined> = []
  for (const [i, c] of cases.entries()) {
    const local = await outcome(() => inProcess.simulate!(planInput(c, undefined)))
    expect(pooledReports[i], `simulation of ${c.name}`).toEqual(local)
    const report = (local as { value?: SimulationReport }).value
    reports.push(report)
    if (report?.success === true) tally.simulatedOk++
    else if (report?.rejection === 'nonce-used') tally.nonceUsed++
    else tally.reverted++
  }
  const pooledKeys = cases.map(() => keyPool())
  // the dispatcher plans with the report (a failed one means no plan) and, as after a simulation error, without one
  const inputs = cases.flatMap((c, i) => [planInput(c, reports[i]), planInput(c, undefined)])
  const pooledPlans = await Promise.all(inputs.map((input, i) => outcome(() => pooledPlanner(pooledKeys[i >> 1]).plan(input))))
  for (const [i, input] of inputs.entries()) {
    const name = `plan of ${cases[i >> 1].name}${i % 2 === 1 ? ' without a report' : ''}`
    const local = await outcome(() => localPlanner(keyPool()).plan(input))
    expect(pooledPlans[i], name).toEqual(local)
    const plan = (local as { value?: { block: bigint } | null }).value
    if (plan === undefined) tally.planErrors++
    else if (plan === null) tally.noPlan++
    else tally.plans++
  }
  // the key of every plan is leased in this thread's pool; a case without a plan leased nothing
  const target = domain.chain.latest().block.number + 1n
  for (const [i, keys] of pooledKeys.entries()) {
    const planned = [pooledPlans[2 * i], pooledPlans[2 * i + 1]].some((p) => (p as { value?: unknown }).value)
    expect(keys.leased(target), cases[i].name).toBe(planned ? 1 : 0)
  }
  return tally
}

describe('the dispatcher in the pool answers exactly as on the main thread', () => {
  it('every fixture, a notify and bundles on the genesis head', async () => {
    const completed = domain.workers!.stats().completed
    const tally = await compareAll(CASES)
    console.log(`genesis: ${JSON.stringify(tally)}`)
    // the comparison is about something: successes, reverts, a used nonce; plans, nulls, errors
    expect(tally.simulatedOk).toBeGreaterThanOrEqual(18)
    expect(tally.reverted).toBeGreaterThanOrEqual(5)
    expect(tally.nonceUsed).toBe(1)
    expect(tally.plans).toBeGreaterThanOrEqual(16)
    expect(tally.noPlan).toBeGreaterThan(0)
    expect(tally.planErrors).toBe(1)
    // every simulation and every plan that got past the main thread's own checks went through a worker
    expect(domain.workers!.stats().completed - completed).toBeGreaterThanOrEqual(CASES.length + tally.plans)
  }, 180_000)

  it('after a block that lands a swap: that swap again is nonce-used, the rest is compared on the new state', async () => {
    const chain = domain.chain as DevnetStateSource
    const landed = fx('v2-swapExactETHForTokens-large')
    const tx = decodeAll([landed])[0]
    const result = await domain.simulator.transaction(domain.simulator.openState(chain.latest()), tx.tx)
    expect(result.status).toBe('success')
    chain.commitBlock(result.state, { ...result.state.block, gasUsed: result.gasUsed, transactionHashes: [tx.hash] })
    expect(chain.latest().block.number).toBe(1n)
    const cases = CASES.filter((c) => c.txs.some((t) => t.name.includes('large')))
    const tally = await compareAll(cases)
    console.log(`block 1: ${JSON.stringify(tally)}`)
    // the landed swap's nonce is used now; so is the second tx of the bundle that reuses a nonce
    expect(tally.nonceUsed).toBe(2)
    expect(tally.plans).toBeGreaterThan(0)
  }, 180_000)

  it('leases in order: with one pool of 3 keys per side, the plans beyond the keys find none, alike', async () => {
    const arbitrage = CASES.filter((c) => c.txs.some((t) => t.createsArbitrage) && c.kind !== 'bundle').filter((c) => c.name !== 'v2-swapExactETHForTokens-large')
    expect(arbitrage.length).toBeGreaterThan(3)
    const local = localPlanner(keyPool(3))
    const pooledKeys = keyPool(3)
    const pooled = pooledPlanner(pooledKeys)
    const localOutcomes: unknown[] = []
    const pooledOutcomes: unknown[] = []
    for (const c of arbitrage) {
      localOutcomes.push(await outcome(() => local.plan(planInput(c, undefined))))
      pooledOutcomes.push(await outcome(() => pooled.plan(planInput(c, undefined))))
    }
    expect(pooledOutcomes).toEqual(localOutcomes)
    const target = domain.chain.latest().block.number + 1n
    expect(pooledKeys.leased(target)).toBe(3)
    expect(pooledOutcomes.filter((o) => (o as { reason?: string }).reason === 'no-searcher-key').length).toBeGreaterThan(0)
  }, 180_000)
})
