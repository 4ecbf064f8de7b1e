/**
 * The gates that keep BackrunEngine from answering a loss-making backrun, each on a scenario built
 * here on the devnet (no extra fixture): an arbitrage that is profitable before gas and not after
 * (the same fixture swap with a priority fee that makes its gas cost more than its gross profit),
 * a minimum net profit at exactly what the final execution nets, and candidates the EVM does not
 * confirm (an executor address that answers nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeFunctionData, type Hex } from 'viem'
import { BACKRUN_EXECUTOR_ABI } from '../../src/backrun/backrun-calldata.ts'
import { BackrunEngine, PriceFeedError, type BackrunEngineOptions } from '../../src/backrun/backrun-engine.ts'
import { estimateBackrunGas } from '../../src/backrun/backrun-gas.ts'
import type { BackrunFound, BackrunRequest } from '../../src/backrun/types.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
import type { Simulator } from '../../src/evm/simulator.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { loadFixtureTxs, loadRegistry, lower } from '../support/devnet.ts'
import { withWorkersFromEnv } from '../support/env.ts'

const registry = loadRegistry()
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' as Address
/** a V2 swap of 100 ETH that leaves an arbitrage (ETH in: no token funding involved) */
const FIXTURE = 'v2-swapExactETHForTokens-large'

let services: DomainServices
let request: BackrunRequest
let baseFee: bigint

