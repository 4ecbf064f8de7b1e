/**
 * The durable outbox of private submission: a submission is acknowledged only after it is on disk.
 * The embedded {@link SubmissionStore} (store/submission-store.ts); PostgreSQL is the shared one.
 *
 * Storage: one LevelDB database (classic-level) in `dataDir`, opened by one process at a time
 * (LevelDB's LOCK file refuses a second opener). Every write is a LevelDB batch written with
 * `{ sync: true }`, so it is fsynced before the promise resolves, and a batch is atomic: after a
 * crash either all of its keys exist or none.
 *
 * Key layout (strings, UTF-8 values; `<id>` is `<kind>:<hash>`, see {@link SubmissionId}):
 *
 * | key                                   | value                         |
 * |---------------------------------------|-------------------------------|
 * | `s!<id>`                              | SubmissionRecord, JSON        |
 * | `e!<id>!<boot:8 hex><seq:12 hex>`     | LifecycleEvent, JSON          |
 * | `o!<id>`                              | '' : index of undelivered     |
 * | `f!<finishedAt ms:15 digits>!<id>`    | '' : finished, oldest first   |
 * | `m!boot`                              | boot counter (decimal)        |
 *
 * Event keys sort in write order: `boot` is incremented (and fsynced) on every open, `seq` counts
 * writes within one open, so no clock is involved. JSON encodes bigint as {"$bigint":"…"}.
 *
 * Group commit: writes issued while another write is being fsynced are merged into the next
 * batch, so one fsync covers many submissions under load; each caller's promise still resolves
 * only after its own keys are durable. Writes go in two lanes, each one batch in flight at a
 * time: new submissions (acknowledgements waiting), and everything else (the dispatcher's
 * lifecycle writes, re-opens, pruning). A batch carries one lane's writes only, at most
 * `maxGroupOps` operations, so an acknowledgement's batch is never filled up with lifecycle
 * events, and it is handed to LevelDB while a lifecycle batch is in flight: LevelDB queues it
 * behind that write by itself, without waiting for this thread to take up the lifecycle batch's
 * completion first (under bench:submit that hop was 17.5 ms of the slowest 1% of
 * acknowledgements, h10-acktail). A synced batch of 2 000 operations took ~70 ms on the 2-core
 * machine, 1 000 ~32 ms, 100 ~10 ms, 3 operations ~5 ms. The lanes commute: a new submission's
 * keys are its own (nothing else writes a record, and an append needs its submission open,
 * which its persist's resolution makes it), and pruning deletes finished submissions only. Until
 * 2026-11-27 one batch at a time carried both, new submissions first. A new submission's duplicate
 * check is read as it arrives, not when its group is formed: the new submissions of one turn of the
 * event loop share one `getMany` (a LevelDB get per acknowledgement was 4% of the service's main
 * thread under bench:submit), which runs while the group in flight is being fsynced, and its group
 * then writes those whose record is absent. Until 2026-11-26 the check ran at the head of each
 * group, before its batch: every acknowledgement waited for two LevelDB operations in a row (a read
 * on the thread pool, then the fsynced batch) behind each group in flight, and under bench:submit
 * on a loaded machine that read took as long as the fsync (15-60 ms each). The check can run early
 * because nothing else writes a record: a second persist of the same id while the first is in
 * flight shares its promise (`persisting`). A failed batch (or check) is retried (bounded,
 * exponential backoff with full jitter); when it still fails every caller in its group gets a
 * {@link PersistenceError}.
 *
 * Memory (native, outside the V8 heap): LevelDB's write buffer (the memtable; one more while the
 * full one is written to disk), its block cache, and per open table file its index and bloom
 * filter blocks. Each is bounded by an explicit {@link OutboxLevelDbOptions} setting rather than
 * classic-level's defaults; `nativeMemoryBytes()` is LevelDB's own count of the memtables and the cache.
 */
import { ClassicLevel } from 'classic-level'

