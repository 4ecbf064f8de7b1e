/**
 * Reorgs seen by the fork against a real anvil, which replaces blocks on demand: evm_revert to a
 * snapshot then mining (a head replaced at the same height, or a new head whose parent is not the
 * adopted block), anvil_reorg (blocks replaced a few deep), anvil_rollback (a shorter chain).
 * The source must tell onReorg listeners which blocks were replaced and down to which common
 * ancestor, before onNewHead; drop what it cached for the replaced blocks (a read at the new head
 * answers the new chain's value, never the replaced block's), and answer block hashes of the new
 * chain.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { anvilRpc, startAnvil, type AnvilInstance } from '../../support/anvil.ts'
import type { Address, BlockInfo, ChainReorg, Hex } from '../../../src/chain/types.ts'
import { ForkStateSource, type ForkStateSourceOptions } from '../../../src/chain/fork/fork-state-source.ts'

const CONTRACT: Address = '0x00000000000000000000000000000000000c0ffe'
const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`

let anvil: AnvilInstance
const sources: ForkStateSource[] = []

async function open(options: Partial<ForkStateSourceOptions> = {}): Promise<ForkStateSource> {
  const source = await ForkStateSource.create({ url: anvil.url, followHeads: false, ...options })
  sources.push(source)
  return source
}

async function anvilHead(): Promise<{ number: bigint; hash: Hex; parentHash: Hex }> {
  const b = await anvilRpc<{ number: Hex; hash: Hex; parentHash: Hex }>(anvil.url, 'eth_getBlockByNumber', ['latest', false])
  return { number: BigInt(b.number), hash: b.hash, parentHash: b.parentHash }
}

async function anvilHashOf(n: bigint): Promise<Hex> {
  return (await anvilRpc<{ hash: Hex }>(anvil.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash
}

/** sets slot 0 of CONTRACT and mines it into a block; returns the block's number */
async function mineWithSlot(value: bigint): Promise<bigint> {
  await anvilRpc(anvil.url, 'anvil_setStorageAt', [CONTRACT, word(0n), word(value)])
  await anvilRpc(anvil.url, 'evm_mine')
  return (await anvilHead()).number
}

/** every reorg and head the source reports, in order */
function record(source: ForkStateSource): Array<{ reorg: ChainReorg } | { head: BlockInfo }> {
  const events: Array<{ reorg: ChainReorg } | { head: BlockInfo }> = []
  source.onReorg((reorg) => events.push({ reorg }))
  source.onNewHead((head) => events.push({ head }))
  return events
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

beforeAll(async () => {
  anvil = await startAnvil()
  await anvilRpc(anvil.url, 'anvil_setCode', [CONTRACT, '0x600160005500'])
  await anvilRpc(anvil.url, 'anvil_mine', ['0x4'])
})

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()))
})

afterAll(async () => {
  await anvil?.stop()
})

describe('a head replaced at the same height', () => {
  it('is seen by the poll: listeners hear the reorg then the new head, and the replaced block\'s reads are gone', async () => {
    const source = await open({ followHeads: true, pollIntervalMs: 20 })
    const events = record(source)
    const base = source.head
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')

    const minedAt = await mineWithSlot(1n)
    await until(() => source.head.number === minedAt, 'the first block')
    const replaced = source.head
    expect(await source.latest().getStorage(CONTRACT, 0n)).toBe(1n)

    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    expect(await mineWithSlot(2n)).toBe(minedAt)
    const replacement = await anvilHead()
    expect(replacement.hash).not.toBe(replaced.hash)
    await until(() => source.head.hash === replacement.hash, 'the replacement block')

    expect(events).toEqual([
      { head: replaced },
      {
        reorg: {
          commonAncestor: { number: base.number, hash: base.hash },
          dropped: [{ number: replaced.number, hash: replaced.hash }],
          newHead: source.head,
        },
      },
      { head: source.head },
    ])
    expect(source.head.number).toBe(replaced.number)
    // the slot read at the replaced block was dropped, not carried to the block at its number
    expect(await source.latest().getStorage(CONTRACT, 0n)).toBe(2n)
    const stats = source.stats()
    expect(stats.reorgs).toBe(1)
    expect(stats.reorgedBlocks).toBe(1)
    expect(stats.reorgDroppedEntries).toBeGreaterThan(0)
    // the new chain's hashes, and the polls needed no header read beyond the polled ones
    expect(await source.latest().getBlockHash(replaced.number)).toBe(replacement.hash)
    expect(await source.latest().getBlockHash(base.number)).toBe(base.hash)
  })
})

describe('a new head whose parent is not the adopted block', () => {
  it('drops the replaced block even though the new head is higher', async () => {
    const source = await open()
    const base = source.head
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    const first = await mineWithSlot(11n)
    await source.advanceTo(first)
    const replaced = source.head
    expect(await source.latest().getStorage(CONTRACT, 0n)).toBe(11n)

    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    await mineWithSlot(12n)
    const top = await mineWithSlot(13n)
    expect(top).toBe(first + 1n)
    const events = record(source)
    await source.advanceTo(top)

    const reorg = events.find((e): e is { reorg: ChainReorg } => 'reorg' in e)?.reorg
    expect(reorg?.commonAncestor).toEqual({ number: base.number, hash: base.hash })
    expect(reorg?.dropped).toEqual([{ number: replaced.number, hash: replaced.hash }])
    expect(events.map((e) => ('reorg' in e ? 'reorg' : 'head'))).toEqual(['reorg', 'head'])
    expect(await source.latest().getStorage(CONTRACT, 0n)).toBe(13n)
    // the block at the replaced number is the new chain's
    expect(await source.latest().getBlockHash(first)).toBe(await anvilHashOf(first))
    expect(await source.latest().getBlockHash(first)).not.toBe(replaced.hash)
  })
})

