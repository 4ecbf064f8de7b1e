/**
 * Executes one signed transaction on anvil on top of the devnet genesis, alone in block 1, and
 * observes what it did; then puts anvil back to genesis. The recorder stores these observations
 * as a fixture's expectations and the tests re-observe and compare.
 *
 * anvil must run with --no-mining so the transaction waits in the pool until evm_mine. The block
 * context is pinned (timestamp genesis + 12, the EIP-1559 base fee that follows an empty genesis)
 * because anvil otherwise derives the base fee after a revert differently from a fresh start.
 */
import { getAddress, type Hex } from 'viem'
import { anvilRpc } from '../../test/support/anvil.ts'
import { bestCycle, readPoolPrices, type ArbitrageCycle } from './arbitrage.ts'
import type { DevnetRegistry } from './registry.ts'
import { rpcBatch } from './rpc.ts'

export const BLOCK_TIME_SECONDS = 12n

export interface BlockContext {
  number: string
  timestamp: string
  baseFeePerGas: string
  gasLimit: string
  miner: Hex
  /** the post-merge PREVRANDAO value */
  mixHash: Hex
}

export interface RecordedLog {
  address: Hex
  topics: Hex[]
  data: Hex
}

export interface BalanceChange {
  address: Hex
  /** who the address is: sender, recipient, a pool */
  label: string
  /** after minus before, in base units, for ETH and every registry token by symbol */
  deltas: Record<string, string>
}

export interface Observation {
  hash: Hex
  status: 0 | 1
  gasUsed: string
  /** the top call's return data (revert data when it reverted) */
  output: Hex
  /** the decoded Error(string) when it reverted with one */
  revertReason?: string
  logs: RecordedLog[]
  balanceChanges: BalanceChange[]
  block: BlockContext
  /** the best cycle of pools after the transaction */
  arbitrage: ArbitrageCycle
}

export interface Watch {
  sender: Hex
  recipient: Hex
  /** pools the transaction is meant to go through (watched even when it reverts) */
  pools: readonly Hex[]
}

/** EIP-1559 base fee of the block after `parent`. */
export function nextBaseFee(parent: { gasLimit: bigint; gasUsed: bigint; baseFeePerGas: bigint }): bigint {
  const target = parent.gasLimit / 2n
  if (parent.gasUsed === target) return parent.baseFeePerGas
  if (parent.gasUsed > target) {
    const delta = (parent.baseFeePerGas * (parent.gasUsed - target)) / target / 8n
    return parent.baseFeePerGas + (delta > 1n ? delta : 1n)
  }
  return parent.baseFeePerGas - (parent.baseFeePerGas * (target - parent.gasUsed)) / target / 8n
}

interface RpcBlock {
  number: Hex
  timestamp: Hex
  baseFeePerGas: Hex
  gasLimit: Hex
  gasUsed: Hex
  miner: Hex
  mixHash: Hex
  transactions: Hex[]
}

interface RpcReceipt {
  status: Hex
  gasUsed: Hex
  blockNumber: Hex
  logs: { address: Hex; topics: Hex[]; data: Hex }[]
}

