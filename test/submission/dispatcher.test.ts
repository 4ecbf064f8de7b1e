import { join } from 'node:path'

import { keccak256, toBytes, verifyMessage } from 'viem'
import { describe, expect, it } from 'vitest'

import type { Address, Hex } from '../../src/chain/types.ts'
import { bundleHash } from '../../src/tx/bundle-hash.ts'
import {
  Dispatcher,
  OutboxStore,
  type BackrunPlan,
  type BackrunPlanInput,
  type BackrunPlanner,
  type SubmissionSimulator,
  PersistenceError,
  RelayClient,
  SearcherKey,
  summarizeLifecycle,
  type BackoffPolicy,
  type DispatcherOptions,
  type HashReferenceStyle,
  type LifecycleEvent,
  type SubmissionId,
} from '../../src/submission/index.ts'
import {
  CHAIN_ID,
  FixedPlanner,
  ManualHeads,
  BlockReadingInclusion,
  ManualInclusion,
  SEARCHER_KEY_HEX,
  sentTxs,
  simulator,
  startRelay,
  dirPerTest,
  until,
  userTx,
  type RecordingRelay,
  type RelayBehaviour,
} from './helpers.ts'

const key = SearcherKey.fromHex(SEARCHER_KEY_HEX)

interface RelaySpec {
  name: string
  behaviour?: RelayBehaviour
  hashReference?: HashReferenceStyle
  maxAttempts?: number
  backoff?: BackoffPolicy
  bundleStats?: boolean
}

interface Harness {
  store: OutboxStore
  dispatcher: Dispatcher
  heads: ManualHeads
  inclusion: ManualInclusion
  planner: FixedPlanner
  relays: Record<string, RecordingRelay>
  events(id: SubmissionId): Promise<LifecycleEvent[]>
}

const dir = dirPerTest('dispatch-')
const cleanups = dir.cleanups

async function openStore(): Promise<OutboxStore> {
  const store = new OutboxStore(join(dir.path, 'data'), { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 2 } })
  await store.open()
  cleanups.push(() => store.close())
  return store
}

async function startRelays(specs: readonly RelaySpec[]): Promise<Record<string, RecordingRelay>> {
  const out: Record<string, RecordingRelay> = {}
  for (const spec of specs) {
    const relay = await startRelay(spec.behaviour)
    cleanups.push(() => relay.close())
    out[spec.name] = relay
  }
  return out
}

async function harness(options: {
  relays: readonly RelaySpec[]
  recording?: Record<string, RecordingRelay>
  store?: OutboxStore
  planner?: FixedPlanner
  head?: bigint
  heads?: ManualHeads
  inclusion?: ManualInclusion
  dispatcher?: Partial<DispatcherOptions>
}): Promise<Harness> {
  const store = options.store ?? (await openStore())
  const recording = options.recording ?? (await startRelays(options.relays))
  const heads = options.heads ?? new ManualHeads(options.head ?? 100n)
  const inclusion = options.inclusion ?? new ManualInclusion()
  const planner = options.planner ?? new FixedPlanner('backrun')
  const dispatcher = new Dispatcher({
    store,
    relays: options.relays.map(
      (spec) =>
        new RelayClient(
          { name: spec.name, url: recording[spec.name].url, hashReference: spec.hashReference, bundleStats: spec.bundleStats, maxAttempts: spec.maxAttempts ?? 4, backoff: spec.backoff ?? { baseMs: 5, maxMs: 20 } },
          key,
          { random: () => 1 },
        ),
    ),
    heads,
    inclusion,
    planner,
    simulate: simulator(),
    decode: { chainId: CHAIN_ID },
    ...options.dispatcher,
  })
  cleanups.push(() => dispatcher.stop())
  await dispatcher.start()
  return {
    store,
    dispatcher,
    heads,
    inclusion,
    planner,
    relays: recording,
    events: async (id) => (await store.get(id))?.events ?? [],
  }
}

async function verifySignature(body: string, header: string | string[] | undefined): Promise<boolean> {
  const [address, signature] = String(header).split(':')
  return verifyMessage({ address: address as Address, message: keccak256(toBytes(body)), signature: signature as Hex })
}

