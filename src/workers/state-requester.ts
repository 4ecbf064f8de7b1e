/**
 * The worker's end of its state channel: sends reads to the main thread and hands back the
 * answers. Reads asked for the same block within one turn of the worker's microtask queue go in one
 * message (what the EVM asks in one synchronous stretch, or what a batch of view calls asks at
 * once), answered by one message. Errors of the main thread's reader (an UpstreamError, ...) come
 * back as the same class.
 *
 * It also carries a running task's calls to the main thread (TaskCall: the searcher keys a planning
 * task leases and signs with), one at a time per task, and hears the main thread cancel a task.
 */
import type { MessagePort } from 'node:worker_threads'
import type { BlockInfo, BlockStateDiff, Hex } from '../chain/types.ts'
import { domainErrors } from './error-registry.ts'
import type { MainMessage, StateRead, WorkerMessage } from './protocol.ts'
import type { TaskCall } from './tasks.ts'

/** Reads in flight at most; one more waits for an answer (every queue has a bound). */
export const MAX_READS_IN_FLIGHT = 100_000

interface Pending {
  resolve(value: unknown): void
  reject(error: unknown): void
}

export interface StateRequesterStats {
  /** reads sent to the main thread */
  reads: number
  /** messages they went in */
  batches: number
}

export class StateRequester {
  private nextId = 1
  /** batch id -> the pending reads of that batch, in order */
  private readonly inFlight = new Map<number, Pending[]>()
  private inFlightReads = 0
  /** block hash -> reads waiting for the end of this microtask turn */
  private queued = new Map<Hex, Array<{ read: StateRead; pending: Pending }>>()
  private flushScheduled = false
  private readonly counters: StateRequesterStats = { reads: 0, batches: 0 }
  /** call id -> its caller; a task makes one call at a time, and a worker runs one task */
  private readonly calls = new Map<number, Pending>()

  constructor(
    private readonly port: MessagePort,
    private readonly onHead: (block: BlockInfo, diff: BlockStateDiff | undefined) => void,
    /** the main thread gave up on a task */
    private readonly onCancel: (taskId: number, reason: string) => void = () => {},
  ) {
    port.on('message', (message: MainMessage) => this.receive(message))
  }

  /** Asks the main thread, for task `taskId`, what only it can do; its error comes back as the same class. */
  call(taskId: number, call: TaskCall): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++
      this.calls.set(id, { resolve, reject })
      this.post({ t: 'call', id, taskId, call })
    })
  }

  read(blockHash: Hex, read: StateRead): Promise<unknown> {
    if (this.inFlightReads >= MAX_READS_IN_FLIGHT) return Promise.reject(new Error(`more than ${MAX_READS_IN_FLIGHT} state reads in flight to the main thread`))
    return new Promise((resolve, reject) => {
      let batch = this.queued.get(blockHash)
      if (batch === undefined) this.queued.set(blockHash, (batch = []))
      batch.push({ read, pending: { resolve, reject } })
      this.inFlightReads++
      if (!this.flushScheduled) {
        this.flushScheduled = true
        queueMicrotask(() => this.flush())
      }
    })
  }

  /** What the worker tells the main thread besides reads (task start and end, ticks, logs). */
  post(message: WorkerMessage): void {
    this.port.postMessage(message)
  }

  stats(): StateRequesterStats {
    return { ...this.counters }
  }

  /** Closes the channel; reads still waiting are rejected. */
  close(): void {
    this.port.close()
    const closed = new Error('the state channel to the main thread is closed')
    for (const pending of this.inFlight.values()) for (const p of pending) p.reject(closed)
    for (const batch of this.queued.values()) for (const entry of batch) entry.pending.reject(closed)
    for (const pending of this.calls.values()) pending.reject(closed)
    this.inFlight.clear()
    this.queued.clear()
    this.calls.clear()
    this.inFlightReads = 0
  }

  private flush(): void {
    this.flushScheduled = false
    const queued = this.queued
    this.queued = new Map()
    for (const [blockHash, batch] of queued) {
      const id = this.nextId++
      this.inFlight.set(
        id,
        batch.map((entry) => entry.pending),
      )
      this.counters.reads += batch.length
      this.counters.batches++
      this.post({ t: 'reads', id, blockHash, reads: batch.map((entry) => entry.read) })
    }
  }

  private receive(message: MainMessage): void {
    if (message.t === 'head') {
      this.onHead(message.block, message.diff)
      return
    }
    if (message.t === 'cancel') {
      this.onCancel(message.taskId, message.reason)
      return
    }
    if (message.t === 'call-result') {
      const call = this.calls.get(message.id)
      if (call === undefined) return
      this.calls.delete(message.id)
      if (message.result.ok) call.resolve(message.result.value)
      else call.reject(domainErrors.rebuild(message.result.error))
      return
    }
    const pending = this.inFlight.get(message.id)
    if (pending === undefined) return
    this.inFlight.delete(message.id)
    this.inFlightReads -= pending.length
    message.results.forEach((result, i) => {
      if (result.ok) pending[i].resolve(result.value)
      else pending[i].reject(domainErrors.rebuild(result.error))
    })
  }
}
