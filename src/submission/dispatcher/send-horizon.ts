/**
 * This process's send horizon on a shared store (SubmissionLeases.markSendHorizon): before it sends
 * for a block, one durable row says "this owner's sends up to this block may have gone out",
 * instead of a `relay-sending` event per submission before each send. Each send is then recorded
 * once, after the relay's answer (relay-sends.ts). A process that takes a submission over reads the
 * previous owner's horizon with its claim and sends nothing for it up to that block, so a send
 * whose record was lost with its process (killed between the send and the record) is not repeated
 * for that block.
 *
 * One mark per head serves every submission's sends for that block: the first send for a block
 * starts the write (or the head does, ahead of them), the others wait for the same one. A mark
 * that fails or is refused (the store cannot vouch for the lease, see markSendHorizon) answers
 * false: those sends are announced one by one before they go out, as without a horizon.
 */
import { errorText } from '../../primitives/error-text.ts'
import type { DispatcherLogger } from '../dispatcher-ports.ts'
import type { SubmissionLeases } from '../store/submission-store.ts'

export class SendHorizon {
  /** the newest block marked durably */
  private marked = -1n
  /** the newest block whose mark failed or was refused: its sends are announced one by one (the next block tries again) */
  private unmarked = -1n
  /** the mark in progress, for the newest block asked */
  private pending: { block: bigint; done: Promise<boolean> } | undefined

  constructor(
    private readonly leases: SubmissionLeases,
    private readonly owner: string,
    private readonly log: DispatcherLogger,
  ) {}

  /** Whether this process's sends for `block` are covered by a durable horizon (marked now if not yet). */
  cover(block: bigint): Promise<boolean> {
    if (block <= this.marked) return Promise.resolve(true)
    if (block <= this.unmarked) return Promise.resolve(false)
    const pending = this.pending
    if (pending !== undefined && pending.block >= block) return pending.done
    const done = this.leases.markSendHorizon(this.owner, block).then(
      (marked) => {
        if (marked && block > this.marked) this.marked = block
        if (!marked) this.refused(block)
        // a process that just started has no live heartbeat until its first renewal
        if (!marked) this.log.info({ owner: this.owner, block: block.toString() }, 'send horizon refused (no live lease heartbeat yet): sends for this block are announced one by one')
        return marked
      },
      (err: unknown) => {
        this.refused(block)
        this.log.warn({ owner: this.owner, block: block.toString(), err: errorText(err) }, 'send horizon not written: sends for this block are announced one by one')
        return false
      },
    )
    const entry = { block, done }
    this.pending = entry
    void done.finally(() => {
      if (this.pending === entry) this.pending = undefined
    })
    return done
  }

  private refused(block: bigint): void {
    if (block > this.unmarked) this.unmarked = block
  }
}
