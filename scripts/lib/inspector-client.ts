/**
 * A minimal Chrome DevTools Protocol client for probes that attach to a running service's inspector
 * from outside (the service started with `--inspect=127.0.0.1:0`, its stderr logged to a file): the
 * inspector's address read from that log, one WebSocket with request/answer matching and event
 * listeners, and the service's worker threads reached through the main target's NodeWorker domain.
 * Node 20 has WebSocket behind --experimental-websocket only: run the probes with
 * `node --experimental-websocket --import tsx`.
 */
import { readFileSync } from 'node:fs'

export interface CdpMessage {
  id?: number
  method?: string
  params?: Record<string, unknown>
  result?: Record<string, unknown>
  error?: { message: string }
}

export interface WorkerTarget {
  sessionId: string
  workerId: string
  title: string
}

const INSPECTOR_LINE = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The inspector's WebSocket address, from the "Debugger listening on ws://…" line of the service's stderr log. */
export async function findInspector(logFile: string, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    let text = ''
    try {
      text = readFileSync(logFile, 'utf8')
    } catch {
      // not written yet
    }
    const match = INSPECTOR_LINE.exec(text)
    if (match !== null) return match[1]!
    await sleep(200)
  }
  throw new Error(`no "Debugger listening on ws://127.0.0.1:..." line in ${logFile} within ${timeoutMs} ms`)
}

export class Cdp {
  private nextId = 1
  private readonly replies = new Map<number, (m: CdpMessage) => void>()
  private readonly listeners: Array<(m: CdpMessage) => void> = []

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as CdpMessage
      if (message.id !== undefined) {
        this.replies.get(message.id)?.(message)
        this.replies.delete(message.id)
        return
      }
      for (const listener of this.listeners) listener(message)
    })
  }

  static open(url: string): Promise<Cdp> {
    const socket = new WebSocket(url)
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(new Cdp(socket)), { once: true })
      socket.addEventListener('error', () => reject(new Error(`could not open ${url}`)), { once: true })
    })
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++
    this.socket.send(JSON.stringify({ id, method, params }))
    return new Promise((resolve, reject) => {
      this.replies.set(id, (m) => (m.error !== undefined ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result ?? {})))
    })
  }

  on(listener: (m: CdpMessage) => void): () => void {
    this.listeners.push(listener)
    return () => this.listeners.splice(this.listeners.indexOf(listener), 1)
  }

  close(): void {
    this.socket.close()
  }

  /**
   * The service's worker threads, kept current as they attach and detach (a replaced worker is a
   * new target): NodeWorker.enable on the main target.
   */
  async attachWorkers(log: (line: string) => void): Promise<Map<string, WorkerTarget>> {
    const workers = new Map<string, WorkerTarget>()
    this.on((m) => {
      if (m.method === 'NodeWorker.attachedToWorker') {
        const info = m.params?.workerInfo as { workerId: string; title: string }
        const target = { sessionId: String(m.params?.sessionId), workerId: info.workerId, title: info.title }
        workers.set(target.sessionId, target)
        log(`attached to worker ${target.workerId} (${target.title})`)
      } else if (m.method === 'NodeWorker.detachedFromWorker') {
        const gone = workers.get(String(m.params?.sessionId))
        workers.delete(String(m.params?.sessionId))
        if (gone !== undefined) log(`worker ${gone.workerId} detached`)
      }
    })
    await this.send('NodeWorker.enable', { waitForDebuggerOnStart: false })
    return workers
  }

  /**
   * One protocol command run in a worker, through the main target's session; `onEvent` sees the
   * worker's events meanwhile (e.g. a heap snapshot's chunks).
   */
  sendToWorker(worker: WorkerTarget, method: string, params: Record<string, unknown>, timeoutMs: number, onEvent?: (m: CdpMessage) => void): Promise<Record<string, unknown>> {
    const id = 1_000_000 + Math.floor(Math.random() * 1_000_000)
    const done = new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        off()
        reject(new Error(`worker ${worker.workerId}: no answer to ${method} within ${timeoutMs} ms`))
      }, timeoutMs)
      const off = this.on((m) => {
        if (m.method !== 'NodeWorker.receivedMessageFromWorker' || m.params?.sessionId !== worker.sessionId) return
        const inner = JSON.parse(String(m.params.message)) as CdpMessage
        if (inner.id === id) {
          clearTimeout(timer)
          off()
          if (inner.error !== undefined) reject(new Error(`${method}: ${inner.error.message}`))
          else resolve(inner.result ?? {})
        } else if (inner.method !== undefined) onEvent?.(inner)
      })
    })
    return this.send('NodeWorker.sendMessageToWorker', { sessionId: worker.sessionId, message: JSON.stringify({ id, method, params }) }).then(() => done)
  }
}
