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
 */
import { randomUUID } from 'node:crypto'

import { errorText } from '../../primitives/error-text.ts'
import type { HeadInfo } from '../dispatcher-ports.ts'
import { RelayError } from '../errors.ts'
import type { Limiter } from '../limiter.ts'
import type { BundleRelay } from '../relay-client.ts'
import type { BundleOutcomeEvent, LifecycleEvent, RelayResultEvent } from '../types.ts'
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

  /** Announces (durably, with `before`) and starts the send of `bundle` to each of `relays`. */
  async send(task: Task, relays: readonly BundleRelay[], bundle: OutgoingBundle, block: bigint, before: readonly LifecycleEvent[]): Promise<void> {
    const sends = relays.map((relay) => ({ relay, attemptId: randomUUID() }))
    const events = [...before]
    for (const { relay, attemptId } of sends) {
      events.push({ type: 'relay-sending', at: this.ctx.now(), relay: relay.name, block, attemptId, part: bundle.role, bundleHash: bundle.hash })
    }
    // Durable before the first byte leaves (see the module comment).
    await this.ctx.record(task, events)
    // one group commit resolves the writes of many submissions' sends at once: each builds and
    // signs its requests in its own turn of the event loop
    await this.ctx.turn()
    // the write was refused because another process holds the submission's lease (or it finished
    // meanwhile): that process sends from now on
    if (task.finished) return
    for (const { relay, attemptId } of sends) this.start(task, relay, bundle, block, attemptId)
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

  /** Sends `outgoing` to `relay` in the background (superseding the same relay's send of the same part), recording its result. */
  private start(task: Task, relay: BundleRelay, outgoing: OutgoingBundle, block: bigint, attemptId: string): void {
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
      await this.ctx.record(task, [result])
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
