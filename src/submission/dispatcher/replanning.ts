/**
 * Re-planning on a new head: the user's txs simulated again on it (a tx whose nonce is now used,
 * or that now reverts without the partner's leave, ends with that reason instead of being re-sent
 * until expiry), and the backrun searched again (profit grows, shrinks or vanishes as other
 * bundles land), signed with a searcher key leased for that block with its nonce on that head
 * (see SearcherKeyPool: one backrun per key per block, so backruns never share a nonce), as
 * backrunExact: it realizes exactly the profit reported for that block or reverts.
 */
import type { Address, Hex } from '../../chain/types.ts'
import { errorText } from '../../primitives/error-text.ts'
import { decodeSignedTransaction, type DecodeTransactionOptions, type DecodedTransaction } from '../../tx/decode-transaction.ts'
import type { BackrunPlanner, HeadInfo, SimulationReport, SubmissionSimulator } from '../dispatcher-ports.ts'
import { Limiter } from '../limiter.ts'
import type { LifecycleEvent, SimulatedEvent, SubmissionId, TerminalEvent } from '../types.ts'
import { headMoved, type DispatchContext } from './context.ts'
import { includedEvent, type InclusionWatch } from './inclusion.ts'
import { PerBlockBudget } from './per-block-budget.ts'
import { PrepareClock, type PrepareBounds } from './prepare-clock.ts'
import type { Task } from './task.ts'

export interface ReplanningPorts {
  simulate: SubmissionSimulator
  planner: BackrunPlanner
  /** how stored raw txs are decoded (the chain's id and hardfork) */
  decode: DecodeTransactionOptions
}

export class Replanning {
  private readonly simulate: SubmissionSimulator
  private readonly planner: BackrunPlanner
  private readonly decode: DecodeTransactionOptions
  /** the wait and the run of a simulation or a plan, each bounded apart (see prepare-clock.ts) */
  private readonly bounds: PrepareBounds
  /** plans running at the same time */
  private readonly planLimit: Limiter
  /** plans started per target block */
  private readonly planBudget: PerBlockBudget
  /** pools claimed by a planned backrun bundle, for one target block */
  private claims: { block: bigint; pools: Map<Address, SubmissionId> } = { block: -1n, pools: new Map() }

  constructor(
    private readonly ctx: DispatchContext,
    ports: ReplanningPorts,
    private readonly inclusion: InclusionWatch,
    limits: { prepareConcurrency: number; maxPlansPerBlock: number; prepareTimeoutMs: number; queueWaitMs: number },
  ) {
    this.simulate = ports.simulate
    this.planner = ports.planner
    this.decode = ports.decode
    this.planLimit = new Limiter(limits.prepareConcurrency)
    this.planBudget = new PerBlockBudget(limits.maxPlansPerBlock)
    this.bounds = { queueWaitMs: limits.queueWaitMs, runMs: limits.prepareTimeoutMs }
  }

  /**
   * Simulates the user's txs on the current head for `target` (the next block), appending what it
   * found to `events`. Returns a terminal event when the submission can never land any more: a
   * nonce already used (replaced by the sender's later tx, or landed elsewhere) or a revert the
   * partner did not allow. `again`: a re-simulation (the submission went out before), which a port
   * may run behind interactive requests (see SimulationInput.again).
   */
  async simulateFor(task: Task, head: HeadInfo, target: bigint, events: LifecycleEvent[], again = false): Promise<TerminalEvent | undefined> {
    const { record } = task
    task.simulation = undefined
    if (!this.decodable(task)) {
      events.push({ type: 'simulated', at: this.ctx.now(), success: false, error: 'the stored transactions no longer decode' })
      return undefined
    }
    // CPU work on this thread: let the acknowledgements and sends waiting on the event loop go
    // first (an execution's awaits are microtasks and never let them).
    await this.ctx.turn()
    let simulation: SimulationReport
    const clock = new PrepareClock('the simulation', this.bounds)
    const txs = this.userTxs(task)
    try {
      simulation = await clock.run(() =>
        clock.call((progress) =>
          this.simulate({
            id: record.id,
            kind: record.kind,
            rawTxs: txs.raw,
            get userTxs() {
              return txs.decoded()
            },
            signal: clock.signal,
            clock: progress,
            again,
          }),
        ),
      )
    } catch (err) {
      // busy or too long: recorded as this head's simulation error; the user's own bundle goes out all the same
      events.push({ type: 'simulated', at: this.ctx.now(), success: false, error: errorText(err) })
      return undefined
    }
    task.simulation = simulation
    events.push(simulatedEvent(simulation, this.ctx.now()))
    if (simulation.success) return undefined
    const index = simulation.failedTxIndex ?? 0
    const txHash = record.txHashes[index]
    const why = simulation.revertReason ?? 'failed'
    if (simulation.rejection === 'nonce-used') {
      // its nonce is taken: it landed (by another path) or the sender replaced it
      const status = await this.inclusion.check(task, head, target, { direct: true })
      if (status.status === 'included') return includedEvent(status, this.ctx.now())
      return { type: 'dropped', at: this.ctx.now(), reason: `tx ${index} (${txHash}) can never be included: ${why.replace(/^not includable: /, '')} (its nonce is used: replaced by the sender or included elsewhere)` }
    }
    if (simulation.rejection === undefined && record.kind !== 'notify' && record.bundleOptions?.revertingTxHashes?.includes(txHash) !== true) {
      return { type: 'dropped', at: this.ctx.now(), reason: `tx ${index} (${txHash}) reverts on the state of block ${head.number} (${why}); a reverting transaction is not sent` }
    }
    return undefined
  }

