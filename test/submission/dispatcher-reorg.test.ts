/**
 * The dispatcher hears reorgs (HeadSource.onReorg, as the fork source tells them): a submission it
 * saw included in a replaced block is re-opened and sent again in the same lifecycle; an open one
 * sent for a replaced block is planned and sent again for it; a reorg below everything it knows
 * changes nothing. A fake head source (ManualHeads.reorg), a real outbox and a recording relay.
 */
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { isFinished, summarizeLifecycle } from '../../src/submission/lifecycle.ts'
import { Dispatcher, OutboxStore, RelayClient, SearcherKey, type LifecycleEvent, type SubmissionId } from '../../src/submission/index.ts'
import type { Hex } from '../../src/chain/types.ts'
import { CHAIN_ID, FixedPlanner, ManualHeads, ManualInclusion, SEARCHER_KEY_HEX, sentTxs, simulator, startRelay, dirPerTest, userTx, type RecordingRelay } from './helpers.ts'

const dir = dirPerTest('dispatch-reorg-')
const cleanups = dir.cleanups

interface Harness {
  store: OutboxStore
  dispatcher: Dispatcher
  heads: ManualHeads
  inclusion: ManualInclusion
  relay: RecordingRelay
  events(id: SubmissionId): Promise<LifecycleEvent[]>
  /** the user's own bundles (one tx) sent for `block` */
  userSends(block: bigint): number
  /** the backrun bundles (user tx + backrun) sent for `block` */
  backrunSends(block: bigint): number
}

async function harness(head: bigint): Promise<Harness> {
  const store = new OutboxStore(join(dir.path, 'data'), { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 2 } })
  await store.open()
  cleanups.push(() => store.close())
  const relay = await startRelay()
  cleanups.push(() => relay.close())
  const heads = new ManualHeads(head)
  const inclusion = new ManualInclusion()
  const dispatcher = new Dispatcher({
    store,
    relays: [new RelayClient({ name: 'a', url: relay.url, maxAttempts: 2, backoff: { baseMs: 5, maxMs: 20 } }, SearcherKey.fromHex(SEARCHER_KEY_HEX), { random: () => 1 })],
    heads,
    inclusion,
    planner: new FixedPlanner('backrun'),
    simulate: simulator(),
    decode: { chainId: CHAIN_ID },
  })
  cleanups.push(() => dispatcher.stop())
  await dispatcher.start()
  const sends = (block: bigint, txs: number) => relay.requests.filter((r) => r.params.blockNumber === `0x${block.toString(16)}` && sentTxs(r).length === txs).length
  return {
    store,
    dispatcher,
    heads,
    inclusion,
    relay,
    events: async (id) => (await store.get(id))?.events ?? [],
    userSends: (block) => sends(block, 1),
    backrunSends: (block) => sends(block, 2),
  }
}

/** accepts one private tx at the current head and waits until it was sent */
async function submit(h: Harness, nonce: number): Promise<{ id: SubmissionId; hash: Hex }> {
  const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(nonce) })
  await h.dispatcher.whenIdle()
  return { id: record.id, hash: record.txHashes[0] }
}

/** the next head, and the dispatcher done with it */
async function head(h: Harness, number: bigint): Promise<void> {
  h.heads.emit(number)
  await h.dispatcher.whenIdle()
}

