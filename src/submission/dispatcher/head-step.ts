/**
 * One head for one submission, the dispatcher's state machine: the outcomes of the last block,
 * inclusion and expiry, then for the next block the user's own bundle at once (right after a
 * simulation on this head) and the backrun bundle beside it once planned.
 */
import { wasSent } from '../lifecycle.ts'
import type { BundleRelay } from '../relay-client.ts'
import type { LifecycleEvent, NoBackrunEvent } from '../types.ts'
import { backrunBundle, userBundle } from './bundles.ts'
import { headMoved, type DispatchContext } from './context.ts'
import { expiredAt, includedEvent, targetingFor, type InclusionWatch } from './inclusion.ts'
import { PerBlockBudget } from './per-block-budget.ts'
import type { RelaySends } from './relay-sends.ts'
import type { Replanning } from './replanning.ts'
import type { RunningPlan, Task } from './task.ts'

export interface HeadStepParts {
  /** every relay (the user's own bundles and backruns of raw txs go to all) */
  relays: readonly BundleRelay[]
  /** the relays that accept a tx referenced by hash (the only ones a notify's backrun can go to) */
  hashRelays: readonly BundleRelay[]
  inclusion: InclusionWatch
  sends: RelaySends
  replanning: Replanning
}

export class HeadStep {
  /** re-simulations of open submissions per target block */
  private readonly simulationBudget: PerBlockBudget
  /** re-sends of open submissions' own bundles per target block */
  private readonly resendBudget: PerBlockBudget
  private skipped = 0

  constructor(
    private readonly ctx: DispatchContext,
    private readonly parts: HeadStepParts,
    private readonly limits: { expiryBlocks: bigint; maxSimulationsPerBlock: number; backrunMayRevert: boolean },
  ) {
    this.simulationBudget = new PerBlockBudget(limits.maxSimulationsPerBlock)
    this.resendBudget = new PerBlockBudget(limits.maxSimulationsPerBlock)
  }

  /** (submission, block) pairs not sent because the block's re-send budget was spent */
  get resendsSkipped(): number {
    return this.skipped
  }

  /** Takes `task` through the newest head; sets `task.rerun` when a newer head came meanwhile. */
  async run(task: Task): Promise<void> {
    const { ctx, parts, limits } = this
    const head = ctx.head()
    if (head === undefined || task.finished) return
    const { record, summary } = task

    if (summary.targeting !== undefined && task.lastCheckedHead !== head.number) {
      task.lastCheckedHead = head.number
      // Past its last block: settled now, with one direct inclusion check, never behind the
      // queue of per-block work (a backlog must not keep submissions it can no longer send alive).
      if (expiredAt(record, head, summary.targeting, limits.expiryBlocks) !== undefined) {
        const status = await parts.inclusion.check(task, head, summary.targeting.firstBlock, { direct: true })
        if (status.status === 'included') {
          await ctx.finish(task, includedEvent(status, ctx.now()))
          return
        }
      } else {
        await parts.sends.recordOutcomes(task, head.number, head)
        const status = await parts.inclusion.check(task, head, summary.targeting.firstBlock)
        if (status.status === 'included') {
          await ctx.finish(task, includedEvent(status, ctx.now()))
          return
        }
        if (status.status === 'dropped') {
          await ctx.finish(task, { type: 'dropped', at: ctx.now(), reason: status.reason })
          return
        }
        // the queue was long and a newer head came meanwhile: this block is gone, go on with that one
        if (headMoved(ctx, head.number)) {
          task.rerun = true
          return
        }
      }
    }
    if (task.finished || ctx.stopping()) return

    let events: LifecycleEvent[] = []
    const eligible = record.kind === 'notify' ? parts.hashRelays : parts.relays
    let targeting = summary.targeting
    if (targeting === undefined) {
      targeting = targetingFor(record, head, eligible, limits.expiryBlocks, ctx.now())
      events.push(targeting)
    }
    const target = head.number + 1n
    const expiry = expiredAt(record, head, targeting, limits.expiryBlocks)
    if (expiry !== undefined) {
      await ctx.finish(task, { type: 'expired', at: ctx.now(), lastBlock: targeting.lastBlock, reason: expiry }, events)
      return
    }
    if (target < targeting.firstBlock) {
      await ctx.record(task, events)
      return
    }

    // 1. the user's own bundle, right after a simulation on this head (a notify has none: the
    //    partner dispatches the tx itself). Never held up by backrun planning.
    const userParts = record.kind === 'notify' ? [] : eligible.filter((relay) => !wasSent(summary, relay.name, target, 'user'))
    // re-sends are bounded per block (a first send never is): beyond the budget this block is
    // skipped, and the next head tries again
    if (userParts.length > 0 && task.simulatedFor !== undefined && !this.resendBudget.spend(target)) {
      this.skipped++
      await ctx.record(task, events)
      return
    }
    const planParts = eligible.filter((relay) => !wasSent(summary, relay.name, target, 'backrun'))
    // Re-simulation is bounded per block too (maxSimulationsPerBlock): a submission beyond the
    // budget goes out on its last verdict and is simulated at a later head. New submissions are
    // always simulated once (they have no verdict yet).
    const fresh = task.simulatedFor === undefined
    if (task.simulatedFor !== target && (userParts.length > 0 || planParts.length > 0) && (fresh || this.simulationBudget.spend(target))) {
      task.simulatedFor = target
      // a new submission's first simulation goes before interactive requests (its user's bundle
      // waits for it); a re-simulation at a head is background work beside them (task-gate.ts)
      const terminal = await parts.replanning.simulateFor(task, head, target, events, !fresh)
      if (terminal !== undefined) {
        await ctx.finish(task, terminal, events)
        return
      }
    }
    if (userParts.length > 0) {
      // built meanwhile (a newer head came while it simulated and waited): the same txs for the block after the newest head
      await parts.sends.send(task, userParts, userBundle(record, target), target, events, (block) => userBundle(record, block))
      events = []
    }

    // 2. the backrun bundle, planned in the background: the next head's step (its user bundle
    //    above all) never waits for a plan. Never two plans of one submission at once: one still
    //    running for an earlier block is dropped when it ends (its block is built), and this
    //    submission is then planned for the newest head (see startPlan).
    if (task.plannedFor !== target && planParts.length > 0 && task.planning === undefined) {
      task.plannedFor = target
      await ctx.record(task, events)
      if (task.finished || ctx.stopping()) return
      this.startPlan(task, head.number, target, planParts)
      return
    }
    const backrun = task.planning === undefined ? backrunBundle(record, summary, target, events, limits.backrunMayRevert) : undefined
    if (backrun !== undefined && planParts.length > 0) {
      await parts.sends.send(task, planParts, backrun, target, events)
      return
    }
    await ctx.record(task, events)
  }

