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
 *   the same lifecycle, read back from the store. RecentInclusions remembers the inclusions a reorg
 *   may still undo (ids and blocks).
 */
import { reorgFloor, sentKeyBlock } from '../lifecycle.ts'
import type { HeadReorg } from '../dispatcher-ports.ts'
import { positiveInt } from '../../primitives/numbers.ts'
import type { ReorgEvent, SubmissionId } from '../types.ts'
import { packSubmissionId, unpackSubmissionId, type PackedSubmissionId } from './packed-submission-id.ts'
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

export interface RecentInclusionsOptions {
  /** blocks an inclusion is remembered for after its block: the deepest reorg that re-opens it */
  windowBlocks: number
  /** inclusions remembered at most (the oldest are forgotten first) */
  maxEntries: number
}

/** Defaults: the fork source's reorg depth (FORK_SOURCE_DEFAULTS.maxReorgDepth), and a bound on memory. */
export const RECENT_INCLUSIONS_DEFAULTS = { windowBlocks: 64, maxEntries: 10_000 } as const

/** A submission this dispatcher saw included, and the block it was included in. */
export interface RecentInclusion {
  id: SubmissionId
  block: bigint
}

/**
 * The submissions this dispatcher saw included in the last `windowBlocks` blocks: ids and blocks
 * only. A re-opened submission is read back from the store, which holds its record and lifecycle
 * anyway; keeping each finished task instead held ~4 KB per inclusion for 64 blocks (13 minutes of
 * 12 s blocks, up to 10,000 tasks: the main thread's heap grew ~4.5 MB a minute under bench:soak).
 * Each entry is its id packed (packed-submission-id.ts) and its block as a small integer: ~113
 * bytes of heap (~56 the key, the rest the Map's table) instead of ~213 with the id's text and a
 * bigint (test/submission/dispatcher/reorg.test.ts measures it): at the default bound ~1.1 MB
 * instead of ~2.1 MB; the window is the last to fill under bench:soak (12.8 minutes).
 */
export class RecentInclusions {
  private readonly windowBlocks: bigint
  private readonly maxEntries: number
  /** packed id -> block, in the order they were included (a Map keeps insertion order) */
  private readonly entries = new Map<PackedSubmissionId, number>()

  constructor(options: RecentInclusionsOptions) {
    this.windowBlocks = BigInt(positiveInt('windowBlocks', options.windowBlocks, 'RecentInclusions'))
    this.maxEntries = positiveInt('maxEntries', options.maxEntries, 'RecentInclusions')
  }

  add(id: SubmissionId, block: bigint): void {
    if (block > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`RecentInclusions keeps block numbers up to 2^53 - 1, got ${block}`)
    const key = packSubmissionId(id)
    this.entries.delete(key)
    // block numbers are far below 2^53 (and below 2^30, where V8 needs no heap object for them)
    this.entries.set(key, Number(block))
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break
      this.entries.delete(oldest)
    }
  }

  /** Forgets the inclusions older than the window at `head`. */
  forgetBefore(head: bigint): void {
    const oldest = Number(head - this.windowBlocks)
    for (const [key, block] of this.entries) if (block < oldest) this.entries.delete(key)
  }

  /** Removes and returns the inclusions in blocks above `floor` (a reorg replaced them). */
  takeAbove(floor: bigint): RecentInclusion[] {
    const taken: RecentInclusion[] = []
    const above = Number(floor)
    for (const [key, block] of this.entries) {
      if (block > above) {
        taken.push({ id: unpackSubmissionId(key), block: BigInt(block) })
        this.entries.delete(key)
      }
    }
    return taken
  }

  get size(): number {
    return this.entries.size
  }
}