export async function executeAtGenesis(url: string, registry: DevnetRegistry, raw: Hex, watch: Watch): Promise<Observation> {
  const genesis = await anvilRpc<RpcBlock>(url, 'eth_getBlockByNumber', ['0x0', false])
  const snapshot = await anvilRpc<Hex>(url, 'evm_snapshot')
  try {
    const baseFee = nextBaseFee({ gasLimit: BigInt(genesis.gasLimit), gasUsed: BigInt(genesis.gasUsed), baseFeePerGas: BigInt(genesis.baseFeePerGas) })
    await anvilRpc(url, 'anvil_setNextBlockBaseFeePerGas', [`0x${baseFee.toString(16)}`])
    await anvilRpc(url, 'evm_setNextBlockTimestamp', [Number(BigInt(genesis.timestamp) + BLOCK_TIME_SECONDS)])
    const hash = await anvilRpc<Hex>(url, 'eth_sendRawTransaction', [raw])
    await anvilRpc(url, 'evm_mine')
    const [receipt, block, trace] = await rpcBatch<unknown>(url, [
      { method: 'eth_getTransactionReceipt', params: [hash] },
      { method: 'eth_getBlockByNumber', params: ['0x1', false] },
      { method: 'debug_traceTransaction', params: [hash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }] },
    ])
    const r = receipt as RpcReceipt | null
    const b = block as RpcBlock
    const t = trace as { output?: Hex; revertReason?: string }
    if (!r || r.blockNumber !== '0x1' || b.transactions.length !== 1) throw new Error(`transaction ${hash} was not mined alone in block 1`)

    const logs = r.logs.map((l) => ({ address: getAddress(l.address), topics: l.topics, data: l.data }))
    const pools = [
      ...registry.v2.pairs.map((p) => ({ address: p.address, label: `V2 ${p.name}` })),
      ...registry.v3.pools.map((p) => ({ address: p.address, label: `V3 ${p.name}` })),
      // every V4 pool's tokens sit in the singleton
      { address: registry.v4.poolManager, label: 'V4 PoolManager' },
    ]
    const touched = new Set([...watch.pools.map((a) => getAddress(a)), ...logs.map((l) => l.address)])
    const labels = new Map<Hex, string[]>()
    const label = (address: Hex, name: string) => labels.set(getAddress(address), [...(labels.get(getAddress(address)) ?? []), name])
    label(watch.sender, 'sender')
    label(watch.recipient, 'recipient')
    for (const pool of pools) if (touched.has(pool.address)) label(pool.address, pool.label)

    return {
      hash,
      status: r.status === '0x1' ? 1 : 0,
      gasUsed: BigInt(r.gasUsed).toString(),
      output: t.output ?? '0x',
      ...(r.status === '0x1' || t.revertReason === undefined ? {} : { revertReason: t.revertReason }),
      logs,
      balanceChanges: await balanceChanges(url, registry, labels),
      block: {
        number: BigInt(b.number).toString(),
        timestamp: BigInt(b.timestamp).toString(),
        baseFeePerGas: BigInt(b.baseFeePerGas).toString(),
        gasLimit: BigInt(b.gasLimit).toString(),
        miner: getAddress(b.miner),
        mixHash: b.mixHash,
      },
      arbitrage: bestCycle(await readPoolPrices(url, registry, '0x1')),
    }
  } finally {
    await anvilRpc(url, 'evm_revert', [snapshot])
  }
}

/** ETH and token deltas between block 0 and block 1 for each labelled address, in label order. */
async function balanceChanges(url: string, registry: DevnetRegistry, labels: Map<Hex, string[]>): Promise<BalanceChange[]> {
  const addresses = [...labels.keys()]
  const calls = addresses.flatMap((address) =>
    ['0x0', '0x1'].flatMap((tag) => [
      { method: 'eth_getBalance', params: [address, tag] },
      ...registry.tokens.map((t) => ({
        method: 'eth_call',
        // balanceOf(address)
        params: [{ to: t.address, data: `0x70a08231${address.slice(2).toLowerCase().padStart(64, '0')}` }, tag],
      })),
    ]),
  )
  const results = (await rpcBatch<Hex>(url, calls)).map((v) => BigInt(v))
  const perBlock = 1 + registry.tokens.length
  return addresses.map((address, i) => {
    const before = results.slice(i * 2 * perBlock, i * 2 * perBlock + perBlock)
    const after = results.slice(i * 2 * perBlock + perBlock, (i + 1) * 2 * perBlock)
    const deltas: Record<string, string> = { ETH: (after[0]! - before[0]!).toString() }
    registry.tokens.forEach((t, j) => (deltas[t.symbol] = (after[j + 1]! - before[j + 1]!).toString()))
    return { address, label: labels.get(address)!.join(', '), deltas }
  })
}
