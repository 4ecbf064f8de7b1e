/**
 * What the parts of the dispatcher (inclusion, relay sends, re-planning, the per-head step) share
 * with the Dispatcher that owns them: its clock and log, the newest head, and the acts that
 * touch its state (recording, finishing, tracking work for whenIdle()).
 */
import type { DispatcherLogger, HeadInfo } from '../dispatcher-ports.ts'
import type { LifecycleEvent, TerminalEvent } from '../types.ts'
import type { Task } from './task.ts'

export interface DispatchContext {
  readonly log: DispatcherLogger
  /** clock for event times, ms */
  readonly now: () => number
  /** the newest head seen: work that started on an older one is stale */
  head(): HeadInfo | undefined
  /** stop() was called */
  stopping(): boolean
  /** every submission being delivered */
  tasks(): Iterable<Task>
  /**
   * Append durably and to the in-memory summary (the first `applied` events are in the summary
   * already: written only). A failed write is logged, not thrown: delivery goes on.
   */
  record(task: Task, events: readonly LifecycleEvent[], applied?: number): Promise<void>
  /**
   * This process's send horizon (send-horizon.ts), with leases on a shared store only: `cover`
   * answers whether a durable horizon covers the sends for a block, `valid` whether the leases
   * are still trusted now (asked right before such sends go out). Undefined: every send is
   * announced (`relay-sending` written) before it goes out.
   */
  readonly horizon?: { cover(block: bigint): Promise<boolean>; valid(): boolean }
  /** Abort the submission's sends, wait for their results, then write `before` and the terminal event. */
  finish(task: Task, terminal: TerminalEvent, before?: readonly LifecycleEvent[]): Promise<void>
  /** Runs the head step for `task` again (after its running one, if any): a stale plan gives way to one for the newest head. */
  reschedule(task: Task): void
  /** Counts `promise` as running work until it settles (see Dispatcher.whenIdle). */
  track<T>(promise: Promise<T>): Promise<T>
  /**
   * Resolves in a later turn of the event loop (see event-loop-turns.ts): awaited inside a step
   * under way (before its simulation, its send, its plan), so acknowledgements are not held behind
   * all of it; ahead of the steps of other submissions not started yet, so a step ends soon after
   * it chose its target block.
   */
  turn(): Promise<void>
}

/** A newer head than `head` (the one the work started on) has arrived: the work is stale. */
export function headMoved(ctx: DispatchContext, head: bigint): boolean {
  const current = ctx.head()
  return current !== undefined && current.number !== head
}
