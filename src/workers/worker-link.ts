/**
 * The main thread's end of one worker's channel: answers its state reads (StateHost), forwards its
 * warnings to the service's logger, and keeps what the hang watchdog needs: the tasks the worker
 * holds and when its event loop was last heard from.
 */
import type { MessagePort } from 'node:worker_threads'
import type { BlockInfo } from '../chain/types.ts'
import { headerOnly, type MainMessage, type WorkerMessage } from './protocol.ts'
import type { StateHost } from './state-host.ts'

export interface WorkerLinkLogger {
  warn(obj: object, msg: string): void
}

export class WorkerLink {
  /** tasks the worker said it took and has not finished */
  readonly tasks = new Set<number>()
  /** performance.now() of the last message from the worker */
  lastSeen = performance.now()
  private closed = false

  constructor(
    readonly threadId: number,
    private readonly port: MessagePort,
    private readonly host: StateHost,
    private readonly log: WorkerLinkLogger,
    onClose: (link: WorkerLink) => void,
    /** the worker has warmed up */
    private readonly onWarm: (link: WorkerLink) => void = () => {},
  ) {
    port.on('message', (message: WorkerMessage) => this.receive(message))
    port.on('close', () => {
      this.closed = true
      onClose(this)
    })
  }

  announceHead(block: BlockInfo): void {
    this.send({ t: 'head', block: headerOnly(block) })
  }

  close(): void {
    this.port.close()
  }

  private receive(message: WorkerMessage): void {
    this.lastSeen = performance.now()
    switch (message.t) {
      case 'reads':
        void this.host.answer(message.blockHash, message.reads).then((results) => this.send({ t: 'reads', id: message.id, results }))
        return
      case 'task-start':
        this.tasks.add(message.taskId)
        return
      case 'task-end':
        this.tasks.delete(message.taskId)
        return
      case 'tick':
        return
      case 'warm':
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
