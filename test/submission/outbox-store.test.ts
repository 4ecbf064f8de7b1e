import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { keccak256 } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import type { Hex } from '../../src/chain/types.ts'
import { bundleHash } from '../../src/tx/bundle-hash.ts'
import {
  OutboxFullError,
  OutboxStore,
  PersistenceError,
  submissionId,
  summarizeLifecycle,
  type LifecycleEvent,
  type SubmissionId,
} from '../../src/submission/index.ts'
import { tempDir, userTx } from './helpers.ts'

let dir: { path: string; cleanup: () => Promise<void> }
const stores: OutboxStore[] = []

function newStore(options: ConstructorParameters<typeof OutboxStore>[1] = {}, path = join(dir.path, 'data')): OutboxStore {
  const store = new OutboxStore(path, { writeBackoff: { baseMs: 1, maxMs: 5 }, ...options })
  stores.push(store)
  return store
}

beforeEach(async () => {
  dir = await tempDir()
})

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined)
  await dir.cleanup()
})

describe('OutboxStore.persist', () => {
  it('stores a private tx under its tx hash with a received event, and survives a reopen', async () => {
    const store = newStore()
    await store.open()
    const raw = await userTx(0)
    const { record, created } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    expect(created).toBe(true)
    expect(record.hash).toBe(keccak256(raw))
    expect(record.id).toBe(`private-tx:${keccak256(raw)}`)
    expect(record.rawTxs).toEqual([raw.toLowerCase()])
    await store.close()

    const reopened = newStore()
    await reopened.open()
    const stored = await reopened.get(record.id)
    expect(stored?.record).toEqual(record)
    expect(stored?.events.map((e) => e.type)).toEqual(['received'])
    expect((await reopened.listUndelivered()).map((s) => s.record.id)).toEqual([record.id])
  })

  it('is idempotent by hash: the same tx again returns the stored record and writes nothing', async () => {
    const store = newStore()
    await store.open()
    const raw = await userTx(1)
    const first = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    // uppercase hex digits are the same bytes, so the same submission
    const again = await store.persist({ kind: 'private-tx', partnerId: 'beta', rawTx: `0x${raw.slice(2).toUpperCase()}` as Hex })
    expect(again.created).toBe(false)
    expect(again.record).toEqual(first.record)
    expect(again.record.partnerId).toBe('alpha')
    expect((await store.get(first.record.id))?.events).toHaveLength(1)
    expect(store.stats().open).toBe(1)
  })

  it('concurrent persists of one tx create exactly one record', async () => {
    const store = newStore()
    await store.open()
    const raw = await userTx(2)
    const results = await Promise.all(Array.from({ length: 10 }, () => store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })))
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(new Set(results.map((r) => r.record.id)).size).toBe(1)
    expect((await store.listUndelivered())).toHaveLength(1)
    expect((await store.get(results[0].record.id))?.events).toHaveLength(1)
  })

  it('stores a bundle under the bundle hash with its options, bigint intact', async () => {
    const store = newStore()
    await store.open()
    const txs = [await userTx(3), await userTx(4)]
    const options = { blockNumber: 18_000_001n, maxTimestamp: 1_700_000_999n, revertingTxHashes: [keccak256(txs[0])], replacementUuid: 'c0ffee00-0000-4000-8000-000000000001' }
    const { record } = await store.persist({ kind: 'bundle', partnerId: 'alpha', rawTxs: txs, options })
    expect(record.hash).toBe(bundleHash(txs.map((t) => keccak256(t))))
    expect(record.txHashes).toEqual(txs.map((t) => keccak256(t)))
    await store.close()
    const reopened = newStore()
    await reopened.open()
    const stored = await reopened.get(record.id)
    expect(stored?.record.bundleOptions).toEqual(options)
    expect(typeof stored?.record.bundleOptions?.blockNumber).toBe('bigint')
  })

  it('keeps a notify and a private submission of the same tx apart (different intents)', async () => {
    const store = newStore()
    await store.open()
    const raw = await userTx(5)
    const notify = await store.persist({ kind: 'notify', partnerId: 'alpha', rawTx: raw })
    const priv = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: raw })
    expect(notify.created && priv.created).toBe(true)
    expect(notify.record.hash).toBe(priv.record.hash)
    expect(notify.record.id).not.toBe(priv.record.id)
  })

  it('rejects malformed input as a programming error', async () => {
    const store = newStore()
    await store.open()
    await expect(store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: '0x123' as Hex })).rejects.toThrow(TypeError)
    await expect(store.persist({ kind: 'bundle', partnerId: 'alpha', rawTxs: [] })).rejects.toThrow(TypeError)
    await expect(store.persist({ kind: 'private-tx', partnerId: '', rawTx: await userTx(0) })).rejects.toThrow(TypeError)
    expect(store.stats().open).toBe(0)
  })

  it('refuses with OutboxFullError at maxOpen, and accepts again once one finishes', async () => {
    const store = newStore({ maxOpen: 2 })
    await store.open()
    const a = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(10) })
    await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(11) })
    await expect(store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(12) })).rejects.toBeInstanceOf(OutboxFullError)
    // a duplicate is not refused: it creates nothing
    expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(10) })).created).toBe(false)
    await store.append(a.record.id, [{ type: 'included', at: Date.now(), block: 5n }])
    expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(12) })).created).toBe(true)
  })
})

