/**
 * The tasks piscina carries to a worker and what comes back: plain data, by structured clone.
 */
import type { BackrunEngineStats } from '../backrun/backrun-engine.ts'
import type { BackrunFound, BackrunRequest } from '../backrun/types.ts'
import type { Address, BlockInfo, Hex } from '../chain/types.ts'
import type { QuoteRequest, QuoteServiceStats } from '../quote/types.ts'
import type { BackrunPlanningSettings } from '../submission/backrun-planning.ts'
import type { BackrunTransactionRequest } from '../submission/backrun-signer.ts'
import type { BackrunPlan, SimulationReport } from '../submission/dispatcher-ports.ts'
import type { SubmissionId, SubmissionKind } from '../submission/types.ts'
import type { EngineSettings } from './engines.ts'
import type { SerializedError } from './error-registry.ts'

/** What each worker is started with (its workerData). */
export interface WorkerSettings {
  engines: EngineSettings
  /**
   * the niceness the worker adds to its own thread's as it starts (WORKER_NICE): Linux schedules
   * threads one by one, so the main thread keeps answering while the workers compute
   */
  nice: number
  chainKind: 'devnet' | 'fork'
  chainId: bigint
  /** the main thread's head when the pool was opened */
  head: BlockInfo
}

/**
 * The dispatcher's simulation of a submission: its user transactions as raw signed bytes (a
 * decoded transaction holds ethereumjs objects structured clone cannot carry), decoded again in
 * the worker with the chain's rules.
 */
export interface SimulateTaskRequest {
  id: SubmissionId
  kind: SubmissionKind
  rawTxs: Hex[]
}

/** The dispatcher's backrun planning of a submission: what the planner is given, keys excepted. */
export interface PlanTaskRequest extends SimulateTaskRequest {
  simulation: SimulationReport | undefined
  tipFloor: bigint | undefined
  settings: BackrunPlanningSettings
  /** how many searcher keys the main thread holds (for the message when every one is taken) */
  searcherKeys: number
}

/** Kind of task -> its request and its answer. */
export interface TaskKinds {
  /** the answer as the 200 body of POST /v1/quote, written by the worker (server/quote/quote-json.ts) */
  quote: { request: QuoteRequest; value: string }
  backrun: { request: BackrunRequest; value: BackrunFound | null }
  simulate: { request: SimulateTaskRequest; value: SimulationReport }
  plan: { request: PlanTaskRequest; value: BackrunPlan | null }
}

/**
 * What a running task asks of the main thread (a planning task, for the searcher keys, which stay
 * there; see pooled-backrun-planner.ts), answered on the worker's channel. `owner` is the
 * submission the task plans for.
 */
export type TaskCall =
  | { op: 'lease'; head: bigint; target: bigint; owner: string }
  | { op: 'sign'; target: bigint; owner: string; request: BackrunTransactionRequest }
  | { op: 'release'; target: bigint; owner: string }

/** The answer of each call: the leased key's address, the raw signed transaction, nothing. */
export interface TaskCallValues {
  lease: Address | undefined
  sign: Hex
  release: undefined
}

/** The main thread's side of a task's calls. */
export type TaskHost = (call: TaskCall) => Promise<unknown>

export type TaskKind = keyof TaskKinds

export interface WorkerTask<K extends TaskKind = TaskKind> {
  taskId: number
  kind: K
  request: TaskKinds[K]['request']
  /** the block the main thread chose: the task runs on its state */
  block: BlockInfo
}

/** A worker's counters, as of the answer they came with (they only grow). */
export interface WorkerCounters {
  quote: QuoteServiceStats
  backrun: BackrunEngineStats
  /** state reads sent to the main thread, and the messages they went in */
  remoteReads: number
  remoteBatches: number
  /** state reads answered by the worker's own L1 */
  l1Hits: number
  /** L1 entries carried from a head's parent over to the head (the keys the block did not change) */
  l1Carried: number
  /** the worker's V8 heap in use, bytes (a gauge, not a counter) */
  heapUsedBytes: number
}

export type WorkerAnswer<K extends TaskKind = TaskKind> = {
  threadId: number
  counters: WorkerCounters
  /** how long the worker worked on the task, ms: from taking it (warm) to its answer */
  computeMs: number
} & (
  | { ok: true; value: TaskKinds[K]['value'] }
  /** the engine's error, rebuilt on the main thread as the same class */
  | { ok: false; error: SerializedError }
)