import type { Hex } from '../chain/types.ts'
import { errorText } from '../primitives/error-text.ts'
import { nonNegativeInt, positiveInt } from '../primitives/numbers.ts'
import { decodeJson, encodeJson } from './codec.ts'
import { isFinished } from './lifecycle.ts'
import { LeaseLostError, OutboxFullError, PersistenceError } from './errors.ts'
import { InProcessLeases } from './store/in-process-leases.ts'
import { resolveStoreSettings, withRetry, type StoreSettings } from './store/store-settings.ts'
import { buildRecord } from './store/submission-record.ts'
import { STORE_DEFAULTS, type AppendOptions, type OutboxStats, type PersistOptions, type PersistResult, type SubmissionStore, type SubmissionStoreOptions } from './store/submission-store.ts'
import {
  SUBMISSION_KINDS,
  isTerminalEvent,
  submissionId,
  type LifecycleEvent,
  type NewSubmission,
  type ReorgEvent,
  type StoredSubmission,
  type SubmissionId,
  type SubmissionRecord,
} from './types.ts'

// The store's types live with the interface; re-exported for the modules that import them from here.
export type { OutboxRetention, OutboxStats, PersistResult } from './store/submission-store.ts'

/** LevelDB's memory bounds (see the module comment); each defaults to {@link OUTBOX_LEVELDB_DEFAULTS}. */
export interface OutboxLevelDbOptions {
  /** the block cache (uncompressed data blocks read back), bytes (0: nothing is cached; at most 1 GiB) */
  cacheBytes?: number
  /** the memtable: writes are buffered in memory up to this before they go to a table file, bytes (64 KiB to 1 GiB) */
  writeBufferBytes?: number
  /** table files kept open, each with its index and filter blocks in memory (74 to 50 000, LevelDB's own range) */
  maxOpenFiles?: number
}

export const OUTBOX_LEVELDB_DEFAULTS = {
  cacheBytes: 8 * 1_048_576,
  writeBufferBytes: 4 * 1_048_576,
  maxOpenFiles: 500,
} as const

export interface OutboxStoreOptions extends SubmissionStoreOptions {
  /**
   * Most batch operations merged into one group commit (OUTBOX_MAX_GROUP_OPS), in each lane.
   * Default 64: an acknowledgement waits for the batches in flight before its own (LevelDB writes
   * one at a time), each as long as its operations make it. Until 2026-11-26 256 (see the module
   * comment).
   */
  maxGroupOps?: number
  /** LevelDB's memory bounds */
  leveldb?: OutboxLevelDbOptions
}

type WriteOp = { type: 'put'; key: string; value: string } | { type: 'del'; key: string }

interface PendingWrite {
  ops: WriteOp[]
  operation: PersistenceError['operation']
  /** when set, `ops` are written only if this key is absent (read as the write is queued): present, its value is resolved and nothing is written */
  unlessKey?: { key: string; value: Promise<string | undefined> }
  resolve: (existing: string | undefined) => void
  reject: (error: PersistenceError) => void
}

/** one lane of the group commit: its queued writes and its batch in flight (one at a time) */
interface WriteLane {
  queue: PendingWrite[]
  flushing: Promise<void> | undefined
}
const newLane = (): WriteLane => ({ queue: [], flushing: undefined })

const DEFAULT_MAX_GROUP_OPS = 64

const key = {
  record: (id: SubmissionId) => `s!${id}`,
  open: (id: SubmissionId) => `o!${id}`,
  event: (id: SubmissionId, suffix: string) => `e!${id}!${suffix}`,
  eventsFrom: (id: SubmissionId) => `e!${id}!`,
  eventsTo: (id: SubmissionId) => `e!${id}!~`,
  finished: (at: number, id: SubmissionId) => `f!${String(Math.max(0, Math.trunc(at))).padStart(15, '0')}!${id}`,
  boot: 'm!boot',
}
const FINISHED_ID_OFFSET = 'f!'.length + 15 + 1

