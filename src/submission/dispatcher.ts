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
 * Memory per open submission is its record (the raw bytes), a small lifecycle summary and the
 * hashes of the bundles sent for the last block: no decoded transaction, simulation state or VM
 * is kept between heads (each head decodes and simulates again).
 *
 * Per relay, per block and bundle: one send (its own retry loop in RelayClient),
 * started in parallel with the other relays' sends after a single durable write. A slow or failing
 * relay never delays the others, nor the next block: when the next head arrives, a relay still
 * retrying the previous block is aborted (that block is mined) and the new block's send starts.
 *
 * Sent at most once per (submission, relay, block, bundle), also across restarts: the `relay-sending`
 * event (with a random attempt id, the part and the bundle's hash) is fsynced BEFORE the request goes
 * out, and a restarted dispatcher never sends for a (relay, block) that has one. A crash between
 * that write and the request costs at most that one block at that relay; the submission is sent
 * again for the next block. We chose "record, then send" (at most once per block) over "send, then
 * record" (at least once) because the submission is re-sent every block anyway, so a lost block is
 * cheap, while the audit log ("why did it not land?") stays exact: every request a relay got has
 * its record. Relays also treat the same bundle for the same block as idempotent (same txs, same
 * bundle hash), which is why, when the pre-send write itself fails, we send anyway: delivery is
 * committed, and a duplicate after a restart is harmless. The backrun planned for a block is
 * stored before it is sent.
 */
import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'

import type { Address, Hex } from '../chain/types.ts'
import { decodeSignedTransaction, type DecodeTransactionOptions, type DecodedTransaction } from '../tx/decode-transaction.ts'
import { bundleHash as computeBundleHash } from '../tx/bundle-hash.ts'
import { BlockTxIndex } from './block-tx-index.ts'
import { RelayError, isPersistenceError } from './errors.ts'
import { Limiter } from './limiter.ts'
import { applyLifecycleEvent, summarizeLifecycle, wasSent, type LifecycleSummary } from './lifecycle.ts'
import type { PersistResult } from './outbox-store.ts'
import type { BundleRelay, RelayBundle, RelayBundleEntry } from './relay-client.ts'
import type {
  BackrunEvent,
  BundleOutcomeEvent,
  BundleRole,
  IncludedEvent,
  LifecycleEvent,
  NoBackrunEvent,
  NewSubmission,
  RelayResultEvent,
  SimulatedEvent,
  StoredSubmission,
  SubmissionId,
  SubmissionRecord,
  TargetingEvent,
  TerminalEvent,
} from './types.ts'

// What the dispatcher is given (its ports): dispatcher-ports.ts
import type {
  HeadInfo,
  HeadSource,
  SimulationReport,
  SubmissionSimulator,
  BackrunPlanner,
  InclusionStatus,
  InclusionChecker,
  DispatcherLogger,
  SubmissionOutbox,
} from './dispatcher-ports.ts'
export type {
  HeadInfo,
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

export interface DispatcherOptions {
  store: SubmissionOutbox
  /** at least one; names must be unique */
  relays: readonly BundleRelay[]
  heads: HeadSource
  inclusion: InclusionChecker
  planner: BackrunPlanner
  simulate: SubmissionSimulator
  /** how stored raw txs are decoded for simulation and planning (the chain's id and hardfork) */
  decode: DecodeTransactionOptions
  /** blocks a submission is sent for before it expires (first target block included). Default 25. */
  expiryBlocks?: number
  /** submissions waiting to be prepared, at most. Default 10 000. */
  queueCapacity?: number
  /** submissions simulated / planned at the same time. Default 4. */
  prepareConcurrency?: number
  /**
   * backrun plans started per target block at most (the most promising submissions first: last
   * block's backrun by profit, then new ones, then those that had none). Default 32.
   */
  maxPlansPerBlock?: number
  /**
   * per target block at most, each: re-simulations of open submissions, re-sends of their own
   * bundles, and bundle-stats questions to relays (a new submission is always simulated and sent).
   * Bounds the per-block work when submissions pile up: beyond it a submission skips that block
   * (counted in stats().resendsSkipped) and goes out again at the next. Default 512
   * (MAX_RESENDS_PER_BLOCK).
   */
  maxSimulationsPerBlock?: number
  /** limit for simulate and for plan, each, ms; then the submission goes on without. Default 2 000. */
  prepareTimeoutMs?: number
  /** inclusion checks running at the same time. Default 16. */
  inclusionConcurrency?: number
  /**
   * put the backrun's hash in revertingTxHashes of the backrun bundle. Default false: the user's
   * own bundle already keeps the user's inclusion independent of the backrun, and a backrun
   * allowed to revert would cost the searcher gas for nothing.
   */
  backrunMayRevert?: boolean
  /** pruneFinished() runs at most this often, on a new head, ms. Default 60 000. */
  pruneIntervalMs?: number
  log?: DispatcherLogger
  /** clock for event times, ms. Default Date.now. */
  now?: () => number
}

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
}

// ---------------------------------------------------------------------------------------------

interface InflightSend {
  block: bigint
  controller: AbortController
  done: Promise<void>
}

interface Task {
  record: SubmissionRecord
  summary: LifecycleSummary
  prepared: boolean
  /** a terminal event is written or being written: no more sends */
  finished: boolean
  running: Promise<void> | undefined
  rerun: boolean
  lastCheckedHead: bigint | undefined
  /** the block the last simulation was made for, and its report */
  simulatedFor: bigint | undefined
  simulation: SimulationReport | undefined
  /** the block the last backrun plan was made for */
  plannedFor: bigint | undefined
  /** a backrun was planned at least once (a notify without one ever is dropped) */
  everPlanned: boolean
  /** the highest tip cap of the user's txs, once decoded */
  userTipCap?: bigint
  /** the bundles relays accepted, kept until their outcomes are asked at the next head (undefined: none) */
  accepted: Array<{ block: bigint; relay: BundleRelay; role: BundleRole; hash: Hex }> | undefined
  inflight: Map<string, InflightSend> | undefined
  /** every send not settled yet, superseded ones included (finish waits for their results) */
  unsettled: Set<Promise<void>> | undefined
}

interface OutgoingBundle {
  role: BundleRole
  hash: Hex
  bundle: RelayBundle
}

const NOOP_LOGGER: DispatcherLogger = { info: () => undefined, warn: () => undefined, error: () => undefined }

export class Dispatcher {
  private readonly store: SubmissionOutbox
  private readonly relays: readonly BundleRelay[]
  private readonly hashRelays: readonly BundleRelay[]
  private readonly heads: HeadSource
  private readonly inclusion: InclusionChecker
  private readonly planner: BackrunPlanner
  private readonly simulate: SubmissionSimulator
  private readonly decode: DecodeTransactionOptions
  private readonly expiryBlocks: bigint
  private readonly queueCapacity: number
  private readonly prepareConcurrency: number
  private readonly prepareTimeoutMs: number
  private readonly inclusionLimit: Limiter
  /** each new block's tx hashes, from the head or read once per head */
  private readonly blockIndex: BlockTxIndex
  /** the index being brought up to the current head */
  private indexed: { head: bigint; ready: Promise<void> } | undefined
  private readonly backrunMayRevert: boolean
  private readonly planLimit: Limiter
  private readonly maxPlansPerBlock: number
  private readonly maxSimulationsPerBlock: number
  private readonly simulationBudget = { block: -1n, used: 0 }
  private readonly statsBudget = { block: -1n, used: 0 }
  private readonly resendBudget = { block: -1n, used: 0 }
  private resendsSkipped = 0
  private readonly planBudget = { block: -1n, used: 0 }
  /** pools claimed by a planned backrun bundle, for one target block */
  private claims: { block: bigint; pools: Map<Address, SubmissionId> } = { block: -1n, pools: new Map() }
  private readonly pruneIntervalMs: number
  private readonly log: DispatcherLogger
  private readonly now: () => number

  private head: HeadInfo | undefined
  private readonly active = new Map<SubmissionId, Task>()
  private queue: StoredSubmission[] = []
  private readonly queuedIds = new Set<SubmissionId>()
  private workers = 0
  private overflowed = false
  private rescanning = false
  private readonly running = new Set<Promise<unknown>>()
  private unsubscribe: (() => void) | undefined
  private started = false
  private stopping = false
  private lastPruneAt = Number.NEGATIVE_INFINITY

  /** @throws TypeError for missing relays, duplicate relay names or bad limits */
  constructor(options: DispatcherOptions) {
    if (options.relays.length === 0) throw new TypeError('Dispatcher: at least one relay is required')
    const names = new Set(options.relays.map((r) => r.name))
    if (names.size !== options.relays.length) throw new TypeError('Dispatcher: relay names must be unique')
    this.store = options.store
    this.relays = options.relays
    this.hashRelays = options.relays.filter((r) => r.acceptsHashReference)
    this.heads = options.heads
    this.inclusion = options.inclusion
    this.planner = options.planner
    this.simulate = options.simulate
    this.decode = options.decode
    this.expiryBlocks = BigInt(positiveInt('expiryBlocks', options.expiryBlocks ?? 25))
    this.queueCapacity = positiveInt('queueCapacity', options.queueCapacity ?? 10_000)
    this.prepareConcurrency = positiveInt('prepareConcurrency', options.prepareConcurrency ?? 4)
    this.prepareTimeoutMs = positiveInt('prepareTimeoutMs', options.prepareTimeoutMs ?? 2_000)
    this.inclusionLimit = new Limiter(positiveInt('inclusionConcurrency', options.inclusionConcurrency ?? 16))
    this.backrunMayRevert = options.backrunMayRevert ?? false
    this.planLimit = new Limiter(this.prepareConcurrency)
    this.maxPlansPerBlock = positiveInt('maxPlansPerBlock', options.maxPlansPerBlock ?? 32)
    this.maxSimulationsPerBlock = positiveInt('maxSimulationsPerBlock', options.maxSimulationsPerBlock ?? 512)
    this.pruneIntervalMs = positiveInt('pruneIntervalMs', options.pruneIntervalMs ?? 60_000)
    this.log = options.log ?? NOOP_LOGGER
    this.now = options.now ?? Date.now
    const inclusion = options.inclusion
    this.blockIndex = new BlockTxIndex({
      // a checker that cannot read blocks leaves the heads that came without hashes as gaps
      read: (n) => inclusion.blockTransactions?.(n) ?? Promise.resolve(null),
      // a submission's whole life (and the block before its first, where a notified tx sent by
      // the partner itself may land) fits in the window
      windowBlocks: Number(this.expiryBlocks) + 2,
      onError: (block, err) => this.log.warn({ block: block.toString(), err: errorText(err) }, 'reading a block for the inclusion index failed; its submissions are checked by receipt'),
    })
  }

  /**
   * Subscribe to heads and resume every undelivered submission in the store.
   * @throws PersistenceError when the store cannot be read
   */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    this.unsubscribe = this.heads.onNewHead((head) => this.onHead(head))
    const current = this.heads.currentHead?.()
    if (current !== undefined && (this.head === undefined || current.number > this.head.number)) this.head = current
    // submissions accepted before start() were prepared without a head
    for (const task of this.active.values()) this.schedule(task)
    const undelivered = await this.store.listUndelivered()
    this.log.info({ undelivered: undelivered.length }, 'submission dispatcher resuming undelivered submissions')
    for (const stored of undelivered) this.enqueue(stored)
  }

  /**
   * Persist a new submission (fsynced) and queue it for delivery. Return the hash to the partner
   * only after this resolves. A duplicate (`created: false`) is not queued again.
   * @throws PersistenceError | OutboxFullError | TypeError from OutboxStore.persist; nothing is acknowledged then
   */
  async accept(input: NewSubmission): Promise<PersistResult> {
    const result = await this.store.persist(input)
    if (result.created) this.enqueue({ record: result.record, events: [{ type: 'received', at: result.record.receivedAt }] })
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
    if (stored.events.some((e) => e.type === 'included' || e.type === 'expired' || e.type === 'dropped')) return false
    if (this.queue.length >= this.queueCapacity) {
      if (!this.overflowed) this.log.warn({ capacity: this.queueCapacity }, 'submission queue full; will re-read the outbox when it drains')
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
    for (const stored of this.queue) this.queuedIds.delete(stored.record.id)
    this.queue = []
    for (const task of this.active.values()) {
      for (const send of task.inflight?.values() ?? []) send.controller.abort(new Error('dispatcher stopping'))
    }
    await this.whenIdle()
  }

  stats(): DispatcherStats {
    let inflightSends = 0
    for (const task of this.active.values()) inflightSends += task.inflight?.size ?? 0
    return { active: this.active.size, queued: this.queue.length, inflightSends, overflowed: this.overflowed, resendsSkipped: this.resendsSkipped, head: this.head?.number }
  }

  // -------------------------------------------------------------------------------------------
  // Heads and scheduling

  private onHead(head: HeadInfo): void {
    if (this.stopping) return
    if (this.head !== undefined && head.number < this.head.number) return // an older head arriving late
    this.head = head
    this.indexed = { head: head.number, ready: this.blockIndex.advance(head.number, head.transactionHashes) }
    // sends for a block that is now built are useless: abort them (their place in the relay's
    // queue included) instead of letting a backlog hold them
    for (const task of this.active.values()) {
      for (const send of task.inflight?.values() ?? []) if (send.block <= head.number) send.controller.abort(new Error(`block ${send.block} is built`))
    }
    // the submissions most likely to carry a backrun are planned first: the per-block planning
    // budget (maxPlansPerBlock) then goes where it pays
    for (const task of [...this.active.values()].sort(planPriority)) this.schedule(task)
    const now = this.now()
    if (now - this.lastPruneAt >= this.pruneIntervalMs) {
      this.lastPruneAt = now
      this.track(this.store.pruneFinished().catch((err: unknown) => this.log.warn({ err }, 'pruning finished submissions failed')))
    }
  }

  /** Run advance() for `task`, one run at a time; a head arriving meanwhile triggers one more run. */
  private schedule(task: Task): void {
    if (task.finished || !task.prepared || this.stopping) return
    if (task.running !== undefined) {
      task.rerun = true
      return
    }
    const run = (async () => {
      do {
        task.rerun = false
        await this.advance(task)
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
  // Queue and preparation (simulate, plan)

  private pump(): void {
    while (!this.stopping && this.workers < this.prepareConcurrency && this.queue.length > 0) {
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
    const task: Task = {
      record: stored.record,
      summary: summarizeLifecycle(stored.events),
      prepared: false,
      finished: false,
      running: undefined,
      rerun: false,
      lastCheckedHead: undefined,
      simulatedFor: undefined,
      simulation: undefined,
      plannedFor: undefined,
      everPlanned: stored.events.some((e) => e.type === 'backrun'),
      accepted: undefined,
      inflight: undefined,
      unsettled: undefined,
    }
    if (task.summary.outcome !== undefined) return
    this.active.set(id, task)
    if (task.record.kind === 'notify' && this.hashRelays.length === 0) {
      await this.finish(task, { type: 'dropped', at: this.now(), reason: 'no configured relay accepts bundles that reference a transaction by hash' })
      return
    }
    task.prepared = true
    this.schedule(task)
  }

  /**
   * Simulates the user's txs on the current head for `target` (the next block), appending what it
   * found to `events`. Returns a terminal event when the submission can never land any more: a
   * nonce already used (replaced by the sender's later tx, or landed elsewhere) or a revert the
   * partner did not allow.
   */
  private async simulateFor(task: Task, head: HeadInfo, target: bigint, events: LifecycleEvent[]): Promise<TerminalEvent | undefined> {
    const { record } = task
    task.simulation = undefined
    const userTxs = this.decodeUserTxs(task)
    if (userTxs === undefined) {
      events.push({ type: 'simulated', at: this.now(), success: false, error: 'the stored transactions no longer decode' })
      return undefined
    }
    // CPU work on this thread: let the acknowledgements and sends waiting on the event loop go
    // first (an execution's awaits are microtasks and never let them).
    await yieldToEventLoop()
    let simulation: SimulationReport
    try {
      simulation = await this.withTimeout('simulation', (signal) => this.simulate({ id: record.id, kind: record.kind, userTxs, signal }))
    } catch (err) {
      events.push({ type: 'simulated', at: this.now(), success: false, error: errorText(err) })
      return undefined
    }
    task.simulation = simulation
    events.push(simulatedEvent(simulation, this.now()))
    if (simulation.success) return undefined
    const index = simulation.failedTxIndex ?? 0
    const txHash = record.txHashes[index]
    const why = simulation.revertReason ?? 'failed'
    if (simulation.rejection === 'nonce-used') {
      // its nonce is taken: it landed (by another path) or the sender replaced it
      const status = await this.checkInclusion(task, head, target, { direct: true })
      if (status.status === 'included') return includedEvent(status, this.now())
      return { type: 'dropped', at: this.now(), reason: `tx ${index} (${txHash}) can never be included: ${why.replace(/^not includable: /, '')} (its nonce is used: replaced by the sender or included elsewhere)` }
    }
    if (simulation.rejection === undefined && record.kind !== 'notify' && record.bundleOptions?.revertingTxHashes?.includes(txHash) !== true) {
      return { type: 'dropped', at: this.now(), reason: `tx ${index} (${txHash}) reverts on the state of block ${head.number} (${why}); a reverting transaction is not sent` }
    }
    return undefined
  }

  /** Plans the backrun for `target` on the current head, appending `backrun` or `no-backrun` to `events`. */
  private async planFor(task: Task, target: bigint, events: LifecycleEvent[]): Promise<void> {
    const { record } = task
    const userTxs = this.decodeUserTxs(task)
    if (userTxs === undefined) {
      events.push({ type: 'no-backrun', at: this.now(), reason: 'the stored transactions no longer decode', block: target })
      return
    }
    // a bounded amount of backrun search per block: at most as many backruns can go out as there
    // are searcher keys, and every plan is CPU on this thread
    if (!this.spend(this.planBudget, target, this.maxPlansPerBlock)) {
      events.push({ type: 'no-backrun', at: this.now(), reason: `the backrun planning budget of block ${target} (${this.maxPlansPerBlock} plans) is spent; planned again at the next head`, block: target })
      return
    }
    await yieldToEventLoop()
    try {
      const simulation = task.simulation
      const plan = await this.planLimit.run(() =>
        this.withTimeout('backrun planning', (signal) => this.planner.plan({ id: record.id, kind: record.kind, userTxs, simulation, signal, targetBlock: target, tipFloor: this.tipFloor(task) })),
      )
      const current = plan !== null && (plan.block === undefined || plan.block === target)
      const taken = current ? this.claimPools(task, target, plan.pools ?? []) : undefined
      if (plan === null) {
        events.push({ type: 'no-backrun', at: this.now(), reason: 'no profitable backrun found', block: target })
      } else if (plan.block !== undefined && plan.block !== target) {
        this.planner.release?.(record.id, plan.block)
        events.push({ type: 'no-backrun', at: this.now(), reason: `the head moved while planning (planned for block ${plan.block}); planned again at the next head`, block: target })
      } else if (taken !== undefined) {
        this.planner.release?.(record.id, target)
        events.push({ type: 'no-backrun', at: this.now(), reason: `its pools are moved by the backrun bundle of ${taken.owner} for block ${target} (pool ${taken.pool}); only one of them could land, planned again at the next head`, block: target })
      } else {
        const backrunTx = decodeSignedTransaction(plan.rawBackrunTx, this.decode)
        task.everPlanned = true
        events.push({
          type: 'backrun',
          at: this.now(),
          rawTx: backrunTx.rawHex,
          txHash: backrunTx.hash,
          grossProfit: plan.grossProfit,
          profitToken: plan.profitToken,
          ...(plan.netProfitWei === undefined ? {} : { netProfitWei: plan.netProfitWei }),
          ...(plan.gasUsed === undefined ? {} : { gasUsed: plan.gasUsed }),
          block: target,
          ...(plan.searcher === undefined ? {} : { searcher: plan.searcher }),
        })
      }
    } catch (err) {
      events.push({ type: 'no-backrun', at: this.now(), reason: `backrun planning failed: ${errorText(err)}`, block: target })
    }
  }

  /**
   * The highest tip cap among the other open submissions' txs (as far as decoded): O(open
   * submissions), run for at most maxPlansPerBlock plans per block.
   */
  private tipFloor(task: Task): bigint {
    let floor = 0n
    for (const t of this.active.values()) if (t !== task && t.userTipCap !== undefined && t.userTipCap > floor) floor = t.userTipCap
    return floor
  }

  /**
   * Claims `pools` for `task`'s backrun bundle in block `target`. Two backrun bundles that move the
   * same pool cannot both land as planned (each backrun realizes its exact profit only on the state
   * it was planned on; the builder merges one first and the other then reverts). Submissions are
   * planned most promising first (see planPriority), so the first claim stands: a later one that
   * would touch a claimed pool goes out with its user's own bundle only. Returns the claim that
   * stands in the way, or undefined when all are claimed for `task`.
   */
  private claimPools(task: Task, target: bigint, pools: readonly Address[]): { owner: SubmissionId; pool: Address } | undefined {
    if (this.claims.block !== target) this.claims = { block: target, pools: new Map() }
    const id = task.record.id
    for (const pool of pools) {
      const owner = this.claims.pools.get(pool)
      if (owner !== undefined && owner !== id) return { owner, pool }
    }
    for (const pool of pools) this.claims.pools.set(pool, id)
    return undefined
  }

  /** Takes one unit of a per-block budget; false when `block`'s budget of `max` is spent. */
  private spend(budget: { block: bigint; used: number }, block: bigint, max: number): boolean {
    if (budget.block !== block) {
      budget.block = block
      budget.used = 0
    }
    if (budget.used >= max) return false
    budget.used++
    return true
  }

  /** The stored raw txs decoded, or undefined (logged) when they no longer decode. */
  private decodeUserTxs(task: Task): DecodedTransaction[] | undefined {
    try {
      const txs = task.record.rawTxs.map((raw) => decodeSignedTransaction(raw, this.decode))
      task.userTipCap = txs.reduce((max, tx) => (tx.gasTipCap > max ? tx.gasTipCap : max), 0n)
      return txs
    } catch (err) {
      // Accepted earlier with the same rules, so the chain configuration changed. Forward anyway:
      // the bytes are what the partner signed, and delivery is committed.
      this.log.warn({ err, id: task.record.id }, 'a stored transaction no longer decodes; forwarding it without simulation or backrun')
      return undefined
    }
  }

  private async withTimeout<T>(what: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`${what} took longer than ${this.prepareTimeoutMs} ms`)
        controller.abort(error)
        reject(error)
      }, this.prepareTimeoutMs)
    })
    try {
      return await Promise.race([run(controller.signal), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  // -------------------------------------------------------------------------------------------
  // One head for one submission: outcomes of the last block, inclusion, expiry, then for the next
  // block: the user's own bundle at once, the backrun bundle once planned

  private async advance(task: Task): Promise<void> {
    const head = this.head
    if (head === undefined || task.finished) return
    const { record, summary } = task

    if (summary.targeting !== undefined && task.lastCheckedHead !== head.number) {
      task.lastCheckedHead = head.number
      // Past its last block: settled now, with one direct inclusion check, never behind the
      // queue of per-block work (a backlog must not keep submissions it can no longer send alive).
      if (this.expiredAt(task, head) !== undefined) {
        const status = await this.checkInclusion(task, head, summary.targeting.firstBlock, { direct: true })
        if (status.status === 'included') {
          await this.finish(task, includedEvent(status, this.now()))
          return
        }
      } else {
        await this.recordOutcomes(task, head.number, head)
        const status = await this.checkInclusion(task, head, summary.targeting.firstBlock)
        if (status.status === 'included') {
          await this.finish(task, includedEvent(status, this.now()))
          return
        }
        if (status.status === 'dropped') {
          await this.finish(task, { type: 'dropped', at: this.now(), reason: status.reason })
          return
        }
        // the queue was long and a newer head came meanwhile: this block is gone, go on with that one
        if (this.head !== undefined && this.head.number !== head.number) {
          task.rerun = true
          return
        }
      }
    }
    if (task.finished || this.stopping) return

    let events: LifecycleEvent[] = []
    const eligible = record.kind === 'notify' ? this.hashRelays : this.relays
    let targeting = summary.targeting
    if (targeting === undefined) {
      targeting = this.targetingFor(record, head, eligible)
      events.push(targeting)
    }
    const target = head.number + 1n
    const expiry = this.expiredAt(task, head, targeting)
    if (expiry !== undefined) {
      await this.finish(task, { type: 'expired', at: this.now(), lastBlock: targeting.lastBlock, reason: expiry }, events)
      return
    }
    if (target < targeting.firstBlock) {
      await this.record(task, events)
      return
    }

    // 1. the user's own bundle, right after a simulation on this head (a notify has none: the
    //    partner dispatches the tx itself). Never held up by backrun planning.
    const userParts = record.kind === 'notify' ? [] : eligible.filter((relay) => !wasSent(summary, relay.name, target, 'user'))
    // re-sends are bounded per block (a first send never is): beyond the budget this block is
    // skipped, and the next head tries again
    if (userParts.length > 0 && task.simulatedFor !== undefined && !this.spend(this.resendBudget, target, this.maxSimulationsPerBlock)) {
      this.resendsSkipped++
      await this.record(task, events)
      return
    }
    const planParts = eligible.filter((relay) => !wasSent(summary, relay.name, target, 'backrun'))
    // Re-simulation is bounded per block too (maxSimulationsPerBlock): a submission beyond the
    // budget goes out on its last verdict and is simulated at a later head. New submissions are
    // always simulated once (they have no verdict yet).
    const fresh = task.simulatedFor === undefined
    if (task.simulatedFor !== target && (userParts.length > 0 || planParts.length > 0) && (fresh || this.spend(this.simulationBudget, target, this.maxSimulationsPerBlock))) {
      task.simulatedFor = target
      const terminal = await this.simulateFor(task, head, target, events)
      if (terminal !== undefined) {
        await this.finish(task, terminal, events)
        return
      }
    }
    if (userParts.length > 0) {
      await this.send(task, userParts, this.userBundle(task, target), target, events)
      events = []
    }

    // 2. the backrun bundle, once planned for this block (a re-run for the same block does not plan again)
    if (task.plannedFor !== target && planParts.length > 0) {
      task.plannedFor = target
      await this.planFor(task, target, events)
      if (this.head !== undefined && this.head.number !== head.number) {
        // a newer head arrived while planning: this block is being built, go on with the next one
        await this.record(task, events)
        task.rerun = true
        return
      }
      const noBackrun = events.find((e): e is NoBackrunEvent => e.type === 'no-backrun')
      if (record.kind === 'notify' && noBackrun !== undefined && !task.everPlanned) {
        // We never dispatch a notified tx; without a backrun there is nothing to send.
        await this.finish(task, { type: 'dropped', at: this.now(), reason: `${noBackrun.reason}; a notified transaction is never dispatched by this service` }, events)
        return
      }
    }
    const backrun = this.backrunBundle(task, target, events)
    if (backrun !== undefined && planParts.length > 0) {
      await this.send(task, planParts, backrun, target, events)
      return
    }
    await this.record(task, events)
  }

  /** Announces (durably, with `before`) and starts the send of `bundle` to each of `relays`. */
  private async send(task: Task, relays: readonly BundleRelay[], bundle: OutgoingBundle, block: bigint, before: readonly LifecycleEvent[]): Promise<void> {
    const sends = relays.map((relay) => ({ relay, attemptId: randomUUID() }))
    const events = [...before]
    for (const { relay, attemptId } of sends) {
      events.push({ type: 'relay-sending', at: this.now(), relay: relay.name, block, attemptId, part: bundle.role, bundleHash: bundle.hash })
    }
    // Durable before the first byte leaves (see the module comment).
    await this.record(task, events)
    for (const { relay, attemptId } of sends) this.startSend(task, relay, bundle, block, attemptId)
  }

  private targetingFor(record: SubmissionRecord, head: HeadInfo, eligible: readonly BundleRelay[]): TargetingEvent {
    const fixed = record.bundleOptions?.blockNumber
    const firstBlock = fixed ?? head.number + 1n
    const lastBlock = fixed ?? firstBlock + this.expiryBlocks - 1n
    return { type: 'targeting', at: this.now(), firstBlock, lastBlock, relays: eligible.map((r) => r.name) }
  }

  /** Why the submission can no longer be sent at `head`, or undefined while it can. */
  private expiredAt(task: Task, head: HeadInfo, targeting: TargetingEvent | undefined = task.summary.targeting): string | undefined {
    if (targeting === undefined) return undefined
    const { record } = task
    const target = head.number + 1n
    const maxTimestamp = record.bundleOptions?.maxTimestamp
    if (target > targeting.lastBlock) {
      return record.bundleOptions?.blockNumber !== undefined
        ? `the bundle's blockNumber ${targeting.lastBlock} has passed without inclusion`
        : `not included by block ${targeting.lastBlock} (${this.expiryBlocks} blocks)`
    }
    if (maxTimestamp !== undefined && head.timestamp >= maxTimestamp) return `maxTimestamp ${maxTimestamp} has passed without inclusion`
    return undefined
  }

  private async checkInclusion(task: Task, head: HeadInfo, firstBlock: bigint, how: { direct?: boolean } = {}): Promise<InclusionStatus> {
    const { record, summary } = task
    const check = (): Promise<InclusionStatus> =>
      this.inclusion.check({
        id: record.id,
        kind: record.kind,
        txHashes: record.txHashes,
        ...(summary.backrun ? { backrunTxHash: summary.backrun.txHash } : {}),
        firstBlock,
        head,
      })
    try {
      if (how.direct === true) return await check()
      // the block index says where each hash is: no receipt request for what is not on chain
      const indexed = this.indexed
      if (indexed !== undefined && indexed.head === head.number) {
        await indexed.ready
        const from = firstBlock > 0n ? firstBlock - 1n : 0n
        if (this.blockIndex.covers(from, head.number) && record.txHashes.every((h) => this.blockIndex.blockOf(h) === undefined)) return { status: 'pending' }
      }
      // a check that waited in the queue past its head is stale: the next head asks again
      return await this.inclusionLimit.run(() => (this.head !== undefined && this.head.number !== head.number ? Promise.resolve({ status: 'pending' as const }) : check()))
    } catch (err) {
      this.log.warn({ err, id: record.id }, 'inclusion check failed; treating as pending')
      return { status: 'pending' }
    }
  }

  /** Asks every relay that tells (bundleStats) what became of the bundles it accepted for `block`. */
  private async recordOutcomes(task: Task, block: bigint, head: HeadInfo): Promise<void> {
    const accepted = task.accepted?.filter((a) => a.block === block)
    task.accepted = task.accepted?.filter((a) => a.block > block)
    if (task.accepted?.length === 0) task.accepted = undefined
    if (accepted === undefined || accepted.length === 0) return
    // bounded per block like the rest of the per-head work: what a relay tells is for the partner's
    // information, never needed to deliver
    const asked = accepted.filter(() => this.spend(this.statsBudget, block, this.maxSimulationsPerBlock))
    const asks = asked.map(({ relay, role, hash }) =>
      this.inclusionLimit.run(async (): Promise<BundleOutcomeEvent | undefined> => {
        const stats = relay.bundleStats
        // stale once a newer head came while it waited: for the partner's information only
        if (stats === undefined || (this.head !== undefined && this.head.number !== head.number)) return undefined
        try {
          const answer = await stats.call(relay, hash, block, { signal: AbortSignal.timeout(this.prepareTimeoutMs) })
          const event: BundleOutcomeEvent = { type: 'bundle-outcome', at: this.now(), relay: relay.name, block, role, bundleHash: hash, status: answer.status }
          if (answer.reason !== undefined) event.reason = answer.reason
          return event
        } catch (err) {
          this.log.warn({ id: task.record.id, relay: relay.name, block: block.toString(), err: errorText(err) }, 'bundle stats unavailable')
          return undefined
        }
      }),
    )
    const events = (await Promise.all(asks)).filter((e): e is BundleOutcomeEvent => e !== undefined)
    await this.record(task, events)
  }

  /**
   * The user's own bundle for `block`: the user txs alone, with the partner's options. Sent first
   * every block, so the user's inclusion never waits for (or depends on) a backrun.
   */
  private userBundle(task: Task, block: bigint): OutgoingBundle {
    const { record } = task
    const options = record.bundleOptions ?? {}
    const reverting = options.revertingTxHashes ?? []
    return {
      role: 'user',
      hash: computeBundleHash(record.txHashes),
      bundle: {
        entries: record.rawTxs.map((tx): RelayBundleEntry => ({ tx })),
        blockNumber: block,
        ...timing(record),
        ...(reverting.length === 0 ? {} : { revertingTxHashes: [...reverting] }),
        ...(options.replacementUuid === undefined ? {} : { replacementUuid: options.replacementUuid }),
      },
    }
  }

  /**
   * The backrun bundle for `block`, when a backrun was planned for it: `[user txs..., backrun]`.
   * It shares the user's txs with the user's own bundle, so a builder includes at most one of the
   * two: the backrun bundle pays more and wins when it is valid; when it is not (the backrun would
   * revert after another bundle took or moved its profit, its nonce went stale), the user's own
   * bundle still lands. The backrun is therefore not in revertingTxHashes (unless
   * backrunMayRevert): a backrun that would revert fails its bundle instead of costing the
   * searcher gas. A notify submission's backrun bundle references the tx by hash. The partner's
   * replacementUuid stays on its own bundle (a second bundle with the same uuid would replace it).
   */
  private backrunBundle(task: Task, block: bigint, pending: readonly LifecycleEvent[]): OutgoingBundle | undefined {
    const { record, summary } = task
    const decided = [...pending].reverse().find((e): e is BackrunEvent | NoBackrunEvent => e.type === 'backrun' || e.type === 'no-backrun')
    const latest = decided ?? (summary.backrun === null ? undefined : summary.backrun)
    if (latest === undefined || latest.type !== 'backrun' || (latest.block !== undefined && latest.block !== block)) return undefined
    const backrun = latest
    if (record.kind === 'notify') {
      return {
        role: 'backrun',
        hash: computeBundleHash([record.txHashes[0], backrun.txHash]),
        bundle: { entries: [{ hash: record.txHashes[0] }, { tx: backrun.rawTx }], blockNumber: block },
      }
    }
    const reverting = [...(record.bundleOptions?.revertingTxHashes ?? []), ...(this.backrunMayRevert ? [backrun.txHash] : [])]
    return {
      role: 'backrun',
      hash: computeBundleHash([...record.txHashes, backrun.txHash]),
      bundle: {
        entries: [...record.rawTxs.map((tx): RelayBundleEntry => ({ tx })), { tx: backrun.rawTx }],
        blockNumber: block,
        ...timing(record),
        ...(reverting.length === 0 ? {} : { revertingTxHashes: reverting }),
      },
    }
  }

  private startSend(task: Task, relay: BundleRelay, outgoing: OutgoingBundle, block: bigint, attemptId: string): void {
    const key = `${relay.name}@${outgoing.role}`
    const previous = task.inflight?.get(key)
    if (previous !== undefined) previous.controller.abort(new Error(`superseded by block ${block}`))
    const controller = new AbortController()
    const id = task.record.id
    const done = (async () => {
      let result: RelayResultEvent
      try {
        const sent = await relay.sendBundle(outgoing.bundle, {
          signal: controller.signal,
          onRetry: ({ attempt, error, delayMs }) =>
            this.log.warn({ id, relay: relay.name, block: block.toString(), part: outgoing.role, attempt, reason: error.reason, delayMs, err: error.message }, 'relay send failed; retrying'),
        })
        result = { type: 'relay-result', at: this.now(), relay: relay.name, block, attemptId, part: outgoing.role, ok: true, attempts: sent.attempts }
        if (sent.relayBundleHash !== undefined) result.relayBundleHash = sent.relayBundleHash
        // asked what became of it once the block is built
        ;(task.accepted ??= []).push({ block, relay, role: outgoing.role, hash: outgoing.hash })
      } catch (err) {
        const relayError = err instanceof RelayError ? err : undefined
        const reason = controller.signal.aborted ? `aborted: ${errorText(controller.signal.reason)}` : errorText(err)
        result = { type: 'relay-result', at: this.now(), relay: relay.name, block, attemptId, part: outgoing.role, ok: false, attempts: relayError?.attempts ?? 1, lastError: reason }
        if (!controller.signal.aborted) this.log.warn({ id, relay: relay.name, block: block.toString(), part: outgoing.role, err: reason }, 'relay did not accept the bundle')
      }
      if (task.inflight?.get(key)?.controller === controller) {
        task.inflight.delete(key)
        if (task.inflight.size === 0) task.inflight = undefined
      }
      await this.record(task, [result])
    })()
    ;(task.inflight ??= new Map()).set(key, { block, controller, done })
    ;(task.unsettled ??= new Set()).add(done)
    void done.finally(() => {
      task.unsettled?.delete(done)
      if (task.unsettled?.size === 0) task.unsettled = undefined
    })
    this.track(done)
  }
  // -------------------------------------------------------------------------------------------
  // Recording

  /** Append durably and to the in-memory summary. A failed write is logged, not thrown: delivery goes on. */
  private async record(task: Task, events: readonly LifecycleEvent[]): Promise<void> {
    if (events.length === 0) return
    for (const event of events) applyLifecycleEvent(task.summary, event)
    try {
      await this.store.append(task.record.id, events)
    } catch (err) {
      const level = isPersistenceError(err) ? 'error' : 'warn'
      this.log[level]({ err, id: task.record.id, events: events.map((e) => e.type) }, 'recording lifecycle events failed')
    }
  }

  /** Abort this submission's sends, wait for their results, then write `before` and the terminal event. */
  private async finish(task: Task, terminal: TerminalEvent, before: readonly LifecycleEvent[] = []): Promise<void> {
    if (task.finished) return
    task.finished = true
    for (const send of task.inflight?.values() ?? []) send.controller.abort(new Error(`submission ${terminal.type}`))
    await Promise.allSettled([...(task.unsettled ?? [])])
    await this.record(task, [...before, terminal])
    this.active.delete(task.record.id)
    this.log.info({ id: task.record.id, outcome: terminal.type, ...('block' in terminal ? { block: terminal.block.toString() } : {}) }, 'submission finished')
  }
}

// ---------------------------------------------------------------------------------------------

/** Order of planning at a new head: last block's backruns by net profit, then never planned, then the rest. */
function planPriority(a: Task, b: Task): number {
  const rank = (t: Task): number => (t.summary.backrun ? 0 : t.summary.backrun === undefined ? 1 : 2)
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  const pa = a.summary.backrun?.netProfitWei ?? 0n
  const pb = b.summary.backrun?.netProfitWei ?? 0n
  return pa === pb ? 0 : pa > pb ? -1 : 1
}

function timing(record: SubmissionRecord): { minTimestamp?: bigint; maxTimestamp?: bigint } {
  const options = record.bundleOptions ?? {}
  return {
    ...(options.minTimestamp === undefined ? {} : { minTimestamp: options.minTimestamp }),
    ...(options.maxTimestamp === undefined ? {} : { maxTimestamp: options.maxTimestamp }),
  }
}

function includedEvent(status: Extract<InclusionStatus, { status: 'included' }>, at: number): IncludedEvent {
  return {
    type: 'included',
    at,
    block: status.blockNumber,
    ...(status.backrunIncluded === undefined ? {} : { backrunIncluded: status.backrunIncluded }),
    ...(status.backrunIncluded === true && status.backrunTxHash !== undefined ? { backrunTxHash: status.backrunTxHash } : {}),
    ...(status.backrunIncluded === true && status.backrunGrossProfit !== undefined ? { backrunGrossProfit: status.backrunGrossProfit } : {}),
  }
}

function simulatedEvent(report: SimulationReport, at: number): SimulatedEvent {
  const event: SimulatedEvent = { type: 'simulated', at, success: report.success }
  if (report.revertReason !== undefined) event.revertReason = report.revertReason
  if (report.failedTxIndex !== undefined) event.failedTxIndex = report.failedTxIndex
  if (report.rejection !== undefined) event.rejection = report.rejection
  if (report.gasUsed !== undefined) event.gasUsed = report.gasUsed
  if (report.blockNumber !== undefined) event.blockNumber = report.blockNumber
  return event
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`Dispatcher: ${name} must be a positive integer, got ${value}`)
  return value
}
