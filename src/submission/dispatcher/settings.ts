/**
 * What a Dispatcher is built with (its ports and limits), and the limits checked and defaulted
 * once, so the parts of the dispatcher read plain numbers.
 */
import { positiveInt } from '../../primitives/numbers.ts'
import { BLOCK_TX_INDEX_DEFAULTS } from '../block-tx-index.ts'
import type { DecodeTransactionOptions } from '../../tx/decode-transaction.ts'
import type { BackrunPlanner, DispatcherLogger, HeadSource, InclusionChecker, SubmissionOutbox, SubmissionSimulator } from '../dispatcher-ports.ts'
import type { BundleRelay } from '../relay-client.ts'
import type { DispatcherLeaseOptions } from './lease-keeper.ts'

export interface DispatcherOptions {
  store: SubmissionOutbox
  /** at least one; names must be unique */
  relays: readonly BundleRelay[]
  heads: HeadSource
  inclusion: InclusionChecker
  planner: BackrunPlanner
  simulate: SubmissionSimulator
  /** how stored raw txs are decoded for simulation and planning (the chain's id and hardfork) */
  decode: DecodeTransactionOptions
  /** blocks a submission is sent for before it expires (first target block included). Default 25. */
  expiryBlocks?: number
  /** submissions waiting to be prepared, at most. Default 10 000. */
  queueCapacity?: number
  /** submissions simulated / planned at the same time. Default 4. */
  prepareConcurrency?: number
  /**
   * backrun plans started per target block at most (the most promising submissions first: last
   * block's backrun by profit, then new ones, then those that had none). Default 32.
   */
  maxPlansPerBlock?: number
  /**
   * per target block at most, each: re-simulations of open submissions, re-sends of their own
   * bundles, and bundle-stats questions to relays (a new submission is always simulated and sent).
   * Bounds the per-block work when submissions pile up: beyond it a submission skips that block
   * (counted in stats().resendsSkipped) and goes out again at the next. Default 512
   * (MAX_RESENDS_PER_BLOCK).
   */
  maxSimulationsPerBlock?: number
  /**
   * limit for simulate and for plan, each, once it runs, ms; then the submission goes on without.
   * Default 2 000. Counted from when the work starts (a worker takes it), not from when it was asked.
   */
  prepareTimeoutMs?: number
  /**
   * the longest a simulation or a plan waits for a place to run (the dispatcher's plan slots, a
   * worker of the pool), ms; past it the work fails as busy (recorded with that reason) and the
   * user's own bundle goes out all the same. Default 500 (DISPATCHER_QUEUE_WAIT_MS).
   */
  queueWaitMs?: number
  /** inclusion checks running at the same time. Default 16. */
  inclusionConcurrency?: number
  /**
   * transaction hashes the inclusion index holds at most over its window, allocated up front; a
   * block whose hashes do not fit is a gap (its submissions checked by receipt). Default 16,384
   * (BLOCK_TX_INDEX_DEFAULTS.maxHashes).
   */
  maxIndexedHashes?: number
  /**
   * put the backrun's hash in revertingTxHashes of the backrun bundle. Default false: the user's
   * own bundle already keeps the user's inclusion independent of the backrun, and a backrun
   * allowed to revert would cost the searcher gas for nothing.
   */
  backrunMayRevert?: boolean
  /** pruneFinished() runs at most this often, on a new head, ms. Default 60 000. */
  pruneIntervalMs?: number
  /** blocks after its inclusion a submission is re-opened by a reorg that replaces its block. Default 64 (the fork's reorg depth). */
  reorgWindowBlocks?: number
  /** inclusions remembered for that at most, the oldest forgotten first. Default 10 000. */
  maxRecentInclusions?: number
  /**
   * A store shared by several processes: deliver only the submissions this process holds a lease
   * on (see lease-keeper.ts). Undefined: this process owns every submission in the store (LevelDB).
   */
  leases?: DispatcherLeaseOptions
  log?: DispatcherLogger
  /** clock for event times, ms. Default Date.now. */
  now?: () => number
}

/** DispatcherOptions.queueWaitMs by default, ms: a simulation the user's own bundle waits for must not cost a 2 s block */
export const DEFAULT_QUEUE_WAIT_MS = 500

/** The limits of DispatcherOptions, checked, with their defaults filled in. */
export interface DispatcherLimits {
  expiryBlocks: bigint
  queueCapacity: number
  prepareConcurrency: number
  prepareTimeoutMs: number
  queueWaitMs: number
  inclusionConcurrency: number
  maxIndexedHashes: number
  maxPlansPerBlock: number
  maxSimulationsPerBlock: number
  pruneIntervalMs: number
  backrunMayRevert: boolean
}

/**
 * @throws TypeError for missing relays or duplicate relay names
 * @throws RangeError for a limit that is not a positive integer
 */
export function dispatcherLimits(options: DispatcherOptions): DispatcherLimits {
  if (options.relays.length === 0) throw new TypeError('Dispatcher: at least one relay is required')
  const names = new Set(options.relays.map((r) => r.name))
  if (names.size !== options.relays.length) throw new TypeError('Dispatcher: relay names must be unique')
  return {
    expiryBlocks: BigInt(positiveInt('expiryBlocks', options.expiryBlocks ?? 25, 'Dispatcher')),
    queueCapacity: positiveInt('queueCapacity', options.queueCapacity ?? 10_000, 'Dispatcher'),
    prepareConcurrency: positiveInt('prepareConcurrency', options.prepareConcurrency ?? 4, 'Dispatcher'),
    prepareTimeoutMs: positiveInt('prepareTimeoutMs', options.prepareTimeoutMs ?? 2_000, 'Dispatcher'),
    queueWaitMs: positiveInt('queueWaitMs', options.queueWaitMs ?? DEFAULT_QUEUE_WAIT_MS, 'Dispatcher'),
    inclusionConcurrency: positiveInt('inclusionConcurrency', options.inclusionConcurrency ?? 16, 'Dispatcher'),
    maxIndexedHashes: positiveInt('maxIndexedHashes', options.maxIndexedHashes ?? BLOCK_TX_INDEX_DEFAULTS.maxHashes, 'Dispatcher'),
    backrunMayRevert: options.backrunMayRevert ?? false,
    maxPlansPerBlock: positiveInt('maxPlansPerBlock', options.maxPlansPerBlock ?? 32, 'Dispatcher'),
    maxSimulationsPerBlock: positiveInt('maxSimulationsPerBlock', options.maxSimulationsPerBlock ?? 512, 'Dispatcher'),
    pruneIntervalMs: positiveInt('pruneIntervalMs', options.pruneIntervalMs ?? 60_000, 'Dispatcher'),
  }
}
