/**
 * bench:submit's acknowledgement trace (BENCH_ACK_TRACE), the service's side: imported into the
 * measured service process before src/main.ts (scripts/lib/ack-trace-main.ts), never by the service
 * itself. It wraps, from outside, the points an acknowledgement passes and writes what it saw to
 * `ACK_TRACE_FILE` (JSON) when the process exits:
 *
 * - each HTTP request's arrival (the server's 'request' event: headers parsed) and its reply's
 *   `end()` (the answer written to the socket), keyed by the submission hash the reply carries;
 * - each outbox enqueue of a new submission (OutboxStore's group-commit queue: the decode and the
 *   dispatcher's admission are done) and when its persist resolved on the main thread;
 * - every LevelDB batch (a group commit): when it was handed to LevelDB, when LevelDB's fsync
 *   answered, its operations and the submissions (record keys) it carried; every `getMany` (the
 *   duplicate checks) the same way;
 * - with PostgreSQL (DATABASE_URL), the same for its store: each new submission queued for the group
 *   insert (TokenGroups.submit) and when its persist resolved; each insert statement (the pool's
 *   query): when it was asked of the pool, when a connection sent it, when its answer (the commit:
 *   one statement, one transaction) came back, and the submissions it carried;
 * - outgoing HTTP requests (the relay sends), the main thread's GC pauses, and its stalls (a 2 ms
 *   timer more than 5 ms late: JavaScript running, GC, a synchronous call), each split by the
 *   kernel's schedstat of the main thread into the ms it ran and the ms it waited for a core while
 *   runnable (the machine's other load).
 *
 * Times are epoch ms (performance.timeOrigin + performance.now()), comparable with the load
 * generator's in the same machine. Bounded: at most MAX_EVENTS of each kind are kept.
 */
import { openSync, readSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { syncBuiltinESMExports } from 'node:module'
import { PerformanceObserver } from 'node:perf_hooks'
import { ClassicLevel } from 'classic-level'
import pg from 'pg'
import { Dispatcher } from '../../src/submission/dispatcher.ts'
import { OutboxStore } from '../../src/submission/outbox-store.ts'
import { TokenGroups } from '../../src/submission/store/token-groups.ts'

const MAX_EVENTS = 200_000
const file = process.env.ACK_TRACE_FILE
if (file === undefined) throw new Error('ack-trace-probe: ACK_TRACE_FILE is not set')

const now = (): number => performance.timeOrigin + performance.now()

export interface AckTraceRequest {
  arrivedAt: number
  endAt?: number
  hash?: string
}
export interface AckTraceBatch {
  /** LevelDB: handed to LevelDB; PostgreSQL: asked of the pool (a connection may still be busy) */
  startAt: number
  /** PostgreSQL: a connection sent the statement (its wait for one ends here) */
  sentAt?: number
  doneAt?: number
  ops: number
  /** record keys (`s!<kind>:<hash>`; PostgreSQL `pg:<hash>`) of the new submissions it writes */
  records: string[]
}
export interface AckTraceCheck {
  startAt: number
  doneAt?: number
  keys: number
}
export interface AckTrace {
  requests: AckTraceRequest[]
  /** record key -> enqueue time, and when its persist's write resolved on the main thread */
  enqueues: Array<{ key: string; at: number; resolvedAt?: number }>
  batches: AckTraceBatch[]
  checks: AckTraceCheck[]
  outgoing: number[]
  gc: Array<{ startAt: number; ms: number; kind: number }>
  /**
   * the main thread's event loop late by more than STALL_MS on a STALL_TICK_MS timer: from when, how
   * long, and of that how long the thread ran (JavaScript, GC, a synchronous call) and how long it was
   * runnable but waited for a core (/proc schedstat; both absent where it cannot be read)
   */
  stalls: Array<{ startAt: number; ms: number; ranMs?: number; waitedMs?: number }>
  /** each new head the dispatcher took (its onHead), with the open submissions it scheduled */
  heads: Array<{ at: number; number: string; open: number }>
  /** the same instant on both clocks, at exit: a V8 CPU profile's microseconds (the monotonic clock) map to epoch ms by it */
  clock?: { epochMs: number; monotonicUs: number }
}

const trace: AckTrace = { requests: [], enqueues: [], batches: [], checks: [], outgoing: [], gc: [], stalls: [], heads: [] }
const push = <T>(list: T[], item: T): T => {
  if (list.length < MAX_EVENTS) list.push(item)
  return item
}

const ARRIVED = Symbol('ackTraceArrived')
type Traced = http.IncomingMessage & { [ARRIVED]?: AckTraceRequest }

const emit = http.Server.prototype.emit
http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'request') (args[0] as Traced)[ARRIVED] = push(trace.requests, { arrivedAt: now() })
  return (emit as (this: http.Server, ...a: unknown[]) => boolean).call(this, event, ...args)
} as typeof http.Server.prototype.emit

