/**
 * Sending bundles to relays, and asking them afterwards what became of them.
 *
 * Per relay, per block and bundle: one send (its own retry loop in RelayClient), started in
 * parallel with the other relays' sends after a single durable write. A slow or failing relay
 * never delays the others, nor the next block: when the next head arrives, a relay still retrying
 * the previous block is aborted (that block is mined) and the new block's send starts.
 *
 * Sent at most once per (submission, relay, block, bundle), also across restarts: the
 * `relay-sending` event (with a random attempt id, the part and the bundle's hash) is fsynced
 * BEFORE the request goes out, and a restarted dispatcher never sends for a (relay, block) that
 * has one. A crash between that write and the request costs at most that one block at that relay;
 * the submission is sent again for the next block. We chose "record, then send" (at most once per
 * block) over "send, then record" (at least once) because the submission is re-sent every block
 * anyway, so a lost block is cheap, while the audit log ("why did it not land?") stays exact:
 * every request a relay got has its record. Relays also treat the same bundle for the same block
 * as idempotent (same txs, same bundle hash), which is why, when the pre-send write itself fails,
 * we send anyway: delivery is committed, and a duplicate after a restart is harmless.
 *
 * With leases on a shared store (PostgreSQL), a durable send horizon per process replaces the
 * per-submission announcement (send-horizon.ts): one row per head says this process's sends up to
 * that block may have gone out, and each send is recorded once after its answer (`relay-sending`
 * and `relay-result` in one append, one row). A process that takes a submission over sends nothing
 * for it up to the previous owner's horizon (Task.sendsBarredThrough), so still at most once per
 * block, and a crash between a send and its record costs that one record (the send is not
 * repeated for that block). What changes for a reader of the lifecycle: a send in flight is not
 * shown as `sending` (its announcement is written with its result). Without a horizon (the
 * embedded store, or a mark that failed) every send is announced before it goes out, as above.
 */
import { randomUUID } from 'node:crypto'

import { errorText } from '../../primitives/error-text.ts'
import type { HeadInfo } from '../dispatcher-ports.ts'
import { RelayError } from '../errors.ts'
import type { Limiter } from '../limiter.ts'
import type { BundleRelay } from '../relay-client.ts'
import { applyLifecycleEvent, wasSent } from '../lifecycle.ts'
import type { BundleOutcomeEvent, LifecycleEvent, RelayResultEvent, RelaySendingEvent } from '../types.ts'
import type { OutgoingBundle } from './bundles.ts'
import { headMoved, type DispatchContext } from './context.ts'
import type { PerBlockBudget } from './per-block-budget.ts'
import type { Task } from './task.ts'

export class RelaySends {
  constructor(
    private readonly ctx: DispatchContext,
    /** bundle-stats questions wait their turn with the inclusion checks */
    private readonly limit: Limiter,
    /** bundle-stats questions per block */
    private readonly statsBudget: PerBlockBudget,
    /** the time a relay gets to answer a bundle-stats question, ms */
    private readonly statsTimeoutMs: number,
  ) {}

  /**
   * Announces (durably, with `before`) and starts the send of `bundle` to each of `relays`; under a
   * send horizon, writes `before` and starts the sends, each announced with its result.
   *
   * `block` built meanwhile (a newer head came while this step simulated and waited for its turn):
   * the sends do not go out (a builder refuses a block it has built, or keeps a bundle that can
   * never land), their announcements get a failed result, and with `retarget` (the user's own
   * bundle: the same txs for any block) the bundle goes out once more, for the block after the
   * newest head. A backrun is not retargeted: it was planned and signed for its block, and the
   * next head plans it again.
   */
  send(task: Task, relays: readonly BundleRelay[], bundle: OutgoingBundle, block: bigint, before: readonly LifecycleEvent[], retarget?: (block: bigint) => OutgoingBundle): Promise<void> {
    return this.deliver(task, relays, bundle, block, before, retarget, true)
  }

  /** send(); `ownTurn`: wait for a turn of the event loop before the requests are built (a retargeted send has had its turn) */
  private async deliver(
    task: Task,
    relays: readonly BundleRelay[],
    bundle: OutgoingBundle,
    block: bigint,
    before: readonly LifecycleEvent[],
    retarget: ((block: bigint) => OutgoingBundle) | undefined,
    ownTurn: boolean,
  ): Promise<void> {
    // taken over from an owner whose sends up to here may have gone out unrecorded: none again
    if (task.sendsBarredThrough !== undefined && block <= task.sendsBarredThrough) {
      await this.ctx.record(task, before)
      return
    }
    const sends = relays.map((relay) => ({
      relay,
      sending: { type: 'relay-sending', at: this.ctx.now(), relay: relay.name, block, attemptId: randomUUID(), part: bundle.role, bundleHash: bundle.hash } satisfies RelaySendingEvent,
    }))
    const announcements = sends.map((s) => s.sending)
    const horizon = this.ctx.horizon
    const covered = horizon !== undefined && (await horizon.cover(block))
    if (covered) {
      await this.ctx.record(task, before)
      // the sends are in the summary at once (this process never sends them twice), in the store with their results
      for (const sending of announcements) applyLifecycleEvent(task.summary, sending)
    } else {
      // Durable before the first byte leaves (see the module comment).
      await this.ctx.record(task, [...before, ...announcements])
    }
    // one group commit resolves the writes of many submissions' sends at once: each builds and
    // signs its requests in its own turn of the event loop (a retargeted send has had its turn:
    // another would let more blocks be built before it goes out)
    if (ownTurn) await this.ctx.turn()
    // the write was refused because another process holds the submission's lease (or it finished
    // meanwhile): that process sends from now on
    if (task.finished) return
    // under a horizon, only while the leases are trusted: a process that paused past its lease
    // period sends nothing until its renewal has told it what it still holds
    if (covered && !horizon.valid()) {
      this.ctx.log.warn({ id: task.record.id, block: block.toString() }, 'leases not renewed within the lease period: send skipped')
      return
    }
    // the head read right before sending (see the method's comment)
    const head = this.ctx.head()
    if (head !== undefined && block <= head.number) {
      const lastError = `not sent: block ${block} was built before the send went out (head ${head.number})`
      const results = sends.map(({ sending }): RelayResultEvent => ({ type: 'relay-result', at: this.ctx.now(), relay: sending.relay, block, attemptId: sending.attemptId, part: bundle.role, ok: false, attempts: 0, lastError }))
      // under a horizon the announcements are in the summary already, not yet in the store
      await (covered ? this.ctx.record(task, [...announcements, ...results], announcements.length) : this.ctx.record(task, results))
      if (retarget === undefined || task.finished || this.ctx.stopping()) return
      const next = head.number + 1n
      const unsent = relays.filter((relay) => !wasSent(task.summary, relay.name, next, bundle.role))
      if (unsent.length > 0) await this.deliver(task, unsent, retarget(next), next, [], undefined, false)
      return
    }
    for (const { relay, sending } of sends) this.start(task, relay, bundle, block, sending, covered)
  }

