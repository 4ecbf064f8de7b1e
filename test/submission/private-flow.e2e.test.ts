/**
 * The private flow end to end, as real traffic arrives: the service started as `npm start` starts
 * it (its own process, embedded devnet, its local builder sealing a block every 5 s), many users'
 * private swaps submitted over real HTTP in the same blocks (several on the same pools, several
 * leaving an arbitrage, some that revert once others land), then:
 * - every valid user transaction is included within 2 blocks of its acknowledgement, and none is
 *   left pending; the ones that became invalid ended with their revert reason;
 * - every included backrun realized on chain exactly the gross profit the status API reported for
 *   that block;
 * - the built chain, replayed block by block on anvil (the independent EVM) from the same genesis,
 *   in each block's context (timestamp, base fee, coinbase), gives the same receipts (status, gas,
 *   logs) and the same balances.
 */
import { rmSync } from 'node:fs'
import { encodeFunctionData, keccak256, parseAbi, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { anvilRpc, startAnvil, type AnvilInstance } from '../support/anvil.ts'
import { rpc, runFlow, type FlowReport } from '../support/flow.ts'
import { OutboxStore } from '../../src/submission/outbox-store.ts'
import { submissionId } from '../../src/submission/types.ts'
import { GENESIS_PATH, loadRegistry } from '../support/devnet.ts'

const registry = loadRegistry()
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)'])
const COINBASE = '0x0000000000000000000000000000000000c0ffee'

interface BuiltBlock {
  number: bigint
  timestamp: bigint
  baseFeePerGas: bigint
  transactions: Hex[]
}

interface Receipt {
  status: string
  gasUsed: string
  logs: Array<{ address: string; topics: Hex[]; data: Hex }>
}

/** every balance the flow can move: users, searchers, the beneficiary, the coinbase; ETH and each token */
function watched(): { holders: Hex[]; tokens: Hex[] } {
  const holders = [...registry.devAccounts.accounts.map((a) => a.address as Hex), registry.backrun.beneficiary as Hex, COINBASE as Hex]
  return { holders: holders.map((h) => h.toLowerCase() as Hex), tokens: registry.tokens.map((t) => t.address.toLowerCase() as Hex) }
}

/** balances at `block` (the builder keeps building while they are read) */
async function balances(url: string, block: bigint): Promise<Record<string, string>> {
  const { holders, tokens } = watched()
  const tag = `0x${block.toString(16)}`
  const out: Record<string, string> = {}
  for (const holder of holders) {
    out[`${holder}:ETH`] = BigInt(await rpc<Hex>(url, 'eth_getBalance', [holder, tag])).toString()
    for (const token of tokens) {
      const data = encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [holder] })
      out[`${holder}:${token}`] = BigInt(await rpc<Hex>(url, 'eth_call', [{ to: token, data }, tag])).toString()
    }
  }
  return out
}

const comparable = (r: Receipt) => ({
  status: BigInt(r.status),
  gasUsed: BigInt(r.gasUsed),
  logs: r.logs.map((l) => ({ address: l.address.toLowerCase(), topics: l.topics.map((t) => t.toLowerCase()), data: l.data.toLowerCase() })),
})

