/**
 * What the Dispatcher is given: its ports (heads, simulation, backrun planning, inclusion, the
 * outbox, a logger), each a narrow interface so the dispatcher never knows which node, EVM or
 * store stands behind it. The engine-backed implementations are engine-simulator.ts,
 * engine-backrun-planner.ts, rpc-inclusion-checker.ts and outbox-store.ts.
 */
import type { Address, Hex } from '../chain/types.ts'
import type { DecodedTransaction } from '../tx/decode-transaction.ts'
import type { SubmissionStore } from './store/submission-store.ts'
import type { SimulationRejection, SubmissionId, SubmissionKind } from './types.ts'

/** The part of a block header the dispatcher needs; src/chain/types.ts BlockInfo has it. */
export interface HeadInfo {
  number: bigint
  /** unix seconds */
  timestamp: bigint
  /** the block's tx hashes, when the head source has them (then no request is made to learn them) */
  transactionHashes?: readonly Hex[]
}

/** Blocks the chain replaced (src/chain/types.ts ChainReorg has these fields). */
export interface HeadReorg {
  /** the newest block both chains share; undefined: deeper than the source looks, every block is taken as replaced */
  commonAncestor: { number: bigint } | undefined
  /** the replaced blocks the source knew, oldest first */
  dropped: ReadonlyArray<{ number: bigint }>
  /** the head adopted in their place; onNewHead is called with it right after (its number may be lower than the last head's) */
  newHead: HeadInfo
}

/**
 * New chain heads. A ChainStateSource fits:
 * `{ onNewHead: (l) => chain.onNewHead(l), onReorg: (l) => chain.onReorg(l), currentHead: () => chain.latest().block }`.
 */
export interface HeadSource {
  /** Called with each new head; returns an unsubscribe function. */
  onNewHead(listener: (head: HeadInfo) => void): () => void
  /**
   * Called when the chain replaced blocks, before onNewHead with the new head; returns an
   * unsubscribe function. A source whose chain never reorganizes (the devnet) may leave it out.
   */
  onReorg?(listener: (reorg: HeadReorg) => void): () => void
  /** The newest head already known, so new submissions are sent before the next head arrives. */
  currentHead?(): HeadInfo | undefined
}

/**
 * How a port that queues its work (the worker pool) tells the dispatcher where the work stands, so
 * that its bounds count what they mean: `queued()` (called before the port's first await) says the
 * work waits for a place, bounded by queueWaitMs; `started()` says it runs now, and prepareTimeoutMs
 * counts from then. A port that calls neither runs the work at once: prepareTimeoutMs counts from
 * the call.
 */
export interface TaskClock {
  queued(): void
  started(): void
}

export interface SimulationInput {
  id: SubmissionId
  kind: SubmissionKind
  /** the user's txs in bundle order (one for private-tx and notify) */
  readonly userTxs: readonly DecodedTransaction[]
  /**
   * the stored bytes of userTxs, in the same order, when the caller has them (the dispatcher
   * does). A port that runs the work elsewhere (the worker pool) sends these and never reads
   * userTxs, which the dispatcher then decodes only when read: no decode on its thread per head.
   */
  rawTxs?: readonly Hex[]
  /** aborted when the work is given up: its wait (queueWaitMs) or its run (prepareTimeoutMs) took too long, or the submission ended */
  signal: AbortSignal
  /** for a port that queues the work: tells when it waits and when it starts (see TaskClock) */
  clock?: TaskClock
  /**
   * true for a re-simulation at a later head (the submission already went out on an earlier
   * verdict): per-head work a port may run behind interactive requests (the worker pool's
   * background line). Absent or false: a new submission's first simulation, which its user's own
   * bundle waits for before it goes out.
   */
  again?: boolean
}

export interface SimulationReport {
  /** false when a user tx reverts */
  success: boolean
  revertReason?: string
  /** index of the reverting tx in userTxs */
  failedTxIndex?: number
  /**
   * Set when the failing tx cannot be included at all on this head (not executed): `nonce-used`
   * (it can never be included: its nonce is taken), `nonce-gap` (a predecessor is missing),
   * `funds`, `fee` (fee cap below the base fee) or `other`.
   */
  rejection?: SimulationRejection
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
  readonly userTxs: readonly DecodedTransaction[]
  /**
   * the stored bytes of userTxs, in the same order, when the caller has them (the dispatcher
   * does). A port that runs the work elsewhere (the worker pool) sends these and never reads
   * userTxs, which the dispatcher then decodes only when read: no decode on its thread per head.
   */
  rawTxs?: readonly Hex[]
  /** undefined when the simulation could not be run */
  simulation: SimulationReport | undefined
  /** aborted when the work is given up: its wait (queueWaitMs) or its run (prepareTimeoutMs) took too long, or the submission ended */
  signal: AbortSignal
  /** for a port that queues the work: tells when it waits and when it starts (see TaskClock) */
  clock?: TaskClock
  /** the block the backrun is for (the head's next block) */
  targetBlock?: bigint
  /** the highest tip cap among the other open submissions' txs: the backrun bundle should pay more per gas */
  tipFloor?: bigint
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
  /** the block it was planned and signed for */
  block?: bigint
  /** the searcher account that signed it */
  searcher?: Address
  /** the pools the bundle [user txs, backrun] moves (lowercase), when the planner knows them */
  pools?: Address[]
}

/** Finds a profitable backrun behind the user txs (the lead implements it with the eth_backrun engine). */
export interface BackrunPlanner {
  /** null when there is no profitable backrun */
  plan(input: BackrunPlanInput): Promise<BackrunPlan | null>
  /** A plan made for `block` is not used: what it holds for that block (its searcher key) is free again. */
  release?(id: SubmissionId, block: bigint): void
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
  | { status: 'included'; blockNumber: bigint; backrunIncluded?: boolean; backrunTxHash?: Hex; backrunGrossProfit?: bigint }
  /** it can never be included any more (e.g. the sender's nonce was used by another tx) */
  | { status: 'dropped'; reason: string }

export interface InclusionChecker {
  /** Throwing counts as 'pending' (logged); the check is repeated at the next head. */
  check(query: InclusionQuery): Promise<InclusionStatus>
  /**
   * The tx hashes of block `number`, or null when the node does not have it. When given, the
   * dispatcher indexes each new block once and calls check() only for submissions found in it
   * (or whose blocks it could not index): see BlockTxIndex.
   */
  blockTransactions?(number: bigint): Promise<readonly Hex[] | null>
}

/** Pino / Fastify logger shape. Nothing logged carries raw txs or the searcher key. */
export interface DispatcherLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

/** The store operations the dispatcher uses; both stores (LevelDB's OutboxStore, PostgreSQL's) implement them. */
export type SubmissionOutbox = Pick<SubmissionStore, 'persist' | 'append' | 'reopen' | 'get' | 'listUndelivered' | 'pruneFinished'>