  /** Asks every relay that tells (bundleStats) what became of the bundles it accepted for `block`. */
  async recordOutcomes(task: Task, block: bigint, head: HeadInfo): Promise<void> {
    const accepted = task.accepted?.filter((a) => a.block === block)
    task.accepted = task.accepted?.filter((a) => a.block > block)
    if (task.accepted?.length === 0) task.accepted = undefined
    if (accepted === undefined || accepted.length === 0) return
    // bounded per block like the rest of the per-head work: what a relay tells is for the partner's
    // information, never needed to deliver
    const asked = accepted.filter(() => this.statsBudget.spend(block))
    const asks = asked.map(({ relay, role, hash }) =>
      this.limit.run(async (): Promise<BundleOutcomeEvent | undefined> => {
        const stats = relay.bundleStats
        // stale once a newer head came while it waited: for the partner's information only
        if (stats === undefined || headMoved(this.ctx, head.number)) return undefined
        try {
          const answer = await stats.call(relay, hash, block, { signal: AbortSignal.timeout(this.statsTimeoutMs) })
          const event: BundleOutcomeEvent = { type: 'bundle-outcome', at: this.ctx.now(), relay: relay.name, block, role, bundleHash: hash, status: answer.status }
          if (answer.reason !== undefined) event.reason = answer.reason
          return event
        } catch (err) {
          this.ctx.log.warn({ id: task.record.id, relay: relay.name, block: block.toString(), err: errorText(err) }, 'bundle stats unavailable')
          return undefined
        }
      }),
    )
    const events = (await Promise.all(asks)).filter((e): e is BundleOutcomeEvent => e !== undefined)
    await this.ctx.record(task, events)
  }

  /**
   * Sends `outgoing` to `relay` in the background (superseding the same relay's send of the same
   * part), recording its result; with `unannounced` (a send horizon covers it), its announcement
   * `sending` with it, in one append.
   */
  private start(task: Task, relay: BundleRelay, outgoing: OutgoingBundle, block: bigint, sending: RelaySendingEvent, unannounced: boolean): void {
    const attemptId = sending.attemptId
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
            this.ctx.log.warn({ id, relay: relay.name, block: block.toString(), part: outgoing.role, attempt, reason: error.reason, delayMs, err: error.message }, 'relay send failed; retrying'),
        })
        result = { type: 'relay-result', at: this.ctx.now(), relay: relay.name, block, attemptId, part: outgoing.role, ok: true, attempts: sent.attempts }
        if (sent.relayBundleHash !== undefined) result.relayBundleHash = sent.relayBundleHash
        // asked what became of it once the block is built
        ;(task.accepted ??= []).push({ block, relay, role: outgoing.role, hash: outgoing.hash })
      } catch (err) {
        const relayError = err instanceof RelayError ? err : undefined
        // a RelayError's message already says what its cause (the transport's failure) says
        const failure = relayError?.message ?? errorText(err)
        const reason = controller.signal.aborted ? `aborted: ${errorText(controller.signal.reason)}` : failure
        result = { type: 'relay-result', at: this.ctx.now(), relay: relay.name, block, attemptId, part: outgoing.role, ok: false, attempts: relayError?.attempts ?? 1, lastError: reason }
        if (!controller.signal.aborted) this.ctx.log.warn({ id, relay: relay.name, block: block.toString(), part: outgoing.role, err: reason }, 'relay did not accept the bundle')
      }
      if (task.inflight?.get(key)?.controller === controller) {
        task.inflight.delete(key)
        if (task.inflight.size === 0) task.inflight = undefined
      }
      await (unannounced ? this.ctx.record(task, [sending, result], 1) : this.ctx.record(task, [result]))
    })()
    ;(task.inflight ??= new Map()).set(key, { block, controller, done })
    ;(task.unsettled ??= new Set()).add(done)
    void done.finally(() => {
      task.unsettled?.delete(done)
      if (task.unsettled?.size === 0) task.unsettled = undefined
    })
    this.ctx.track(done)
  }
}
