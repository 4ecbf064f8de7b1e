/**
 * The dispatcher's leases on a shared store (several service processes on one database): which
 * open submissions this process holds, kept alive by renewing them every `renewIntervalMs`
 * (a third of the lease period by default, so two renewals may fail before a lease can expire),
 * and more claimed in the same round while there is room: new submissions nobody holds, and those
 * of a process that stopped renewing (it died) once their lease expired.
 *
 * A submission this process no longer holds (another took it over after a pause longer than the
 * lease period, or renewals failed until the grant ran out) is handed back to the dispatcher to
 * abandon: no more sends, no more writes (the store refuses them anyway, see AppendOptions). The
 * owner id goes with every lifecycle write.
 */
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'

import { positiveInt } from '../../primitives/numbers.ts'
import type { DispatcherLogger } from '../dispatcher-ports.ts'
import { Limiter } from '../limiter.ts'
import type { SubmissionLeases } from '../store/submission-store.ts'
import type { SubmissionId } from '../types.ts'

export interface DispatcherLeaseOptions {
  /** the shared store's leases */
  leases: SubmissionLeases
  /** this process's owner id; default `<host>/<pid>/<random>` */
  owner?: string
  /** how often held leases are renewed and more are claimed, ms. Default a third of the lease period. */
  renewIntervalMs?: number
  /** submissions claimed per round at most. Default 500. */
  claimBatch?: number
}

/** What the keeper asks of the dispatcher. */
export interface LeaseHolder {
  /** how many more submissions the dispatcher can take on now */
  room(): number
  /**
   * a claimed submission: load it and start delivering it, sending nothing for it up to `horizon`
   * (its previous owner's send horizon, when it had one); false when it could not be taken on
   */
  adopt(id: SubmissionId, horizon: bigint | undefined): Promise<boolean>
  /** a submission no longer held: stop delivering it, write nothing more */
  abandon(id: SubmissionId, reason: string): void
}

export const LEASE_DEFAULTS = { claimBatch: 500 } as const

/** claimed submissions read from the store at once */
const ADOPT_CONCURRENCY = 8

/** A unique owner id per process start: host, pid and a random part (a restarted pid is another owner). */
export function processLeaseOwner(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`
}

export class LeaseKeeper {
  readonly owner: string
  readonly renewIntervalMs: number
  private readonly claimBatch: number
  private readonly leases: SubmissionLeases
  /** submissions this process holds (claimed, or leased as they were stored) */
  private readonly held = new Set<SubmissionId>()
  /** the leases are good until then, on this process's clock (the last successful renewal's grant) */
  private validUntil = 0
  private timer: NodeJS.Timeout | undefined
  private round: Promise<void> | undefined
  private stopped = false

  constructor(
    options: DispatcherLeaseOptions,
    private readonly holder: LeaseHolder,
    private readonly log: DispatcherLogger,
    private readonly now: () => number,
  ) {
    this.leases = options.leases
    this.owner = options.owner ?? processLeaseOwner()
    this.renewIntervalMs = positiveInt('renewIntervalMs', options.renewIntervalMs ?? Math.max(1, Math.floor(options.leases.leaseMs / 3)), 'LeaseKeeper')
    if (this.renewIntervalMs >= options.leases.leaseMs) throw new RangeError(`LeaseKeeper: renewIntervalMs (${this.renewIntervalMs}) must be shorter than the lease period (${options.leases.leaseMs})`)
    this.claimBatch = positiveInt('claimBatch', options.claimBatch ?? LEASE_DEFAULTS.claimBatch, 'LeaseKeeper')
  }

  /** how many submissions this process holds */
  get size(): number {
    return this.held.size
  }

  holds(id: SubmissionId): boolean {
    return this.held.has(id)
  }

  /** A submission was stored with this process as its lease owner (PersistOptions.leaseOwner). */
  leasedOnPersist(id: SubmissionId): void {
    this.held.add(id)
    // persist's lease started as it was written: good at least until a lease period after now
    this.validUntil = Math.max(this.validUntil, this.now() + this.leases.leaseMs)
  }

  /** The submission finished (its terminal event ended the lease in the store) or was abandoned. */
  forget(id: SubmissionId): void {
    this.held.delete(id)
  }

  /** Give one lease back now (a submission this process could not take on). */
  async release(id: SubmissionId): Promise<void> {
    this.held.delete(id)
    await this.leases.release(this.owner, [id])
  }

  /** Whether the held leases can still be trusted (renewed within the lease period). */
  valid(): boolean {
    return this.now() < this.validUntil
  }

  /** Claim a first round now, then renew and claim every renewIntervalMs. */
  async start(): Promise<void> {
    await this.runRound()
    if (this.stopped) return
    this.timer = setInterval(() => void this.runRound(), this.renewIntervalMs)
    this.timer.unref()
  }

  /** One renew-and-claim round now (also when the dispatcher has room again); concurrent calls share it. */
  runRound(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    this.round ??= this.renewAndClaim()
      .catch((err: unknown) => this.log.error({ err }, 'submission leases: renewing or claiming failed'))
      .finally(() => {
        this.round = undefined
      })
    return this.round
  }

  /** Stop renewing; give every held lease back so other processes take the submissions over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
    await this.round
    const ids = [...this.held]
    this.held.clear()
    if (ids.length === 0) return
    try {
      await this.leases.release(this.owner, ids)
      this.log.info({ released: ids.length, owner: this.owner }, 'submission leases released')
    } catch (err) {
      // they expire after the lease period instead
      this.log.warn({ err, held: ids.length }, 'submission leases: release failed; they expire after the lease period')
    }
  }

  private async renewAndClaim(): Promise<void> {
    // also with nothing held: the renewal is the heartbeat a send horizon is marked under
    {
      const asked = [...this.held]
      try {
        const grant = await this.leases.renew(this.owner, asked)
        const kept = new Set(grant.ids)
        this.validUntil = grant.validUntil
        for (const id of asked) {
          // finished meanwhile (forget() ran) or lost to another owner
          if (!kept.has(id) && this.held.delete(id)) this.holder.abandon(id, 'its lease was taken over by another process')
        }
      } catch (err) {
        this.log.warn({ err, held: this.held.size }, 'submission leases: renewal failed')
        if (!this.valid()) {
          for (const id of [...this.held]) this.holder.abandon(id, 'its lease could not be renewed within the lease period')
          this.held.clear()
        }
        return
      }
    }
    if (this.stopped) return
    const limit = Math.min(this.claimBatch, this.holder.room())
    if (limit <= 0) return
    const grant = await this.leases.claim(this.owner, limit)
    if (grant.ids.length === 0) return
    if (this.held.size === 0) this.validUntil = grant.validUntil
    for (const id of grant.ids) this.held.add(id)
    this.log.info({ claimed: grant.ids.length, owner: this.owner }, 'submission leases claimed')
    const refused: SubmissionId[] = []
    // loaded a few at a time: a takeover of hundreds must not hold up the next renewal for long
    const loading = new Limiter(ADOPT_CONCURRENCY)
    await Promise.all(
      grant.ids.map((id) =>
        loading.run(async () => {
          let adopted = false
          try {
            adopted = await this.holder.adopt(id, grant.horizons?.get(id))
          } catch (err) {
            this.log.warn({ err, id }, 'submission leases: loading a claimed submission failed')
          }
          if (!adopted && this.held.delete(id)) refused.push(id)
        }),
      ),
    )
    if (refused.length > 0) await this.leases.release(this.owner, refused)
  }
}
