/**
 * The submission store: where an acknowledged submission and its lifecycle live, behind one
 * interface with two implementations.
 *
 * - {@link OutboxStore} (../outbox-store.ts): LevelDB in a directory one process owns. The
 *   embedded default.
 * - {@link PostgresSubmissionStore} (./postgres-store.ts): PostgreSQL (`DATABASE_URL`), shared by
 *   any number of service processes.
 *
 * What every implementation promises (test/submission/store/submission-store.contract.ts checks it
 * against both):
 * - `persist` resolves only once the submission is durable (fsynced / committed with
 *   synchronous_commit on). The same kind and hash again returns the stored record with
 *   `created: false` and stores nothing new, also when both arrive at the same moment.
 * - A failed write rejects with PersistenceError and nothing is acknowledged; a full store rejects
 *   with OutboxFullError.
 * - Lifecycle events are kept in the order they were appended; a terminal event closes the
 *   submission (it leaves the open list; appending to it afterwards throws) until a reorg that
 *   replaced the block of its inclusion re-opens it (`reopen`).
 * - Retention prunes finished submissions only, oldest first.
 * - Leases: an open submission has at most one owner at a time (see {@link SubmissionLeases}).
 */
import type { Hex } from '../../chain/types.ts'
import type { BackoffPolicy } from '../../transport/backoff.ts'
import type { PersistenceError } from '../errors.ts'
import type { LifecycleEvent, NewSubmission, ReorgEvent, StoredSubmission, SubmissionId, SubmissionRecord } from '../types.ts'

export interface PersistResult {
  record: SubmissionRecord
  /** false: this hash (of this kind) was already stored; nothing new was written or will be dispatched */
  created: boolean
}

export interface PersistOptions {
  /**
   * Lease the new submission to this owner in the same write (see {@link SubmissionLeases}), so the
   * process that acknowledged it dispatches it and no other process claims it meanwhile. Ignored
   * for a repeated submission (its lease stays as it is).
   */
  leaseOwner?: string
}

export interface AppendOptions {
  /**
   * Write only while this owner holds the submission's lease (see {@link SubmissionLeases}); else
   * nothing is written and append throws LeaseLostError. A process that dispatches from a shared
   * store passes its owner id, so a submission whose lease another process took over never gets a
   * second writer. Without it the write is not checked (one process owns the store).
   */
  leaseOwner?: string
}

export interface OutboxStats {
  open: number
  finished: number
}

/** How long finished submissions are kept (both stores read the same settings). */
export interface OutboxRetention {
  /** Finished records (included / expired / dropped) kept at most. Default 100 000. */
  maxFinished?: number
  /** Finished records older than this are pruned, ms. Default 7 days. */
  finishedTtlMs?: number
}

/** The settings both stores take (each store adds its own). */
export interface SubmissionStoreOptions {
  /** Undelivered submissions held at most; persist() beyond it throws OutboxFullError. Default 100 000. */
  maxOpen?: number
  retention?: OutboxRetention
  /** Attempts per write (and per read) before PersistenceError. Default 4. */
  writeAttempts?: number
  /** Backoff between those attempts. Default { baseMs: 20, maxMs: 250 }. */
  writeBackoff?: BackoffPolicy
  /** Clock for receivedAt, event times and retention, ms. Default Date.now. */
  now?: () => number
  /** Called before each retry of a failed read or write (for logs and metrics). */
  onRetry?: (info: { operation: PersistenceError['operation']; attempt: number; error: unknown }) => void
  /** Lease period of the store's leases, ms. Default 30 000. */
  leaseMs?: number
}

/** What a claim or renewal granted: the submissions now held, and until when the holder may trust it. */
export interface LeaseGrant {
  ids: SubmissionId[]
  /**
   * The holder's own clock (Date.now of the process that asked), ms: the leases are held at least
   * until then. Taken before the request was sent plus the lease period, so it never overstates
   * what the store granted; the holder stops working on a submission it could not renew by then.
   */
  validUntil: number
  /**
   * A claim's only: for each claimed submission taken from an owner that had marked a send horizon
   * (see {@link SubmissionLeases.markSendHorizon}), that horizon. The new owner sends nothing for
   * it up to that block: the previous owner's sends up to there may have gone out unrecorded.
   */
  horizons?: Map<SubmissionId, bigint>
}

/**
 * Leases on open submissions: each open submission is held by at most one owner at a time, for a
 * lease period; an owner that stops renewing (a dead process) loses its leases when the period
 * ends, and another owner's claim takes them over. A terminal event ends the lease.
 *
 * Owners are opaque strings (a process id per service process); the store knows nothing about them.
 */
