/**
 * Reorgs: the chain replaced blocks the dispatcher had worked on. What was planned and sent for a
 * replaced block was planned on a state that is gone (a backrun signed as backrunExact for it
 * cannot land as planned), and an inclusion seen in a replaced block did not happen on the chain
 * that stands. So:
 * - an open submission that was simulated, planned or sent for a block above the common ancestor
 *   records the reorg (its `sent` marks for those blocks are forgotten, see lifecycle.ts) and is
 *   simulated, planned and sent again from the new head;
 * - a submission this dispatcher saw included in a replaced block is re-opened (the store appends
 *   the reorg with its `includedBlock` and lists it as open again) and dispatched as before, in
 *   the same lifecycle, read back from the store. RecentInclusions (recent-inclusions.ts) remembers
 *   the inclusions a reorg may still undo (ids and blocks).
 */
import { reorgFloor, sentKeyBlock } from '../lifecycle.ts'
import type { HeadReorg } from '../dispatcher-ports.ts'
import type { ReorgEvent } from '../types.ts'
import type { Task } from './task.ts'

/** The reorg as a lifecycle event (without `includedBlock`: only a re-opened submission has one). */
export function reorgEvent(reorg: HeadReorg, at: number): ReorgEvent {
  return {
    type: 'reorg',
    at,
    ...(reorg.commonAncestor === undefined ? {} : { commonAncestor: reorg.commonAncestor.number }),
    dropped: reorg.dropped.map((b) => b.number),
    newHead: reorg.newHead.number,
  }
}

/** Whether `task` was simulated, planned or sent for a block the reorg replaced. */
export function touchedByReorg(task: Task, event: ReorgEvent): boolean {
  const floor = reorgFloor(event)
  if ((task.simulatedFor ?? -1n) > floor || (task.plannedFor ?? -1n) > floor) return true
  for (const key of task.summary.sent) if (sentKeyBlock(key) > floor) return true
  return false
}

/**
 * Forgets what `task` did for the replaced blocks (the caller records `event`, which forgets the
 * sends): it is checked for inclusion, simulated and planned again on the new head. A submission
 * simulated before stays a re-simulation, so the per-block budgets still bound the work.
 */
export function resetForReorg(task: Task, event: ReorgEvent): void {
  const floor = reorgFloor(event)
  task.lastCheckedHead = undefined
  if (task.simulatedFor !== undefined && task.simulatedFor > floor) task.simulatedFor = floor
  if (task.plannedFor !== undefined && task.plannedFor > floor) task.plannedFor = undefined
  for (const send of task.inflight?.values() ?? []) {
    if (send.block > floor) send.controller.abort(new Error(`block ${send.block} was replaced by a reorg`))
  }
  task.accepted = task.accepted?.filter((bundle) => bundle.block <= floor)
}

// the window of recent inclusions a reorg re-opens: its own file (a fixed-size ring)
export { RECENT_INCLUSIONS_DEFAULTS, RecentInclusions, type RecentInclusion, type RecentInclusionsOptions } from './recent-inclusions.ts'