const end = http.ServerResponse.prototype.end
http.ServerResponse.prototype.end = function (this: http.ServerResponse, ...args: unknown[]) {
  const entry = (this.req as Traced | undefined)?.[ARRIVED]
  if (entry !== undefined) {
    entry.endAt = now()
    const body = args[0]
    const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8', 0, Math.min(body.length, 512)) : ''
    const match = /"result":"(0x[0-9a-f]{64})"/.exec(text)
    if (match !== null) entry.hash = match[1]
  }
  return (end as (...a: unknown[]) => http.ServerResponse).apply(this, args)
} as typeof http.ServerResponse.prototype.end

const request = http.request
Object.defineProperty(http, 'request', {
  value: function (...args: unknown[]) {
    push(trace.outgoing, now())
    return (request as (...a: unknown[]) => http.ClientRequest)(...args)
  },
})
// the service imports `request` by name: its ESM binding follows the patched CommonJS export only after this
syncBuiltinESMExports()

interface OutboxInternals {
  commit(ops: Array<{ key: string }>, operation: string, unlessKey?: string): Promise<string | undefined>
}
const outbox = OutboxStore.prototype as unknown as OutboxInternals
const commit = outbox.commit
outbox.commit = function (this: OutboxInternals, ops, operation, unlessKey) {
  const result = commit.call(this, ops, operation, unlessKey)
  if (operation === 'persist' && unlessKey !== undefined) {
    const entry = push(trace.enqueues, { key: unlessKey, at: now() } as AckTrace['enqueues'][number])
    result.then(() => (entry.resolvedAt = now()), () => undefined)
  }
  return result
}

const level = ClassicLevel.prototype as unknown as {
  batch(ops: Array<{ key: string }>, options?: unknown): Promise<void>
  getMany(keys: string[], options?: unknown): Promise<unknown[]>
}
const batch = level.batch
level.batch = function (this: unknown, ...args: unknown[]) {
  const ops = args[0]
  if (!Array.isArray(ops)) return (batch as (...a: unknown[]) => Promise<void>).apply(this, args)
  const entry = push(trace.batches, { startAt: now(), ops: ops.length, records: (ops as Array<{ key: string }>).filter((o) => o.key.startsWith('s!')).map((o) => o.key) })
  const done = (batch as (...a: unknown[]) => Promise<void>).apply(this, args)
  done.then(() => (entry.doneAt = now()), () => undefined)
  return done
}
// PostgreSQL: the group insert's queue (TokenGroups carries the store's inserts and appends; an
// insert's item is the only one with a record) and its statement (the prepared insert by name)
const INSERT_STATEMENT = 'submissions.insert-many'
const groups = TokenGroups.prototype as unknown as { submit(item: { token: string; record?: { hash?: string } }): Promise<boolean> }
const submit = groups.submit
groups.submit = function (this: unknown, item) {
  const result = submit.call(this, item)
  const hash = item.record?.hash
  if (hash !== undefined) {
    const entry = push(trace.enqueues, { key: `pg:${hash}`, at: now() } as AckTrace['enqueues'][number])
    result.then(() => (entry.resolvedAt = now()), () => undefined)
  }
  return result
}
/** the prepared insert's values (`pool.query(config, values)`), or undefined for any other statement */
const insertValues = (args: unknown[]): unknown[] | undefined => {
  const config = args[0] as { name?: string } | undefined
  return typeof config === 'object' && config !== null && config.name === INSERT_STATEMENT ? (args[1] as unknown[]) : undefined
}
const SENT = Symbol('ackTraceSent')
type Sent = { [SENT]?: AckTraceBatch }
const poolQuery = pg.Pool.prototype.query
pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
  const values = insertValues(args)
  if (values === undefined) return (poolQuery as (...a: unknown[]) => unknown).apply(this, args)
  // $3: the submissions' hashes (postgres-store.ts's insertMany)
  const hashes = values[2] as string[]
  const entry = push(trace.batches, { startAt: now(), ops: hashes.length, records: hashes.map((h) => `pg:${h}`) })
  // the pool hands its config object to the connection's query: a copy per call (the store's is one
  // shared constant, and two inserts can be in flight) marked with this statement, so its send is timed
  const marked: Sent = { ...(args[0] as object), [SENT]: entry }
  const done = (poolQuery as (...a: unknown[]) => Promise<unknown>).apply(this, [marked, ...args.slice(1)])
  done.then(() => (entry.doneAt = now()), () => undefined)
  return done
} as typeof pg.Pool.prototype.query
const clientQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const entry = (args[0] as Sent | undefined)?.[SENT]
  if (entry !== undefined && entry.sentAt === undefined) entry.sentAt = now()
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args)
} as typeof pg.Client.prototype.query

