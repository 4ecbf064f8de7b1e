/**
 * The dispatcher delivers what the outbox has acknowledged. At every new head, for every open
 * submission, it:
 * 1. asks the relays that tell (bundleStats) what became of the bundles it sent for the block just
 *    built (included, outbid, invalid and why) and records it, so a partner can read per block why
 *    its transaction did not land;
 * 2. checks inclusion and finishes the submission when its txs are on chain: each new block's tx
 *    hashes are read once (BlockTxIndex, when the inclusion checker can read blocks) and receipts
 *    are asked only for the submissions found there, so the per-head cost does not grow with the
 *    number of open submissions;
 * 3. re-plans on the new head: simulates the user's txs again (a tx whose nonce is now used, or
 *    that now reverts without the partner's leave, ends with that reason instead of being re-sent
 *    until expiry) and searches the backrun again (profit grows, shrinks or vanishes as other
 *    bundles land), signed with a searcher key leased for that block with its nonce on that head
 *    (see SearcherKeyPool: one backrun per key per block, so backruns never share a nonce), as
 *    backrunExact: it realizes exactly the profit reported for that block or reverts;
 * 4. sends, to every eligible relay, the user's own bundle `[user txs...]` for the next block at
 *    once (right after step 3's simulation, before any backrun planning), then the backrun bundle
 *    `[user txs..., backrun]` beside it once planned (see userBundle and backrunBundle): the user's
 *    inclusion never waits for, nor depends on, the backrun.
 *
 * Sources of work: `start()` loads every undelivered submission from the store (resume after a
 * restart), and `accept()` persists a new one and hands it over through a bounded in-memory queue.
 * When the queue is full nothing is lost: the submission is durable, and the dispatcher re-reads
 * the store's undelivered list once the queue has drained.
 *
 * With `leases` (a store several processes share, see dispatcher/lease-keeper.ts) a dispatcher
 * delivers only the submissions it holds a lease on: those it stored itself (leased in the same
 * write) and those it claims, renewed every third of the lease period; it takes over the
 * submissions of a process that stopped renewing once their leases expire, writes every lifecycle
 * event under its owner id (the store refuses a writer whose lease was taken over, and the
 * dispatcher then drops the submission), and releases what it holds on stop().
 *
 * Memory per open submission is its record (the raw bytes), a small lifecycle summary and the
 * hashes of the bundles sent for the last block: no decoded transaction, simulation state or VM
 * is kept between heads (each head simulates again; the txs cross to the worker pool as their raw
 * bytes, and are decoded on this thread only once per submission, for their tip cap, or when an
 * in-process port reads them).
 *
 * The dispatcher/ folder holds its parts: re-planning on a head (replanning.ts), the bundles
 * (bundles.ts) and their sends to relays, recorded before they go out (relay-sends.ts), inclusion
 * and expiry (inclusion.ts), and the per-head step that runs them in order (head-step.ts). This
 * class owns the queue, the open submissions and their records, and hands each head to the step.
 * The backrun planned for a block is stored before it is sent.
 *
 * Reorgs (HeadSource.onReorg, fork mode): what was planned and sent for a replaced block is planned
 * and sent again from the new head, and a submission seen included in a replaced block is re-opened
 * and dispatched again (dispatcher/reorg.ts).
 */
