/**
 * The dispatcher delivers what the outbox has acknowledged: for each undelivered submission it
 * simulates the user txs, asks the backrun planner for a backrun, builds the bundle
 * `[user raw txs..., backrun?]` and sends it to every eligible relay for the next block, again for
 * every following block, until the inclusion checker reports it on chain or it expires.
 *
 * Sources of work: `start()` loads every undelivered submission from the store (resume after a
 * restart), and `accept()` persists a new one and hands it over through a bounded in-memory queue.
 * When the queue is full nothing is lost: the submission is durable, and the dispatcher re-reads
 * the store's undelivered list once the queue has drained.
 *
 * Per relay, per block: one send with its own retry loop (RelayClient), started in parallel with
 * the other relays' sends after a single durable write. A slow or failing relay never delays the
 * others, nor the next block: when the next head arrives, a relay still retrying the previous
 * block is aborted (that block is mined) and the new block's send starts.
 *
 * Sent at most once per (submission, relay, block), also across restarts: the `relay-sending`
 * event (with a random attempt id) is fsynced BEFORE the request goes out, and a restarted
 * dispatcher never sends for a (relay, block) that has one. A crash between that write and the
 * request costs at most that one block at that relay; the submission is sent again for the next
 * block. We chose "record, then send" (at most once per block) over "send, then record" (at least
 * once) because the submission is re-sent every block anyway, so a lost block is cheap, while the
 * audit log ("why did it not land?") stays exact: every request a relay got has its record. Relays
 * also treat the same bundle for the same block as idempotent (same txs, same bundle hash), which
 * is why, when the pre-send write itself fails, we send anyway: delivery is committed, and a
 * duplicate after a restart is harmless. The planned backrun is stored before it is first sent
 * and reused after a restart, so a resend is byte-identical.
 *
 * The backrun's hash is added to `revertingTxHashes` of private-tx and bundle submissions: a
 * backrun made stale by a later block then cannot take the partner's txs down with it.
 */
import { randomUUID } from 'node:crypto'

import type { Address, Hex } from '../chain/types.ts'
import { decodeSignedTransaction, type DecodeTransactionOptions, type DecodedTransaction } from '../tx/decode-transaction.ts'
import { RelayError, isPersistenceError } from './errors.ts'
import { applyLifecycleEvent, summarizeLifecycle, wasSent, type LifecycleSummary } from './lifecycle.ts'
import type { OutboxStore, PersistResult } from './outbox-store.ts'
import type { BundleRelay, RelayBundle, RelayBundleEntry } from './relay-client.ts'
import type {
  LifecycleEvent,
  NewSubmission,
  RelayResultEvent,
  SimulatedEvent,
  StoredSubmission,
  SubmissionId,
  SubmissionKind,
  SubmissionRecord,
  TargetingEvent,
  TerminalEvent,
} from './types.ts'

// ---------------------------------------------------------------------------------------------
// What the dispatcher is given

/** The part of a block header the dispatcher needs; src/chain/types.ts BlockInfo has it. */
export interface HeadInfo {
  number: bigint
  /** unix seconds */
  timestamp: bigint
}

/**
 * New chain heads. A ChainStateSource fits:
 * `{ onNewHead: (l) => chain.onNewHead(l), currentHead: () => chain.latest().block }`.
 */
export interface HeadSource {
  /** Called with each new head; returns an unsubscribe function. */
  onNewHead(listener: (head: HeadInfo) => void): () => void
  /** The newest head already known, so new submissions are sent before the next head arrives. */
  currentHead?(): HeadInfo | undefined
}

export interface SimulationInput {
  id: SubmissionId
  kind: SubmissionKind
  /** the user's txs in bundle order (one for private-tx and notify) */
  userTxs: readonly DecodedTransaction[]
  /** aborted when prepareTimeoutMs passes */
  signal: AbortSignal
}

export interface SimulationReport {
  /** false when a user tx reverts */
  success: boolean
  revertReason?: string
  /** index of the reverting tx in userTxs */
  failedTxIndex?: number
  gasUsed?: bigint
  /** block the state was pinned to */
  blockNumber?: bigint
}