describe('Dispatcher: private transactions', () => {
  it('does not decode again what it accepted (its caller decoded it with the same rules); a submission resumed from the store is checked once', async () => {
    const store = await openStore()
    const resumed = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(1, '0x38ed1739') })
    // rules under which these chain-1 transactions do not decode: only a check would see it
    const h = await harness({ relays: [{ name: 'a' }], store, dispatcher: { decode: { chainId: 5n } } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0, '0x38ed1739') })
    await h.dispatcher.whenIdle()
    const checked = (events: readonly LifecycleEvent[]): boolean => events.some((e) => e.type === 'simulated' && e.error === 'the stored transactions no longer decode')
    expect(checked(await h.events(resumed.record.id))).toBe(true)
    expect(checked(await h.events(record.id))).toBe(false)
  })

  it('sends [user tx, backrun] and the backrun-free [user tx] to every relay for the next block, signed, bytes unchanged, and records each relay', async () => {
    const h = await harness({ relays: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] })
    const raw = await userTx(0, '0x38ed1739')
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.dispatcher.whenIdle()

    const events = await h.events(record.id)
    const backrun = events.find((e) => e.type === 'backrun')
    expect(backrun).toMatchObject({ block: 101n })
    for (const name of ['a', 'b', 'c']) {
      const relay = h.relays[name]
      expect(relay.requests).toHaveLength(2)
      const withBackrun = relay.requests.find((r) => sentTxs(r).length === 2)
      const alone = relay.requests.find((r) => sentTxs(r).length === 1)
      expect(sentTxs(withBackrun!)).toEqual([raw, backrun?.type === 'backrun' ? backrun.rawTx : ''])
      expect(sentTxs(alone!)).toEqual([raw])
      for (const req of relay.requests) {
        expect(Buffer.from(sentTxs(req)[0].slice(2), 'hex')).toEqual(Buffer.from(raw.slice(2), 'hex'))
        expect(req.params.blockNumber).toBe('0x65') // head 100 + 1
        // the backrun is never allowed to revert: its bundle fails instead, and the user's own bundle lands
        expect(req.params.revertingTxHashes).toBeUndefined()
        expect(await verifySignature(req.body, req.headers['x-flashbots-signature'])).toBe(true)
      }
    }

    // the user's own bundle is announced right after the simulation, before any planning
    expect(events.slice(0, 6).map((e) => e.type)).toEqual(['received', 'targeting', 'simulated', 'relay-sending', 'relay-sending', 'relay-sending'])
    const count = (type: string) => events.filter((e) => e.type === type).length
    expect([count('backrun'), count('relay-sending'), count('relay-result')]).toEqual([1, 6, 6])
    const sending = events.filter((e) => e.type === 'relay-sending')
    expect(sending.map((e) => (e.type === 'relay-sending' ? `${e.part}:${e.bundleHash}` : ''))).toEqual([
      ...Array(3).fill(`user:${bundleHash([record.hash])}`),
      ...Array(3).fill(`backrun:${bundleHash([record.hash, backrun?.type === 'backrun' ? backrun.txHash : '0x'])}`),
    ])
    const summary = summarizeLifecycle(events)
    expect(summary.targeting).toMatchObject({ firstBlock: 101n, lastBlock: 125n, relays: ['a', 'b', 'c'] })
    for (const name of ['a', 'b', 'c']) expect(summary.relays.get(name)).toMatchObject({ state: 'accepted', attempts: 2, acceptedBlocks: 1, blocks: [101n] })
    expect(h.planner.calls[0].userTxs[0].hash).toBe(record.hash)
    expect(h.planner.calls[0].targetBlock).toBe(101n)
  })

  it("the user's own bundle goes out before the backrun is planned: a slow planner never holds it back", async () => {
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('slow'), dispatcher: { prepareTimeoutMs: 500 } })
    const raw = await userTx(67)
    await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.relays.a.waitFor(1, 400)
    expect(sentTxs(h.relays.a.requests[0])).toEqual([raw])
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests).toHaveLength(1)
  })

  it('a relay that fails its first attempts is retried while the other relays get the bundle at once', async () => {
    const retryDelay = 300
    const h = await harness({
      relays: [{ name: 'good1' }, { name: 'flaky', behaviour: { failFirst: 2, failStatus: 503 }, backoff: { baseMs: retryDelay, maxMs: retryDelay } }, { name: 'good2' }],
      planner: new FixedPlanner('none'),
    })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(1) })
    await h.dispatcher.whenIdle()

    const flaky = h.relays.flaky.requests
    expect(flaky).toHaveLength(3)
    expect(flaky.map((r) => r.failed)).toEqual([true, true, false])
    const firstFlaky = flaky[0].at
    for (const name of ['good1', 'good2']) {
      expect(h.relays[name].requests).toHaveLength(1)
      // not held back by the flaky relay's retries
      expect(h.relays[name].requests[0].at).toBeLessThan(firstFlaky + retryDelay / 2)
    }
    expect(flaky[2].at - flaky[0].at).toBeGreaterThanOrEqual(2 * retryDelay - 10)

    const events = await h.events(record.id)
    const results = events.filter((e) => e.type === 'relay-result')
    // the good relays' results are on disk before the flaky relay's
    expect(results.map((e) => (e.type === 'relay-result' ? e.relay : '')).at(-1)).toBe('flaky')
    const summary = summarizeLifecycle(events)
    expect(summary.relays.get('flaky')).toMatchObject({ state: 'accepted', attempts: 3 })
    expect(summary.relays.get('good1')).toMatchObject({ state: 'accepted', attempts: 1 })
  })

  it('records a relay that never accepts, with its attempts and last error, and still delivers elsewhere', async () => {
    const h = await harness({ relays: [{ name: 'down', behaviour: { failFirst: 1_000, failStatus: 502 }, maxAttempts: 3 }, { name: 'up' }], planner: new FixedPlanner('none') })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(2) })
    await h.dispatcher.whenIdle()
    const summary = summarizeLifecycle(await h.events(record.id))
    expect(summary.relays.get('down')).toMatchObject({ state: 'failed', attempts: 3 })
    expect(summary.relays.get('down')?.lastError).toMatch(/HTTP 502/)
    expect(summary.relays.get('up')).toMatchObject({ state: 'accepted', attempts: 1 })
  })

  it('re-sends for every new block, re-planned on each head, until the inclusion checker reports it, then stops', async () => {
    const h = await harness({ relays: [{ name: 'a' }] })
    const raw = await userTx(3)
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    h.inclusion.include(record.hash, 102n)
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    h.heads.emit(103n)
    await h.dispatcher.whenIdle()

    expect(h.relays.a.requests.map((r) => r.params.blockNumber)).toEqual(['0x65', '0x65', '0x66', '0x66'])
    // a new backrun every block (planned on that head, signed afresh), the user's bytes unchanged
    const backruns = h.relays.a.requests.filter((r) => sentTxs(r).length === 2).map((r) => sentTxs(r)[1])
    expect(new Set(backruns).size).toBe(2)
    expect(h.relays.a.requests.every((r) => sentTxs(r)[0] === raw)).toBe(true)
    expect(h.planner.calls.map((c) => c.targetBlock)).toEqual([101n, 102n])
    const events = await h.events(record.id)
    expect(events.filter((e) => e.type === 'backrun').map((e) => (e.type === 'backrun' ? e.block : 0n))).toEqual([101n, 102n])
    const summary = summarizeLifecycle(events)
    expect(summary.outcome).toMatchObject({ type: 'included', block: 102n, backrunIncluded: false })
    expect(await h.store.listUndelivered()).toEqual([])
    expect(h.dispatcher.stats().active).toBe(0)
  })

  it('with a checker that reads blocks: one block read per head and receipts only for what was found there', async () => {
    const inclusion = new BlockReadingInclusion()
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion })
    const raws = await Promise.all([81, 82, 83].map((n) => userTx(n)))
    const records = []
    for (const rawTx of raws) records.push((await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })).record)
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    // block 101 holds none of them: no receipt was asked for
    expect(inclusion.queries).toHaveLength(0)
    expect(inclusion.blockReads).toContain(101n)
    inclusion.include(records[1].hash, 102n)
    const readsBefore = inclusion.blockReads.length
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    // block 102 read once (with at most 3 older blocks of the window not read yet); the receipt
    // asked for the one submission found in it
    const reads = inclusion.blockReads.slice(readsBefore)
    expect(reads[0]).toBe(102n)
    expect(reads.filter((n) => n === 102n)).toHaveLength(1)
    expect(reads.length).toBeLessThanOrEqual(4)
    expect(inclusion.queries.map((q) => q.id)).toEqual([records[1].id])
    expect(summarizeLifecycle(await h.events(records[1].id)).outcome).toMatchObject({ type: 'included', block: 102n })
    expect(h.dispatcher.stats().active).toBe(2)
  })

  it('heads that carry their tx hashes: no block read and no receipt request for what is not on chain', async () => {
    const inclusion = new BlockReadingInclusion()
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion, heads: new ManualHeads(100n) })
    const raws = await Promise.all([86, 87].map((n) => userTx(n)))
    const records = []
    for (const rawTx of raws) records.push((await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })).record)
    await h.dispatcher.whenIdle()
    const readsBefore = inclusion.blockReads.length
    h.heads.emit(101n, [])
    await h.dispatcher.whenIdle()
    inclusion.include(records[0].hash, 102n)
    h.heads.emit(102n, [records[0].hash])
    await h.dispatcher.whenIdle()
    // the heads' own hashes were used; reads only went to the older blocks of the window not indexed yet
    expect(inclusion.blockReads.slice(readsBefore)).not.toContain(101n)
    expect(inclusion.blockReads.slice(readsBefore)).not.toContain(102n)
    expect(inclusion.queries.map((q) => q.id)).toEqual([records[0].id])
    expect(summarizeLifecycle(await h.events(records[0].id)).outcome).toMatchObject({ type: 'included', block: 102n })
    expect(h.dispatcher.stats().active).toBe(1)
  })

  it('a head with more hashes than the index holds (maxIndexedHashes): its submissions are checked by receipt', async () => {
    const inclusion = new BlockReadingInclusion()
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion, heads: new ManualHeads(100n), dispatcher: { maxIndexedHashes: 2 } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(85) })
    await h.dispatcher.whenIdle()
    const others = [1, 2, 3].map((n) => `0x${n.toString(16).padStart(64, '0')}` as Hex)
    // the node has them too: the index's read of the block it could not hold finds the same three
    for (const other of others) inclusion.include(other, 101n)
    h.heads.emit(101n, others)
    await h.dispatcher.whenIdle()
    // three hashes, room for two: block 101 is a gap, so the receipt is asked for (with it indexed, none would be)
    expect(inclusion.queries.map((q) => q.id)).toEqual([record.id])
    inclusion.include(record.hash, 102n)
    h.heads.emit(102n, [record.hash])
    await h.dispatcher.whenIdle()
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'included', block: 102n })
  })

  it('a block the index could not read: its submissions are checked by receipt, and land all the same', async () => {
    const inclusion = new BlockReadingInclusion()
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(84) })
    await h.dispatcher.whenIdle()
    inclusion.failing.add(101n)
    inclusion.include(record.hash, 101n)
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(inclusion.queries.map((q) => q.id)).toEqual([record.id])
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'included', block: 101n })
  })

  it('a head re-announced at the same height (a reorg) is read again: a tx in the replacing block is found', async () => {
    const inclusion = new BlockReadingInclusion()
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(85) })
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(inclusion.queries).toHaveLength(0)
    inclusion.include(record.hash, 101n)
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    // found through the index (block 101 as read the second time), not by a receipt sweep
    expect(inclusion.blockReads.filter((n) => n === 101n)).toHaveLength(2)
    expect(inclusion.queries.map((q) => q.id)).toEqual([record.id])
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'included', block: 101n })
  })

  it('simulations and plans get the stored bytes (rawTxs) at every head; userTxs decodes them only when read, to the same txs', async () => {
    const simulated: Array<{ raw: readonly Hex[] | undefined; read: () => readonly Hex[] }> = []
    const simulate: SubmissionSimulator = async (input) => {
      simulated.push({ raw: input.rawTxs, read: () => input.userTxs.map((tx) => tx.rawHex) })
      return { success: true }
    }
    const h = await harness({ relays: [{ name: 'a' }], dispatcher: { simulate } })
    const rawTx = await userTx(75)
    await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(simulated).toHaveLength(2)
    expect(h.planner.calls).toHaveLength(2)
    for (const input of [...simulated.map((s) => s.raw), ...h.planner.calls.map((c) => c.rawTxs)]) expect(input).toEqual([rawTx.toLowerCase()])
    // read after the fact: the decode is made on demand, and is the stored tx
    expect(simulated[1].read()).toEqual([rawTx.toLowerCase()])
    expect(h.planner.calls[1].userTxs.map((tx) => tx.hash)).toEqual([keccak256(rawTx)])
  })

  it("a submission's first simulation is not marked again (its user's bundle waits for it); its re-simulations at later heads are, so a pool may run them as background work", async () => {
    const again: Array<boolean | undefined> = []
    const simulate: SubmissionSimulator = async (input) => {
      again.push(input.again)
      return { success: true }
    }
    const h = await harness({ relays: [{ name: 'a' }], dispatcher: { simulate } })
    await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(76) })
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    expect(again).toEqual([false, true, true])
  })

  it('plans at most maxPlansPerBlock backruns per block; the others go out with their own bundle and say why', async () => {
    const h = await harness({ relays: [{ name: 'a' }], dispatcher: { maxPlansPerBlock: 1 } })
    const raws = await Promise.all([68, 69].map((n) => userTx(n)))
    const records = []
    for (const rawTx of raws) records.push((await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })).record)
    await h.dispatcher.whenIdle()
    expect(h.planner.calls).toHaveLength(1)
    // both users' own bundles went out; one backrun bundle
    expect(h.relays.a.requests.filter((r) => sentTxs(r).length === 1).map((r) => sentTxs(r)[0]).sort()).toEqual([...raws].sort())
    expect(h.relays.a.requests.filter((r) => sentTxs(r).length === 2)).toHaveLength(1)
    const reasons = await Promise.all(records.map(async (r) => summarizeLifecycle(await h.events(r.id)).noBackrunReason))
    expect(reasons.filter((r) => r !== undefined)).toEqual([expect.stringMatching(/planning budget of block 101 \(1 plans\) is spent/)])
    // the next head: the one with a backrun is planned first and keeps the budget
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(h.planner.calls.map((c) => c.id)).toEqual([h.planner.calls[0].id, h.planner.calls[0].id])
    // completed plans are counted (dispatcher_backrun_plans_total); the budget's refusals are not
    expect(h.dispatcher.stats().plans).toBe(2)
  })

  it('re-simulates and re-sends at most maxSimulationsPerBlock open submissions per block; new ones always go out', async () => {
    let calls = 0
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { maxSimulationsPerBlock: 1, simulate: async () => (calls++, { success: true }) } })
    const raws = await Promise.all([72, 73, 74].map((n) => userTx(n)))
    for (const rawTx of raws) await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })
    await h.dispatcher.whenIdle()
    // new submissions are always simulated once
    expect(calls).toBe(3)
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(calls).toBe(4)
    // every user's own bundle went out for its first block; re-sends are bounded the same way:
    // one for block 0x66, the two others skip it (counted) and go out again at the next head
    expect(h.relays.a.requests.map((r) => r.params.blockNumber).sort()).toEqual(['0x65', '0x65', '0x65', '0x66'])
    expect(h.dispatcher.stats().resendsSkipped).toBe(2)
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.filter((r) => r.params.blockNumber === '0x67')).toHaveLength(1)
    expect(h.dispatcher.stats()).toMatchObject({ active: 3, resendsSkipped: 4 })
    // completed simulations are counted (dispatcher_simulations_total)
    expect(h.dispatcher.stats().simulations).toBe(calls)
  })

  it('a submission past its last block expires at once, not behind a queue of inclusion checks', async () => {
    let calls = 0
    const slow = { check: async () => (calls++, await new Promise((r) => setTimeout(r, 100)), { status: 'pending' as const }) }
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), inclusion: slow as never, dispatcher: { expiryBlocks: 1, inclusionConcurrency: 1 } })
    const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => userTx(80 + i)))
    const ids: SubmissionId[] = []
    for (const rawTx of raws) ids.push((await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })).record.id)
    await h.dispatcher.whenIdle()
    // block 101 was their only block: at head 101 each is settled with one direct check, in parallel
    const started = Date.now()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(Date.now() - started).toBeLessThan(20 * 100)
    for (const id of ids) expect(summarizeLifecycle(await h.events(id)).outcome).toMatchObject({ type: 'expired', lastBlock: 101n })
    expect(calls).toBe(20)
  })

  it('two backruns moving the same pool in one block: only the first planned goes out; the other user goes alone, told why, and its key is released', async () => {
    const pool = '0x00000000000000000000000000000000000000aa' as Address
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('backrun', 1n, [pool]), dispatcher: { prepareConcurrency: 1 } })
    const raws = await Promise.all([70, 71].map((n) => userTx(n)))
    const ids: SubmissionId[] = []
    for (const rawTx of raws) ids.push((await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })).record.id)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.filter((r) => sentTxs(r).length === 2)).toHaveLength(1)
    expect(h.relays.a.requests.filter((r) => sentTxs(r).length === 1)).toHaveLength(2)
    const summaries = await Promise.all(ids.map(async (id) => summarizeLifecycle(await h.events(id))))
    const loser = summaries.findIndex((s) => s.backrun === null)
    expect(summaries[loser].noBackrunReason).toMatch(new RegExp(`its pools are moved by the backrun bundle of ${ids[1 - loser].replace(/[:.]/g, '\\$&')} for block 101 \\(pool ${pool}\\)`))
    expect(h.planner.released).toEqual([{ id: ids[loser], block: 101n }])
  })

  it('records what the relay says became of each bundle for the block just built', async () => {
    const stats = (p: { bundleHash: string; blockNumber: string }) =>
      p.bundleHash === ownHash ? { status: 'outbid', reason: `conflicts with bundle X on tx ${userHash}` } : { status: 'invalid', reason: 'tx 1 cannot be included: nonce too low' }
    let ownHash = ''
    let userHash = ''
    const h = await harness({ relays: [{ name: 'a', bundleStats: true, behaviour: { bundleStats: (p) => stats(p) } }, { name: 'quiet' }] })
    const raw = await userTx(61)
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    userHash = record.hash
    ownHash = bundleHash([record.hash])
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    const outcomes = (await h.events(record.id)).filter((e) => e.type === 'bundle-outcome')
    expect(outcomes).toHaveLength(2)
    expect(outcomes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ relay: 'a', block: 101n, role: 'user', bundleHash: ownHash, status: 'outbid' }),
        expect.objectContaining({ relay: 'a', block: 101n, role: 'backrun', status: 'invalid', reason: 'tx 1 cannot be included: nonce too low' }),
      ]),
    )
    // the relay without bundleStats was never asked
    expect(h.relays.quiet.requests.every((r) => r.method === 'eth_sendBundle')).toBe(true)
  })

  it('expires after the configured number of blocks', async () => {
    const h = await harness({ relays: [{ name: 'a' }], dispatcher: { expiryBlocks: 3 }, planner: new FixedPlanner('none') })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(4) })
    await h.dispatcher.whenIdle()
    for (const n of [101n, 102n, 103n, 104n]) {
      h.heads.emit(n)
      await h.dispatcher.whenIdle()
    }
    expect(h.relays.a.requests.map((r) => r.params.blockNumber)).toEqual(['0x65', '0x66', '0x67'])
    const summary = summarizeLifecycle(await h.events(record.id))
    expect(summary.outcome).toMatchObject({ type: 'expired', lastBlock: 103n })
    expect(await h.store.listUndelivered()).toEqual([])
  })

  it('finishes as dropped when the inclusion checker says it can never land', async () => {
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none') })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(5) })
    await h.dispatcher.whenIdle()
    h.inclusion.dropped.set(record.hash, 'nonce already used')
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'dropped', reason: 'nonce already used' })
    expect(h.relays.a.requests).toHaveLength(1)
  })

  it('forwards the user tx alone when the planner fails or finds nothing, and records why', async () => {
    for (const mode of ['throw', 'none', 'slow'] as const) {
      const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner(mode), dispatcher: { prepareTimeoutMs: 100 } })
      const raw = await userTx(6)
      const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
      await h.dispatcher.whenIdle()
      expect(sentTxs(h.relays.a.requests[0])).toEqual([raw])
      expect(h.relays.a.requests[0].params.revertingTxHashes).toBeUndefined()
      const summary = summarizeLifecycle(await h.events(record.id))
      expect(summary.backrun).toBeNull()
      expect(summary.noBackrunReason).toMatch(mode === 'none' ? /no profitable/ : mode === 'slow' ? /longer than 100 ms/ : /planner exploded/)
      await h.dispatcher.stop()
      await h.store.close()
      await dir.renew()
    }
  })

  it('a user tx that reverts is not sent: it ends as dropped with the revert reason', async () => {
    const h = await harness({
      relays: [{ name: 'a' }],
      dispatcher: { simulate: simulator({ success: false, revertReason: 'UniswapV2Router: EXPIRED', failedTxIndex: 0, gasUsed: 25_000n }) },
    })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(7) })
    await h.dispatcher.whenIdle()
    const summary = summarizeLifecycle(await h.events(record.id))
    expect(summary.simulation).toMatchObject({ success: false, revertReason: 'UniswapV2Router: EXPIRED', gasUsed: 25_000n })
    expect(summary.outcome).toMatchObject({ type: 'dropped', reason: expect.stringMatching(/reverts on the state of block 100 \(UniswapV2Router: EXPIRED\)/) })
    expect(h.relays.a.requests).toHaveLength(0)
    expect(await h.store.listUndelivered()).toEqual([])
  })

  it('a tx that starts reverting after other blocks landed ends then, with the reason, instead of being re-sent until expiry', async () => {
    let report: { success: boolean; revertReason?: string; failedTxIndex?: number } = { success: true }
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { simulate: async () => report } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(62) })
    await h.dispatcher.whenIdle()
    report = { success: false, revertReason: 'UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT', failedTxIndex: 0 }
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.map((r) => r.params.blockNumber)).toEqual(['0x65'])
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'dropped', reason: expect.stringMatching(/INSUFFICIENT_OUTPUT_AMOUNT/) })
  })

  it("a tx whose nonce is used (replaced by the sender's later tx) ends as dropped; one waiting for a predecessor keeps being sent", async () => {
    const used = { success: false, failedTxIndex: 0, revertReason: "not includable: the tx doesn't have the correct nonce. account has nonce of: 5 tx has nonce of: 4", rejection: 'nonce-used' as const }
    const gap = { success: false, failedTxIndex: 0, revertReason: "not includable: the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 4", rejection: 'nonce-gap' as const }
    let report: object = gap
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { simulate: async () => report as never } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(63) })
    await h.dispatcher.whenIdle()
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.map((r) => r.params.blockNumber)).toEqual(['0x65', '0x66'])
    report = used
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests).toHaveLength(2)
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'dropped', reason: expect.stringMatching(/its nonce is used/) })
  })

  it('a tx whose nonce is used because it landed by another path ends as included', async () => {
    const used = { success: false, failedTxIndex: 0, revertReason: 'not includable: nonce', rejection: 'nonce-used' as const }
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { simulate: async () => used } })
    const raw = await userTx(64)
    h.inclusion.include(keccak256(raw), 100n)
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.dispatcher.whenIdle()
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'included', block: 100n })
    expect(h.relays.a.requests).toHaveLength(0)
  })

  it('acknowledges nothing and sends nothing when the store cannot write', async () => {
    const h = await harness({ relays: [{ name: 'a' }] })
    await h.store.close()
    await expect(h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(8) })).rejects.toBeInstanceOf(PersistenceError)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests).toHaveLength(0)
    expect(h.dispatcher.stats()).toMatchObject({ active: 0, queued: 0 })
  })

  it('a duplicate submission is not dispatched twice', async () => {
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none') })
    const raw = await userTx(9)
    const first = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    const again = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    expect(again.created).toBe(false)
    expect(again.record.hash).toBe(first.record.hash)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests).toHaveLength(1)
  })

  it('delivers everything even when the in-memory queue overflows (re-read from the store)', async () => {
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { queueCapacity: 2, prepareConcurrency: 1 } })
    const raws = await Promise.all([10, 11, 12, 13, 14, 15, 16].map((n) => userTx(n)))
    for (const rawTx of raws) await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx })
    await until(() => h.relays.a.requests.length >= raws.length, 10_000, 'all submissions sent')
    await h.dispatcher.whenIdle()
    const sentUser = h.relays.a.requests.map((r) => sentTxs(r)[0]).sort()
    expect(sentUser).toEqual([...raws].sort())
  })
})