import type { DispatchContext } from './dispatcher/context.ts'
import { EventLoopTurns } from './dispatcher/event-loop-turns.ts'
import { HeadStep } from './dispatcher/head-step.ts'
import { InclusionWatch } from './dispatcher/inclusion.ts'
import { PerBlockBudget } from './dispatcher/per-block-budget.ts'
import { RelaySends } from './dispatcher/relay-sends.ts'
import { SendHorizon } from './dispatcher/send-horizon.ts'
import { Replanning } from './dispatcher/replanning.ts'
import { RECENT_INCLUSIONS_DEFAULTS, RecentInclusions, reorgEvent, resetForReorg, touchedByReorg } from './dispatcher/reorg.ts'
import { dispatcherLimits, type DispatcherLimits, type DispatcherOptions } from './dispatcher/settings.ts'
import { newTask, planPriority, type Task } from './dispatcher/task.ts'
import { countedPorts, type DispatcherWorkCounts } from './dispatcher/work-counts.ts'
import { LeaseKeeper, type DispatcherLeaseOptions } from './dispatcher/lease-keeper.ts'
import { isLeaseLostError, isPersistenceError } from './errors.ts'
import { Limiter } from './limiter.ts'
import { applyLifecycleEvent, isFinished, reorgFloor } from './lifecycle.ts'
import type { PersistResult } from './outbox-store.ts'
import type { BundleRelay } from './relay-client.ts'
import type { DecodedFacts, LifecycleEvent, NewSubmission, ReorgEvent, StoredSubmission, SubmissionId, TerminalEvent } from './types.ts'

// What the dispatcher is given (its ports): dispatcher-ports.ts
import type { HeadInfo, HeadReorg, HeadSource, DispatcherLogger, SubmissionOutbox } from './dispatcher-ports.ts'
export type {
  HeadInfo,
  HeadReorg,
  HeadSource,
  SimulationInput,
  SimulationReport,
  SubmissionSimulator,
  BackrunPlanInput,
  BackrunPlan,
  BackrunPlanner,
  InclusionQuery,
  InclusionStatus,
  InclusionChecker,
  DispatcherLogger,
  SubmissionOutbox,
} from './dispatcher-ports.ts'
export type { DispatcherOptions } from './dispatcher/settings.ts'
export type { DispatcherLeaseOptions } from './dispatcher/lease-keeper.ts'

export interface DispatcherStats {
  /** prepared or being prepared, not finished */
  active: number
  queued: number
  /** relay sends in flight */
  inflightSends: number
  /** the queue overflowed; the store will be re-read once it drains */
  overflowed: boolean
  /** (submission, block) pairs not sent because the block's re-send budget was spent, since start */
  resendsSkipped: number
  head: bigint | undefined
  /** simulations and backrun plans completed since start */
  simulations: number
  plans: number
  /** with leases: the open submissions this process holds */
  leased?: number
}

const NOOP_LOGGER: DispatcherLogger = { info: () => undefined, warn: () => undefined, error: () => undefined }

export class Dispatcher {
  private readonly store: SubmissionOutbox
  private readonly hashRelays: readonly BundleRelay[]
  private readonly heads: HeadSource
  private readonly limits: DispatcherLimits
  private readonly log: DispatcherLogger
  private readonly now: () => number
  /** what the parts below share with this class */
  private readonly ctx: DispatchContext
  private readonly inclusion: InclusionWatch
  private readonly step: HeadStep
  private readonly work: DispatcherWorkCounts
  /** inclusions a reorg may still undo (see dispatcher/reorg.ts) */
  private readonly recentInclusions: RecentInclusions
  /** per open submission, the reorgs to record before its next step, in order (see onReorg) */
  private readonly pendingReorgs = new Map<SubmissionId, ReorgEvent[]>()
  /** with a shared store: the leases this process holds (undefined: it owns every submission) */
  private readonly leases: LeaseKeeper | undefined
  /** with a shared store: this process's send horizon (see dispatcher/send-horizon.ts) */
  private readonly sendHorizon: SendHorizon | undefined
  /** claimed from an owner with a send horizon: that horizon, until the task is made (weak: gone with the queue entry) */
  private readonly barredOnAdopt = new WeakMap<StoredSubmission, bigint>()
  /** the per-head work of the open submissions, one step or send per turn of the event loop */
  private readonly turns = new EventLoopTurns()
  /** queued by accept(): their txs were decoded as they were accepted, with their tip cap (weak: gone with the queue entry) */
  private readonly decodedOnAccept = new WeakMap<StoredSubmission, { tipCap: bigint | undefined }>()