describe('private flow: many users per block, end to end on the devnet', () => {
  let report: FlowReport
  let chain: BuiltBlock[] = []
  const receipts = new Map<Hex, Receipt>()
  let builderBalances: Record<string, string> = {}
  let lastBlock = 0n
  let anvil: AnvilInstance | undefined

  beforeAll(async () => {
    report = await runFlow({
      usersPerBlock: 12,
      blocks: 4,
      arbShare: 0.5,
      fragileShare: 0.17,
      // 5 s blocks: the suite runs other files beside this one on the same two cores, and the
      // promise is about blocks, not about how fast this machine simulates
      blockTimeMs: 5_000,
      settleBlocks: 4,
      keepDataDir: true,
      beforeStop: async ({ builderUrl }) => {
        const head = BigInt(await rpc<Hex>(builderUrl, 'eth_blockNumber'))
        chain = []
        for (let n = 1n; n <= head; n++) {
          const b = await rpc<{ number: Hex; timestamp: Hex; baseFeePerGas: Hex; transactions: Hex[] }>(builderUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])
          chain.push({ number: BigInt(b.number), timestamp: BigInt(b.timestamp), baseFeePerGas: BigInt(b.baseFeePerGas), transactions: b.transactions })
          for (const hash of b.transactions) receipts.set(hash, await rpc<Receipt>(builderUrl, 'eth_getTransactionReceipt', [hash]))
        }
        builderBalances = await balances(builderUrl, head)
        lastBlock = head
      },
    })
  }, 240_000)

  afterAll(async () => {
    await anvil?.stop()
    if (report?.dataDir !== undefined) rmSync(report.dataDir, { recursive: true, force: true })
  })

  it('includes every valid user transaction within 2 blocks of its acknowledgement; the invalid ones end with their reason; none pending', () => {
    const { submissions } = report
    expect(submissions.length).toBe(48)
    expect(report.pending).toBe(0)
    expect(report.lost).toBe(0)
    for (const s of submissions) {
      const final = s.status?.final
      expect(final, s.hash).toBeTruthy()
      if (final!.state === 'included') {
        expect(BigInt(final!.block!) - s.ackHead, `${s.kind} ${s.hash}`).toBeLessThanOrEqual(2n)
        // on chain, in that block, successful
        expect(BigInt(receipts.get(s.hash)!.status)).toBe(1n)
      } else {
        // only a swap that meets a state where it reverts may end without inclusion
        expect(s.kind, `${s.hash}: ${final!.reason}`).toBe('fragile')
        expect(final).toMatchObject({ state: 'dropped', reason: expect.stringMatching(/reverts on the state of block \d+ \(UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT\)/) })
      }
    }
    // every swap that can never revert landed
    expect(submissions.filter((s) => s.kind !== 'fragile').every((s) => s.status?.final?.state === 'included')).toBe(true)
    expect(report.validIncludedShare).toBe(1)
  })

  it('several backruns land per block, each realizing exactly the gross profit reported for that block', () => {
    expect(report.backrunsIncluded).toBeGreaterThanOrEqual(4)
    const perBlock = new Map<string, number>()
    for (const s of report.submissions) {
      const final = s.status?.final
      if (final?.backrunIncluded !== true) continue
      const plan = s.status!.blocks.find((b) => b.block === final.block)!.backrun!
      expect(plan.status).toBe('appended')
      expect(final.backrunTxHash).toBe(plan.txHash)
      expect(final.backrunGrossProfit).toBe(plan.grossProfit)
      expect(BigInt(receipts.get(final.backrunTxHash!)!.status)).toBe(1n)
      perBlock.set(final.block!, (perBlock.get(final.block!) ?? 0) + 1)
    }
    expect(Math.max(...perBlock.values())).toBeGreaterThanOrEqual(2)
    expect(report.realizedEqualsReported).toBe(report.backrunsIncluded)
  })

  it('the status API says, per block, what became of each bundle', () => {
    const outcomes = report.submissions.flatMap((s) => s.status!.blocks.flatMap((b) => b.bundles))
    expect(outcomes.length).toBeGreaterThan(0)
    expect(outcomes.some((o) => o.status === 'included')).toBe(true)
    // a backrun bundle and its backrun-free twin: never both included
    for (const s of report.submissions) for (const b of s.status!.blocks) expect(b.bundles.filter((o) => o.status === 'included').length).toBeLessThanOrEqual(1)
    for (const o of outcomes) if (o.status !== 'included' && o.status !== 'pending') expect(o.reason, JSON.stringify(o)).toBeTruthy()
  })

  it('the same chain replayed on anvil gives the same receipts and balances', async () => {
    // the backruns' signed bytes, from the service's outbox
    const raws = new Map<Hex, Hex>(report.submissions.map((s) => [s.hash, s.raw]))
    const store = new OutboxStore(report.dataDir!)
    await store.open()
    try {
      for (const s of report.submissions) {
        const stored = await store.get(submissionId('private-tx', s.hash))
        for (const e of stored?.events ?? []) if (e.type === 'backrun') raws.set(e.txHash, e.rawTx)
      }
    } finally {
      await store.close()
    }
    anvil = await startAnvil({ genesisPath: GENESIS_PATH, extraArgs: ['--order', 'fifo', '--no-mining'] })
    await anvilRpc(anvil.url, 'anvil_setCoinbase', [COINBASE])
    let txs = 0
    // each block in the built block's context (timestamp, base fee, coinbase); anvil executes it
    for (const block of chain) {
      await anvilRpc(anvil.url, 'evm_setNextBlockTimestamp', [Number(block.timestamp)])
      await anvilRpc(anvil.url, 'anvil_setNextBlockBaseFeePerGas', [`0x${block.baseFeePerGas.toString(16)}`])
      for (const hash of block.transactions) {
        const raw = raws.get(hash)
        expect(raw, `raw bytes of ${hash}`).toBeDefined()
        expect(keccak256(raw!)).toBe(hash)
        await anvilRpc(anvil.url, 'eth_sendRawTransaction', [raw])
      }
      await anvilRpc(anvil.url, 'evm_mine')
      const mined = await anvilRpc<{ number: Hex; baseFeePerGas: Hex; transactions: Hex[] }>(anvil.url, 'eth_getBlockByNumber', [`0x${block.number.toString(16)}`, false])
      expect(BigInt(mined.baseFeePerGas), `base fee of block ${block.number}`).toBe(block.baseFeePerGas)
      expect(mined.transactions, `transactions of block ${block.number}`).toEqual(block.transactions)
      for (const hash of block.transactions) {
        const theirs = await anvilRpc<Receipt>(anvil.url, 'eth_getTransactionReceipt', [hash])
        expect(comparable(theirs), `receipt of ${hash}`).toEqual(comparable(receipts.get(hash)!))
        txs++
      }
    }
    expect(txs).toBeGreaterThanOrEqual(report.included + report.backrunsIncluded)
    expect(await balances(anvil.url, lastBlock)).toEqual(builderBalances)
  }, 120_000)
})

