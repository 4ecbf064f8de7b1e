/**
 * The tasks piscina carries to a worker and what comes back: plain data, by structured clone.
 */
import type { BackrunEngineStats } from '../backrun/backrun-engine.ts'
import type { BackrunFound, BackrunRequest } from '../backrun/types.ts'
import type { BlockInfo } from '../chain/types.ts'
import type { QuoteRequest, QuoteResult, QuoteServiceStats } from '../quote/types.ts'
import type { EngineSettings } from './engines.ts'
import type { SerializedError } from './error-registry.ts'

/** What each worker is started with (its workerData). */
export interface WorkerSettings {
  engines: EngineSettings
  chainKind: 'devnet' | 'fork'
  chainId: bigint
  /** the main thread's head when the pool was opened */
  head: BlockInfo
}

/** Kind of task -> its request and its answer. */
export interface TaskKinds {
  quote: { request: QuoteRequest; value: QuoteResult }
  backrun: { request: BackrunRequest; value: BackrunFound | null }
}

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
  /** the worker's V8 heap in use, bytes (a gauge, not a counter) */
  heapUsedBytes: number
}

export type WorkerAnswer<K extends TaskKind = TaskKind> = { threadId: number; counters: WorkerCounters } & (
  | { ok: true; value: TaskKinds[K]['value'] }
  /** the engine's error, rebuilt on the main thread as the same class */
  | { ok: false; error: SerializedError }
)