describe('Dispatcher: lifecycle of the dispatcher itself', () => {
  it('submissions accepted before start() are sent once it starts; stop() unsubscribes from heads', async () => {
    const store = await openStore()
    const recording = await startRelays([{ name: 'a' }])
    const heads = new ManualHeads(100n)
    const dispatcher = new Dispatcher({
      store,
      relays: [new RelayClient({ name: 'a', url: recording.a.url }, key)],
      heads,
      inclusion: new ManualInclusion(),
      planner: new FixedPlanner('none'),
      simulate: simulator(),
      decode: { chainId: CHAIN_ID },
    })
    cleanups.push(() => dispatcher.stop())
    const raw = await userTx(50)
    await dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await dispatcher.whenIdle()
    expect(recording.a.requests).toHaveLength(0) // no head known yet
    await dispatcher.start()
    await dispatcher.whenIdle()
    expect(recording.a.requests.map((r) => sentTxs(r))).toEqual([[raw]])
    expect(heads.listenerCount()).toBe(1)
    await dispatcher.stop()
    expect(heads.listenerCount()).toBe(0)
    heads.emit(101n)
    await dispatcher.whenIdle()
    expect(recording.a.requests).toHaveLength(1)
  })
})

describe('Dispatcher: bundles', () => {
  it('sends the partner txs in order, then the backrun, and the partner bundle alone, with the Flashbots options passed through', async () => {
    const h = await harness({ relays: [{ name: 'a' }, { name: 'b' }] })
    const approve = await userTx(20, '0x095ea7b3')
    const swap = await userTx(21, '0x38ed1739')
    const uuid = '2f1b1c57-6a5f-4cf0-9f53-0f2f1f7d2c11'
    const { record } = await h.dispatcher.accept({
      kind: 'bundle',
      partnerId: 'alpha',
      rawTxs: [approve, swap],
      options: { minTimestamp: 1_700_000_000n, maxTimestamp: 1_800_000_000n, revertingTxHashes: [keccak256(approve)], replacementUuid: uuid },
    })
    await h.dispatcher.whenIdle()
    const backrun = summarizeLifecycle(await h.events(record.id)).backrun
    expect(backrun).toBeTruthy()
    expect(h.planner.calls[0].userTxs.map((t) => t.hash)).toEqual([keccak256(approve), keccak256(swap)])
    for (const name of ['a', 'b']) {
      const withBackrun = h.relays[name].requests.find((r) => sentTxs(r).length === 3)!
      const alone = h.relays[name].requests.find((r) => sentTxs(r).length === 2)!
      expect(sentTxs(withBackrun)).toEqual([approve, swap, backrun?.rawTx])
      expect(withBackrun.params).toMatchObject({ blockNumber: '0x65', minTimestamp: 1_700_000_000, maxTimestamp: 1_800_000_000, revertingTxHashes: [keccak256(approve)] })
      // the uuid belongs to the partner's own bundle: on both, one would replace the other
      expect(withBackrun.params.replacementUuid).toBeUndefined()
      expect(sentTxs(alone)).toEqual([approve, swap])
      expect(alone.params).toMatchObject({
        blockNumber: '0x65',
        minTimestamp: 1_700_000_000,
        maxTimestamp: 1_800_000_000,
        revertingTxHashes: [keccak256(approve)],
        replacementUuid: uuid,
      })
    }
  })

  it('a bundle tx that reverts but is in revertingTxHashes is still sent', async () => {
    const h = await harness({
      relays: [{ name: 'a' }],
      planner: new FixedPlanner('none'),
      dispatcher: { simulate: simulator({ success: false, revertReason: 'approve failed', failedTxIndex: 0 }) },
    })
    const approve = await userTx(65, '0x095ea7b3')
    const swap = await userTx(66, '0x38ed1739')
    const { record } = await h.dispatcher.accept({ kind: 'bundle', partnerId: 'alpha', rawTxs: [approve, swap], options: { revertingTxHashes: [keccak256(approve)] } })
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.map((r) => sentTxs(r))).toEqual([[approve, swap]])
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toBeUndefined()
  })

  it('a bundle with a blockNumber is sent for that block only', async () => {
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none') })
    const { record } = await h.dispatcher.accept({ kind: 'bundle', partnerId: 'alpha', rawTxs: [await userTx(22)], options: { blockNumber: 102n } })
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests).toHaveLength(0) // head 100: block 101 is not its block
    h.heads.emit(101n)
    await h.dispatcher.whenIdle()
    h.heads.emit(102n)
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.map((r) => r.params.blockNumber)).toEqual(['0x66'])
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'expired', lastBlock: 102n })
  })
})