const getMany = level.getMany
level.getMany = function (this: unknown, ...args: unknown[]) {
  const entry = push(trace.checks, { startAt: now(), keys: Array.isArray(args[0]) ? args[0].length : 0 })
  const done = (getMany as (...a: unknown[]) => Promise<unknown[]>).apply(this, args)
  done.then(() => (entry.doneAt = now()), () => undefined)
  return done
}

// the dispatcher's heads (onHead is private to TypeScript, a method at run time)
const dispatcher = Dispatcher.prototype as unknown as { onHead(head: { number: bigint }): void; stats(): { active: number } }
const onHead = dispatcher.onHead
dispatcher.onHead = function (this: typeof dispatcher, head) {
  push(trace.heads, { at: now(), number: head.number.toString(), open: this.stats().active })
  return onHead.call(this, head)
}

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) push(trace.gc, { startAt: performance.timeOrigin + e.startTime, ms: e.duration, kind: ((e as { detail?: { kind?: number } }).detail)?.kind ?? 0 })
}).observe({ entryTypes: ['gc'] })

// a timer every STALL_TICK_MS: a tick late by more than STALL_MS is a stall of the main thread (JavaScript, GC, a synchronous call)
const STALL_TICK_MS = 2
const STALL_MS = 5
// the main thread's (tid = pid) time on a core and runnable waiting for one, ns (Linux; undefined
// elsewhere). Read every tick through one open descriptor from offset 0 (the kernel writes it anew):
// ~2 us of the traced thread a read, against ~14 us for an open, read and close (0.1% of a core at
// 500 reads/s instead of 0.7%)
const schedstatFd = ((): number | undefined => {
  try {
    return openSync(`/proc/self/task/${process.pid}/schedstat`, 'r')
  } catch {
    return undefined
  }
})()
const schedstatBuffer = Buffer.alloc(128)
const schedstat = (): { runNs: number; waitNs: number } | undefined => {
  if (schedstatFd === undefined) return undefined
  const [run, wait] = schedstatBuffer.toString('latin1', 0, readSync(schedstatFd, schedstatBuffer, 0, schedstatBuffer.length, 0)).split(' ')
  return { runNs: Number(run), waitNs: Number(wait) }
}
let lastTick = now()
let lastSched = schedstat()
setInterval(() => {
  const t = now()
  const sched = lastSched === undefined ? undefined : schedstat()
  if (t - lastTick > STALL_TICK_MS + STALL_MS) {
    const split = sched === undefined || lastSched === undefined ? {} : { ranMs: (sched.runNs - lastSched.runNs) / 1e6, waitedMs: (sched.waitNs - lastSched.waitNs) / 1e6 }
    push(trace.stalls, { startAt: lastTick, ms: t - lastTick, ...split })
  }
  lastTick = t
  lastSched = sched
}, STALL_TICK_MS).unref()

process.on('exit', () => {
  trace.clock = { epochMs: now(), monotonicUs: Number(process.hrtime.bigint() / 1000n) }
  writeFileSync(file, JSON.stringify(trace))
})