/** Simulates the user txs in order in the next-block context; throw when it cannot be run. */
export type SubmissionSimulator = (input: SimulationInput) => Promise<SimulationReport>

export interface BackrunPlanInput {
  id: SubmissionId
  kind: SubmissionKind
  /** the user's txs in bundle order; the backrun goes behind the last one */
  userTxs: readonly DecodedTransaction[]
  /** undefined when the simulation could not be run */
  simulation: SimulationReport | undefined
  /** aborted when prepareTimeoutMs passes */
  signal: AbortSignal
}

export interface BackrunPlan {
  /** the signed backrun tx, from the searcher account */
  rawBackrunTx: Hex
  /** profit in profitToken base units */
  grossProfit: bigint
  profitToken: Address
  /** net of gas, in wei of the native token */
  netProfitWei?: bigint
  gasUsed?: bigint
}

/** Finds a profitable backrun behind the user txs (the lead implements it with the eth_backrun engine). */
export interface BackrunPlanner {
  /** null when there is no profitable backrun */
  plan(input: BackrunPlanInput): Promise<BackrunPlan | null>
}

export interface InclusionQuery {
  id: SubmissionId
  kind: SubmissionKind
  /** the user's tx hashes (for notify: the notified tx) */
  txHashes: readonly Hex[]
  backrunTxHash?: Hex
  /** first block the submission was sent for */
  firstBlock: bigint
  /** the head being processed */
  head: HeadInfo
}

export type InclusionStatus =
  | { status: 'pending' }
  /** the user txs are on chain in `blockNumber` (for notify: the notified tx) */
  | { status: 'included'; blockNumber: bigint; backrunIncluded?: boolean }
  /** it can never be included any more (e.g. the sender's nonce was used by another tx) */
  | { status: 'dropped'; reason: string }

export interface InclusionChecker {
  /** Throwing counts as 'pending' (logged); the check is repeated at the next head. */
  check(query: InclusionQuery): Promise<InclusionStatus>
}

/** Pino / Fastify logger shape. Nothing logged carries raw txs or the searcher key. */
export interface DispatcherLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