  /**
   * Plans the backrun for `target` on head `head`, appending `backrun` or `no-backrun` to `events`.
   * Returns false when the plan is stale: a newer head arrived before it started or while it ran
   * (its block is being built), so nothing of it may be sent; its key is given back and the
   * `no-backrun` event says so. `cancel` aborts it when the submission ends.
   */
  async planFor(task: Task, head: bigint, target: bigint, events: LifecycleEvent[], cancel: AbortSignal): Promise<boolean> {
    const { record } = task
    if (!this.decodable(task)) {
      events.push({ type: 'no-backrun', at: this.ctx.now(), reason: 'the stored transactions no longer decode', block: target })
      return true
    }
    const txs = this.userTxs(task)
    // a bounded amount of backrun search per block: at most as many backruns can go out as there
    // are searcher keys, and every plan is CPU (here or in a worker)
    if (!this.planBudget.spend(target)) {
      events.push({ type: 'no-backrun', at: this.ctx.now(), reason: `the backrun planning budget of block ${target} (${this.planBudget.max} plans) is spent; planned again at the next head`, block: target })
      return true
    }
    // the simulation of this head, taken now: the next head's step replaces it while this plan runs
    const simulation = task.simulation
    const tipFloor = this.tipFloor(task)
    const stale = (): boolean => headMoved(this.ctx, head)
    // its turn on this thread first: a head's other submissions' steps are no place to run, and
    // must not spend the plan's wait bound (under load that line is seconds long)
    await this.ctx.turn()
    const clock = new PrepareClock('the backrun planning', this.bounds, cancel)
    // its wait counts from here: the dispatcher's plan slots, then the port's own queue
    clock.queued()
    try {
      const plan = await clock.run(() =>
        this.planLimit.run(async () => {
          // its block was built while it waited: no work for a plan nobody can send
          if (stale()) return undefined
          return clock.call((progress) =>
            this.planner.plan({
              id: record.id,
              kind: record.kind,
              rawTxs: txs.raw,
              get userTxs() {
                return txs.decoded()
              },
              simulation,
              signal: clock.signal,
              clock: progress,
              targetBlock: target,
              tipFloor,
            }),
          )
        }, clock.signal),
      )
      if (plan === undefined || stale()) {
        if (plan !== undefined && plan !== null) this.planner.release?.(record.id, plan.block ?? target)
        events.push({ type: 'no-backrun', at: this.ctx.now(), reason: `a newer head arrived before the plan for block ${target} finished; dropped, planned again for the next block`, block: target })
        return false
      }
      const current = plan !== null && (plan.block === undefined || plan.block === target)
      const taken = current ? this.claimPools(task, target, plan.pools ?? []) : undefined
      if (plan === null) {
        events.push({ type: 'no-backrun', at: this.ctx.now(), reason: 'no profitable backrun found', block: target })
      } else if (plan.block !== undefined && plan.block !== target) {
        this.planner.release?.(record.id, plan.block)
        events.push({ type: 'no-backrun', at: this.ctx.now(), reason: `the head moved while planning (planned for block ${plan.block}); planned again at the next head`, block: target })
      } else if (taken !== undefined) {
        this.planner.release?.(record.id, target)
        events.push({ type: 'no-backrun', at: this.ctx.now(), reason: `its pools are moved by the backrun bundle of ${taken.owner} for block ${target} (pool ${taken.pool}); only one of them could land, planned again at the next head`, block: target })
      } else {
        const backrunTx = decodeSignedTransaction(plan.rawBackrunTx, this.decode)
        task.everPlanned = true
        events.push({
          type: 'backrun',
          at: this.ctx.now(),
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
      events.push({ type: 'no-backrun', at: this.ctx.now(), reason: `backrun planning failed: ${errorText(err)}`, block: target })
      return !stale()
    }
    return true
  }

  /**
   * The highest tip cap among the other open submissions' txs: O(open submissions), run for at
   * most maxPlansPerBlock plans per block. Every task carries its tip cap from the moment it is
   * taken on, before its first simulation: the block's submissions arrive together and are
   * simulated one per event-loop turn, so a floor over the simulated ones only missed those
   * still queued, and their swaps then out-paid and moved the backrun's pools first.
   */
  private tipFloor(task: Task): bigint {
    let floor = 0n
    for (const t of this.ctx.tasks()) if (t !== task && t.userTipCap !== undefined && t.userTipCap > floor) floor = t.userTipCap
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

  /**
   * Whether the stored raw txs decode (logged when not), decoded once per submission: a decode is
   * a pure function of the bytes and the chain's rules, so what decoded once decodes at every
   * later head.
   */
  private decodable(task: Task): boolean {
    if (task.decodeChecked) return true
    try {
      for (const raw of task.record.rawTxs) decodeSignedTransaction(raw, this.decode)
      task.decodeChecked = true
      return true
    } catch (err) {
      // Accepted earlier with the same rules, so the chain configuration changed. Forward anyway:
      // the bytes are what the partner signed, and delivery is committed.
      this.ctx.log.warn({ err, id: task.record.id }, 'a stored transaction no longer decodes; forwarding it without simulation or backrun')
      return false
    }
  }

  /**
   * The user's txs for a simulation or a plan: the stored bytes, and their decode made only when
   * a port reads it (the in-process ports). The worker pool's ports send the bytes and decode in
   * the worker: decoding every open submission again on this thread at each head (sender
   * recovery, ethereumjs objects; the decode memo holds 512) was the main thread's largest share
   * of a head's work under bench:submit.
   */
  private userTxs(task: Task): { raw: readonly Hex[]; decoded: () => readonly DecodedTransaction[] } {
    let decoded: DecodedTransaction[] | undefined
    return {
      raw: task.record.rawTxs,
      decoded: () => (decoded ??= task.record.rawTxs.map((raw) => decodeSignedTransaction(raw, this.decode))),
    }
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
