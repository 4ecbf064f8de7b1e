/**
 * The gates that keep BackrunEngine from answering a loss-making backrun, each on a scenario built
 * here on the devnet (no extra fixture): an arbitrage that is profitable before gas and not after
 * (the same fixture swap with a priority fee that makes its gas cost more than its gross profit),
 * a minimum net profit at exactly what the final execution nets, and candidates the EVM does not
 * confirm (an executor address that answers nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Hex } from 'viem'
import { BackrunEngine, PriceFeedError, type BackrunEngineOptions } from '../../src/backrun/backrun-engine.ts'
import type { BackrunFound, BackrunRequest } from '../../src/backrun/types.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { Address } from '../../src/chain/types.ts'
import { loadConfig } from '../../src/node/config.ts'
import { Erc20StateWriter } from '../../src/evm/erc20-slots.ts'
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