  private head: HeadInfo | undefined
  private readonly active = new Map<SubmissionId, Task>()
  private queue: StoredSubmission[] = []
  private readonly queuedIds = new Set<SubmissionId>()
  private workers = 0
  private overflowed = false
  private rescanning = false
  private readonly running = new Set<Promise<unknown>>()
  private unsubscribe: (() => void) | undefined
  private unsubscribeReorg: (() => void) | undefined
  private started = false
  private stopping = false
  private lastPruneAt = Number.NEGATIVE_INFINITY

  /**
   * @throws TypeError for missing relays or duplicate relay names
   * @throws RangeError for a limit that is not a positive integer
   */
  constructor(options: DispatcherOptions) {
    this.limits = dispatcherLimits(options)
    this.store = options.store
    this.hashRelays = options.relays.filter((r) => r.acceptsHashReference)
    this.heads = options.heads
    this.log = options.log ?? NOOP_LOGGER
    this.now = options.now ?? Date.now
    this.leases = options.leases === undefined ? undefined : this.leaseKeeper(options.leases)
    const leases = this.leases
    this.sendHorizon = leases === undefined || options.leases === undefined ? undefined : new SendHorizon(options.leases.leases, leases.owner, this.log)
    const sendHorizon = this.sendHorizon
    this.ctx = {
      log: this.log,
      now: this.now,
      head: () => this.head,
      stopping: () => this.stopping,
      tasks: () => this.active.values(),
      record: (task, events, applied) => this.record(task, events, applied),
      finish: (task, terminal, before) => this.finish(task, terminal, before),
      reschedule: (task) => this.schedule(task),
      track: (promise) => this.track(promise),
      // a step under way resumes ahead of the steps not started (see event-loop-turns.ts)
      turn: () => this.turns.resume(),
      horizon: leases === undefined || sendHorizon === undefined ? undefined : { cover: (block) => sendHorizon.cover(block), valid: () => leases.valid() },
    }
    const limits = this.limits
    // inclusion checks and the relays' bundle-stats questions share one bound
    const inclusionLimit = new Limiter(limits.inclusionConcurrency)
    this.inclusion = new InclusionWatch(this.ctx, options.inclusion, inclusionLimit, limits.expiryBlocks, limits.maxIndexedHashes)
    const sends = new RelaySends(this.ctx, inclusionLimit, new PerBlockBudget(limits.maxSimulationsPerBlock), limits.prepareTimeoutMs)
    const { counts, ...ports } = countedPorts(options)
    this.work = counts
    const replanning = new Replanning(this.ctx, { ...ports, decode: options.decode }, this.inclusion, limits)
    this.recentInclusions = new RecentInclusions({
      windowBlocks: options.reorgWindowBlocks ?? RECENT_INCLUSIONS_DEFAULTS.windowBlocks,
      maxEntries: options.maxRecentInclusions ?? RECENT_INCLUSIONS_DEFAULTS.maxEntries,
    })
    this.step = new HeadStep(this.ctx, { relays: options.relays, hashRelays: this.hashRelays, inclusion: this.inclusion, sends, replanning }, limits)
  }

  /** this process's lease owner id, with leases */
  get leaseOwner(): string | undefined {
    return this.leases?.owner
  }