describe('Dispatcher: notify', () => {
  it('sends [hash, backrun] only to relays that accept hash references, never the notified tx itself', async () => {
    const h = await harness({ relays: [{ name: 'plain' }, { name: 'merkle', hashReference: 'eth_sendBundle' }, { name: 'share', hashReference: 'mev_sendBundle' }] })
    const raw = await userTx(30)
    const { record } = await h.dispatcher.accept({ kind: 'notify', partnerId: 'alpha', rawTx: raw })
    await h.dispatcher.whenIdle()
    const backrun = summarizeLifecycle(await h.events(record.id)).backrun
    expect(backrun).toBeTruthy()

    expect(h.relays.plain.requests).toHaveLength(0)
    expect(sentTxs(h.relays.merkle.requests[0])).toEqual([record.hash, backrun?.rawTx])
    expect(h.relays.share.requests[0].params.body).toEqual([{ hash: record.hash }, { tx: backrun?.rawTx, canRevert: false }])
    for (const relay of Object.values(h.relays)) for (const req of relay.requests) expect(req.body).not.toContain(raw.slice(2))
    expect(summarizeLifecycle(await h.events(record.id)).targeting?.relays).toEqual(['merkle', 'share'])
  })

  it('without a backrun a notification is dropped and nothing is sent', async () => {
    const h = await harness({ relays: [{ name: 'merkle', hashReference: 'eth_sendBundle' }], planner: new FixedPlanner('none') })
    const { record } = await h.dispatcher.accept({ kind: 'notify', partnerId: 'alpha', rawTx: await userTx(31) })
    await h.dispatcher.whenIdle()
    expect(h.relays.merkle.requests).toHaveLength(0)
    expect(summarizeLifecycle(await h.events(record.id)).outcome).toMatchObject({ type: 'dropped' })
    expect(await h.store.listUndelivered()).toEqual([])
  })

  it('is dropped at once when no relay accepts hash references', async () => {
    const h = await harness({ relays: [{ name: 'plain' }] })
    const { record } = await h.dispatcher.accept({ kind: 'notify', partnerId: 'alpha', rawTx: await userTx(32) })
    await h.dispatcher.whenIdle()
    expect(h.relays.plain.requests).toHaveLength(0)
    expect(h.planner.calls).toHaveLength(0)
    expect(summarizeLifecycle(await h.events(record.id)).outcome?.type).toBe('dropped')
  })
})

