/**
 * Workers do not fetch state twice: in fork mode the main thread's fork cache is the one cache, and
 * workers read through it. The same workload (every ordered pair of the devnet's seven tokens, 42
 * quotes, 4 in flight at a time, then eth_backrun of four fixture swaps) against anvil loaded with
 * the devnet genesis, on a fresh service each time: the upstream JSON-RPC calls with 2 workers are
 * at most 1.2 times those with 1 worker (and the answers are the same).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnvil, type AnvilInstance } from '../support/anvil.ts'
import type { BackrunRequest } from '../../src/backrun/types.ts'
import { ForkStateSource } from '../../src/chain/fork/index.ts'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices } from '../../src/node/domain.ts'
import type { QuoteRequest } from '../../src/quote/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { devnetForkEnv, GENESIS_PATH, loadFixtureTxs, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const TOKENS = registry.tokens.map((t) => ({ address: lower(t.address), unit: 10n ** BigInt(t.decimals) }))
const QUOTES: QuoteRequest[] = TOKENS.flatMap((a, i) => TOKENS.filter((b) => b !== a).map((b, j) => ({ tokenIn: a.address, tokenOut: b.address, amountIn: a.unit * BigInt(1 + ((i + j) % 5)) })))
const IN_FLIGHT = 4

interface Run {
  rpcCalls: number
  httpRequests: number
  answers: unknown[]
}

let anvil: AnvilInstance

beforeAll(async () => {
  anvil = await startAnvil({ genesisPath: GENESIS_PATH })
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
})

/** fixture swaps that leave arbitrage and spend a token, as a partner would describe them */
function backrunRequests(): BackrunRequest[] {
  const common = commonForChain(BigInt(registry.chainId), 'prague')
  return loadFixtureTxs()
    .filter((fx) => fx.createsArbitrage)
    .flatMap((fx) => {
      const sender = fx.expected.balanceChanges.find((c) => lower(c.address) === lower(fx.from))!
      const spent = Object.entries(sender.deltas).find(([symbol, delta]) => symbol !== 'ETH' && BigInt(delta) < 0n)
      if (spent === undefined) return []
      const tx = decodeSignedTransaction(fx.raw, { chainId: BigInt(registry.chainId), common })
      return [{ to: lower(fx.to), calldata: bytesToHexString(tx.tx.data), value: 0n, tokenIn: tokenAddress(registry, spent[0]), amountIn: -BigInt(spent[1]) }]
    })
    .slice(0, 4)
}

async function runWorkload(workers: number, backruns: BackrunRequest[]): Promise<Run> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    WORKERS: String(workers),
    // what is counted here is upstream calls, not time: a cold fork execution waits for its reads
    // from anvil within the wall-clock budget, which a loaded test machine can exceed at 1 s
    EVM_MAX_MS: '30000',
    UPSTREAM_RPC_URL: anvil.url,
    FORK_BLOCK: '0',
    ...devnetForkEnv(registry),
    API_KEYS: 'fork-test-key-0123456789',
    PARTNER_TOKENS: 'fork-partner:fork-partner-token-0123456789',
    RELAYS: '[{"name":"unused","url":"http://127.0.0.1:9"}]',
  })
  const domain = await openDomainServices(config, { log: { warn: () => {} } })
  try {
    const chain = domain.chain as ForkStateSource
    const answers: unknown[] = new Array(QUOTES.length)
    let next = 0
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < QUOTES.length) {
          const i = next++
          answers[i] = await domain.quote.quote(QUOTES[i]).catch((err: Error & { reason?: string }) => ({ failed: err.reason ?? err.message }))
        }
      }),
    )
    for (const r of backruns) answers.push(await domain.backrun.backrun(r))
    const stats = chain.stats()
    return { rpcCalls: stats.rpcCalls, httpRequests: stats.httpRequests, answers }
  } finally {
    await domain.close()
  }
}

describe('upstream calls in fork mode, 1 worker against 2 (anvil as the upstream)', () => {
  it('2 workers make at most 1.2x the upstream calls of 1, with the same answers', async () => {
    const backruns = backrunRequests()
    expect(backruns.length).toBe(4)
    const inProcess = await runWorkload(0, backruns)
    const one = await runWorkload(1, backruns)
    const two = await runWorkload(2, backruns)
    const perQuote = (r: Run) => (r.rpcCalls / QUOTES.length).toFixed(1)
    console.log(
      `upstream JSON-RPC calls for ${QUOTES.length} quotes + ${backruns.length} eth_backrun: WORKERS=0 ${inProcess.rpcCalls} (${inProcess.httpRequests} HTTP), ` +
        `WORKERS=1 ${one.rpcCalls} (${one.httpRequests} HTTP), WORKERS=2 ${two.rpcCalls} (${two.httpRequests} HTTP); per quote ${perQuote(inProcess)} / ${perQuote(one)} / ${perQuote(two)}; ` +
        `ratio 2/1 ${(two.rpcCalls / one.rpcCalls).toFixed(3)}`,
    )
    expect(two.answers).toEqual(one.answers)
    expect(one.answers).toEqual(inProcess.answers)
    expect(one.answers.filter((a) => a !== null && typeof a === 'object' && 'amountOut' in a).length).toBeGreaterThan(30)
    expect(one.rpcCalls).toBeGreaterThan(0)
    expect(two.rpcCalls).toBeLessThanOrEqual(1.2 * one.rpcCalls)
  }, 300_000)
})