describe('the dispatcher and reorgs', () => {
  it('a submission included in block N, N replaced by a block without it: re-opened, planned and sent again, then included, in one lifecycle', async () => {
    const h = await harness(100n)
    const { id, hash } = await submit(h, 0)
    expect([h.userSends(101n), h.backrunSends(101n)]).toEqual([1, 1])
    h.inclusion.include(hash, 101n)
    await head(h, 101n)
    expect(summarizeLifecycle(await h.events(id)).outcome).toMatchObject({ type: 'included', block: 101n })
    expect(await h.store.listUndelivered()).toEqual([])

    // block 101 is replaced by a 101 that does not hold it
    h.inclusion.included.delete(hash)
    h.heads.reorg(100n, 101n)
    await h.dispatcher.whenIdle()
    const events = await h.events(id)
    const reorg = events.find((e) => e.type === 'reorg')
    expect(reorg).toMatchObject({ type: 'reorg', commonAncestor: 100n, dropped: [101n], newHead: 101n, includedBlock: 101n })
    expect(isFinished(events)).toBe(false)
    expect((await h.store.listUndelivered()).map((s) => s.record.id)).toEqual([id])
    expect(summarizeLifecycle(events).stage).toBe('dispatching')
    // sent again for the block after the new head, its backrun planned on the new head
    expect([h.userSends(102n), h.backrunSends(102n)]).toEqual([1, 1])
    expect(h.dispatcher.stats()).toMatchObject({ active: 1, head: 101n })

    h.inclusion.include(hash, 102n)
    await head(h, 102n)
    const after = await h.events(id)
    expect(summarizeLifecycle(after).outcome).toMatchObject({ type: 'included', block: 102n })
    expect(isFinished(after)).toBe(true)
    expect(after.map((e) => e.type).filter((t) => t === 'included' || t === 'reorg')).toEqual(['included', 'reorg', 'included'])
    expect(await h.store.listUndelivered()).toEqual([])
  })

  it('a reorg that replaces no block it knows of changes nothing: an earlier inclusion stands, nothing is sent', async () => {
    const h = await harness(100n)
    const { id, hash } = await submit(h, 1)
    h.inclusion.include(hash, 101n)
    await head(h, 101n)
    await head(h, 102n)
    await head(h, 103n)
    const before = await h.events(id)
    const sent = h.relay.requests.length

    h.heads.reorg(102n, 103n) // block 103 replaced; the submission landed in 101
    await h.dispatcher.whenIdle()
    expect(await h.events(id)).toEqual(before)
    expect(await h.store.listUndelivered()).toEqual([])
    expect(h.relay.requests.length).toBe(sent)
    expect(h.dispatcher.stats()).toMatchObject({ active: 0, head: 103n })
  })

  it('an open submission sent for a replaced block records the reorg and is planned and sent again for it', async () => {
    const h = await harness(100n)
    const { id } = await submit(h, 2)
    await head(h, 101n)
    expect([h.userSends(102n), h.backrunSends(102n)]).toEqual([1, 1])

    // 101 replaced at the same height: block 102 is built on another state, so the backrun planned on the old 101 is planned again
    h.heads.reorg(100n, 101n)
    await h.dispatcher.whenIdle()
    const events = await h.events(id)
    expect(events.filter((e) => e.type === 'reorg')).toEqual([expect.objectContaining({ commonAncestor: 100n, dropped: [101n], newHead: 101n })])
    expect(events.find((e) => e.type === 'reorg')).not.toHaveProperty('includedBlock')
    expect([h.userSends(102n), h.backrunSends(102n)]).toEqual([2, 2])
    // backruns planned for 102: before and after the reorg
    expect(events.filter((e) => e.type === 'backrun' && e.block === 102n)).toHaveLength(2)
  })

  it('a shorter chain: the new head is lower, the submission included above it is re-opened and sent for the block after it', async () => {
    const h = await harness(100n)
    const { id, hash } = await submit(h, 3)
    await head(h, 101n)
    await head(h, 102n)
    h.inclusion.include(hash, 103n)
    await head(h, 103n)
    expect(summarizeLifecycle(await h.events(id)).outcome).toMatchObject({ type: 'included', block: 103n })
    expect(h.userSends(103n)).toBe(1)

    // 102 and 103 replaced by a chain whose head is 102
    h.inclusion.included.delete(hash)
    h.heads.reorg(101n, 102n)
    await h.dispatcher.whenIdle()
    expect(h.dispatcher.stats().head).toBe(102n)
    expect((await h.events(id)).find((e) => e.type === 'reorg')).toMatchObject({ commonAncestor: 101n, dropped: [102n, 103n], newHead: 102n, includedBlock: 103n })
    expect(h.userSends(103n)).toBe(2)

    h.inclusion.include(hash, 103n)
    await head(h, 103n)
    expect(summarizeLifecycle(await h.events(id)).outcome).toMatchObject({ type: 'included', block: 103n })
    expect(await h.store.listUndelivered()).toEqual([])
  })

  it('a re-opened submission is resumed after a restart like any open one', async () => {
    const h = await harness(100n)
    const { id, hash } = await submit(h, 4)
    h.inclusion.include(hash, 101n)
    await head(h, 101n)
    h.inclusion.included.delete(hash)
    h.heads.reorg(100n, 101n)
    await h.dispatcher.whenIdle()
    await h.dispatcher.stop()
    expect(h.heads.listenerCount() + h.heads.reorgListenerCount()).toBe(0)

    const again = new Dispatcher({
      store: h.store,
      relays: [new RelayClient({ name: 'a', url: h.relay.url, maxAttempts: 2, backoff: { baseMs: 5, maxMs: 20 } }, SearcherKey.fromHex(SEARCHER_KEY_HEX), { random: () => 1 })],
      heads: h.heads,
      inclusion: h.inclusion,
      planner: new FixedPlanner('none'),
      simulate: simulator(),
      decode: { chainId: CHAIN_ID },
    })
    cleanups.push(() => again.stop())
    await again.start()
    await again.whenIdle()
    expect(again.stats().active).toBe(1)
    h.inclusion.include(hash, 102n)
    h.heads.emit(102n)
    await again.whenIdle()
    expect(summarizeLifecycle(await h.events(id)).outcome).toMatchObject({ type: 'included', block: 102n })
  })
})