export interface SubmissionLeases {
  /** the lease period, ms */
  readonly leaseMs: number
  /**
   * Claim up to `limit` open submissions that no owner holds, or whose lease has expired (oldest
   * received first in PostgreSQL; the embedded store's own order otherwise). Submissions another
   * claim is taking at this moment are skipped, not waited for.
   * @throws PersistenceError when the store cannot be written
   */
  claim(owner: string, limit: number): Promise<LeaseGrant>
  /**
   * Extend `owner`'s leases on `ids` (with none, it still tells the store the owner is alive). The grant lists those still held by `owner` (still open and
   * not taken over by another owner); the others are lost and must not be worked on any more.
   * @throws PersistenceError when the store cannot be written
   */
  renew(owner: string, ids: readonly SubmissionId[]): Promise<LeaseGrant>
  /**
   * Give up `owner`'s leases on `ids` (a clean shutdown), so others can claim them at once.
   * @throws PersistenceError when the store cannot be written
   */
  release(owner: string, ids: readonly SubmissionId[]): Promise<void>
  /**
   * Record durably that `owner`'s sends up to `block` may have gone out: its send horizon, one
   * value per owner, never lowered. An owner marks it before it sends for `block`, instead of a
   * `relay-sending` event per submission before each send (it records each send once, after the
   * relay's answer); a claim that takes a submission from that owner answers the horizon with it
   * (LeaseGrant.horizons), so a send the previous owner made and could not record (it died
   * between the send and its record) is not repeated for that block. Committed synchronously.
   * Answers false, marking nothing, when the store cannot vouch that no claim takes the owner's
   * submissions meanwhile (PostgreSQL: the owner's heartbeat is not live, see renew): the owner
   * then announces each send before it goes out, as without a horizon.
   * @throws PersistenceError when the store cannot be written
   */
  markSendHorizon(owner: string, block: bigint): Promise<boolean>
}

export interface SubmissionStore {
  /** what it is, for logs: `leveldb <dir>` or `postgres <host:port/db>` (never a password) */
  readonly description: string
  /**
   * Open (or reopen after close()) and make ready for use.
   * @throws PersistenceError when the store cannot be opened
   */
  open(): Promise<void>
  /** Waits for writes in progress, then closes. Later calls fail with PersistenceError. */
  close(): Promise<void>
  /**
   * Whether the store can be written now (for readiness): false while it is closed or its
   * database cannot be reached. Never throws; bounded by the store's own timeouts.
   */
  ready(): Promise<boolean>
  /**
   * Store a new submission durably and return its record. The same kind and hash again returns
   * the stored record with `created: false` and writes nothing; the record keeps the first
   * partner's id.
   *
   * @throws TypeError for input that is not hex bytes / an empty bundle / a bad option (the caller
   *   validates with decodeSignedTransaction first, so this is a programming error)
   * @throws OutboxFullError when the store's maximum of undelivered submissions is held
   * @throws PersistenceError when the write (or the duplicate check) failed after its retries;
   *   nothing is acknowledged then
   */
  persist(input: NewSubmission, options?: PersistOptions): Promise<PersistResult>
  /**
   * Append lifecycle events durably, in order. A terminal event (included / expired / dropped)
   * must come last; it closes the submission in the same atomic write.
   *
   * @throws Error when the submission is not open (unknown, finished, or already finishing)
   * @throws LeaseLostError when `options.leaseOwner` is given and does not hold the lease
   * @throws PersistenceError when the write failed after its retries
   */
  append(id: SubmissionId, events: readonly LifecycleEvent[], options?: AppendOptions): Promise<void>
  /**
   * Re-open a finished submission whose inclusion a reorg undid: append `event` (with its
   * `includedBlock`) and move the submission back to the open list in the same atomic write. Not
   * refused at maxOpen: it was acknowledged already. It is open unleased.
   *
   * @throws Error when the submission is unknown or not finished
   * @throws PersistenceError when the write failed after its retries
   */
  reopen(id: SubmissionId, event: ReorgEvent): Promise<void>
  /** A submission and its lifecycle, whoever submitted it (for the dispatcher). */
  get(id: SubmissionId): Promise<StoredSubmission | undefined>
  /** A submission and its lifecycle if `partnerId` submitted it; undefined otherwise (existence is not revealed). */
  getForPartner(id: SubmissionId, partnerId: string): Promise<StoredSubmission | undefined>
  /** Every kind stored under `hash` that `partnerId` submitted, in SUBMISSION_KINDS order (for a status query by hash). */
  findForPartner(hash: Hex, partnerId: string): Promise<StoredSubmission[]>
  /** Every submission not finished yet, with its events, oldest received first: what to resume after a restart. */
  listUndelivered(): Promise<StoredSubmission[]>
  /**
   * Delete finished submissions beyond `retention.maxFinished` or older than
   * `retention.finishedTtlMs`, oldest first, at most 1 000 per call. Undelivered ones are never
   * pruned. Returns how many were deleted.
   */
  pruneFinished(): Promise<number>
  /** Open and finished submissions held (a shared database: as last counted, see the implementation). */
  stats(): OutboxStats
  /** an embedded store's native memory by its own count, bytes (LevelDB: memtables and block cache); undefined while closed */
  nativeMemoryBytes?(): number | undefined
  /** Leases on open submissions, for stores shared by several processes (both stores have them). */
  readonly leases?: SubmissionLeases
}

/** Defaults both stores share (each is an option of the store). */
export const STORE_DEFAULTS = {
  /** undelivered submissions held at most */
  maxOpen: 100_000,
  /** finished submissions kept at most */
  maxFinished: 100_000,
  /** finished submissions older than this are pruned, ms (7 days) */
  finishedTtlMs: 7 * 24 * 3_600_000,
  /** finished submissions deleted per pruneFinished() call at most */
  pruneBatch: 1_000,
  /** the lease period, ms */
  leaseMs: 30_000,
  writeAttempts: 4,
  writeBackoff: { baseMs: 20, maxMs: 250 } satisfies BackoffPolicy,
} as const

/** @throws TypeError when `owner` is not a non-empty string (a programming error) */
export function requireLeaseOwner(owner: string): void {
  if (typeof owner !== 'string' || owner === '') throw new TypeError('lease owner must be a non-empty string')
}