export class OutboxStore implements SubmissionStore {
  readonly dataDir: string
  /** Leases in this process's memory: the process that owns the directory owns every submission in it. */
  readonly leases: InProcessLeases
  private db: ClassicLevel<string, string> | undefined
  private readonly settings: StoreSettings
  private readonly maxGroupOps: number
  private readonly leveldb: Required<OutboxLevelDbOptions>

  private readonly openIds = new Set<SubmissionId>()
  /** open ids whose terminal event is being written */
  private readonly finishing = new Set<SubmissionId>()
  /** persist() calls between their capacity check and their write */
  private reserved = 0
  private finishedCount = 0
  private boot = 0
  private seq = 0
  private readonly persisting = new Map<SubmissionId, Promise<PersistResult>>()
  /** writes waiting for their lane's next group commit: new submissions (acknowledgements), and the rest */
  private readonly lanes: { persists: WriteLane; others: WriteLane } = { persists: newLane(), others: newLane() }
  /** duplicate checks waiting for the next getMany (one per turn of the event loop, see checkAbsent) */
  private checks: Array<{ key: string; resolve: (value: string | undefined) => void; reject: (error: unknown) => void }> = []
  private checkScheduled = false
  private pruning: Promise<number> | undefined

  /** @param dataDir directory of the database; created when missing (its parent must exist) */
  constructor(dataDir: string, options: OutboxStoreOptions = {}) {
    if (typeof dataDir !== 'string' || dataDir === '') throw new TypeError('OutboxStore: dataDir must be a non-empty path')
    this.dataDir = dataDir
    this.settings = resolveStoreSettings(options, 'OutboxStore')
    this.maxGroupOps = positiveInt('maxGroupOps', options.maxGroupOps ?? DEFAULT_MAX_GROUP_OPS, 'OutboxStore')
    this.leveldb = resolveLevelDbOptions(options.leveldb ?? {})
    this.leases = new InProcessLeases(
      {
        openIds: () => this.openIds,
        isOpen: (id) => this.openIds.has(id) && !this.finishing.has(id),
        requireOpen: () => {
          this.requireOpen('read')
        },
      },
      { leaseMs: this.settings.leaseMs, now: this.settings.now },
    )
  }

  get description(): string {
    return `leveldb ${this.dataDir}`
  }

  /**
   * Open (or reopen after close()) the database and load the indexes.
   * @throws PersistenceError when the directory cannot be opened: a path that is a file, no
   *   permission, or another process holding the database
   */
  async open(): Promise<void> {
    if (this.db !== undefined && this.db.status === 'open') return
    const { cacheBytes, writeBufferBytes, maxOpenFiles } = this.leveldb
    const db = new ClassicLevel<string, string>(this.dataDir, {
      keyEncoding: 'utf8',
      valueEncoding: 'utf8',
      createIfMissing: true,
      cacheSize: cacheBytes,
      writeBufferSize: writeBufferBytes,
      maxOpenFiles,
    })
    try {
      await db.open()
      const previous = await db.get(key.boot)
      const boot = (previous === undefined ? 0 : Number(previous)) + 1
      await db.put(key.boot, String(boot), { sync: true })
      const openIds: SubmissionId[] = []
      for await (const k of db.keys({ gte: 'o!', lt: 'o!~' })) openIds.push(k.slice(2) as SubmissionId)
      let finished = 0
      for await (const _k of db.keys({ gte: 'f!', lt: 'f!~' })) finished++
      this.db = db
      this.boot = boot
      this.seq = 0
      this.openIds.clear()
      for (const id of openIds) this.openIds.add(id)
      this.leases.clear()
      this.finishedCount = finished
    } catch (cause) {
      await db.close().catch(() => undefined)
      throw new PersistenceError(`cannot open the outbox database in ${this.dataDir}: ${errorText(cause)}`, 'open', 0, { cause })
    }
  }

  /** Waits for queued writes, then closes the database. Later calls fail with PersistenceError. */
  async close(): Promise<void> {
    for (let lane = this.flushingLane(); lane !== undefined; lane = this.flushingLane()) await lane
    await this.pruning?.catch(() => undefined)
    await this.db?.close()
  }

