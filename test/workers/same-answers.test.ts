/**
 * The pool gives the answers the main thread gives: on the embedded devnet, the service opened with
 * WORKERS=2 (quotes and eth_backrun computed in worker threads, state read from this thread) against
 * the engines WORKERS=0 builds, over the very same chain, request by request: amountOut, gas,
 * calldata, routes, profits, and for requests that fail, the same error class, reason, message and
 * details. Then a block with a large swap is committed (a new head, new prices) and everything is
 * compared again: the workers follow the head the main thread adopted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackrunEngine } from '../../src/backrun/backrun-engine.ts'
import type { BackrunRequest } from '../../src/backrun/types.ts'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { DomainServices } from '../../src/node/domain.ts'
import { EvmQuoteService } from '../../src/quote/evm-quote-service.ts'
import type { QuoteRequest } from '../../src/quote/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { WORKER_MAX_OLD_GENERATION_MB } from '../../src/workers/worker-pool.ts'
import { fixtureBackrunRequest, loadFixtureTxs, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'
import { openPooledBesideInProcess } from '../support/pooled-domain.ts'

const registry = loadRegistry()
const WETH = lower(registry.weth)
const USDC = tokenAddress(registry, 'USDC')
const DAI = tokenAddress(registry, 'DAI')
const WBTC = tokenAddress(registry, 'WBTC')
const UNI = tokenAddress(registry, 'UNI')
const LINK = tokenAddress(registry, 'LINK')
const USDT = tokenAddress(registry, 'USDT')
const USER = lower(registry.devAccounts.accounts[1].address)
const E18 = 10n ** 18n

const QUOTES: QuoteRequest[] = [
  { tokenIn: WETH, tokenOut: USDC, amountIn: E18 },
  { tokenIn: USDC, tokenOut: WETH, amountIn: 5_000n * 10n ** 6n },
  { tokenIn: WBTC, tokenOut: DAI, amountIn: 3n * 10n ** 7n },
  { tokenIn: UNI, tokenOut: LINK, amountIn: 250n * E18, slippageBps: 100, recipient: '0x00000000000000000000000000000000000000aa' },
  { tokenIn: WETH, tokenOut: USDT, amountIn: 2n * E18, sender: USER },
  // large enough to split across pools
  { tokenIn: WETH, tokenOut: USDC, amountIn: 300n * E18 },
  // failures: dust, not a token, the same token, more than every pool holds
  { tokenIn: WETH, tokenOut: USDC, amountIn: 1n },
  { tokenIn: WETH, tokenOut: '0x000000000000000000000000000000000000dead', amountIn: E18 },
  { tokenIn: DAI, tokenOut: DAI, amountIn: E18 },
  { tokenIn: WETH, tokenOut: USDC, amountIn: 10n ** 30n },
]

/** the fixture as a partner would describe it: tokenIn and amountIn are what its sender spent */
/** what an answer is, for comparison: the value, or the error's class and every field it carries */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await run() }
  } catch (err) {
    const e = err as Error & Record<string, unknown>
    return { error: e.constructor.name, message: e.message, reason: e.reason, details: e.details }
  }
}

let domain: DomainServices
let inProcess: { quote: EvmQuoteService; backrun: BackrunEngine }
const fixtures = loadFixtureTxs().filter((f) => f.name !== 'eth-transfer')
let backrunRequests: Array<[string, BackrunRequest]>

beforeAll(async () => {
  const opened = await openPooledBesideInProcess({ WORKERS: '2' })
  domain = opened.domain
  const engines = opened.inProcess
  inProcess = { quote: new EvmQuoteService(engines.quoteOptions), backrun: new BackrunEngine(engines.backrunOptions) }
  backrunRequests = fixtures.map((fx) => {
    const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: domain.simulator.common })
    return [fx.name, fixtureBackrunRequest(fx, bytesToHexString(tx.tx.data))]
  })
}, 120_000)

afterAll(async () => {
  await domain?.close()
})

