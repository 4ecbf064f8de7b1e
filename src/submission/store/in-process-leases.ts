/**
 * Leases kept in the memory of the one process that owns an embedded store (LevelDB): that process
 * owns every submission anyway, so the table only has to keep owners within it apart (and behave
 * as the shared store's leases do, so one contract holds for both). A restart forgets every lease,
 * which is right: the owners were in the process that ended.
 */
import { positiveInt } from '../../primitives/numbers.ts'
import type { SubmissionId } from '../types.ts'
import { STORE_DEFAULTS, requireLeaseOwner, type LeaseGrant, type SubmissionLeases } from './submission-store.ts'

/** What the leases read from their store. */
export interface LeasedSubmissions {
  /** the open submissions, in the order the store holds them */
  openIds(): Iterable<SubmissionId>
  isOpen(id: SubmissionId): boolean
  /** @throws PersistenceError when the store is not open */
  requireOpen(): void
}

/**
 * Owners whose send horizon is kept at most (owners live within this one process: a few dispatchers
 * in tests, one in the service); an owner beyond them that marked none for that long is gone.
 */
const MAX_HORIZONS = 1_024

interface Lease {
  owner: string
  expiresAt: number
}

export class InProcessLeases implements SubmissionLeases {
  readonly leaseMs: number
  private readonly now: () => number
  /** at most one entry per open submission: entries leave with their submission (end()) */
  private readonly held = new Map<SubmissionId, Lease>()
  /** each owner's send horizon (markSendHorizon), the oldest marked forgotten beyond MAX_HORIZONS */
  private readonly horizons = new Map<string, bigint>()

  constructor(
    private readonly submissions: LeasedSubmissions,
    options: { leaseMs?: number; now?: () => number } = {},
  ) {
    this.leaseMs = positiveInt('leaseMs', options.leaseMs ?? STORE_DEFAULTS.leaseMs, 'InProcessLeases')
    this.now = options.now ?? Date.now
  }

  async claim(owner: string, limit: number): Promise<LeaseGrant> {
    requireLeaseOwner(owner)
    positiveInt('limit', limit, 'claim')
    this.submissions.requireOpen()
    const now = this.now()
    const ids: SubmissionId[] = []
    const horizons = new Map<SubmissionId, bigint>()
    for (const id of this.submissions.openIds()) {
      if (ids.length >= limit) break
      const lease = this.held.get(id)
      if (lease !== undefined && lease.expiresAt > now) continue
      const horizon = lease === undefined ? undefined : this.horizons.get(lease.owner)
      if (horizon !== undefined) horizons.set(id, horizon)
      this.held.set(id, { owner, expiresAt: now + this.leaseMs })
      ids.push(id)
    }
    return { ids, validUntil: now + this.leaseMs, horizons }
  }

  /** Always marked: every owner lives in this process, so none can lose its leases while it marks. */
  async markSendHorizon(owner: string, block: bigint): Promise<boolean> {
    requireLeaseOwner(owner)
    this.submissions.requireOpen()
    const previous = this.horizons.get(owner)
    if (previous !== undefined && previous >= block) return true
    // re-inserted: the Map's order is the order of marking, oldest first
    this.horizons.delete(owner)
    this.horizons.set(owner, block)
    if (this.horizons.size > MAX_HORIZONS) this.horizons.delete(this.horizons.keys().next().value as string)
    return true
  }

  async renew(owner: string, ids: readonly SubmissionId[]): Promise<LeaseGrant> {
    requireLeaseOwner(owner)
    this.submissions.requireOpen()
    const now = this.now()
    const renewed: SubmissionId[] = []
    for (const id of new Set(ids)) {
      const lease = this.held.get(id)
      if (lease === undefined || lease.owner !== owner || !this.submissions.isOpen(id)) continue
      lease.expiresAt = now + this.leaseMs
      renewed.push(id)
    }
    return { ids: renewed, validUntil: now + this.leaseMs }
  }

  async release(owner: string, ids: readonly SubmissionId[]): Promise<void> {
    requireLeaseOwner(owner)
    this.submissions.requireOpen()
    for (const id of ids) {
      if (this.held.get(id)?.owner === owner) this.held.delete(id)
    }
  }

  /** Whether `owner` holds the lease on `id` now (expired leases no other owner took are still held, as in PostgreSQL). */
  holds(owner: string, id: SubmissionId): boolean {
    return this.held.get(id)?.owner === owner
  }

  /** Lease a submission just persisted to `owner` (PersistOptions.leaseOwner). */
  grant(owner: string, id: SubmissionId): void {
    requireLeaseOwner(owner)
    this.held.set(id, { owner, expiresAt: this.now() + this.leaseMs })
  }

  /** The submission finished: its lease ends with it. */
  end(id: SubmissionId): void {
    this.held.delete(id)
  }

  /** Forget every lease (the store was closed: its owners are gone with it). */
  clear(): void {
    this.held.clear()
    this.horizons.clear()
  }
}