  /**
   * Plans `task`'s backrun for `target` (on head `head`) in the background, then sends its bundle
   * to `relays`, unless a newer head came meanwhile: a stale plan is recorded as dropped and the
   * submission is planned again for the newest head.
   */
  private startPlan(task: Task, head: bigint, target: bigint, relays: readonly BundleRelay[]): void {
    const { ctx, parts, limits } = this
    const { record, summary } = task
    const controller = new AbortController()
    const run = async (): Promise<void> => {
      const events: LifecycleEvent[] = []
      const current = await parts.replanning.planFor(task, head, target, events, controller.signal)
      // it ended meanwhile (its terminal event is written, or another process holds it): nothing more
      if (task.finished || ctx.stopping()) return
      if (!current) {
        await ctx.record(task, events)
        task.planning = undefined
        ctx.reschedule(task)
        return
      }
      const noBackrun = events.find((e): e is NoBackrunEvent => e.type === 'no-backrun')
      if (record.kind === 'notify' && noBackrun !== undefined && !task.everPlanned) {
        // We never dispatch a notified tx; without a backrun there is nothing to send. (finish
        // waits for a running plan: this one is over)
        task.planning = undefined
        await ctx.finish(task, { type: 'dropped', at: ctx.now(), reason: `${noBackrun.reason}; a notified transaction is never dispatched by this service` }, events)
        return
      }
      const backrun = backrunBundle(record, summary, target, events, limits.backrunMayRevert)
      const unsent = relays.filter((relay) => !wasSent(summary, relay.name, target, 'backrun'))
      if (backrun !== undefined && unsent.length > 0) {
        await parts.sends.send(task, unsent, backrun, target, events)
        return
      }
      await ctx.record(task, events)
    }
    const plan: RunningPlan = { block: target, controller, done: Promise.resolve() }
    plan.done = run()
      .catch((err: unknown) => ctx.log.error({ err, id: record.id, block: target.toString() }, 'backrun planning step failed'))
      .finally(() => {
        if (task.planning === plan) task.planning = undefined
      })
    task.planning = plan
    ctx.track(plan.done)
  }
}