/** the simulator, counting its calls to the executor: the backrun's executions */
function countingSimulator(): { simulator: Simulator; executions: () => number } {
  let executions = 0
  const executor = services.contracts.backrunExecutor.toLowerCase()
  const simulator = new Proxy(services.simulator, {
    get(target, property) {
      if (property === 'call') {
        return (state: Parameters<Simulator['call']>[0], tx: Parameters<Simulator['call']>[1]) => {
          if (tx.to?.toLowerCase() === executor) executions++
          return target.call(state, tx)
        }
      }
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return { simulator, executions: () => executions }
}

const minProfitOf = (calldata: Hex) => (decodeFunctionData({ abi: BACKRUN_EXECUTOR_ABI, data: calldata }).args as readonly unknown[])[3] as bigint

function engine(overrides: Partial<BackrunEngineOptions>): BackrunEngine {
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

beforeAll(async () => {
  services = await openDomainServices(loadConfig(withWorkersFromEnv({ LOG_LEVEL: 'silent' })), { log: { warn: () => {} } })
  const fx = loadFixtureTxs().find((f) => f.name === FIXTURE) as (ReturnType<typeof loadFixtureTxs>[number] & { value?: string }) | undefined
  if (fx === undefined || !fx.createsArbitrage) throw new Error(`fixture ${FIXTURE} (with arbitrage) missing`)
  const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: services.simulator.common })
  const value = BigInt(fx.value ?? '0')
  request = { to: lower(fx.to), calldata: bytesToHexString(tx.tx.data) as Hex, value, tokenIn: NATIVE, amountIn: value }
  baseFee = services.chain.latest().block.baseFeePerGas ?? 0n
})
afterAll(() => services?.close())

describe('BackrunEngine gates', () => {
  let reference: BackrunFound
  it('the scenario: with no tip and no minimum the arbitrage is found', async () => {
    const e = engine({})
    const found = await e.backrun(request)
    expect(found).not.toBeNull()
    reference = found!
    expect(reference.netProfitWei).toBeGreaterThan(0n)
    expect(e.stats()).toMatchObject({ found: 1, verificationMisses: 0 })
  })

  it('profitable before gas, not after: a tip that makes gas cost more than the gross gives null, and no final execution', async () => {
    // gross in wei (WETH is the profit token on this cycle, or valued through the pools): net + gas cost
    const grossWei = reference.netProfitWei + reference.gas * baseFee
    expect(grossWei).toBeGreaterThan(0n)
    // the tip at which gas costs at least the gross profit, with a margin for the probe's gas
    const tip = (grossWei * 11n) / 10n / reference.gas + 1n
    const e = engine({ priorityFeeWei: tip })
    expect(await e.backrun(request)).toBeNull()
    // the gate stopped it before the final calldata (whose minimum profit it could never meet) ran
    expect(e.stats()).toMatchObject({ found: 0, verificationMisses: 0 })
    // and just below the break-even tip it is still found, with a smaller positive net
    const cheaper = await engine({ priorityFeeWei: (grossWei * 9n) / 10n / reference.gas }).backrun(request)
    expect(cheaper).not.toBeNull()
    expect(cheaper!.netProfitWei).toBeGreaterThan(0n)
    expect(cheaper!.netProfitWei).toBeLessThan(reference.netProfitWei)
  })

  it('executes the winner once when its gas is within the estimate: the answer is that execution, its minimum profit covers its own gas cost', async () => {
    const counted = countingSimulator()
    const found = await engine({ simulator: counted.simulator }).backrun(request)
    expect(found).not.toBeNull()
    expect(counted.executions()).toBe(1)
    // the profit is in WETH on this cycle: its gas cost at the base fee (no tip here) in wei
    expect(found!.profitToken).toBe(services.contracts.weth)
    expect(minProfitOf(found!.calldata)).toBeGreaterThanOrEqual(found!.gas * baseFee)
    expect(found!.gas).toBeLessThanOrEqual(estimateBackrunGas(found!.hops.map((h) => ({ ...h, zeroForOne: h.tokenIn < h.tokenOut })), 0))
    // the same gas and profit as executing the calldata returned
    const after = await services.simulator.call(services.simulator.openState(services.chain.latest()), { from: '0x00000000000000000000000000000000000ba5e0', to: request.to, data: request.calldata, value: request.value })
    const again = await services.simulator.call(after.state, { from: '0x00000000000000000000000000000000000ba5e0', to: services.contracts.backrunExecutor, data: found!.calldata })
    expect(again.status).toBe('success')
    expect(again.gasUsed - 21_000n).toBe(found!.gas)
    expect(BigInt(bytesToHexString(again.returnData))).toBe(found!.grossProfit)
  })

  it('executes it again when the estimated gas would cost more than the profit: the probe with a minimum of 1, then the final calldata at the executed gas', async () => {
    const hops = reference.hops.map((h) => ({ ...h, zeroForOne: h.tokenIn < h.tokenOut }))
    const estimate = estimateBackrunGas(hops, 0)
    expect(estimate).toBeGreaterThan(reference.gas)
    // a tip at which the executed gas costs less than the gross, the estimated gas more
    const grossWei = reference.netProfitWei + reference.gas * baseFee
    const tip = (2n * grossWei) / (reference.gas + estimate) - baseFee
    const counted = countingSimulator()
    // one candidate verified (the others' probes would add to the count at this tip, as they always did)
    const found = await engine({ simulator: counted.simulator, priorityFeeWei: tip, maxVerified: 1 }).backrun(request)
    expect(found).not.toBeNull()
    expect(found!.netProfitWei).toBeGreaterThan(0n)
    expect(counted.executions()).toBe(2)
    // its minimum profit is its gas cost at the probe's gas (the final's but for a calldata word)
    expect(minProfitOf(found!.calldata)).toBeGreaterThanOrEqual((found!.gas - 200n) * (baseFee + tip))
    expect(minProfitOf(found!.calldata)).toBeLessThanOrEqual((found!.gas + 200n) * (baseFee + tip))
  })

  it('a net profit at exactly the minimum is not answered; one wei below the net is', async () => {
    const atMinimum = engine({ minNetProfitWei: reference.netProfitWei })
    expect(await atMinimum.backrun(request)).toBeNull()
    expect(atMinimum.stats().found).toBe(0)
    const below = await engine({ minNetProfitWei: reference.netProfitWei - 1n }).backrun(request)
    expect(below?.netProfitWei).toBe(reference.netProfitWei)
  })

  it('candidates the EVM does not confirm are counted as misses and never answered', async () => {
    // an executor address with no code: every verification call returns no profit
    const e = engine({ executor: '0x000000000000000000000000000000000000dead' })
    expect(await e.backrun(request)).toBeNull()
    const stats = e.stats()
    expect(stats.found).toBe(0)
    expect(stats.verificationMisses).toBeGreaterThanOrEqual(1)
  })

  it('a USD price feed that reverts fails the answer with a PriceFeedError naming the feed', async () => {
    // the router has no decimals(): the call reverts
    const feed = services.contracts.router
    const error = await engine({ ethUsdFeed: feed }).backrun(request).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PriceFeedError)
    expect(error).toMatchObject({ name: 'PriceFeedError', details: { feed }, message: expect.stringMatching(new RegExp(`^ETH/USD feed ${feed} reverted`)) })
  })
})
