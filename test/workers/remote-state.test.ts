/**
 * A worker's view of the main thread's state, over a real MessageChannel (both ends in this thread:
 * the same messages and structured clone as between threads), on the embedded devnet:
 * - every read answers what the main thread's reader answers;
 * - a key crosses once per block: repeated and concurrent reads are the L1's;
 * - reads asked together go in one message; a prefetch is one message that fills the L1;
 * - code is one object per code, across blocks (the EVM memoises its analysis per object);
 * - a task sees the block it was started on, whatever heads arrive meanwhile;
 * - a head announced with its state diff starts with its parent's L1, less the keys it changed
 *   (taken on first read, through ancestors that never read a key).
 */
import { MessageChannel } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { StateChanges } from '../../src/chain/memory/layered-state-reader.ts'
import type { Hex, StateReader } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { RemoteChainSource } from '../../src/workers/remote-chain-source.ts'
import { createCodeInterner, RemoteStateReader } from '../../src/workers/remote-state-reader.ts'
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
  requester = new StateRequester(channel.port2, (block, diff) => remote.adoptHead(block, diff))
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

  it("a head announced with its state diff carries the parent's L1 over, less the keys the block changed", async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const before = pinnedReader()
    const user = (await before.remote.getAccount(USER))!
    const [reserves, price] = [await before.remote.getStorage(PAIR, 8n), await before.remote.getStorage(PAIR, 9n)]
    const code = await before.remote.getCode(WETH)
    const crossed = requester.stats().reads

    // a block that wrote one slot of the pair and changed the user's balance
    const next = sim.openState(chain.latest())
    const changes: StateChanges = {
      accounts: new Map([[USER, { ...user, balance: user.balance - 1n }]]),
      code: new Map(),
      storage: new Map([[PAIR, new Map([[8n, reserves + 1n]])]]),
      cleared: new Set(),
    }
    chain.commitBlock({ reader: chain.latest(), changesSinceReader: () => changes }, { ...next.block, gasUsed: 0n })
    link.announceHead(chain.latest().block, host.diffOf(chain.latest()))
    await vi.waitFor(() => expect(remote.l1Carried()).toBeGreaterThan(0))

    const after = pinnedReader()
    expect(after.remote.block.number).toBe(1n)
    // the worker's reader knows the block's diff as the main thread's does
    expect(after.remote.stateDiff?.()).toEqual(host.diffOf(chain.latest()))
    expect(before.remote.stateDiff?.()).toBeUndefined()
    // unchanged keys: the parent's answers, nothing crosses
    expect(await after.remote.getStorage(PAIR, 9n)).toBe(price)
    expect(await after.remote.getCode(WETH)).toBe(code)
    expect(requester.stats().reads).toBe(crossed)
    // the keys the block changed are read again, with the new block's values
    expect(await after.remote.getStorage(PAIR, 8n)).toBe(reserves + 1n)
    expect((await after.remote.getAccount(USER))!.balance).toBe(user.balance - 1n)
    expect(requester.stats().reads).toBe(crossed + 2)
    // the parent's reader still answers for the parent
    expect(await before.remote.getStorage(PAIR, 8n)).toBe(reserves)
  })

  it("a head announced with a fork's unchanged keys keeps exactly those of the parent's L1", async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const before = pinnedReader()
    const [reserves, price] = [await before.remote.getStorage(PAIR, 8n), await before.remote.getStorage(PAIR, 9n)]
    await before.remote.getAccount(USER)
    const code = await before.remote.getCode(WETH)
    const crossed = requester.stats().reads
    const next = sim.openState(chain.latest())
    chain.commitBlock(next, { ...next.block, gasUsed: 0n })
    // as a fork announces a head: the re-read keys that kept their values (here: WETH and slot 9 of the pair)
    link.announceHead(chain.latest().block, { kind: 'unchanged', parentHash: before.local.block.hash, accounts: [WETH], storage: [[PAIR, [9n]]] })
    await vi.waitFor(() => expect(remote.l1Carried()).toBe(2))
    const after = pinnedReader()
    expect(await after.remote.getStorage(PAIR, 9n)).toBe(price)
    expect(await after.remote.getCode(WETH)).toBe(code)
    expect(requester.stats().reads).toBe(crossed)
    // not vouched for: read again
    expect(await after.remote.getStorage(PAIR, 8n)).toBe(reserves)
    await after.remote.getAccount(USER)
    expect(requester.stats().reads).toBe(crossed + 2)
  })

  it("a head takes its ancestors' entries on first read, through blocks that never read them, unless a block since changed them", async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const genesis = pinnedReader()
    const [reserves, price] = [await genesis.remote.getStorage(PAIR, 8n), await genesis.remote.getStorage(PAIR, 9n)]
    const crossed = requester.stats().reads
    // block 1 writes slot 8 of the pair; block 2 is empty; the worker reads nothing at block 1
    const one = sim.openState(chain.latest())
    const changes: StateChanges = { accounts: new Map(), code: new Map(), storage: new Map([[PAIR, new Map([[8n, reserves + 1n]])]]), cleared: new Set() }
    chain.commitBlock({ reader: chain.latest(), changesSinceReader: () => changes }, { ...one.block, gasUsed: 0n })
    link.announceHead(chain.latest().block, host.diffOf(chain.latest()))
    await vi.waitFor(() => expect(remote.latest().block.number).toBe(1n))
    const two = sim.openState(chain.latest())
    chain.commitBlock(two, { ...two.block, gasUsed: 0n })
    link.announceHead(chain.latest().block, host.diffOf(chain.latest()))
    await vi.waitFor(() => expect(remote.latest().block.number).toBe(2n))
    const head = pinnedReader()
    // slot 9: unchanged since the genesis, taken from the genesis' L1 through block 1
    expect(await head.remote.getStorage(PAIR, 9n)).toBe(price)
    expect(requester.stats().reads).toBe(crossed)
    // slot 8: block 1 changed it, so the genesis' entry is not taken: read at block 2
    expect(await head.remote.getStorage(PAIR, 8n)).toBe(reserves + 1n)
    expect(requester.stats().reads).toBe(crossed + 1)
  })

  it('a head without a diff (a fork), or whose parent the worker does not hold, starts its L1 empty', async () => {
    const sim = new Simulator({ common: commonForChain(chain.chainId, 'prague'), blockTimeSeconds: 12n })
    const before = pinnedReader()
    await before.remote.getStorage(PAIR, 9n)
    const crossed = requester.stats().reads
    const first = sim.openState(chain.latest())
    chain.commitBlock(first, { ...first.block, gasUsed: 0n })
    link.announceHead(chain.latest().block)
    const second = sim.openState(chain.latest())
    chain.commitBlock(second, { ...second.block, gasUsed: 0n })
    // block 2's parent (block 1) was never read by this worker: nothing to carry
    link.announceHead(chain.latest().block, host.diffOf(chain.latest()))
    await vi.waitFor(() => expect(remote.latest().block.number).toBe(2n))
    expect(remote.l1Carried()).toBe(0)
    const after = pinnedReader()
    await after.remote.getStorage(PAIR, 9n)
    expect(requester.stats().reads).toBe(crossed + 1)
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

  it('a slot read again at a block is the L1\'s own answer, counted as a hit, in any order and any case of the address (the slot index)', async () => {
    const { local, remote: r } = pinnedReader()
    const slots = Array.from({ length: 13 }, (_, i) => BigInt(i))
    for (const slot of slots) expect(await r.getStorage(PAIR, slot)).toBe(await local.getStorage(PAIR, slot))
    const reads = requester.stats().reads
    const reader = r as RemoteStateReader
    const hits = reader.l1Hits
    for (const slot of [...slots].reverse()) expect(await r.getStorage(PAIR, slot)).toBe(await local.getStorage(PAIR, slot))
    const upper = `0x${PAIR.slice(2).toUpperCase()}` as Hex
    for (const slot of slots) expect(await r.getStorage(upper, slot)).toBe(await local.getStorage(PAIR, slot))
    expect(reader.l1Hits - hits).toBe(2 * slots.length)
    expect(requester.stats().reads).toBe(reads)
    expect(r.getStorage(PAIR, 3n)).toBe(r.getStorage(PAIR, 3n))
  })

  it('the slot index keeps at most its bound, then starts again; the L1 still answers what it dropped', async () => {
    const { local } = pinnedReader()
    const reader = new RemoteStateReader(local.block, requester, createCodeInterner(1024), 4)
    const slots = Array.from({ length: 6 }, (_, i) => BigInt(i))
    for (const slot of slots) await reader.getStorage(PAIR, slot)
    expect(reader.indexedSlots).toBe(2)
    for (const slot of slots) expect(await reader.getStorage(PAIR, slot)).toBe(await local.getStorage(PAIR, slot))
    expect(reader.indexedSlots).toBeLessThanOrEqual(4)
    expect(requester.stats().reads).toBe(slots.length)
  })

  it('a failed storage read is asked again, not answered from the slot index', async () => {
    const unknown = { ...chain.latest().block, hash: `0x${'cd'.repeat(32)}` as Hex }
    const reader = await remote.runAt(unknown, async () => remote.latest())
    await expect(reader.getStorage(PAIR, 1n)).rejects.toThrow(/is no longer readable by workers/)
    const reads = requester.stats().reads
    await expect(reader.getStorage(PAIR, 1n)).rejects.toThrow(/is no longer readable by workers/)
    expect(requester.stats().reads).toBe(reads + 1)
  })

  it('a block the main thread no longer keeps for workers: the read fails, saying so', async () => {
    const unknown = { ...chain.latest().block, hash: `0x${'ab'.repeat(32)}` as Hex }
    const reader = await remote.runAt(unknown, async () => remote.latest())
    await expect(reader.getAccount(USER)).rejects.toThrow(/is no longer readable by workers/)
  })
})
