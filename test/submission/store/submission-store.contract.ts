/**
 * The contract every SubmissionStore keeps (src/submission/store/submission-store.ts), as one
 * suite that submission-store.e2e.test.ts runs against each store on its real backend.
 */
import { keccak256 } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { Hex } from '../../../src/chain/types.ts'
import { LeaseLostError, OutboxFullError, PersistenceError } from '../../../src/submission/errors.ts'
import type { SubmissionStore, SubmissionStoreOptions } from '../../../src/submission/store/submission-store.ts'
import { bundleHash } from '../../../src/tx/bundle-hash.ts'
import { submissionId, type LifecycleEvent, type SubmissionId } from '../../../src/submission/types.ts'
import { userTx } from '../helpers.ts'

/** One store's backend, for one test at a time. */
export interface StoreHarness {
  /** a fresh, empty place for the stores of one test */
  setUp(): Promise<void>
  tearDown(): Promise<void>
  /**
   * A store on that place, not opened yet. Where the backend is shared (`shared`), every call
   * gives another independent store (its own connections) on the same data, as another process
   * would have; otherwise the place admits one open store at a time.
   */
  create(options?: SubmissionStoreOptions): SubmissionStore
  shared: boolean
  /** Take the backend away from `store` (the database server stops, the directory closes) ... */
  interrupt(store: SubmissionStore): Promise<void>
  /** ... and give it back. */
  restore(store: SubmissionStore): Promise<void>
}

const FAST_RETRIES: SubmissionStoreOptions = { writeAttempts: 3, writeBackoff: { baseMs: 1, maxMs: 5 } }
const LEASE_MS = 600

