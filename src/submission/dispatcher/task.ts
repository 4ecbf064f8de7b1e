/**
 * What the dispatcher keeps in memory per open submission between heads: its record, a lifecycle
 * summary and the sends of the last block. No decoded transaction, simulation state or VM is kept
 * (each head simulates again; only the tip cap of its txs is kept, read from their RLP fields).
 */
import type { Hex } from '../../chain/types.ts'
import { transactionTipCap } from '../../tx/tip-cap.ts'
import type { SimulationReport } from '../dispatcher-ports.ts'
import { summarizeLifecycle, type LifecycleSummary } from '../lifecycle.ts'
import type { BundleRelay } from '../relay-client.ts'
import type { BundleRole, StoredSubmission, SubmissionRecord } from '../types.ts'

export interface InflightSend {
  block: bigint
  controller: AbortController
  done: Promise<void>
}

/** A bundle a relay accepted, asked about (bundleStats) once its block is built. */
export interface AcceptedBundle {
  block: bigint
  relay: BundleRelay
  role: BundleRole
  hash: Hex
}

/** A backrun plan running in the background of the submission's head steps (at most one per submission). */
export interface RunningPlan {
  /** the block it plans for */
  block: bigint
  /** aborted when the submission ends (finished, given up, the dispatcher stopping) */
  controller: AbortController
  done: Promise<void>
}

export interface Task {
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
  /** the plan still running, if any: the next head's user bundle never waits for it */
  planning: RunningPlan | undefined
  /** a backrun was planned at least once (a notify without one ever is dropped) */
  everPlanned: boolean
  /** the highest tip cap of the user's txs, read from their RLP fields as the task is taken on */
  userTipCap: bigint | undefined
  /** its stored txs were decoded once (a decode is a pure function of the bytes and the chain's rules) */
  decodeChecked: boolean
  /** the bundles relays accepted, kept until their outcomes are asked at the next head (undefined: none) */
  accepted: AcceptedBundle[] | undefined
  /** the send in flight per `<relay>@<role>` */
  inflight: Map<string, InflightSend> | undefined
  /** every send not settled yet, superseded ones included (finish waits for their results) */
  unsettled: Set<Promise<void>> | undefined
  /**
   * taken over from an owner whose send horizon was this block: nothing is sent up to it (that
   * owner's sends up to there may have gone out unrecorded). Undefined: no such bar.
   */
  sendsBarredThrough: bigint | undefined
}

/**
 * A task for a stored submission, not prepared yet. `decoded`: its txs were decoded with the
 * dispatcher's rules as it was accepted in this process (see Dispatcher.accept), with the highest
 * tip cap among them when the accepting call told it: then their RLP fields are not read again here,
 * which runs before the acknowledgement is answered (an RLP decode per submission, ~6 KB of garbage).
 */
export function newTask(stored: StoredSubmission, decoded?: { tipCap: bigint | undefined }, sendsBarredThrough?: bigint): Task {
  return {
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
    planning: undefined,
    everPlanned: stored.events.some((e) => e.type === 'backrun'),
    userTipCap: decoded?.tipCap ?? tipCapOf(stored.record.rawTxs),
    decodeChecked: decoded !== undefined,
    accepted: undefined,
    inflight: undefined,
    unsettled: undefined,
    sendsBarredThrough,
  }
}

/** The highest tip cap among `rawTxs`, undefined when none parses. */
function tipCapOf(rawTxs: readonly Hex[]): bigint | undefined {
  let highest: bigint | undefined
  for (const raw of rawTxs) {
    const cap = transactionTipCap(raw)
    if (cap !== undefined && (highest === undefined || cap > highest)) highest = cap
  }
  return highest
}

/** Order of planning at a new head: last block's backruns by net profit, then never planned, then the rest. */
export function planPriority(a: Task, b: Task): number {
  const rank = (t: Task): number => (t.summary.backrun ? 0 : t.summary.backrun === undefined ? 1 : 2)
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  const pa = a.summary.backrun?.netProfitWei ?? 0n
  const pb = b.summary.backrun?.netProfitWei ?? 0n
  return pa === pb ? 0 : pa > pb ? -1 : 1
}