  /** Whether the database is open (a local directory has no outage short of the disk's). */
  async ready(): Promise<boolean> {
    return this.db?.status === 'open'
  }

  /**
   * Store a new submission durably (fsynced) and return its record. The same kind and hash again
   * returns the stored record with `created: false` and writes nothing, also while the first call
   * is still writing; the record keeps the first partner's id.
   *
   * @throws TypeError for input that is not hex bytes / an empty bundle / a bad option (the caller
   *   validates with decodeSignedTransaction first, so this is a programming error)
   * @throws OutboxFullError when `maxOpen` undelivered submissions are held
   * @throws PersistenceError when the write (or the duplicate check) failed after its retries;
   *   nothing is stored then
   */
  async persist(input: NewSubmission, options: PersistOptions = {}): Promise<PersistResult> {
    const record = buildRecord(input, this.settings.now())
    const inFlight = this.persisting.get(record.id)
    if (inFlight !== undefined) return { record: (await inFlight).record, created: false }
    const writing = this.persistNew(record)
    this.persisting.set(record.id, writing)
    try {
      const result = await writing
      if (result.created && options.leaseOwner !== undefined) this.leases.grant(options.leaseOwner, record.id)
      return result
    } finally {
      this.persisting.delete(record.id)
    }
  }

  /**
   * Append lifecycle events durably, in order. A terminal event (included / expired / dropped)
   * must come last; it moves the submission from the undelivered to the finished index in the
   * same atomic batch.
   *
   * @throws Error when the submission is not open (unknown, finished, or already finishing)
   * @throws LeaseLostError when `options.leaseOwner` does not hold the lease (checked as the write is queued: one process, no race)
   * @throws PersistenceError when the write failed after its retries
   */
  async append(id: SubmissionId, events: readonly LifecycleEvent[], options: AppendOptions = {}): Promise<void> {
    if (events.length === 0) return
    this.requireOpen('append')
    if (!this.openIds.has(id) || this.finishing.has(id)) {
      throw new Error(`OutboxStore.append: submission ${id} is not open (unknown, finished or finishing)`)
    }
    if (options.leaseOwner !== undefined && !this.leases.holds(options.leaseOwner, id)) throw new LeaseLostError(id, options.leaseOwner)
    const terminalAt = events.findIndex(isTerminalEvent)
    if (terminalAt !== -1 && terminalAt !== events.length - 1) {
      throw new Error('OutboxStore.append: a terminal event must be the last one appended')
    }
    const ops: WriteOp[] = events.map((event) => ({ type: 'put', key: key.event(id, this.nextEventSuffix()), value: encodeJson(event) }))
    if (terminalAt === -1) {
      await this.commit(ops, 'append')
      return
    }
    const terminal = events[terminalAt]
    ops.push({ type: 'del', key: key.open(id) }, { type: 'put', key: key.finished(terminal.at, id), value: '' })
    this.finishing.add(id)
    try {
      await this.commit(ops, 'append')
      this.openIds.delete(id)
      this.leases.end(id)
      this.finishedCount++
    } finally {
      this.finishing.delete(id)
    }
  }

  /**
   * Re-open a finished submission whose inclusion a reorg undid: `event` appended, the finished
   * index entry replaced by an undelivered one, in one atomic batch (see SubmissionStore.reopen).
   *
   * @throws Error when the submission is unknown or not finished
   * @throws PersistenceError when the write failed after its retries
   */
  async reopen(id: SubmissionId, event: ReorgEvent): Promise<void> {
    this.requireOpen('append')
    if (this.openIds.has(id)) throw new Error(`OutboxStore.reopen: submission ${id} is not finished`)
    const events = await this.readEvents(id)
    const terminal = events.findLast(isTerminalEvent)
    if (terminal === undefined || !isFinished(events) || this.openIds.has(id)) throw new Error(`OutboxStore.reopen: submission ${id} is not finished (unknown or open)`)
    const ops: WriteOp[] = [
      { type: 'put', key: key.event(id, this.nextEventSuffix()), value: encodeJson(event) },
      { type: 'del', key: key.finished(terminal.at, id) },
      { type: 'put', key: key.open(id), value: '' },
    ]
    await this.commit(ops, 'append')
    this.openIds.add(id)
    this.finishedCount = Math.max(0, this.finishedCount - 1)
  }

