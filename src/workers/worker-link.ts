/**
 * The main thread's end of one worker's channel: answers its state reads (StateHost) and its tasks'
 * calls (the pool's `onCall`), forwards its warnings to the service's logger, tells it to cancel a
 * task, and keeps what the hang watchdog needs: the tasks the worker holds and when its event loop
 * was last heard from.
 */
import type { MessagePort } from 'node:worker_threads'
import type { BlockInfo, BlockStateDiff } from '../chain/types.ts'
import { closeNativeCallGate } from '../crypto/native-call-gate.ts'
import { domainErrors } from './error-registry.ts'
import type { CodeAnalysesAhead } from './code-analyses-ahead.ts'
import type { LoaderCollection } from './loader-gc.ts'
import { headerOnly, type MainMessage, type WorkerMessage } from './protocol.ts'
import type { StateHost } from './state-host.ts'
import type { TaskCall } from './tasks.ts'

/** Answers task `taskId`'s call (rejects when the task is not running here). */
export type TaskCallHandler = (taskId: number, call: TaskCall) => Promise<unknown>

export interface WorkerLinkLogger {
  warn(obj: object, msg: string): void
}

export class WorkerLink {
  /** tasks the worker said it took and whose answer the pool has not had yet (it removes them then) */
  readonly tasks = new Set<number>()
  /** performance.now() of the last message from the worker */
  lastSeen = performance.now()
  /** the worker said it warmed up */
  warm = false
  /** what collecting the worker's module-loader isolate gave back, once it warmed up */
  loaderCollection: LoaderCollection | undefined
  /** what analysing the known contracts' code ahead did in the worker, once it warmed up */
  codeAnalysesAhead: CodeAnalysesAhead | undefined
  private closed = false

  constructor(
    readonly threadId: number,
    private readonly port: MessagePort,
    private readonly host: StateHost,
    private readonly log: WorkerLinkLogger,
    onClose: (link: WorkerLink) => void,
    /** the worker has warmed up */
    private readonly onWarm: (link: WorkerLink) => void = () => {},
    private readonly onCall: TaskCallHandler = () => Promise.reject(new Error('this worker link answers no task calls')),
    /** the worker said it took task `taskId` */
    private readonly onTaskStart: (link: WorkerLink, taskId: number) => void = () => {},
    /** the worker's native-call gate, when it has one (worker-entry.ts) */
    private readonly nativeCalls?: SharedArrayBuffer,
  ) {
    port.on('message', (message: WorkerMessage) => this.receive(message))
    port.on('close', () => {
      this.closed = true
      onClose(this)
    })
  }

  /** A new head; with `diff` (the keys it changed) the worker carries its L1 of the parent over to it. */
  announceHead(block: BlockInfo, diff?: BlockStateDiff): void {
    this.send(diff === undefined ? { t: 'head', block: headerOnly(block) } : { t: 'head', block: headerOnly(block), diff })
  }

  /** Tells the worker to stop task `taskId` at its next check. */
  cancel(taskId: number, reason: string): void {
    this.send({ t: 'cancel', taskId, reason })
  }

  close(): void {
    this.port.close()
  }

  /**
   * Before the worker's thread is terminated: no call of it is inside native code from now on (a
   * thread terminated inside one aborts the process: src/crypto/native-call-gate.ts). False when a
   * call was still inside after `drainMs`; true at once for a worker without a gate.
   */
  closeNativeCalls(drainMs: number): Promise<boolean> {
    return this.nativeCalls === undefined ? Promise.resolve(true) : closeNativeCallGate(this.nativeCalls, drainMs)
  }

  private receive(message: WorkerMessage): void {
    this.lastSeen = performance.now()
    switch (message.t) {
      case 'reads':
        void this.host.answer(message.blockHash, message.reads).then((results) => this.send({ t: 'reads', id: message.id, results }))
        return
      case 'task-start':
        this.tasks.add(message.taskId)
        this.onTaskStart(this, message.taskId)
        return
      case 'call':
        this.onCall(message.taskId, message.call).then(
          (value) => this.send({ t: 'call-result', id: message.id, result: { ok: true, value } }),
          (err: unknown) => this.send({ t: 'call-result', id: message.id, result: { ok: false, error: domainErrors.serialize(err) } }),
        )
        return
      case 'tick':
        return
      case 'warm':
        this.warm = true
        this.loaderCollection = message.loader
        this.codeAnalysesAhead = message.ahead
        this.onWarm(this)
        return
      case 'log':
        this.log.warn({ ...message.obj, workerThreadId: this.threadId }, message.msg)
        return
    }
  }

  private send(message: MainMessage): void {
    // a worker that ended meanwhile no longer needs the answer
    if (!this.closed) this.port.postMessage(message)
  }
}