/** The store operations the dispatcher uses; OutboxStore implements them. */
export type SubmissionOutbox = Pick<OutboxStore, 'persist' | 'append' | 'listUndelivered' | 'pruneFinished'>

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
  /** limit for simulate and for plan, each, ms; then the submission goes on without. Default 2 000. */
  prepareTimeoutMs?: number
  /** inclusion checks running at the same time. Default 16. */
  inclusionConcurrency?: number
  /** put the backrun's hash in revertingTxHashes of private-tx and bundle submissions. Default true. */
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
  inflight: Map<string, InflightSend>
  /** every send not settled yet, superseded ones included (finish waits for their results) */
  unsettled: Set<Promise<void>>
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
  private readonly backrunMayRevert: boolean
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
    this.backrunMayRevert = options.backrunMayRevert ?? true
    this.pruneIntervalMs = positiveInt('pruneIntervalMs', options.pruneIntervalMs ?? 60_000)
    this.log = options.log ?? NOOP_LOGGER
    this.now = options.now ?? Date.now
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
      for (const send of task.inflight.values()) send.controller.abort(new Error('dispatcher stopping'))
    }
    await this.whenIdle()
  }

  stats(): DispatcherStats {
    let inflightSends = 0
    for (const task of this.active.values()) inflightSends += task.inflight.size
    return { active: this.active.size, queued: this.queue.length, inflightSends, overflowed: this.overflowed, head: this.head?.number }
  }

  // -------------------------------------------------------------------------------------------
  // Heads and scheduling

  private onHead(head: HeadInfo): void {
    if (this.stopping) return
    if (this.head !== undefined && head.number < this.head.number) return // an older head arriving late
    this.head = head
    for (const task of this.active.values()) this.schedule(task)
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
      inflight: new Map(),
      unsettled: new Set(),
    }
    if (task.summary.outcome !== undefined) return
    this.active.set(id, task)
    await this.prepare(task)
    task.prepared = true
    this.schedule(task)
  }

  private async prepare(task: Task): Promise<void> {
    const { record, summary } = task
    if (summary.simulation !== undefined && summary.backrun !== undefined) {
      if (record.kind === 'notify' && summary.backrun === null) await this.finish(task, { type: 'dropped', at: this.now(), reason: summary.noBackrunReason ?? 'no backrun' })
      return
    }
    if (record.kind === 'notify' && this.hashRelays.length === 0) {
      await this.finish(task, { type: 'dropped', at: this.now(), reason: 'no configured relay accepts bundles that reference a transaction by hash' })
      return
    }
    const events: LifecycleEvent[] = []
    let userTxs: DecodedTransaction[] | undefined
    try {
      userTxs = record.rawTxs.map((raw) => decodeSignedTransaction(raw, this.decode))
    } catch (err) {
      // Accepted earlier with the same rules, so the chain configuration changed. Forward anyway:
      // the bytes are what the partner signed, and delivery is committed.
      this.log.warn({ err, id: record.id }, 'a stored transaction no longer decodes; forwarding it without simulation or backrun')
    }

    let simulation: SimulationReport | undefined = summary.simulation === undefined ? undefined : reportOf(summary.simulation)
    if (summary.simulation === undefined) {
      if (userTxs === undefined) {
        events.push({ type: 'simulated', at: this.now(), success: false, error: 'the stored transactions no longer decode' })
      } else {
        const txs = userTxs
        try {
          simulation = await this.withTimeout('simulation', (signal) => this.simulate({ id: record.id, kind: record.kind, userTxs: txs, signal }))
          events.push(simulatedEvent(simulation, this.now()))
        } catch (err) {
          events.push({ type: 'simulated', at: this.now(), success: false, error: errorText(err) })
        }
      }
    }

    if (summary.backrun === undefined) {
      if (userTxs === undefined) {
        events.push({ type: 'no-backrun', at: this.now(), reason: 'the stored transactions no longer decode' })
      } else {
        const txs = userTxs
        try {
          const plan = await this.withTimeout('backrun planning', (signal) =>
            this.planner.plan({ id: record.id, kind: record.kind, userTxs: txs, simulation, signal }),
          )
          if (plan === null) {
            events.push({ type: 'no-backrun', at: this.now(), reason: 'no profitable backrun found' })
          } else {
            const backrunTx = decodeSignedTransaction(plan.rawBackrunTx, this.decode)
            events.push({
              type: 'backrun',
              at: this.now(),
              rawTx: backrunTx.rawHex,
              txHash: backrunTx.hash,
              grossProfit: plan.grossProfit,
              profitToken: plan.profitToken,
              ...(plan.netProfitWei === undefined ? {} : { netProfitWei: plan.netProfitWei }),
              ...(plan.gasUsed === undefined ? {} : { gasUsed: plan.gasUsed }),
            })
          }
        } catch (err) {
          events.push({ type: 'no-backrun', at: this.now(), reason: `backrun planning failed: ${errorText(err)}` })
        }
      }
    }

    const noBackrun = events.find((e) => e.type === 'no-backrun')
    if (record.kind === 'notify' && noBackrun !== undefined && noBackrun.type === 'no-backrun') {
      // We never dispatch a notified tx; without a backrun there is nothing to send.
      await this.finish(task, { type: 'dropped', at: this.now(), reason: `${noBackrun.reason}; a notified transaction is never dispatched by this service` }, events)
      return
    }
    await this.record(task, events)
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
  // One head for one submission: inclusion, expiry, sends

  private async advance(task: Task): Promise<void> {
    const head = this.head
    if (head === undefined || task.finished) return
    const { record, summary } = task

    if (summary.targeting !== undefined && task.lastCheckedHead !== head.number) {
      task.lastCheckedHead = head.number
      const status = await this.checkInclusion(task, summary.targeting, head)
      if (status.status === 'included') {
        await this.finish(task, {
          type: 'included',
          at: this.now(),
          block: status.blockNumber,
          ...(status.backrunIncluded === undefined ? {} : { backrunIncluded: status.backrunIncluded }),
        })
        return
      }
      if (status.status === 'dropped') {
        await this.finish(task, { type: 'dropped', at: this.now(), reason: status.reason })
        return
      }
    }
    if (task.finished || this.stopping) return

    const events: LifecycleEvent[] = []
    const eligible = record.kind === 'notify' ? this.hashRelays : this.relays
    let targeting = summary.targeting
    if (targeting === undefined) {
      targeting = this.targetingFor(record, head, eligible)
      events.push(targeting)
    }
    const target = head.number + 1n
    const maxTimestamp = record.bundleOptions?.maxTimestamp
    if (target > targeting.lastBlock || (maxTimestamp !== undefined && head.timestamp >= maxTimestamp)) {
      const reason =
        target > targeting.lastBlock
          ? record.bundleOptions?.blockNumber !== undefined
            ? `the bundle's blockNumber ${targeting.lastBlock} has passed without inclusion`
            : `not included by block ${targeting.lastBlock} (${this.expiryBlocks} blocks)`
          : `maxTimestamp ${maxTimestamp} has passed without inclusion`
      await this.finish(task, { type: 'expired', at: this.now(), lastBlock: targeting.lastBlock, reason }, events)
      return
    }
    if (target < targeting.firstBlock) {
      await this.record(task, events)
      return
    }

    const sends = eligible.filter((relay) => !wasSent(summary, relay.name, target)).map((relay) => ({ relay, attemptId: randomUUID() }))
    for (const { relay, attemptId } of sends) events.push({ type: 'relay-sending', at: this.now(), relay: relay.name, block: target, attemptId })
    // Durable before the first byte leaves (see the module comment).
    await this.record(task, events)
    if (sends.length === 0) return
    const bundle = this.bundleFor(task, target)
    for (const { relay, attemptId } of sends) this.startSend(task, relay, bundle, target, attemptId)
  }

  private targetingFor(record: SubmissionRecord, head: HeadInfo, eligible: readonly BundleRelay[]): TargetingEvent {
    const fixed = record.bundleOptions?.blockNumber
    const firstBlock = fixed ?? head.number + 1n
    const lastBlock = fixed ?? firstBlock + this.expiryBlocks - 1n
    return { type: 'targeting', at: this.now(), firstBlock, lastBlock, relays: eligible.map((r) => r.name) }
  }

  private async checkInclusion(task: Task, targeting: TargetingEvent, head: HeadInfo): Promise<InclusionStatus> {
    const { record, summary } = task
    try {
      return await this.inclusionLimit.run(() =>
        this.inclusion.check({
          id: record.id,
          kind: record.kind,
          txHashes: record.txHashes,
          ...(summary.backrun ? { backrunTxHash: summary.backrun.txHash } : {}),
          firstBlock: targeting.firstBlock,
          head,
        }),
      )
    } catch (err) {
      this.log.warn({ err, id: record.id }, 'inclusion check failed; treating as pending')
      return { status: 'pending' }
    }
  }

  private bundleFor(task: Task, block: bigint): RelayBundle {
    const { record, summary } = task
    const backrun = summary.backrun ?? undefined
    if (record.kind === 'notify') {
      if (backrun === undefined) throw new Error(`notify submission ${record.id} has no backrun to send`)
      return { entries: [{ hash: record.txHashes[0] }, { tx: backrun.rawTx }], blockNumber: block }
    }
    const entries: RelayBundleEntry[] = record.rawTxs.map((tx) => ({ tx }))
    if (backrun !== undefined) entries.push({ tx: backrun.rawTx })
    const options = record.bundleOptions ?? {}
    const reverting = [...(options.revertingTxHashes ?? [])]
    if (backrun !== undefined && this.backrunMayRevert) reverting.push(backrun.txHash)
    return {
      entries,
      blockNumber: block,
      ...(options.minTimestamp === undefined ? {} : { minTimestamp: options.minTimestamp }),
      ...(options.maxTimestamp === undefined ? {} : { maxTimestamp: options.maxTimestamp }),
      ...(reverting.length === 0 ? {} : { revertingTxHashes: reverting }),
      ...(options.replacementUuid === undefined ? {} : { replacementUuid: options.replacementUuid }),
    }
  }

  private startSend(task: Task, relay: BundleRelay, bundle: RelayBundle, block: bigint, attemptId: string): void {
    const previous = task.inflight.get(relay.name)
    if (previous !== undefined) previous.controller.abort(new Error(`superseded by block ${block}`))
    const controller = new AbortController()
    const id = task.record.id
    const done = (async () => {
      let result: RelayResultEvent
      try {
        const sent = await relay.sendBundle(bundle, {
          signal: controller.signal,
          onRetry: ({ attempt, error, delayMs }) =>
            this.log.warn({ id, relay: relay.name, block: block.toString(), attempt, reason: error.reason, delayMs, err: error.message }, 'relay send failed; retrying'),
        })
        result = { type: 'relay-result', at: this.now(), relay: relay.name, block, attemptId, ok: true, attempts: sent.attempts }
        if (sent.relayBundleHash !== undefined) result.relayBundleHash = sent.relayBundleHash
      } catch (err) {
        const relayError = err instanceof RelayError ? err : undefined
        const reason = controller.signal.aborted ? `aborted: ${errorText(controller.signal.reason)}` : errorText(err)
        result = { type: 'relay-result', at: this.now(), relay: relay.name, block, attemptId, ok: false, attempts: relayError?.attempts ?? 1, lastError: reason }
        if (!controller.signal.aborted) this.log.warn({ id, relay: relay.name, block: block.toString(), err: reason }, 'relay did not accept the bundle')
      }
      if (task.inflight.get(relay.name)?.controller === controller) task.inflight.delete(relay.name)
      await this.record(task, [result])
    })()
    task.inflight.set(relay.name, { block, controller, done })
    task.unsettled.add(done)
    void done.finally(() => task.unsettled.delete(done))
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
    for (const send of task.inflight.values()) send.controller.abort(new Error(`submission ${terminal.type}`))
    await Promise.allSettled([...task.unsettled])
    await this.record(task, [...before, terminal])
    this.active.delete(task.record.id)
    this.log.info({ id: task.record.id, outcome: terminal.type, ...('block' in terminal ? { block: terminal.block.toString() } : {}) }, 'submission finished')
  }
}