describe('OutboxStore lifecycle', () => {
  it('appends events in order; a terminal event moves the submission out of the undelivered list', async () => {
    const store = newStore()
    await store.open()
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) })
    const events: LifecycleEvent[] = [
      { type: 'simulated', at: 1, success: false, revertReason: 'UniswapV2: K', failedTxIndex: 0 },
      { type: 'backrun', at: 2, rawTx: '0x01', txHash: `0x${'ab'.repeat(32)}`, grossProfit: 2n ** 200n + 1n, profitToken: `0x${'cd'.repeat(20)}` },
      { type: 'targeting', at: 3, firstBlock: 101n, lastBlock: 125n, relays: ['r1', 'r2'] },
      { type: 'relay-sending', at: 4, relay: 'r1', block: 101n, attemptId: 'a1' },
      { type: 'relay-sending', at: 4, relay: 'r2', block: 101n, attemptId: 'a2' },
      { type: 'relay-result', at: 5, relay: 'r1', block: 101n, attemptId: 'a1', ok: true, attempts: 1 },
      { type: 'relay-result', at: 6, relay: 'r2', block: 101n, attemptId: 'a2', ok: false, attempts: 4, lastError: 'HTTP 503' },
    ]
    for (const e of events) await store.append(record.id, [e])
    await store.close()

    const reopened = newStore()
    await reopened.open()
    const stored = await reopened.get(record.id)
    expect(stored?.events).toEqual([{ type: 'received', at: record.receivedAt }, ...events])
    const summary = summarizeLifecycle(stored?.events ?? [])
    expect(summary.stage).toBe('dispatching')
    expect(summary.simulation?.revertReason).toBe('UniswapV2: K')
    expect(summary.backrun?.grossProfit).toBe(2n ** 200n + 1n)
    expect(summary.relays.get('r1')).toMatchObject({ state: 'accepted', attempts: 1, lastBlock: 101n })
    expect(summary.relays.get('r2')).toMatchObject({ state: 'failed', attempts: 4, lastError: 'HTTP 503' })

    await reopened.append(record.id, [{ type: 'included', at: 7, block: 102n, backrunIncluded: true }])
    expect(await reopened.listUndelivered()).toEqual([])
    expect(reopened.stats()).toEqual({ open: 0, finished: 1 })
    await expect(reopened.append(record.id, [{ type: 'dropped', at: 8, reason: 'x' }])).rejects.toThrow(/not open/)
    expect(summarizeLifecycle((await reopened.get(record.id))?.events ?? []).outcome).toEqual({ type: 'included', at: 7, block: 102n, backrunIncluded: true })
  })

  it('lets only the submitting partner read a record', async () => {
    const store = newStore()
    await store.open()
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(0) })
    expect((await store.getForPartner(record.id, 'alpha'))?.record.id).toBe(record.id)
    expect(await store.getForPartner(record.id, 'beta')).toBeUndefined()
    expect(await store.findForPartner(record.hash, 'beta')).toEqual([])
    expect((await store.findForPartner(record.hash, 'alpha')).map((s) => s.record.kind)).toEqual(['private-tx'])
  })

  it('prunes finished records beyond maxFinished and past the TTL, never undelivered ones', async () => {
    let now = 1_000_000
    const store = newStore({ retention: { maxFinished: 2, finishedTtlMs: 10_000 }, now: () => now })
    await store.open()
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

    now += 20_000 // past the TTL of the two remaining finished ones
    expect(await store.pruneFinished()).toBe(2)
    expect(store.stats()).toEqual({ open: 1, finished: 0 })
    expect((await store.get(ids[5]))?.events).toHaveLength(1)
    // the counts survive a reopen
    await store.close()
    const reopened = newStore({ retention: { maxFinished: 2, finishedTtlMs: 10_000 } })
    await reopened.open()
    expect(reopened.stats()).toEqual({ open: 1, finished: 0 })
  })
})