describe('Dispatcher: restart', () => {
  it('does not send or re-plan a block again after a restart, and goes on with the next block', async () => {
    const specs: RelaySpec[] = [{ name: 'a' }, { name: 'b' }]
    const recording = await startRelays(specs)
    const heads = new ManualHeads(100n)
    const store1 = new OutboxStore(join(dir.path, 'data'))
    await store1.open()
    const first = await harness({ relays: specs, recording, store: store1, heads })
    const raw = await userTx(40)
    const { record } = await first.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await first.dispatcher.whenIdle()
    await first.dispatcher.stop()
    await store1.close()
    expect(recording.a.requests).toHaveLength(2)

    const store2 = await openStore()
    const planner2 = new FixedPlanner('backrun')
    const second = await harness({ relays: specs, recording, store: store2, heads: new ManualHeads(100n), planner: planner2 })
    await second.dispatcher.whenIdle()
    // same head: block 101 was sent already
    expect(recording.a.requests).toHaveLength(2)
    expect(recording.b.requests).toHaveLength(2)
    expect(planner2.calls).toHaveLength(0)

    second.heads.emit(101n)
    await second.dispatcher.whenIdle()
    for (const relay of [recording.a, recording.b]) {
      expect(relay.requests.map((r) => r.params.blockNumber)).toEqual(['0x65', '0x65', '0x66', '0x66'])
      expect(relay.requests.slice(2).every((r) => sentTxs(r)[0] === raw)).toBe(true)
    }
    expect(planner2.calls.map((c) => c.targetBlock)).toEqual([102n])
    const summary = summarizeLifecycle(await second.events(record.id))
    expect(summary.relays.get('a')?.blocks).toEqual([101n, 102n])
  })
})