  /** A submission and its lifecycle, whoever submitted it (for the dispatcher). */
  async get(id: SubmissionId): Promise<StoredSubmission | undefined> {
    const record = await this.readRecord(id)
    if (record === undefined) return undefined
    return { record, events: await this.readEvents(id) }
  }

  /** A submission and its lifecycle if `partnerId` submitted it; undefined otherwise (existence is not revealed). */
  async getForPartner(id: SubmissionId, partnerId: string): Promise<StoredSubmission | undefined> {
    const record = await this.readRecord(id)
    if (record === undefined || record.partnerId !== partnerId) return undefined
    return { record, events: await this.readEvents(id) }
  }

  /** Every kind stored under `hash` that `partnerId` submitted (for a status query by hash). */
  async findForPartner(hash: Hex, partnerId: string): Promise<StoredSubmission[]> {
    const found: StoredSubmission[] = []
    for (const kind of SUBMISSION_KINDS) {
      const stored = await this.getForPartner(submissionId(kind, hash), partnerId)
      if (stored !== undefined) found.push(stored)
    }
    return found
  }

  /** Ids of the submissions not finished yet, without reading them. */
  undeliveredIds(): SubmissionId[] {
    return [...this.openIds]
  }

  /** Every submission not finished yet, with its events, oldest received first: what to resume after a restart. */
  async listUndelivered(): Promise<StoredSubmission[]> {
    this.requireOpen('read')
    const out: StoredSubmission[] = []
    for (const id of [...this.openIds]) {
      const stored = await this.get(id)
      if (stored !== undefined) out.push(stored)
    }
    return out.sort((a, b) => a.record.receivedAt - b.record.receivedAt)
  }

  /**
   * Delete finished submissions beyond `retention.maxFinished` or older than
   * `retention.finishedTtlMs`, oldest first, at most 1 000 per call. Undelivered ones are never
   * pruned. Concurrent calls share one run. Returns how many were deleted.
   */
  pruneFinished(): Promise<number> {
    this.pruning ??= this.prune().finally(() => {
      this.pruning = undefined
    })
    return this.pruning
  }

  stats(): OutboxStats {
    return { open: this.openIds.size, finished: this.finishedCount }
  }

  /** LevelDB's own count of its memory, bytes: the memtables and the block cache in use (not the open tables' index and filter blocks); undefined while closed. */
  nativeMemoryBytes(): number | undefined {
    if (this.db?.status !== 'open') return undefined
    return Number(this.db.getProperty('leveldb.approximate-memory-usage'))
  }

  // -------------------------------------------------------------------------------------------

  private async persistNew(record: SubmissionRecord): Promise<PersistResult> {
    this.requireOpen('persist')
    if (this.openIds.size + this.reserved >= this.settings.maxOpen) {
      // a repeated submission takes no new room: answered even when full
      const existing = await this.readRecord(record.id)
      if (existing !== undefined) return { record: existing, created: false }
      throw new OutboxFullError(this.settings.maxOpen)
    }
    this.reserved++
    try {
      // the duplicate check and the write in one group commit (see the module comment)
      const existing = await this.commit(
        [
          { type: 'put', key: key.record(record.id), value: encodeJson(record) },
          { type: 'put', key: key.open(record.id), value: '' },
          { type: 'put', key: key.event(record.id, this.nextEventSuffix()), value: encodeJson({ type: 'received', at: record.receivedAt }) },
        ],
        'persist',
        key.record(record.id),
      )
      if (existing !== undefined) return { record: decodeJson<SubmissionRecord>(existing), created: false }
      this.openIds.add(record.id)
    } finally {
      this.reserved--
    }
    return { record, created: true }
  }