describe('blocks replaced several deep (anvil_reorg)', () => {
  it('finds the common ancestor below them and drops every one', async () => {
    const source = await open()
    // adopt three blocks one by one, so the source knows each hash
    const adopted: BlockInfo[] = []
    for (let i = 0; i < 3; i++) {
      await anvilRpc(anvil.url, 'evm_mine')
      adopted.push(await source.advanceTo((await anvilHead()).number))
    }
    const ancestor = source.head.number - 3n
    const ancestorHash = await anvilHashOf(ancestor)
    const events = record(source)

    await anvilRpc(anvil.url, 'anvil_reorg', [3, []])
    const head = await anvilHead()
    expect(head.number).toBe(adopted[2].number)
    const before = source.stats()
    await source.advanceTo(head.number)

    const reorg = events.find((e): e is { reorg: ChainReorg } => 'reorg' in e)?.reorg
    expect(reorg?.commonAncestor).toEqual({ number: ancestor, hash: ancestorHash })
    expect(reorg?.dropped).toEqual(adopted.map((b) => ({ number: b.number, hash: b.hash })))
    // the head names its parent; the two below cost one header read each
    expect(source.stats().callsByMethod.eth_getBlockByNumber - before.callsByMethod.eth_getBlockByNumber).toBe(1 + 2)
    for (let n = ancestor; n <= head.number; n++) expect(await source.latest().getBlockHash(n)).toBe(await anvilHashOf(n))
  })
})

describe('a shorter chain (anvil_rollback)', () => {
  it('an older block of the adopted chain is not a reorg; the block mined at the old height then is', async () => {
    const source = await open({ followHeads: true, pollIntervalMs: 20 })
    await anvilRpc(anvil.url, 'evm_mine')
    const mined = await anvilHead()
    await until(() => source.head.hash === mined.hash, 'the mined block')
    const events = record(source)

    await anvilRpc(anvil.url, 'anvil_rollback', [1])
    expect((await anvilHead()).number).toBe(mined.number - 1n)
    // a node behind a load balancer answers the same: keep the adopted head
    const polls = source.stats().callsByMethod.eth_getBlockByNumber
    await until(() => source.stats().callsByMethod.eth_getBlockByNumber >= polls + 3, 'three polls')
    expect(events).toEqual([])
    expect(source.head.hash).toBe(mined.hash)

    await anvilRpc(anvil.url, 'evm_mine')
    const replacement = await anvilHead()
    expect(replacement.number).toBe(mined.number)
    await until(() => source.head.hash === replacement.hash, 'the replacement')
    expect(events).toHaveLength(2)
    expect(events[0]).toEqual({ reorg: { commonAncestor: { number: mined.number - 1n, hash: mined.parentHash }, dropped: [{ number: mined.number, hash: mined.hash }], newHead: source.head } })
  })
})

describe('a head several blocks above the adopted one', () => {
  it('reads the blocks in between in one batch, and sees a reorg among them', async () => {
    const source = await open()
    const base = source.head
    const snapshot = await anvilRpc<Hex>(anvil.url, 'evm_snapshot')
    const replacedAt = await mineWithSlot(21n)
    const replaced = await source.advanceTo(replacedAt)
    await anvilRpc(anvil.url, 'evm_revert', [snapshot])
    await mineWithSlot(22n)
    await mineWithSlot(23n)
    const top = await mineWithSlot(24n)
    const events = record(source)
    const before = source.stats()
    await source.advanceTo(top)
    const after = source.stats()
    // the head's header, then blocks top-1 and top-2 in one batch; their parent links lead to the ancestor
    expect(after.httpRequests - before.httpRequests).toBe(2)
    expect(after.callsByMethod.eth_getBlockByNumber - before.callsByMethod.eth_getBlockByNumber).toBe(3)
    expect(events[0]).toEqual({ reorg: { commonAncestor: { number: base.number, hash: base.hash }, dropped: [{ number: replaced.number, hash: replaced.hash }], newHead: source.head } })
    expect(await source.latest().getStorage(CONTRACT, 0n)).toBe(24n)
  })
})

describe('a reorg deeper than maxReorgDepth', () => {
  it('is reported without a common ancestor, and every cached state entry is dropped', async () => {
    const source = await open({ maxReorgDepth: 1 })
    for (let i = 0; i < 3; i++) {
      await anvilRpc(anvil.url, 'evm_mine')
      await source.advanceTo((await anvilHead()).number)
      await source.latest().getStorage(CONTRACT, 0n)
    }
    expect(source.stats().stateEntries).toBe(3)
    const events = record(source)
    await anvilRpc(anvil.url, 'anvil_reorg', [3, []])
    await source.advanceTo((await anvilHead()).number)
    const reorg = events.find((e): e is { reorg: ChainReorg } => 'reorg' in e)?.reorg
    expect(reorg?.commonAncestor).toBeUndefined()
    expect(reorg?.dropped.length).toBeGreaterThanOrEqual(3)
    // the warm-up re-read the one recently read slot at the new head: nothing else survived
    expect(source.stats().stateEntries).toBe(1)
  })
})