describe('OutboxStore LevelDB memory bounds', () => {
  /** 600 submissions of ~1.2 KB (record and received event), 20 per group commit: ~0.7 MB written */
  async function fill(store: OutboxStore): Promise<void> {
    for (let round = 0; round < 30; round++) {
      await Promise.all(Array.from({ length: 20 }, async (_, i) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(round * 20 + i, `0x${'ab'.repeat(300)}`) })))
    }
  }

  it('keeps the memtables within writeBufferBytes: LevelDB\'s own count stays near two buffers, where the default buffer holds every write', async () => {
    const bounded = newStore({ leveldb: { writeBufferBytes: 65_536, cacheBytes: 0 } }, join(dir.path, 'bounded'))
    const unbounded = newStore({}, join(dir.path, 'default'))
    expect(bounded.nativeMemoryBytes()).toBeUndefined() // not open yet
    await bounded.open()
    await unbounded.open()
    await fill(bounded)
    await fill(unbounded)
    // the memtable being filled and the full one being written to disk, each 64 KiB plus at most one group commit (~25 KB)
    expect(bounded.nativeMemoryBytes()).toBeLessThan(2 * (65_536 + 32_768))
    // the default 4 MiB buffer has taken all ~0.7 MB in memory
    expect(unbounded.nativeMemoryBytes()).toBeGreaterThan(500_000)
    // and what was flushed is all there
    expect(bounded.stats()).toEqual({ open: 600, finished: 0 })
    expect((await bounded.listUndelivered()).length).toBe(600)
  })

  it('refuses bounds LevelDB would clip silently, naming the setting', () => {
    expect(() => newStore({ leveldb: { writeBufferBytes: 65_535 } })).toThrow(new RangeError('OutboxStore: leveldb.writeBufferBytes must be from 65536 to 1073741824, got 65535'))
    expect(() => newStore({ leveldb: { maxOpenFiles: 73 } })).toThrow(new RangeError('OutboxStore: leveldb.maxOpenFiles must be from 74 to 50000, got 73'))
    expect(() => newStore({ leveldb: { maxOpenFiles: 50_001 } })).toThrow(/leveldb\.maxOpenFiles must be from 74 to 50000/)
    expect(() => newStore({ leveldb: { cacheBytes: -1 } })).toThrow(new RangeError('OutboxStore: leveldb.cacheBytes must be a non-negative integer, got -1'))
    expect(() => newStore({ leveldb: { cacheBytes: 2 ** 30 + 1 } })).toThrow(/leveldb\.cacheBytes must be at most 1073741824/)
  })
})

describe('OutboxStore failures', () => {
  it('open() throws PersistenceError when DATA_DIR is a file, and persist acknowledges nothing', async () => {
    const file = join(dir.path, 'not-a-dir')
    await writeFile(file, 'x')
    const store = newStore({}, file)
    const opening = store.open()
    await expect(opening).rejects.toBeInstanceOf(PersistenceError)
    await expect(opening).rejects.toMatchObject({ operation: 'open' })
    await expect(store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })).rejects.toBeInstanceOf(PersistenceError)
  })

  it('a second opener of the same DATA_DIR gets PersistenceError (LevelDB lock)', async () => {
    const first = newStore()
    await first.open()
    await expect(newStore().open()).rejects.toBeInstanceOf(PersistenceError)
  })

  it('a closed database: persist retries a bounded number of times, then PersistenceError; nothing is stored', async () => {
    const retries: number[] = []
    const store = newStore({ writeAttempts: 3, onRetry: ({ attempt }) => retries.push(attempt) })
    await store.open()
    await store.close()
    const raw = await userTx(7)
    const err = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: raw }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PersistenceError)
    expect((err as PersistenceError).attempts).toBe(3)
    expect(retries).toEqual([1, 2])

    const reopened = newStore()
    await reopened.open()
    expect(await reopened.listUndelivered()).toEqual([])
    expect(await reopened.get(submissionId('private-tx', keccak256(raw)))).toBeUndefined()
  })

  it('a write that fails transiently is retried and succeeds', async () => {
    let reopening: Promise<void> | undefined
    const store = newStore({
      // generous, so the reopen started at the first retry completes within the retries
      writeAttempts: 30,
      writeBackoff: { baseMs: 40, maxMs: 80 },
      onRetry: () => {
        reopening ??= store.open()
      },
    })
    await store.open()
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(8) })
    await store.close()
    // the duplicate check (a read) fails first, the store comes back during the backoff
    const again = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(9) })
    expect(reopening).toBeDefined()
    expect(again.created).toBe(true)
    expect((await store.listUndelivered()).map((s) => s.record.id).sort()).toEqual([record.id, again.record.id].sort())
  })

  it('append to a closed database throws PersistenceError', async () => {
    const store = newStore({ writeAttempts: 2 })
    await store.open()
    const { record } = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(0) })
    await store.close()
    await expect(store.append(record.id, [{ type: 'dropped', at: 1, reason: 'x' }])).rejects.toBeInstanceOf(PersistenceError)
  })
})

