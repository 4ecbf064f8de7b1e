/**
 * A worker's view of the main thread's state, over a real MessageChannel (both ends in this thread:
 * the same messages and structured clone as between threads), on the embedded devnet:
 * - every read answers what the main thread's reader answers;
 * - a key crosses once per block: repeated and concurrent reads are the L1's;
 * - reads asked together go in one message; a prefetch is one message that fills the L1;
 * - code is one object per code, across blocks (the EVM memoises its analysis per object);
 * - a task sees the block it was started on, whatever heads arrive meanwhile.
 */
import { MessageChannel } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Hex, StateReader } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { RemoteChainSource } from '../../src/workers/remote-chain-source.ts'
import { StateHost } from '../../src/workers/state-host.ts'
import { StateRequester } from '../../src/workers/state-requester.ts'
import { WorkerLink } from '../../src/workers/worker-link.ts'
import { GENESIS_PATH, loadRegistry, lower, tokenAddress } from '../support/devnet.ts'

const registry = loadRegistry()
const WETH = lower(registry.weth)
const USDC = tokenAddress(registry, 'USDC')
const PAIR = lower(registry.v2.pairs[0].address)
const USER = lower(registry.devAccounts.accounts[1].address)

let chain: DevnetStateSource
let host: StateHost
let requester: StateRequester
let link: WorkerLink
let remote: RemoteChainSource

beforeEach(() => {
  chain = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
  host = new StateHost(chain)
  const channel = new MessageChannel()
  link = new WorkerLink(1, channel.port1, host, { warn: () => {} }, () => {})
  remote = new RemoteChainSource({ kind: chain.kind, chainId: chain.chainId, head: chain.latest().block })
  requester = new StateRequester(channel.port2, (block) => remote.adoptHead(block))
  remote.connect(requester)
})

afterEach(async () => {
  await remote.close()
  link.close()
})

/** a reader of the main thread's head, as a task sees it */
function pinnedReader(): { local: StateReader; remote: StateReader } {
  const local = host.pinLatest()
  let reader: StateReader | undefined
  void remote.runAt(local.block, async () => {
    reader = remote.latest()
  })
  return { local, remote: reader! }
}

describe('RemoteStateReader over a MessageChannel', () => {
  it('answers what the main thread reader answers', async () => {
    const { local, remote: r } = pinnedReader()
    expect(await r.getAccount(USER)).toEqual(await local.getAccount(USER))
    expect(await r.getAccount('0x00000000000000000000000000000000000f00d5')).toBeUndefined()
    expect(await r.getCode(WETH)).toEqual(await local.getCode(WETH))
    expect((await r.getCode(USER)).length).toBe(0)
    for (const slot of [0n, 1n, 2n, 8n, 9n]) expect(await r.getStorage(PAIR, slot)).toBe(await local.getStorage(PAIR, slot))
    expect(await r.hasStorage!(PAIR)).toBe((await local.hasStorage?.(PAIR)) ?? false)
  })

  it('a key crosses once per block; concurrent reads share one request; reads asked together go in one message', async () => {
    const { remote: r } = pinnedReader()
    const slots = [0n, 1n, 2n, 3n, 8n, 9n, 10n]
    const first = await Promise.all([...slots.map((s) => r.getStorage(PAIR, s)), ...slots.map((s) => r.getStorage(PAIR, s)), r.getAccount(PAIR), r.getAccount(PAIR)])
    expect(requester.stats()).toEqual({ reads: slots.length + 1, batches: 1 })
    const again = await Promise.all([...slots.map((s) => r.getStorage(PAIR, s)), ...slots.map((s) => r.getStorage(PAIR, s)), r.getAccount(PAIR), r.getAccount(PAIR)])
    expect(again).toEqual(first)
    expect(requester.stats()).toEqual({ reads: slots.length + 1, batches: 1 })
  })

  it('accounts are fresh objects: a caller changing one does not change the next answer', async () => {
    const { remote: r } = pinnedReader()
    const a = (await r.getAccount(USER))!
    a.balance = 1n
    a.codeHash[0] ^= 0xff
    const b = (await r.getAccount(USER))!
    expect(b.balance).not.toBe(1n)
    expect(b.codeHash).not.toEqual(a.codeHash)
  })

  it('a prefetch is one message and fills the L1', async () => {
    const { local, remote: r } = pinnedReader()
    const storage = [0n, 1n, 2n, 6n, 7n, 8n].map((slot) => ({ address: PAIR, slot }))
    await r.prefetch!({ accounts: [WETH, USDC, PAIR], storage })
    expect(requester.stats()).toEqual({ reads: 1, batches: 1 })
    for (const { address, slot } of storage) expect(await r.getStorage(address, slot)).toBe(await local.getStorage(address, slot))
    expect(await r.getAccount(USDC)).toEqual(await local.getAccount(USDC))
    await r.prefetch!({ accounts: [WETH], storage: storage.slice(0, 2) })
    expect(requester.stats()).toEqual({ reads: 1, batches: 1 })
  })

  it('code is one object per code across blocks; the next block is read afresh', async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const before = pinnedReader()
    const code0 = await before.remote.getCode(WETH)
    const balance0 = await before.remote.getStorage(PAIR, 8n)

    const empty = sim.openState(chain.latest())
    chain.commitBlock(empty, { ...empty.block, gasUsed: 0n })
    const after = pinnedReader()
    expect(after.remote.block.number).toBe(1n)
    expect(await after.remote.getCode(WETH)).toBe(code0)
    expect(await after.remote.getStorage(PAIR, 8n)).toBe(balance0)
    // the new block's reads crossed (the L1 is per block), the code too, but the object is the one kept
    expect(requester.stats().reads).toBe(4)
  })

  it('latest() is the task block inside runAt, the newest announced head outside', async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const genesis = host.pinLatest().block
    const seen: bigint[] = []
    remote.onNewHead((b) => seen.push(b.number))
    const task = remote.runAt(genesis, async () => {
      const start = remote.latest().block.number
      const empty = sim.openState(chain.latest())
      chain.commitBlock(empty, { ...empty.block, gasUsed: 0n })
      link.announceHead(chain.latest().block)
      await new Promise((r) => setTimeout(r, 20))
      return [start, remote.latest().block.number]
    })
    expect(await task).toEqual([0n, 0n])
    expect(seen).toEqual([1n])
    expect(remote.latest().block.number).toBe(1n)
    expect(remote.latest().block.transactionHashes).toBeUndefined()
  })

  it('a block the main thread no longer keeps for workers: the read fails, saying so', async () => {
    const unknown = { ...chain.latest().block, hash: `0x${'ab'.repeat(32)}` as Hex }
    const reader = await remote.runAt(unknown, async () => remote.latest())
    await expect(reader.getAccount(USER)).rejects.toThrow(/is no longer readable by workers/)
  })
})