/** @returns how many quotes were answered (the rest failed alike) */
async function compareEverything(blockNumber: bigint): Promise<number> {
  expect(domain.workers?.workerThreadIds()).toHaveLength(2)
  expect(domain.chain.latest().block.number).toBe(blockNumber)
  // all at once, so both workers take requests
  const pooledQuotes = await Promise.all(QUOTES.map((q) => outcome(() => domain.quote.quote(q))))
  const pooledBackruns = await Promise.all(backrunRequests.map(([, r]) => outcome(() => domain.backrun.backrun(r))))
  let answered = 0
  let found = 0
  for (const [i, q] of QUOTES.entries()) {
    const local = await outcome(() => inProcess.quote.quote(q))
    expect(pooledQuotes[i], `quote ${q.tokenIn} -> ${q.tokenOut} ${q.amountIn}`).toEqual(local)
    if ((local as { value?: { blockNumber: bigint } }).value !== undefined) {
      expect((local as { value: { blockNumber: bigint } }).value.blockNumber).toBe(blockNumber)
      answered++
    }
  }
  for (const [i, [name, r]] of backrunRequests.entries()) {
    const local = await outcome(() => inProcess.backrun.backrun(r))
    expect(pooledBackruns[i], name).toEqual(local)
    if ((local as { value?: unknown }).value) found++
  }
  // the comparison is about something: answers and failures, backruns and nulls
  expect(answered).toBeGreaterThanOrEqual(6)
  expect(answered).toBeLessThan(QUOTES.length)
  expect(found).toBeGreaterThan(0)
  expect(found).toBeLessThan(backrunRequests.length)
  return answered
}

describe('WORKERS=2 answers exactly as WORKERS=0 on the embedded devnet', () => {
  it('quotes and eth_backrun on the genesis head', async () => {
    const answered = await compareEverything(0n)
    const pool = domain.workers!.stats()
    expect(pool.completed).toBe(QUOTES.length + backrunRequests.length)
    // the state came from this thread, and each worker's L1 answered its repeated reads
    expect(pool.remoteReads).toBeGreaterThan(0)
    expect(pool.l1Hits).toBeGreaterThan(pool.remoteReads)
    // each worker reports its heap, within the pool's bound
    expect(pool.heapUsedBytes).toBeGreaterThan(0)
    expect(pool.heapUsedBytes).toBeLessThan(2 * WORKER_MAX_OLD_GENERATION_MB * 1024 * 1024)
    console.log(`pool after the genesis comparison: ${JSON.stringify({ ...pool, heapUsedMb: Math.round(pool.heapUsedBytes / 2 ** 20) })}`)
    // the counters of the workers' engines reach the facades' stats(), as /metrics reads them
    expect(domain.quote.stats().quotesExecuted).toBe(answered)
    expect(domain.backrun.stats().requests).toBe(backrunRequests.length)
  }, 120_000)

  it('after a new head with a large swap, the same answers on the new block', async () => {
    const chain = domain.chain as DevnetStateSource
    const fx = fixtures.find((f) => f.name === 'v2-swapExactETHForTokens-large')!
    const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common: domain.simulator.common })
    const head = chain.latest()
    const result = await domain.simulator.transaction(domain.simulator.openState(head), tx.tx)
    expect(result.status).toBe('success')
    chain.commitBlock(result.state, { ...result.state.block, gasUsed: result.gasUsed, transactionHashes: [tx.hash] })

    const before = await domain.quote.quote(QUOTES[0])
    expect(before.blockNumber).toBe(1n)
    await compareEverything(1n)
    // the workers carried what they had read at the genesis over to block 1, less what the swap
    // changed: the answers above were computed on that carried state
    expect(domain.workers!.stats().l1Carried).toBeGreaterThan(1_000)
  }, 120_000)
})

describe('the answer cache of the pooled quote service', () => {
  it('a repeated request is answered from the main thread cache, whichever worker computed it', async () => {
    const request = { tokenIn: WETH, tokenOut: DAI, amountIn: 7n * E18 }
    const hits = domain.quote.stats().cacheHits
    const first = await domain.quote.quote(request)
    const again = await Promise.all([domain.quote.quote(request), domain.quote.quote(request)])
    expect(again).toEqual([first, first])
    expect(domain.quote.stats().cacheHits).toBe(hits + 2)
  })
})

