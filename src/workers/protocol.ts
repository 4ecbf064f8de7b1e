/**
 * What the main thread and a worker say to each other, besides the tasks piscina carries.
 *
 * At start each worker opens a MessageChannel, keeps one end and hands the other to the main thread
 * (through piscina's 'message' event, see worker-entry.ts): on that channel the worker asks for
 * state (reads of one block, batched), and tells when it starts and ends a task and that its event
 * loop still turns (the hang watchdog); the main thread answers reads and announces new heads.
 * Every value crosses by structured clone (bigint and Uint8Array included).
 */
import type { MessagePort } from 'node:worker_threads'
import type { AccountInfo, Address, BlockInfo, BlockStateDiff, Hex } from '../chain/types.ts'
import type { SerializedError } from './error-registry.ts'
import type { CodeAnalysesAhead } from './code-analyses-ahead.ts'
import type { LoaderCollection } from './loader-gc.ts'
import type { TaskCall } from './tasks.ts'

/** The worker's end, sent once, through the worker's parentPort (piscina emits it as 'message'). */
export interface StatePortOffer {
  kind: typeof STATE_PORT_OFFER
  threadId: number
  port: MessagePort
  /** the worker's native-call gate (src/crypto/native-call-gate.ts): closed before its thread is terminated */
  nativeCalls: SharedArrayBuffer
}

export const STATE_PORT_OFFER = 'swap-backrun-router/state-port'

export function isStatePortOffer(message: unknown): message is StatePortOffer {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === STATE_PORT_OFFER
}

/** One read of a batch; the answer at the same index of `ReadsAnswer.results`. */
export type StateRead =
  | { op: 'account'; address: Address }
  /** answered with the code's hash, so the worker keeps one object per code across blocks */
  | { op: 'code'; address: Address }
  | { op: 'storage'; address: Address; slot: bigint }
  | { op: 'hasStorage'; address: Address }
  | { op: 'blockHash'; number: bigint }
  /** the reader's prefetch, then every value it asked for (answered from the main thread's cache) */
  | { op: 'prefetch'; accounts: Address[]; storage: Array<{ address: Address; slot: bigint }> }

export interface CodeAnswer {
  code: Uint8Array
  /** keccak256 of the code, hex; undefined for an account without code */
  codeHash: Hex | undefined
}

export interface PrefetchAnswer {
  accounts: Array<AccountInfo | undefined>
  storage: bigint[]
}

export type StateReadResult = { ok: true; value: unknown } | { ok: false; error: SerializedError }

/** worker -> main */
export type WorkerMessage =
  /** reads of the block `blockHash` (the block a task named) */
  | { t: 'reads'; id: number; blockHash: Hex; reads: StateRead[] }
  /** the worker took task `taskId` (its event loop is watched from now until the task ends) */
  | { t: 'task-start'; taskId: number }
  /** the worker's event loop turned (sent while it holds a task) */
  | { t: 'tick' }
  /**
   * the worker warmed up (worker-entry.ts warmUp) and takes tasks without first-time costs; `loader`:
   * what collecting its module-loader isolate gave back (absent when the collection did not answer);
   * `ahead`: what analysing the known contracts' code did (absent when their reads failed)
   */
  | { t: 'warm'; loader?: LoaderCollection; ahead?: CodeAnalysesAhead }
  /** a warning of the engines, logged by the main thread's logger */
  | { t: 'log'; obj: Record<string, unknown>; msg: string }
  /** task `taskId` asks the main thread for something only it has (answered by 'call-result' with the same id) */
  | { t: 'call'; id: number; taskId: number; call: TaskCall }

/** main -> worker */
export type MainMessage =
  | { t: 'reads'; id: number; results: StateReadResult[] }
  /**
   * a new head adopted by the main thread's state source (transaction hashes left out), with what
   * its source knows of its changes (the devnet: every changed key; a fork: the re-read keys that
   * kept their values): the worker's L1 of the parent carries over to this head as far as that goes
   */
  | { t: 'head'; block: BlockInfo; diff?: BlockStateDiff }
  | { t: 'call-result'; id: number; result: StateReadResult }
  /** the caller of task `taskId` gave up on it: stop at the next check, with this reason */
  | { t: 'cancel'; taskId: number; reason: string }

/** The block as it crosses to a worker: the simulation needs the header, not the transaction list. */
export function headerOnly(block: BlockInfo): BlockInfo {
  if (block.transactionHashes === undefined) return block
  const { transactionHashes: _dropped, ...header } = block
  return header
}

/**
 * A Uint8Array that owns exactly its bytes. Structured clone copies a view's whole underlying
 * buffer, so a 32-byte view into a pooled buffer would carry kilobytes across.
 */
export function compactBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice()
}