  /**
   * Subscribe to heads and resume every undelivered submission in the store.
   * @throws PersistenceError when the store cannot be read
   */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    this.unsubscribe = this.heads.onNewHead((head) => this.onHead(head))
    this.unsubscribeReorg = this.heads.onReorg?.((reorg) => this.onReorg(reorg))
    const current = this.heads.currentHead?.()
    if (current !== undefined && (this.head === undefined || current.number > this.head.number)) this.head = current
    // submissions accepted before start() were prepared without a head
    for (const task of this.active.values()) this.schedule(task)
    if (this.leases !== undefined) {
      // a shared store: only what this process claims (the rest belongs to other processes)
      this.log.info({ owner: this.leases.owner, renewIntervalMs: this.leases.renewIntervalMs }, 'submission dispatcher claiming leases')
      await this.leases.start()
      return
    }
    const undelivered = await this.store.listUndelivered()
    this.log.info({ undelivered: undelivered.length }, 'submission dispatcher resuming undelivered submissions')
    for (const stored of undelivered) this.enqueue(stored)
  }

  /**
   * Persist a new submission (fsynced) and queue it for delivery. Return the hash to the partner
   * only after this resolves. A duplicate (`created: false`) is not queued again.
   *
   * The caller has decoded every one of its txs with the dispatcher's `decode` rules (the RPC
   * methods refuse what does not decode, before they call this: src/node/submission.ts gives both
   * the same rules), so the dispatcher does not decode them again. Under bench:submit that second
   * decode (sender recovery, an ethereumjs object) was 3.8% of the main thread's profile: the decode
   * memo holds 512 answers, and at 200 submissions/s the dispatcher reached a submission after
   * they had gone.
   * @throws PersistenceError | OutboxFullError | TypeError from OutboxStore.persist; nothing is acknowledged then
   */
  async accept(input: NewSubmission, decoded?: DecodedFacts): Promise<PersistResult> {
    const leases = this.leases
    const result = await this.store.persist(input, leases === undefined ? undefined : { leaseOwner: leases.owner })
    if (!result.created) return result
    const stored: StoredSubmission = { record: result.record, events: [{ type: 'received', at: result.record.receivedAt }] }
    this.decodedOnAccept.set(stored, { tipCap: decoded?.tipCap })
    if (leases === undefined) {
      this.enqueue(stored)
      return result
    }
    leases.leasedOnPersist(result.record.id)
    // no room here: give the lease back, so this process (once it drains) or another claims it
    if (!this.enqueue(stored)) this.releaseUnqueued(result.record.id)
    return result
  }

  /**
   * Queue a stored, undelivered submission. Returns false when it was not queued: already known
   * to this dispatcher, finished, stopping, or the queue is full (then it is picked up from the
   * store once the queue drains).
   */
  enqueue(stored: StoredSubmission): boolean {
    const id = stored.record.id
    if (this.stopping || this.active.has(id) || this.queuedIds.has(id)) return false
    if (isFinished(stored.events)) return false
    if (this.queue.length >= this.limits.queueCapacity) {
      if (!this.overflowed) this.log.warn({ capacity: this.limits.queueCapacity }, 'submission queue full; will re-read the outbox when it drains')
      this.overflowed = true
      return false
    }
    this.queue.push(stored)
    this.queuedIds.add(id)
    this.pump()
    return true
  }

  /** Resolves when nothing is being prepared, checked, recorded or sent. */
  async whenIdle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running])
  }

  /**
   * Stop: unsubscribe from heads, abort in-flight sends (their results are recorded as aborted),
   * wait for running work. Queued submissions stay in the store for the next start.
   */
  async stop(): Promise<void> {
    this.stopping = true
    this.unsubscribe?.()
    this.unsubscribe = undefined
    this.unsubscribeReorg?.()
    this.unsubscribeReorg = undefined
    for (const stored of this.queue) this.queuedIds.delete(stored.record.id)
    this.queue = []
    for (const task of this.active.values()) {
      for (const send of task.inflight?.values() ?? []) send.controller.abort(new Error('dispatcher stopping'))
      task.planning?.controller.abort(new Error('dispatcher stopping'))
    }
    await this.whenIdle()
    // after the last write: other processes may take every open submission over at once
    await this.leases?.stop()
  }

  stats(): DispatcherStats {
    let inflightSends = 0
    for (const task of this.active.values()) inflightSends += task.inflight?.size ?? 0
    const stats: DispatcherStats = { active: this.active.size, queued: this.queue.length, inflightSends, overflowed: this.overflowed, resendsSkipped: this.step.resendsSkipped, head: this.head?.number, ...this.work }
    if (this.leases !== undefined) stats.leased = this.leases.size
    return stats
  }

  // -------------------------------------------------------------------------------------------
  // Heads and scheduling

  private onHead(head: HeadInfo): void {
    if (this.stopping) return
    if (this.head !== undefined && head.number < this.head.number) return // an older head arriving late
    this.head = head
    // the horizon for the next block, marked as the head arrives: the sends for that block find it written
    if (this.active.size > 0) void this.sendHorizon?.cover(head.number + 1n)
    this.inclusion.onHead(head)
    this.recentInclusions.forgetBefore(head.number)
    // sends for a block that is now built are useless: abort them (their place in the relay's
    // queue included) instead of letting a backlog hold them
    for (const task of this.active.values()) {
      for (const send of task.inflight?.values() ?? []) if (send.block <= head.number) send.controller.abort(new Error(`block ${send.block} is built`))
    }
    // the submissions most likely to carry a backrun are planned first: the per-block planning
    // budget (maxPlansPerBlock) then goes where it pays
    for (const task of [...this.active.values()].sort(planPriority)) this.schedule(task)
    const now = this.now()
    if (now - this.lastPruneAt >= this.limits.pruneIntervalMs) {
      this.lastPruneAt = now
      this.track(this.store.pruneFinished().catch((err: unknown) => this.log.warn({ err }, 'pruning finished submissions failed')))
    }
  }

  /**
   * The chain replaced the blocks above the common ancestor; the new head follows through onHead.
   * The new head is taken now (it may be lower than the last), the inclusion index forgets the
   * replaced blocks, every open submission that worked on them records the reorg before its next
   * step (between two steps, so a step in flight cannot send for a replaced block after it), and
   * the submissions seen included in them are re-opened. See dispatcher/reorg.ts.
   */
  private onReorg(reorg: HeadReorg): void {
    if (this.stopping) return
    const event = reorgEvent(reorg, this.now())
    const floor = reorgFloor(event)
    this.head = reorg.newHead
    this.inclusion.onReorg(floor)
    for (const task of this.active.values()) {
      if (!task.finished && touchedByReorg(task, event)) this.pendingReorgs.set(task.record.id, [...(this.pendingReorgs.get(task.record.id) ?? []), event])
    }
    const reopened = this.recentInclusions.takeAbove(floor)
    this.log.warn(
      { commonAncestor: event.commonAncestor?.toString(), dropped: event.dropped.map(String), newHead: event.newHead.toString(), open: this.pendingReorgs.size, reopened: reopened.length },
      'chain reorg: re-planning the open submissions on the new head and re-opening those included in replaced blocks',
    )
    for (const { id, block } of reopened) this.track(this.reopen(id, { ...event, includedBlock: block }))
  }

  /**
   * A submission seen included in a block a reorg replaced: open again in the store, then read back
   * from it (record and lifecycle, the reorg included) and dispatched as before.
   */
  private async reopen(id: SubmissionId, event: ReorgEvent): Promise<void> {
    if (this.stopping || this.active.has(id)) return
    try {
      await this.store.reopen(id, event)
    } catch (err) {
      this.log.error({ err, id, block: event.includedBlock?.toString() }, 'a submission included in a replaced block could not be re-opened')
      return
    }
    if (this.leases !== undefined) {
      // a shared store re-opens it unleased: whichever process claims it next (this one too) adopts it
      // from the store, so one lifecycle keeps one writer
      this.log.info({ id, block: event.includedBlock?.toString() }, 'submission re-opened for a claim: its block was replaced by a reorg')
      return
    }
    let stored: StoredSubmission | undefined
    try {
      stored = await this.store.get(id)
    } catch (err) {
      this.log.error({ err, id }, 'a re-opened submission could not be read back from the store')
      return
    }
    if (this.stopping || this.active.has(id)) return
    const task = stored === undefined ? undefined : newTask(stored)
    if (task === undefined || task.summary.outcome !== undefined) {
      this.log.error({ id, found: stored !== undefined }, 'a re-opened submission reads back missing or still finished from the store')
      return
    }
    // simulated before the reorg: it stays a re-simulation for the per-block budgets (resetForReorg)
    if (task.summary.simulation !== undefined) task.simulatedFor = reorgFloor(event)
    task.prepared = true
    this.active.set(id, task)
    this.log.info({ id, block: event.includedBlock?.toString() }, 'submission re-opened: its block was replaced by a reorg')
    this.schedule(task)
  }

  /** Run the head step for `task`, one run at a time; a head arriving meanwhile triggers one more run. */
  private schedule(task: Task): void {
    if (task.finished || !task.prepared || this.stopping) return
    // leases not renewed within their period: another process may hold them now; the next
    // successful renewal tells which are still ours
    if (this.leases !== undefined && !this.leases.valid()) return
    if (task.running !== undefined) {
      task.rerun = true
      return
    }
    const run = (async () => {
      do {
        // its turn: a head schedules every open submission at once (see event-loop-turns.ts)
        await this.turns.next()
        if (task.finished || this.stopping) return
        task.rerun = false
        const reorgs = this.pendingReorgs.get(task.record.id)
        if (reorgs !== undefined) {
          this.pendingReorgs.delete(task.record.id)
          for (const reorg of reorgs) resetForReorg(task, reorg)
          await this.record(task, reorgs)
        }
        await this.step.run(task)
      } while (task.rerun && !task.finished && !this.stopping)
    })()
      .catch((err: unknown) => this.log.error({ err, id: task.record.id }, 'submission dispatch step failed'))
      .finally(() => {
        task.running = undefined
      })
    task.running = run
    this.track(run)
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise)
    void promise.finally(() => this.running.delete(promise)).catch(() => undefined)
    return promise
  }

  // -------------------------------------------------------------------------------------------
  // Queue and admission

  private pump(): void {
    while (!this.stopping && this.workers < this.limits.prepareConcurrency && this.queue.length > 0) {
      const stored = this.queue.shift() as StoredSubmission
      this.queuedIds.delete(stored.record.id)
      this.workers++
      this.track(
        this.admit(stored)
          .catch((err: unknown) => this.log.error({ err, id: stored.record.id }, 'preparing a submission failed'))
          .finally(() => {
            this.workers--
            this.pump()
          }),
      )
    }
    if (!this.stopping && this.overflowed && this.leases !== undefined && this.queue.length === 0 && this.workers === 0) {
      // with leases, what did not fit was given back: claim again now there is room
      this.overflowed = false
      this.track(this.leases.runRound())
      return
    }
    if (!this.stopping && this.overflowed && !this.rescanning && this.queue.length === 0 && this.workers === 0) {
      this.overflowed = false
      this.rescanning = true
      this.track(
        this.store
          .listUndelivered()
          .then((all) => {
            for (const stored of all) this.enqueue(stored)
          })
          .catch((err: unknown) => {
            this.overflowed = true
            this.log.error({ err }, 're-reading undelivered submissions failed')
          })
          .finally(() => {
            this.rescanning = false
          }),
      )
    }
  }

  private async admit(stored: StoredSubmission): Promise<void> {
    const id = stored.record.id
    if (this.active.has(id)) return
    const task = newTask(stored, this.decodedOnAccept.get(stored), this.barredOnAdopt.get(stored))
    if (task.summary.outcome !== undefined) return
    this.active.set(id, task)
    if (task.record.kind === 'notify' && this.hashRelays.length === 0) {
      await this.finish(task, { type: 'dropped', at: this.now(), reason: 'no configured relay accepts bundles that reference a transaction by hash' })
      return
    }
    task.prepared = true
    this.schedule(task)
  }

  // -------------------------------------------------------------------------------------------
  // Recording

  /** Append durably and to the in-memory summary (DispatchContext.record). A failed write is logged, not thrown: delivery goes on. */
  private async record(task: Task, events: readonly LifecycleEvent[], applied = 0): Promise<void> {
    if (events.length === 0) return
    for (let i = applied; i < events.length; i++) applyLifecycleEvent(task.summary, events[i])
    try {
      await this.store.append(task.record.id, events, this.leases === undefined ? undefined : { leaseOwner: this.leases.owner })
    } catch (err) {
      if (isLeaseLostError(err)) {
        this.abandon(task.record.id, 'the store refused a lifecycle write: another process holds its lease')
        return
      }
      const level = isPersistenceError(err) ? 'error' : 'warn'
      this.log[level]({ err, id: task.record.id, events: events.map((e) => e.type) }, 'recording lifecycle events failed')
    }
  }

  /** Abort this submission's sends, wait for their results, then write `before` and the terminal event. */
  private async finish(task: Task, terminal: TerminalEvent, before: readonly LifecycleEvent[] = []): Promise<void> {
    if (task.finished) return
    task.finished = true
    for (const send of task.inflight?.values() ?? []) send.controller.abort(new Error(`submission ${terminal.type}`))
    // a plan still running: stopped, and nothing of it recorded after the terminal event
    const planning = task.planning
    planning?.controller.abort(new Error(`submission ${terminal.type}`))
    await Promise.allSettled([...(task.unsettled ?? []), ...(planning === undefined ? [] : [planning.done])])
    await this.record(task, [...before, terminal])
    this.active.delete(task.record.id)
    this.pendingReorgs.delete(task.record.id)
    // a reorg that replaces its block re-opens it
    if (terminal.type === 'included') this.recentInclusions.add(task.record.id, terminal.block)
    // the terminal event ended the lease in the store
    this.leases?.forget(task.record.id)
    this.log.info({ id: task.record.id, outcome: terminal.type, ...('block' in terminal ? { block: terminal.block.toString() } : {}) }, 'submission finished')
  }

  // -------------------------------------------------------------------------------------------
  // Leases (a shared store)

  private leaseKeeper(options: DispatcherLeaseOptions): LeaseKeeper {
    return new LeaseKeeper(
      options,
      {
        room: () => (this.stopping ? 0 : this.limits.queueCapacity - this.queue.length - this.active.size),
        adopt: async (id, horizon) => {
          if (this.active.has(id) || this.queuedIds.has(id)) return true
          const stored = await this.store.get(id)
          if (stored === undefined) return false
          if (horizon !== undefined) this.barredOnAdopt.set(stored, horizon)
          return this.enqueue(stored)
        },
        abandon: (id, reason) => this.abandon(id, reason),
      },
      this.log,
      this.now,
    )
  }

  /** Stop delivering a submission this process no longer holds: no more sends, no more writes. */
  private abandon(id: SubmissionId, reason: string): void {
    this.leases?.forget(id)
    if (this.queuedIds.delete(id)) this.queue = this.queue.filter((s) => s.record.id !== id)
    const task = this.active.get(id)
    if (task === undefined) return
    // `finished` stops every later step and write for it; its sends are cancelled
    task.finished = true
    for (const send of task.inflight?.values() ?? []) send.controller.abort(new Error('lease lost'))
    task.planning?.controller.abort(new Error('lease lost'))
    this.active.delete(id)
    this.log.warn({ id, reason }, 'submission given up by this process')
  }

  /** A submission leased to this process as it was stored but not queued (the queue is full): give the lease back. */
  private releaseUnqueued(id: SubmissionId): void {
    const leases = this.leases
    if (leases === undefined || this.active.has(id) || this.queuedIds.has(id)) return
    leases.forget(id)
    this.track(leases.release(id)).catch((err: unknown) => this.log.warn({ err, id }, 'releasing a lease failed; it expires after the lease period'))
  }
}