describe('OutboxStore group commit', () => {
  it('many concurrent persists are all durable when their promises resolve', async () => {
    const store = newStore()
    await store.open()
    const raws = await Promise.all(Array.from({ length: 200 }, (_, i) => userTx(100 + i)))
    const results = await Promise.all(raws.map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'p', rawTx })))
    expect(results.every((r) => r.created)).toBe(true)
    await store.close()
    const reopened = newStore()
    await reopened.open()
    const ids = new Set((await reopened.listUndelivered()).map((s) => s.record.id))
    expect(ids.size).toBe(200)
    for (const r of results) expect(ids.has(r.record.id)).toBe(true)
  })

  it('checks the new submissions of one turn for duplicates with one read, and writes only the new ones', async () => {
    const store = newStore()
    await store.open()
    const stored = await store.persist({ kind: 'private-tx', partnerId: 'alpha', rawTx: await userTx(300) })
    const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => userTx(301 + i)))
    const reads = { get: 0, getMany: 0 }
    const db = (store as unknown as { db: { get: (...a: unknown[]) => unknown; getMany: (...a: unknown[]) => unknown } }).db
    const { get, getMany } = db
    db.get = (...a) => (reads.get++, get.apply(db, a))
    db.getMany = (...a) => (reads.getMany++, getMany.apply(db, a))
    // queued in one turn of the event loop: their duplicate checks are one read, whatever groups they are written in
    const results = await Promise.all([...raws, stored.record.rawTxs[0]].map((rawTx) => store.persist({ kind: 'private-tx', partnerId: 'beta', rawTx })))
    expect(reads).toEqual({ get: 0, getMany: 1 })
    expect(results.slice(0, 20).every((r) => r.created && r.record.partnerId === 'beta')).toBe(true)
    expect(results[20]).toEqual({ record: stored.record, created: false })
    expect(store.stats().open).toBe(21)
    // the duplicate wrote nothing: its lifecycle is still the one received event
    expect((await store.get(stored.record.id))?.events.map((e) => e.type)).toEqual(['received'])
  })

  it('a new submission is checked for a duplicate while the batch in flight is fsynced, not after it', async () => {
    const store = newStore()
    await store.open()
    const open = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(500) })
    const db = (store as unknown as { db: { batch: (...a: unknown[]) => Promise<void>; getMany: (...a: unknown[]) => Promise<unknown> } }).db
    const { batch, getMany } = db
    const events: string[] = []
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    // the first batch (an append) is held in flight until the persist's check has been read
    db.batch = async (...a) => {
      events.push('batch')
      if (events.filter((e) => e === 'batch').length === 1) await held
      return batch.apply(db, a)
    }
    db.getMany = (...a) => (events.push('getMany'), getMany.apply(db, a))
    const append = store.append(open.record.id, [{ type: 'no-backrun', at: 1, reason: 'test', block: 1n }])
    const persisted = store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(501) })
    while (!events.includes('getMany')) await new Promise((r) => setImmediate(r))
    expect(events).toEqual(['batch', 'getMany'])
    release()
    await append
    expect((await persisted).created).toBe(true)
    expect(events).toEqual(['batch', 'getMany', 'batch'])
  })

  it('a failed duplicate check fails its group with a PersistenceError, and nothing of it is stored', async () => {
    const store = newStore({ writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 1 } })
    await store.open()
    const db = (store as unknown as { db: { getMany: (...a: unknown[]) => Promise<unknown> } }).db
    const { getMany } = db
    db.getMany = () => Promise.reject(new Error('disk read error'))
    const rawTx = await userTx(502)
    await expect(store.persist({ kind: 'private-tx', partnerId: 'p', rawTx })).rejects.toBeInstanceOf(PersistenceError)
    expect(store.stats().open).toBe(0)
    db.getMany = getMany
    expect((await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx })).created).toBe(true)
  })

  it("a new submission's batch goes to LevelDB while a lifecycle batch is in flight, and carries no lifecycle write", async () => {
    const store = newStore()
    await store.open()
    const open = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(510) })
    const db = (store as unknown as { db: { batch: (ops: Array<{ key: string }>, ...rest: unknown[]) => Promise<void> } }).db
    const { batch } = db
    const batches: string[][] = []
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    // the first batch (the append's) stays in flight until released
    db.batch = async (ops, ...rest) => {
      batches.push(ops.map((o) => o.key.slice(0, 2)))
      if (batches.length === 1) await held
      return batch.apply(db, [ops, ...rest])
    }
    const append = store.append(open.record.id, [{ type: 'no-backrun', at: 1, reason: 'test', block: 1n }])
    const queuedBehind = store.append(open.record.id, [{ type: 'no-backrun', at: 2, reason: 'test', block: 1n }])
    // acknowledged while the lifecycle batch is still in flight: its own batch did not wait for it
    const persisted = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(511) })
    expect(persisted.created).toBe(true)
    expect(batches).toEqual([['e!'], ['s!', 'o!', 'e!']])
    release()
    await Promise.all([append, queuedBehind])
    // the second append waited for the first (one lifecycle batch at a time, in order)
    expect(batches).toEqual([['e!'], ['s!', 'o!', 'e!'], ['e!']])
    expect((await store.get(open.record.id))?.events.map((e) => e.type)).toEqual(['received', 'no-backrun', 'no-backrun'])
    await store.close()
    const reopened = newStore()
    await reopened.open()
    expect((await reopened.get(persisted.record.id))?.events.map((e) => e.type)).toEqual(['received'])
  })

  it('a failed batch of new submissions fails only them; the lifecycle lane goes on', async () => {
    const store = newStore({ writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 1 } })
    await store.open()
    const open = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(512) })
    const db = (store as unknown as { db: { batch: (ops: Array<{ key: string }>, ...rest: unknown[]) => Promise<void> } }).db
    const { batch } = db
    // every batch that writes a record fails
    db.batch = (ops, ...rest) => (ops.some((o) => o.key.startsWith('s!')) ? Promise.reject(new Error('disk full')) : batch.apply(db, [ops, ...rest]))
    const [persisted, appended] = await Promise.allSettled([
      store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(513) }),
      store.append(open.record.id, [{ type: 'no-backrun', at: 1, reason: 'test', block: 1n }]),
    ])
    expect(persisted.status).toBe('rejected')
    expect((persisted as PromiseRejectedResult).reason).toBeInstanceOf(PersistenceError)
    expect(appended.status).toBe('fulfilled')
    expect(store.stats().open).toBe(1)
    await store.close()
  })

  it('a new submission goes ahead of queued lifecycle writes, in a batch of its own, and batches hold at most maxGroupOps', async () => {
    const store = newStore({ maxGroupOps: 50 })
    await store.open()
    const open = await store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(400) })
    const batches: number[] = []
    const recordBatches: string[][] = []
    const db = (store as unknown as { db: { batch: (ops: Array<{ key: string }>, ...rest: unknown[]) => unknown } }).db
    const { batch } = db
    db.batch = (ops, ...rest) => {
      batches.push(ops.length)
      if (ops.some((o) => o.key.startsWith('s!'))) recordBatches.push(ops.map((o) => o.key.slice(0, 2)))
      return batch.apply(db, [ops, ...rest])
    }
    const order: string[] = []
    // 10 appends of 40 events each: one per batch (two do not fit in 50 operations)
    const appends = Array.from({ length: 10 }, (_, i) =>
      store.append(open.record.id, Array.from({ length: 40 }, (_, k): LifecycleEvent => ({ type: 'no-backrun', at: i * 100 + k, reason: 'test', block: 1n }))).then(() => void order.push(`append ${i}`)),
    )
    const late = store.persist({ kind: 'private-tx', partnerId: 'p', rawTx: await userTx(401) }).then((r) => void order.push(`persist ${r.created}`))
    await Promise.all([...appends, late])
    // queued behind the first append's batch only, not behind the nine others
    expect(order.indexOf('persist true')).toBeLessThanOrEqual(2)
    // its batch carried its own three writes and no lifecycle event
    expect(recordBatches).toEqual([['s!', 'o!', 'e!']])
    expect(Math.max(...batches)).toBeLessThanOrEqual(50)
    expect((await store.get(open.record.id))?.events).toHaveLength(401)
  })
})
