/**
 * The ChainStateSource of a worker: the engines built in the worker (worker-entry.ts) see the main
 * thread's chain through it.
 *
 * Which block: every task names the block the main thread chose for it when it was dispatched (its
 * state source's latest head at that moment, as an in-process engine's `chain.latest()` would have
 * given), and runs inside `runAt(block, ...)`: `latest()` answers that block's reader for the whole
 * task, whatever heads arrive meanwhile. Outside a task `latest()` is the newest head the main
 * thread announced.
 *
 * The pin is a field, not an AsyncLocalStorage: a worker runs one task at a time (the pool's
 * concurrentTasksPerWorker: 1, and tasks wait for the warm-up's runAt to end), so the running
 * task's block is the worker's; and an AsyncLocalStorage turns on Node's promise hooks for the
 * whole thread (Node 20), a cost on every promise the EVM's steps create: 2-4% of a worker's
 * samples under bench:quote (scripts/profile-quote.ts). Work a task left running (nothing awaits
 * it) sees the newest head once the task has ended, or the block of the task running then.
 *
 * Memory: the readers (each with its L1) of the last L1_BLOCKS blocks are kept; an older block's
 * reader lives on only while a task still holds it. Code is interned across blocks by hash, within
 * a byte bound. A new head's L1 may take entries of its parent's (adoptHead), on first read: the
 * same promises, within the same per-block bound; the parent is found among the kept readers, never
 * held by its child.
 *
 * The pin is a TaskPin that is emptied when its task ends, never the reader itself: an
 * AsyncLocalStorage store (as this pin was) is stamped on every promise created under it, and
 * promises outlive their task in caches (the backrun engine's ETH/USD answers keep 16 blocks of
 * them, an L1 keeps those of the task that first read a key); a store that was the reader kept each
 * old block's reader, its L1 and through that L1's promises the reader before it, alive (a worker's
 * live heap grew by ~12 MB over the first five minutes of bench:soak). Nothing holds a pin now but
 * its runAt.
 */
import { LRUCache } from 'lru-cache'
import type { BlockInfo, BlockStateDiff, ChainStateSource, StateReader } from '../chain/types.ts'
import { createCodeInterner, type CodeInterner, RemoteStateReader } from './remote-state-reader.ts'
import type { StateRequester } from './state-requester.ts'

/** Blocks whose readers (and L1s) a worker keeps: the head and the few before it that tasks may still name. */
export const L1_BLOCKS = 4
/** Bytes of contract code a worker keeps interned across blocks. */
export const WORKER_CODE_CACHE_BYTES = 32 * 1024 * 1024

export interface RemoteChainSourceOptions {
  kind: 'devnet' | 'fork'
  chainId: bigint
  /** the main thread's head when the worker was started */
  head: BlockInfo
}

/** A task's pin: the reader `latest()` answers while the task runs; emptied when it ends (see above). */
interface TaskPin {
  reader: RemoteStateReader | undefined
}

export class RemoteChainSource implements ChainStateSource {
  readonly kind: 'devnet' | 'fork'
  readonly chainId: bigint
  private head: BlockInfo
  /** the running task's pin (see above: one task at a time) */
  private pinned: TaskPin | undefined
  private readonly readers = new LRUCache<string, RemoteStateReader>({
    max: L1_BLOCKS,
    dispose: (reader) => {
      this.retiredL1Hits += reader.l1Hits
    },
  })
  private readonly codes: CodeInterner = createCodeInterner(WORKER_CODE_CACHE_BYTES)
  private readonly headListeners = new Set<(block: BlockInfo) => void>()
  private requester: StateRequester | undefined
  /** L1 hits of readers no longer kept */
  private retiredL1Hits = 0
  /** L1 entries carried from a parent's reader to its child's (adoptHead) */
  private carriedKeys = 0

  constructor(options: RemoteChainSourceOptions) {
    this.kind = options.kind
    this.chainId = options.chainId
    this.head = options.head
  }

  /** The channel reads go through (set once, before the first task). */
  connect(requester: StateRequester): void {
    this.requester = requester
  }

  latest(): StateReader {
    return this.pinned?.reader ?? this.readerFor(this.head)
  }

  /**
   * Runs `task` with `latest()` pinned to `block`. Once the task has settled, work it left running
   * (nothing awaits it) sees the newest head, as outside a task.
   */
  async runAt<T>(block: BlockInfo, task: () => Promise<T>): Promise<T> {
    const pin: TaskPin = { reader: this.readerFor(block) }
    const outer = this.pinned
    this.pinned = pin
    try {
      return await task()
    } finally {
      pin.reader = undefined
      if (this.pinned === pin) this.pinned = outer
    }
  }

  /**
   * A head announced by the main thread. With `diff` (the devnet: every key the block changed; a
   * fork: the re-read keys that kept their values) and the parent's reader still kept, the head's
   * L1 takes the parent's entries the diff vouches for, on their first read (inheritFrom: nothing is
   * copied at the head): a block that touched a few pools does not send every worker back to the
   * main thread for the whole state it had read.
   */
  adoptHead(block: BlockInfo, diff?: BlockStateDiff): void {
    // a reorg's head may be lower than the one before: the main thread's newest head is followed as it is
    this.head = block
    if (diff !== undefined && this.requester !== undefined) {
      const reader = this.readerFor(block)
      reader.knowDiff(diff)
      const parent = this.readers.peek(diff.parentHash)
      if (parent !== undefined) this.carriedKeys += reader.inheritFrom(parent, diff, (hash) => this.readers.peek(hash))
    }
    for (const listener of this.headListeners) listener(block)
  }

  onNewHead(listener: (block: BlockInfo) => void): () => void {
    this.headListeners.add(listener)
    return () => this.headListeners.delete(listener)
  }

  /** The engines of a worker keep no per-block work to redo: reorgs are the main thread's concern. */
  onReorg(): () => void {
    return () => {}
  }

  async ready(): Promise<boolean> {
    return this.requester !== undefined
  }

  async close(): Promise<void> {
    this.requester?.close()
    this.readers.clear()
  }

  /** Reads answered by the kept readers' L1s (and those of readers dropped since). */
  l1Hits(): number {
    let hits = this.retiredL1Hits
    for (const reader of this.readers.values()) hits += reader.l1Hits
    return hits
  }

  /** L1 entries new heads could take from their parents since the worker started (see inheritFrom). */
  l1Carried(): number {
    return this.carriedKeys
  }

  private readerFor(block: BlockInfo): RemoteStateReader {
    let reader = this.readers.get(block.hash)
    if (reader === undefined) {
      if (this.requester === undefined) throw new Error('the worker has no state channel yet')
      reader = new RemoteStateReader(block, this.requester, this.codes)
      this.readers.set(block.hash, reader)
    }
    return reader
  }
}