  private async prune(): Promise<number> {
    const db = this.requireOpen('prune')
    const cutoff = this.settings.now() - this.settings.finishedTtlMs
    const victims: Array<{ indexKey: string; id: SubmissionId }> = []
    try {
      for await (const indexKey of db.keys({ gte: 'f!', lt: 'f!~', limit: STORE_DEFAULTS.pruneBatch })) {
        const finishedAt = Number(indexKey.slice(2, 17))
        const overCount = this.finishedCount - victims.length > this.settings.maxFinished
        if (!overCount && finishedAt >= cutoff) break
        victims.push({ indexKey, id: indexKey.slice(FINISHED_ID_OFFSET) as SubmissionId })
      }
      // Events first: if we stop halfway, the index entry is still there and the next run finishes the job.
      for (const { id } of victims) await db.clear({ gte: key.eventsFrom(id), lt: key.eventsTo(id) })
    } catch (cause) {
      throw new PersistenceError(`pruning finished submissions failed: ${errorText(cause)}`, 'prune', 1, { cause })
    }
    if (victims.length === 0) return 0
    await this.commit(
      victims.flatMap(({ indexKey, id }): WriteOp[] => [
        { type: 'del', key: key.record(id) },
        { type: 'del', key: indexKey },
      ]),
      'prune',
    )
    this.finishedCount -= victims.length
    return victims.length
  }

  private async readRecord(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    const value = await this.withRetry('read', () => this.requireOpen('read').get(key.record(id)))
    return value === undefined ? undefined : decodeJson<SubmissionRecord>(value)
  }

  private async readEvents(id: SubmissionId): Promise<LifecycleEvent[]> {
    const values = await this.withRetry('read', () => this.requireOpen('read').values({ gte: key.eventsFrom(id), lt: key.eventsTo(id) }).all())
    return values.map((v) => decodeJson<LifecycleEvent>(v))
  }

  private nextEventSuffix(): string {
    this.seq++
    return this.boot.toString(16).padStart(8, '0') + this.seq.toString(16).padStart(12, '0')
  }

  private requireOpen(operation: PersistenceError['operation']): ClassicLevel<string, string> {
    if (this.db === undefined) throw new PersistenceError('the outbox is not open (call open() first)', operation, 0)
    return this.db
  }

  /**
   * Queue `ops` for the next group commit; resolves once they are fsynced. With `unlessKey`: when
   * that key exists as the group is written, nothing of `ops` is written and its value is resolved.
   */
  private commit(ops: WriteOp[], operation: PersistenceError['operation'], unlessKey?: string): Promise<string | undefined> {
    return new Promise<string | undefined>((resolve, reject) => {
      const write: PendingWrite = { ops, operation, resolve, reject, ...(unlessKey === undefined ? {} : { unlessKey: { key: unlessKey, value: this.checkAbsent(unlessKey) } }) }
      // a new submission never waits behind, nor in, a batch of other writes: none of those can
      // depend on a persist still queued (an append needs its submission open, which its
      // persist's resolution makes it)
      const lane = operation === 'persist' ? this.lanes.persists : this.lanes.others
      lane.queue.push(write)
      lane.flushing ??= this.flush(lane).finally(() => {
        lane.flushing = undefined
      })
    })
  }

  /** a lane's batch in flight, if any */
  private flushingLane(): Promise<void> | undefined {
    return this.lanes.persists.flushing ?? this.lanes.others.flushing
  }