/** A planner whose plans for the blocks in `held` wait until the test lets them go; records how many of one submission run at once. */
class HeldPlanner extends FixedPlanner {
  readonly held = new Map<bigint, { release: () => void; started: Promise<void> }>()
  /** the target blocks of the plans begun, in order (calls records them once they are let go) */
  readonly begun: Array<bigint | undefined> = []
  running = 0
  maxRunning = 0

  constructor(blocks: readonly bigint[]) {
    super('backrun')
    for (const block of blocks) {
      let release: () => void = () => {}
      let started: () => void = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      this.held.set(block, { release, started: new Promise<void>((resolve) => (started = resolve)) })
      this.gates.set(block, { gate, started })
    }
  }

  private readonly gates = new Map<bigint, { gate: Promise<void>; started: () => void }>()

  override async plan(input: BackrunPlanInput): Promise<BackrunPlan | null> {
    this.begun.push(input.targetBlock)
    this.running++
    this.maxRunning = Math.max(this.maxRunning, this.running)
    try {
      const held = input.targetBlock === undefined ? undefined : this.gates.get(input.targetBlock)
      if (held !== undefined) {
        held.started()
        await held.gate
      }
      return await super.plan(input)
    } finally {
      this.running--
    }
  }
}

describe('Dispatcher: plans in the background, bounds counted apart (issue 13)', () => {
  it("a plan that outlives its block does not delay the next head's user bundle; the stale plan is dropped and the newest head planned", async () => {
    const planner = new HeldPlanner([101n])
    const h = await harness({ relays: [{ name: 'a' }], planner, dispatcher: { prepareTimeoutMs: 30_000 } })
    const raw = await userTx(90)
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.relays.a.waitFor(1, 2_000)
    await planner.held.get(101n)!.started

    // block 101 is built while its plan still runs: the user goes out for 102 at once
    h.heads.emit(101n)
    await h.relays.a.waitFor(2, 2_000)
    expect(h.relays.a.requests.map((r) => [r.params.blockNumber, sentTxs(r).length])).toEqual([
      ['0x65', 1],
      ['0x66', 1],
    ])
    // never two plans of one submission at once: 102 is not planned while 101's runs
    expect(planner.begun).toEqual([101n])

    planner.held.get(101n)!.release()
    await h.dispatcher.whenIdle()
    expect(planner.maxRunning).toBe(1)
    // the plan for 101 finished after 101 was built: dropped (its key given back), 102 planned and sent
    expect(planner.begun).toEqual([101n, 102n])
    expect(planner.released).toEqual([{ id: record.id, block: 101n }])
    const backruns = h.relays.a.requests.filter((r) => sentTxs(r).length === 2)
    expect(backruns.map((r) => r.params.blockNumber)).toEqual(['0x66'])
    const events = await h.events(record.id)
    const decided = events.filter((e) => e.type === 'backrun' || e.type === 'no-backrun')
    expect(decided.map((e) => [e.type, 'block' in e ? e.block : undefined])).toEqual([
      ['no-backrun', 101n],
      ['backrun', 102n],
    ])
    expect(decided[0]).toMatchObject({ reason: 'a newer head arrived before the plan for block 101 finished; dropped, planned again for the next block' })
  })

  it('a simulation that waits for a place longer than queueWaitMs fails as busy, and the user bundle is still sent at once', async () => {
    const queueWaitMs = 150
    // a port that queues and never gets a place (a saturated pool)
    const simulate: SubmissionSimulator = (input) => {
      input.clock?.queued()
      return new Promise((_resolve, reject) => input.signal.addEventListener('abort', () => reject(input.signal.reason), { once: true }))
    }
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { simulate, queueWaitMs, prepareTimeoutMs: 5_000 } })
    const raw = await userTx(91)
    const t0 = performance.now()
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.relays.a.waitFor(1, 2_000)
    const waited = h.relays.a.requests[0].at - t0
    expect(waited).toBeGreaterThanOrEqual(queueWaitMs - 5)
    expect(waited).toBeLessThan(queueWaitMs + 1_000)
    expect(sentTxs(h.relays.a.requests[0])).toEqual([raw])
    await h.dispatcher.whenIdle()
    const simulated = (await h.events(record.id)).find((e) => e.type === 'simulated')
    expect(simulated).toMatchObject({
      success: false,
      error: `the simulation waited ${queueWaitMs} ms for a place to run (the dispatcher's queue wait bound, DISPATCHER_QUEUE_WAIT_MS): busy`,
    })
  })

  it('a plan that waits for a place longer than queueWaitMs fails as busy, recorded, with the user bundle sent', async () => {
    const queueWaitMs = 100
    const planner = new FixedPlanner('backrun')
    const queued: BackrunPlanner = {
      plan: (input) => {
        planner.calls.push(input)
        input.clock?.queued()
        return new Promise((_resolve, reject) => input.signal.addEventListener('abort', () => reject(input.signal.reason), { once: true }))
      },
    }
    const h = await harness({ relays: [{ name: 'a' }], dispatcher: { planner: queued, queueWaitMs, prepareTimeoutMs: 5_000 } })
    const raw = await userTx(92)
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    await h.dispatcher.whenIdle()
    expect(h.relays.a.requests.map((r) => sentTxs(r))).toEqual([[raw]])
    const summary = summarizeLifecycle(await h.events(record.id))
    expect(summary.backrun).toBeNull()
    expect(summary.noBackrunReason).toBe(`backrun planning failed: the backrun planning waited ${queueWaitMs} ms for a place to run (the dispatcher's queue wait bound, DISPATCHER_QUEUE_WAIT_MS): busy`)
  })

  it('the run bound counts from when the work starts, not from when it was queued', async () => {
    // queued 250 ms, then 250 ms of work: 500 ms in all, each part within its 400 ms bound
    const simulate: SubmissionSimulator = async (input) => {
      input.clock?.queued()
      await new Promise((resolve) => setTimeout(resolve, 250))
      input.clock?.started()
      await new Promise((resolve) => setTimeout(resolve, 250))
      return { success: true, gasUsed: 21_000n }
    }
    const h = await harness({ relays: [{ name: 'a' }], planner: new FixedPlanner('none'), dispatcher: { simulate, queueWaitMs: 400, prepareTimeoutMs: 400 } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(93) })
    await h.dispatcher.whenIdle()
    expect((await h.events(record.id)).find((e) => e.type === 'simulated')).toMatchObject({ success: true, gasUsed: 21_000n })
  })

  it('a plan running when its submission lands is stopped, and nothing of it is recorded after the terminal event', async () => {
    const planner = new HeldPlanner([101n])
    const h = await harness({ relays: [{ name: 'a' }], planner, dispatcher: { prepareTimeoutMs: 30_000 } })
    const { record } = await h.dispatcher.accept({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(94) })
    await planner.held.get(101n)!.started
    h.inclusion.include(record.hash, 101n)
    h.heads.emit(101n)
    await until(() => h.dispatcher.stats().active === 0, 5_000, 'the submission to finish')
    planner.held.get(101n)!.release()
    await h.dispatcher.whenIdle()
    const events = await h.events(record.id)
    expect(events.at(-1)?.type).toBe('included')
  })
})