// ---------------------------------------------------------------------------------------------

class Limiter {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly max: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.active++
    try {
      return await fn()
    } finally {
      this.active--
      this.waiting.shift()?.()
    }
  }
}

function simulatedEvent(report: SimulationReport, at: number): SimulatedEvent {
  const event: SimulatedEvent = { type: 'simulated', at, success: report.success }
  if (report.revertReason !== undefined) event.revertReason = report.revertReason
  if (report.failedTxIndex !== undefined) event.failedTxIndex = report.failedTxIndex
  if (report.gasUsed !== undefined) event.gasUsed = report.gasUsed
  if (report.blockNumber !== undefined) event.blockNumber = report.blockNumber
  return event
}

function reportOf(event: SimulatedEvent): SimulationReport | undefined {
  if (event.error !== undefined) return undefined
  return {
    success: event.success,
    ...(event.revertReason === undefined ? {} : { revertReason: event.revertReason }),
    ...(event.failedTxIndex === undefined ? {} : { failedTxIndex: event.failedTxIndex }),
    ...(event.gasUsed === undefined ? {} : { gasUsed: event.gasUsed }),
    ...(event.blockNumber === undefined ? {} : { blockNumber: event.blockNumber }),
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`Dispatcher: ${name} must be a positive integer, got ${value}`)
  return value
}