  private async flush(lane: WriteLane): Promise<void> {
    const queue = lane.queue
    while (queue.length > 0) {
      const group: PendingWrite[] = []
      let size = 0
      while (queue.length > 0 && (group.length === 0 || size + queue[0].ops.length <= this.maxGroupOps)) {
        const next = queue.shift() as PendingWrite
        group.push(next)
        size += next.ops.length
      }
      try {
        const operation = group[0].operation
        const found = await this.existingOf(group)
        const ops = group.flatMap((w) => (found.has(w) ? [] : w.ops))
        if (ops.length > 0) await this.withRetry(operation, () => this.requireOpen(operation).batch(ops, { sync: true }))
        for (const w of group) w.resolve(found.get(w))
      } catch (error) {
        for (const w of group) {
          const attempts = error instanceof PersistenceError ? error.attempts : 0
          w.reject(new PersistenceError(`could not write to the outbox (${w.operation}) after ${attempts} attempts: ${errorText(error instanceof PersistenceError ? error.cause : error)}`, w.operation, attempts, { cause: error instanceof PersistenceError ? error.cause : error }))
        }
      }
    }
  }

  /**
   * The writes of `group` whose `unlessKey` exists, with its value. The reads were started as the
   * writes were queued (checkAbsent); a failed one fails the group, like a failed batch.
   */
  private async existingOf(group: readonly PendingWrite[]): Promise<Map<PendingWrite, string>> {
    const found = new Map<PendingWrite, string>()
    for (const w of group) {
      if (w.unlessKey === undefined) continue
      const value = await w.unlessKey.value
      if (value !== undefined) found.set(w, value)
    }
    return found
  }

  /**
   * The value of `key` now (undefined: absent), read together with the other checks queued in this
   * turn of the event loop: one getMany of at most `maxGroupOps` keys per read.
   */
  private checkAbsent(key: string): Promise<string | undefined> {
    const value = new Promise<string | undefined>((resolve, reject) => {
      this.checks.push({ key, resolve, reject })
      if (this.checkScheduled) return
      this.checkScheduled = true
      // in the check phase: the requests that arrived in this turn's poll phase are all queued
      setImmediate(() => {
        this.checkScheduled = false
        this.readChecks()
      })
    })
    // awaited when its group is formed, possibly after it failed: not an unhandled rejection meanwhile
    value.catch(() => undefined)
    return value
  }

  private readChecks(): void {
    while (this.checks.length > 0) {
      const batch = this.checks.splice(0, this.maxGroupOps)
      this.withRetry('persist', () => this.requireOpen('persist').getMany(batch.map((c) => c.key))).then(
        (values) => batch.forEach((c, i) => c.resolve(values[i])),
        (error: unknown) => {
          for (const c of batch) c.reject(error)
        },
      )
    }
  }

  private withRetry<T>(operation: PersistenceError['operation'], run: () => Promise<T>): Promise<T> {
    return withRetry(this.settings, 'outbox', operation, run)
  }
}

/** @throws RangeError naming the setting when one is out of range */
function resolveLevelDbOptions(options: OutboxLevelDbOptions): Required<OutboxLevelDbOptions> {
  const cacheBytes = nonNegativeInt('leveldb.cacheBytes', options.cacheBytes ?? OUTBOX_LEVELDB_DEFAULTS.cacheBytes, 'OutboxStore')
  const writeBufferBytes = positiveInt('leveldb.writeBufferBytes', options.writeBufferBytes ?? OUTBOX_LEVELDB_DEFAULTS.writeBufferBytes, 'OutboxStore')
  const maxOpenFiles = positiveInt('leveldb.maxOpenFiles', options.maxOpenFiles ?? OUTBOX_LEVELDB_DEFAULTS.maxOpenFiles, 'OutboxStore')
  // LevelDB clips the last two silently to these ranges: refused here so that the bound in force is the one configured
  if (cacheBytes > 1_073_741_824) throw new RangeError(`OutboxStore: leveldb.cacheBytes must be at most 1073741824, got ${cacheBytes}`)
  if (writeBufferBytes < 65_536 || writeBufferBytes > 1_073_741_824) throw new RangeError(`OutboxStore: leveldb.writeBufferBytes must be from 65536 to 1073741824, got ${writeBufferBytes}`)
  if (maxOpenFiles < 74 || maxOpenFiles > 50_000) throw new RangeError(`OutboxStore: leveldb.maxOpenFiles must be from 74 to 50000, got ${maxOpenFiles}`)
  return { cacheBytes, writeBufferBytes, maxOpenFiles }
}