export function describeSubmissionStoreContract(name: string, harness: StoreHarness): void {
  describe(`SubmissionStore contract: ${name}`, () => {
    const opened: SubmissionStore[] = []

    async function openStore(options: SubmissionStoreOptions = {}): Promise<SubmissionStore> {
      const store = harness.create({ ...FAST_RETRIES, ...options })
      await store.open()
      opened.push(store)
      return store
    }

    /** A second store on the same data where the backend is shared; the same store where it is not. */
    async function peerOf(store: SubmissionStore, options: SubmissionStoreOptions = {}): Promise<SubmissionStore> {
      return harness.shared ? openStore(options) : store
    }

    beforeEach(async () => {
      await harness.setUp()
    })

    afterEach(async () => {
      for (const store of opened.splice(0).reverse()) await store.close().catch(() => undefined)
      await harness.tearDown()
    })

    describe('persist and de-duplication', () => {
      it('stores a private tx under its tx hash with a received event, readable after a reopen', async () => {
        const store = await openStore()
        const raw = await userTx(0)
        const { record, created } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
        expect(created).toBe(true)
        expect(record).toMatchObject({ id: `private-tx:${keccak256(raw)}`, hash: keccak256(raw), partnerId: 'alpha', rawTxs: [raw.toLowerCase()] })
        await store.close()

        const reopened = await openStore()
        const stored = await reopened.get(record.id)
        expect(stored?.record).toEqual(record)
        expect(stored?.events).toEqual([{ type: 'received', at: record.receivedAt }])
        expect((await reopened.listUndelivered()).map((s) => s.record.id)).toEqual([record.id])
      })

      it('the same submission again returns the stored record, keeps the first partner and writes nothing', async () => {
        const store = await openStore()
        const raw = await userTx(1)
        const first = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
        const again = await store.persist({ kind: 'private-tx', partnerId: 'beta', rawTx: `0x${raw.slice(2).toUpperCase()}` as Hex })
        expect(again).toEqual({ record: first.record, created: false })
        expect((await store.get(first.record.id))?.events).toHaveLength(1)
        expect(store.stats().open).toBe(1)
        // another kind of the same tx is another submission (another intent)
        expect((await store.persist({ kind: 'notify', partnerId: 'alpha', rawTx: raw })).created).toBe(true)
        expect((await store.findForPartner(keccak256(raw), 'alpha')).map((s) => s.record.kind)).toEqual(['private-tx', 'notify'])
      })

      it('a bundle is stored under its bundle hash with its options, bigint intact', async () => {
        const store = await openStore()
        const raws = [await userTx(2), await userTx(3)]
        const options = { blockNumber: 2n ** 64n + 7n, revertingTxHashes: [keccak256(raws[1])], replacementUuid: 'u-1' }
        const { record } = await store.persist({ kind: 'bundle', partnerId: 'alpha', rawTxs: raws, options })
        expect(record.hash).toBe(bundleHash(raws.map((r) => keccak256(r))))
        expect((await store.get(record.id))?.record.bundleOptions).toEqual(options)
      })

      it('two stores (or calls) persisting the same submissions at the same moment create each once', async () => {
        const a = await openStore()
        const b = await peerOf(a)
        const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => userTx(100 + i)))
        const results = await Promise.all(
          raws.flatMap((rawTx) => [a.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx }), b.persist({ kind: 'private-tx', partnerId: 'beta', rawTx })]),
        )
        for (let i = 0; i < raws.length; i++) {
          const pair = results.slice(2 * i, 2 * i + 2)
          expect(pair.filter((r) => r.created)).toHaveLength(1)
          expect(pair[0].record).toEqual(pair[1].record)
        }
        const open = await a.listUndelivered()
        expect(open).toHaveLength(raws.length)
        for (const stored of open) expect(stored.events.map((e) => e.type)).toEqual(['received'])
      })

      it('refuses with OutboxFullError at maxOpen (a duplicate still answers), and accepts again once one finishes', async () => {
        const store = await openStore({ maxOpen: 2 })
        const a = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(10) })
        await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(11) })
        await expect(store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(12) })).rejects.toBeInstanceOf(OutboxFullError)
        expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(10) })).created).toBe(false)
        await store.append(a.record.id, [{ type: 'included', at: Date.now(), block: 5n }])
        expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(12) })).created).toBe(true)
      })

      it('rejects malformed input as a programming error and stores nothing', async () => {
        const store = await openStore()
        await expect(store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: '0x123' as Hex })).rejects.toThrow(TypeError)
        await expect(store.persist({ kind: 'bundle', partnerId: 'alpha', rawTxs: [] })).rejects.toThrow(TypeError)
        expect(await store.listUndelivered()).toEqual([])
      })
    })

    describe('lifecycle', () => {
      it('keeps events in order with their bigints; a terminal event closes the submission', async () => {
        const store = await openStore()
        const { record } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) })
        const events: LifecycleEvent[] = [
          { type: 'simulated', at: 1, success: false, revertReason: 'UniswapV2: K', failedTxIndex: 0 },
          { type: 'backrun', at: 2, rawTx: '0x01', txHash: `0x${'ab'.repeat(32)}`, grossProfit: 2n ** 200n + 1n, profitToken: `0x${'cd'.repeat(20)}` },
          { type: 'targeting', at: 3, firstBlock: 101n, lastBlock: 125n, relays: ['r1', 'r2'] },
        ]
        const sends: LifecycleEvent[] = [
          { type: 'relay-sending', at: 4, relay: 'r1', block: 101n, attemptId: 'a1' },
          { type: 'relay-result', at: 5, relay: 'r1', block: 101n, attemptId: 'a1', ok: true, attempts: 1 },
        ]
        for (const e of events) await store.append(record.id, [e])
        await store.append(record.id, sends)
        // whichever store instance wrote them, every reader sees one lifecycle
        const reader = await peerOf(store)
        expect((await reader.get(record.id))?.events).toEqual([{ type: 'received', at: record.receivedAt }, ...events, ...sends])

        await expect(store.append(record.id, [{ type: 'dropped', at: 6, reason: 'x' }, { type: 'simulated', at: 7, success: true }])).rejects.toThrow(/terminal/)
        await store.append(record.id, [{ type: 'included', at: 8, block: 102n, backrunIncluded: true }])
        expect(await store.listUndelivered()).toEqual([])
        expect(store.stats()).toEqual({ open: 0, finished: 1 })
        await expect(store.append(record.id, [{ type: 'dropped', at: 9, reason: 'x' }])).rejects.toThrow(/not open/)
        await expect(store.append(submissionId('private-tx', `0x${'11'.repeat(32)}`), [{ type: 'simulated', at: 1, success: true }])).rejects.toThrow(/not open/)
        expect((await reader.get(record.id))?.events.at(-1)).toEqual({ type: 'included', at: 8, block: 102n, backrunIncluded: true })
      })

      it('a reorg that replaced the block of its inclusion re-opens a finished submission, in the same lifecycle', async () => {
        const store = await openStore()
        const { record } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) })
        const reorg: LifecycleEvent = { type: 'reorg', at: 9, commonAncestor: 101n, dropped: [102n, 103n], newHead: 103n, includedBlock: 102n }
        // an open submission cannot be re-opened, nor an unknown one
        await expect(store.reopen(record.id, { ...reorg })).rejects.toThrow(/not finished/)
        await expect(store.reopen(submissionId('private-tx', `0x${'11'.repeat(32)}`), { ...reorg })).rejects.toThrow(/not finished/)
        await store.append(record.id, [{ type: 'included', at: 8, block: 102n }])
        expect(store.stats()).toEqual({ open: 0, finished: 1 })

        await store.reopen(record.id, { ...reorg })
        expect(store.stats()).toEqual({ open: 1, finished: 0 })
        const reader = await peerOf(store)
        const open = await reader.listUndelivered()
        expect(open.map((s) => s.record.id)).toEqual([record.id])
        expect(open[0].events).toEqual([{ type: 'received', at: record.receivedAt }, { type: 'included', at: 8, block: 102n }, reorg])
        // open again: events append, and a second inclusion closes it
        await store.append(record.id, [{ type: 'simulated', at: 10, success: true }, { type: 'included', at: 11, block: 103n }])
        expect(await store.listUndelivered()).toEqual([])
        expect((await reader.get(record.id))?.events.map((e) => e.type)).toEqual(['received', 'included', 'reorg', 'simulated', 'included'])
      })

      it('only the submitting partner reads a submission', async () => {
        const store = await openStore()
        const { record } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) })
        expect((await store.getForPartner(record.id, 'alpha'))?.record.id).toBe(record.id)
        expect(await store.getForPartner(record.id, 'beta')).toBeUndefined()
        expect(await store.findForPartner(record.hash, 'beta')).toEqual([])
        expect((await store.findForPartner(record.hash.toUpperCase().replace('0X', '0x') as Hex, 'alpha')).map((s) => s.record.id)).toEqual([record.id])
      })

      it('lists the open submissions oldest first, with their events', async () => {
        let now = 5_000_000
        const store = await openStore({ now: () => now })
        const ids: SubmissionId[] = []
        for (const nonce of [3, 1, 2]) {
          now += 10
          ids.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(nonce) })).record.id)
        }
        await store.append(ids[1], [{ type: 'simulated', at: now, success: true }])
        await store.append(ids[0], [{ type: 'dropped', at: now, reason: 'test' }])
        const open = await store.listUndelivered()
        expect(open.map((s) => s.record.id)).toEqual([ids[1], ids[2]])
        expect(open[0].events.map((e) => e.type)).toEqual(['received', 'simulated'])
        expect(store.stats()).toEqual({ open: 2, finished: 1 })
      })
    })

    describe('retention', () => {
      it('prunes finished submissions beyond maxFinished and past the TTL, oldest first, never open ones', async () => {
        let now = 1_000_000
        const retention = { maxFinished: 2, finishedTtlMs: 10_000 }
        const store = await openStore({ retention, now: () => now })
        const ids: SubmissionId[] = []
        for (let i = 0; i < 6; i++) ids.push((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(i) })).record.id)
        for (let i = 0; i < 5; i++) {
          now += 1
          await store.append(ids[i], [{ type: 'expired', at: now, lastBlock: 10n, reason: 'test' }])
        }
        expect(await store.pruneFinished()).toBe(3)
        expect(store.stats()).toEqual({ open: 1, finished: 2 })
        for (const id of ids.slice(0, 3)) expect(await store.get(id)).toBeUndefined()
        for (const id of ids.slice(3)) expect(await store.get(id)).toBeDefined()

        now += 20_000
        expect(await store.pruneFinished()).toBe(2)
        expect(await store.pruneFinished()).toBe(0)
        expect((await store.get(ids[5]))?.events).toHaveLength(1)
        await store.close()
        const reopened = await openStore({ retention })
        expect(reopened.stats()).toEqual({ open: 1, finished: 0 })
        // a pruned submission sent again is a new one
        expect((await reopened.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })).created).toBe(true)
      })
    })

    describe('leases', () => {
      it('one owner at a time: A claims, B cannot; A stops renewing, B takes over; A cannot renew any more', async () => {
        const a = await openStore({ leaseMs: LEASE_MS })
        const b = await peerOf(a, { leaseMs: LEASE_MS })
        const ids: SubmissionId[] = []
        for (let i = 0; i < 5; i++) ids.push((await a.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(i) })).record.id)

        const claimedByA = await requireLeases(a).claim('replica-a', 10)
        expect(new Set(claimedByA.ids)).toEqual(new Set(ids))
        expect(claimedByA.validUntil).toBeGreaterThan(Date.now())
        expect((await requireLeases(b).claim('replica-b', 10)).ids).toEqual([])
        expect((await requireLeases(a).renew('replica-a', ids)).ids.sort()).toEqual([...ids].sort())
        // a renewal by another owner renews nothing
        expect((await requireLeases(b).renew('replica-b', ids)).ids).toEqual([])

        // A "dies": it stops renewing; its leases expire and B takes every submission over
        await sleep(LEASE_MS + 200)
        const claimedByB = await requireLeases(b).claim('replica-b', 10)
        expect(new Set(claimedByB.ids)).toEqual(new Set(ids))
        expect((await requireLeases(a).renew('replica-a', ids)).ids).toEqual([])
        expect((await requireLeases(a).claim('replica-a', 10)).ids).toEqual([])

        // a finished submission leaves its lease; a release gives the rest back at once
        await b.append(ids[0], [{ type: 'included', at: Date.now(), block: 1n }])
        expect((await requireLeases(b).renew('replica-b', ids)).ids.sort()).toEqual(ids.slice(1).sort())
        await requireLeases(b).release('replica-b', ids.slice(1, 3))
        expect((await requireLeases(a).claim('replica-a', 10)).ids.sort()).toEqual(ids.slice(1, 3).sort())
      })

      it('concurrent claims never give one submission to two owners, and a new submission can be leased as it is stored', async () => {
        const stores = [await openStore({ leaseMs: 30_000 })]
        stores.push(await peerOf(stores[0], { leaseMs: 30_000 }))
        const ids: SubmissionId[] = []
        for (let i = 0; i < 40; i++) ids.push((await stores[0].persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(200 + i) })).record.id)
        const owners = ['replica-a', 'replica-b', 'replica-c', 'replica-d']
        const held = new Map<SubmissionId, string>()
        for (let round = 0; round < 4; round++) {
          const grants = await Promise.all(owners.map((owner, i) => requireLeases(stores[i % stores.length]).claim(owner, 4)))
          grants.forEach((grant, i) => {
            for (const id of grant.ids) {
              expect(held.get(id), `${id} claimed by ${owners[i]} while ${held.get(id)} holds it`).toBeUndefined()
              held.set(id, owners[i])
            }
          })
        }
        expect(held.size).toBe(40)

        const { record } = await stores[1].persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(300) }, { leaseOwner: 'replica-b' })
        expect((await requireLeases(stores[0]).claim('replica-a', 10)).ids).toEqual([])
        expect((await requireLeases(stores[1]).renew('replica-b', [record.id])).ids).toEqual([record.id])
      })
    })

    describe('send horizons', () => {
      it("a claim answers each submission it takes from another owner with that owner's send horizon, never lowered; none for a submission nobody held", async () => {
        const a = await openStore({ leaseMs: LEASE_MS })
        const b = await peerOf(a, { leaseMs: LEASE_MS })
        const { record: held } = await a.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(400) }, { leaseOwner: 'replica-a' })
        // the owner is alive (its renewal is the heartbeat a horizon is marked under)
        await requireLeases(a).renew('replica-a', [held.id])
        expect(await requireLeases(a).markSendHorizon('replica-a', 11n)).toBe(true)
        expect(await requireLeases(a).markSendHorizon('replica-a', 9n)).toBe(true)
        const { record: free } = await a.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(401) })
        // A "dies" after marking: B takes both over
        await sleep(LEASE_MS + 200)
        const grant = await requireLeases(b).claim('replica-b', 10)
        expect(new Set(grant.ids)).toEqual(new Set([held.id, free.id]))
        expect(grant.horizons).toEqual(new Map([[held.id, 11n]]))
      })
    })

    describe('one writer per submission', () => {
      it('an append that names a lease owner is written only while that owner holds the lease', async () => {
        const a = await openStore({ leaseMs: LEASE_MS })
        const b = await peerOf(a, { leaseMs: LEASE_MS })
        const { record } = await a.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) }, { leaseOwner: 'replica-a' })
        await a.append(record.id, [{ type: 'simulated', at: 1, success: true }], { leaseOwner: 'replica-a' })
        // another owner is refused, and nothing of its write lands
        await expect(b.append(record.id, [{ type: 'simulated', at: 2, success: true }], { leaseOwner: 'replica-b' })).rejects.toBeInstanceOf(LeaseLostError)

        // A stops renewing; B takes the submission over: from now on only B writes its lifecycle
        await sleep(LEASE_MS + 200)
        expect((await requireLeases(b).claim('replica-b', 10)).ids).toEqual([record.id])
        await expect(a.append(record.id, [{ type: 'simulated', at: 3, success: true }], { leaseOwner: 'replica-a' })).rejects.toBeInstanceOf(LeaseLostError)
        await expect(a.append(record.id, [{ type: 'dropped', at: 3, reason: 'stale owner' }], { leaseOwner: 'replica-a' })).rejects.toBeInstanceOf(LeaseLostError)
        await b.append(record.id, [{ type: 'simulated', at: 4, success: true }], { leaseOwner: 'replica-b' })
        await b.append(record.id, [{ type: 'included', at: 5, block: 7n }], { leaseOwner: 'replica-b' })
        expect((await a.get(record.id))?.events.map((e) => e.at)).toEqual([record.receivedAt, 1, 4, 5])
        // finished: "not open", whoever asks
        await expect(b.append(record.id, [{ type: 'simulated', at: 6, success: true }], { leaseOwner: 'replica-b' })).rejects.toThrow(/not open/)
      })
    })

    describe('failures', () => {
      it('while the backend is away: persist rejects with PersistenceError, nothing is acknowledged, ready() is false; it recovers when the backend returns', async () => {
        const retries: number[] = []
        const store = await openStore({ onRetry: ({ attempt }) => retries.push(attempt) })
        const before = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })
        expect(await store.ready()).toBe(true)

        await harness.interrupt(store)
        const lost = await userTx(1)
        const failure = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: lost }).catch((e: unknown) => e)
        expect(failure).toBeInstanceOf(PersistenceError)
        expect(retries.length).toBeGreaterThan(0)
        await expect(store.append(before.record.id, [{ type: 'simulated', at: 1, success: true }])).rejects.toBeInstanceOf(PersistenceError)
        await expect(store.get(before.record.id)).rejects.toBeInstanceOf(PersistenceError)
        expect(await store.ready()).toBe(false)

        await harness.restore(store)
        expect(await store.ready()).toBe(true)
        expect(await store.get(submissionId('private-tx', keccak256(lost)))).toBeUndefined()
        expect((await store.listUndelivered()).map((s) => s.record.id)).toEqual([before.record.id])
        const after = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: lost })
        expect(after.created).toBe(true)
        expect((await store.get(after.record.id))?.events).toHaveLength(1)
      })

      it('a store that is not open refuses with PersistenceError', async () => {
        const store = harness.create(FAST_RETRIES)
        await expect(store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })).rejects.toBeInstanceOf(PersistenceError)
        expect(await store.ready()).toBe(false)
      })
    })
  })
}

function requireLeases(store: SubmissionStore): NonNullable<SubmissionStore['leases']> {
  if (store.leases === undefined) throw new Error(`${store.description} has no leases`)
  return store.leases
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
