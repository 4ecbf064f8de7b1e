/**
 * The pool of worker threads the CPU-bound work runs in (issue 13): quotes, eth_backrun, and the
 * dispatcher's simulations and backrun planning, each task on the state of the block the main
 * thread chose for it. A piscina pool of WORKERS threads,
 * each loading worker-entry.ts (through worker-bootstrap.mjs, which registers tsx); the main thread keeps the state source (StateHost
 * answers the workers' reads), HTTP and everything else.
 *
 * Limits (each a constant here, documented in the README's WORKERS row):
 * - threads: WORKERS, started with the pool and replaced when one dies or is terminated. piscina
 *   replaces a lost worker itself, except that once any worker exits before it said READY (lost
 *   while it loads: an OOM at start, a hang or a terminate during warm-up) it never replaces one
 *   again (5.3.2's `workerFailsDuringBootstrap`, a private flag it never clears; no newer release
 *   changes it). So whenever piscina leaves the pool short of threads, the pool renews piscina's
 *   instance: a new one starts WORKERS workers and takes every new task, the old one finishes the
 *   tasks it holds and stops (renew). Renewals are POOL_RENEW_MIN_INTERVAL_MS apart at least, so
 *   workers that keep dying at start do not start threads over and over; while the old instance
 *   drains, up to twice WORKERS threads exist;
 * - heap: WORKER_MAX_OLD_GENERATION_MB of V8 old space per worker (resourceLimits): a worker past
 *   it dies (ERR_WORKER_OUT_OF_MEMORY), its task fails, a new worker takes its place; and the
 *   young generation its options give (WORKER_MAX_YOUNG_GENERATION_MB), V8's own when unset;
 * - queue: MAX_QUEUED_TASKS tasks waiting for a worker; one more fails at once (busy). They wait
 *   in this pool's own TaskGate (task-gate.ts), which hands piscina one task per worker: a new
 *   submission's first simulation first, then quotes and eth_backrun, with the dispatcher's
 *   per-head work (re-simulations, plans) interleaved as background (one per
 *   BACKGROUND_EVERY interactive tasks while both wait); piscina's own queue (maxQueue) so holds
 *   at most one task per worker (tasks are handed to piscina without an abort signal: see run());
 * - one task per worker at a time: a hung worker holds only the request that hung it;
 * - hang: a worker holding a task whose event loop is silent for longer than EVM_MAX_MS +
 *   HANG_GRACE_MS (HangWatchdog) is terminated (its thread, which piscina then replaces); its
 *   task fails as 'hung' at once;
 * - terminate: a thread is terminated (hung, or the pool closing) only once its native-call gate is
 *   closed and no call of it is inside native code (NATIVE_CALL_DRAIN_MS): node aborts the whole
 *   process when a thread is stopped inside a node-addon-api call (src/crypto/native-call-gate.ts).
 *
 * A caller may give up on a task (its `signal`, e.g. the dispatcher's prepareTimeoutMs): a task
 * still waiting in the pool's queue is dropped from it; one a worker said it took is told to stop
 * at its next check (the engines' abort checks) and its worker lives on. A task handed to piscina
 * that no worker has said it took yet (a worker still warming up holds it for seconds) is answered
 * at once with the caller's reason, and told to stop as soon as its worker says it took it: its
 * piscina run is never aborted, since piscina terminates the worker of an aborted task, and a
 * worker replaced for a give-up costs its warm caches and ~100 MB of RSS that regrows (seen under
 * bench:soak). Its place in the pool stays taken until the worker is done with it. A running task
 * may ask the main thread for what only it has (the searcher keys of a planning task): its `host`
 * answers.
 */
import { fileURLToPath } from 'node:url'
import type { ResourceLimits, Worker } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { BackrunEngineStats } from '../backrun/backrun-engine.ts'
import type { ChainStateSource, StateReader } from '../chain/types.ts'
import type { ChainContracts } from '../config.ts'
import type { QuoteServiceStats } from '../quote/types.ts'
import type { CodeAnalysesAhead } from './code-analyses-ahead.ts'
import type { EngineSettings } from './engines.ts'
import { domainErrors } from './error-registry.ts'
import { HangWatchdog } from './hang-watchdog.ts'
import type { LoaderCollection } from './loader-gc.ts'
import { headerOnly, isStatePortOffer } from './protocol.ts'
import { StateHost } from './state-host.ts'
import { DEFAULT_BACKGROUND_EVERY, TaskGate, type TaskPriority } from './task-gate.ts'
import type { TaskCall, TaskHost, TaskKind, TaskKinds, WorkerAnswer, WorkerCounters, WorkerSettings, WorkerTask } from './tasks.ts'
import { WorkerLink, type WorkerLinkLogger } from './worker-link.ts'
import { WorkerTaskError } from './worker-task-error.ts'

/** V8 old-space limit of each worker, MB: the main thread has 384 (npm start), so two workers and the main thread stay under 1 GiB of heap. */
export const WORKER_MAX_OLD_GENERATION_MB = 256
/** Tasks waiting for a worker at most. */
export const MAX_QUEUED_TASKS = 4_096
/** While both wait, interactive tasks (quotes, eth_backrun) let in per background task (the dispatcher's per-head work): see task-gate.ts. */
export const BACKGROUND_EVERY = DEFAULT_BACKGROUND_EVERY
/** How long the workers may take to load (each imports the whole domain: ~2 s alone, more on a busy machine), ms. */
export const WORKER_START_TIMEOUT_MS = 120_000
/** The least time between two renewals of piscina's instance (see the file's comment), ms. */
export const POOL_RENEW_MIN_INTERVAL_MS = 5_000
/** How much longer than EVM_MAX_MS a busy worker may stay silent before it is taken as hung, ms (GC pauses, route search, a loaded machine). */
export const HANG_GRACE_MS = 1_000
/**
 * How long a worker's native calls may take to leave their gate before its thread is terminated
 * anyway, ms. A call takes ~60 us (libsecp256k1's recovery); more only for a thread starved of a
 * core, and terminating it inside the call would abort the process (src/crypto/native-call-gate.ts).
 */
export const NATIVE_CALL_DRAIN_MS = 5_000

/** plain JavaScript that registers tsx in the worker, then imports worker-entry.ts (see there why) */
const WORKER_BOOTSTRAP = fileURLToPath(new URL('./worker-bootstrap.mjs', import.meta.url))

export interface WorkerPoolOptions {
  threads: number
  /** niceness each worker thread adds to its own (0 to 19, default 0: the process's); see WorkerSettings.nice */
  nice?: number
  chain: ChainStateSource
  engines: EngineSettings
  /** where workers' warnings and the pool's own events go */
  log: WorkerLinkLogger
  /** tasks waiting for a worker at most (default MAX_QUEUED_TASKS) */
  maxQueued?: number
  /** the least time between two renewals of piscina's instance, ms (default POOL_RENEW_MIN_INTERVAL_MS) */
  renewMinIntervalMs?: number
  /** while both wait, interactive tasks let in per background task (default BACKGROUND_EVERY) */
  backgroundEvery?: number
  /** background tasks holding a worker at once at most (default: threads) */
  maxBackgroundRunning?: number
  /** ms an interactive task (quote, eth_backrun) may wait for a worker before it fails as busy (default: no bound) */
  interactiveMaxWaitMs?: number
  /**
   * V8's young generation of each worker, MB (resourceLimits.maxYoungGenerationSizeMb; default:
   * V8's, 48 beside WORKER_MAX_OLD_GENERATION_MB). A quote's garbage dies young: a larger young
   * generation means fewer scavenges of about the same cost each
   */
  maxYoungGenerationMb?: number
}

export interface WorkerPoolStats {
  threads: number
  /** tasks workers said they are running */
  running: number
  queued: number
  completed: number
  /** workers terminated by the watchdog */
  hung: number
  /** tasks lost with a worker that died */
  crashed: number
  /** times piscina left the pool short of workers and a new set of workers took over */
  renewed: number
  /** state reads workers sent to the main thread, and the messages they went in */
  remoteReads: number
  remoteBatches: number
  /** state reads answered by workers' own L1 */
  l1Hits: number
  /** L1 entries workers carried over to a new head (the keys the block did not change) */
  l1Carried: number
  /** V8 heap in use by the live workers, bytes, as of each one's last answer */
  heapUsedBytes: number
}

export interface RunOptions {
  /** its line in the pool's queue (see task-gate.ts); default by kind (PRIORITY) */
  priority?: TaskPriority
  /** the caller gives up on the task: dropped from the queue, or told to stop (see the file's comment) */
  signal?: AbortSignal
  /** answers the task's calls to the main thread */
  host?: TaskHost
  /** called when the task leaves the pool's queue for a worker: its run time counts from here */
  onStart?: () => void
}

/**
 * Where one task's time went, ms (the pool's task timings, for the metrics): `waitMs` in the pool's
 * queue, `runMs` from being handed to piscina to its answer on this thread, of which `computeMs`
 * the worker's own (the rest: piscina's dispatch, the messages both ways, this thread's event loop
 * getting round to the answer).
 */
export interface TaskTiming {
  kind: TaskKind
  waitMs: number
  runMs: number
  computeMs: number
}

/**
 * Each kind's line in the pool's queue unless its caller names one (see task-gate.ts): a
 * simulation is urgent (a new submission's user bundle waits for it; the dispatcher names its
 * re-simulations at a head `background`), quotes and eth_backrun interactive, plans background.
 */
const PRIORITY: Record<TaskKind, TaskPriority> = { simulate: 'urgent', quote: 'interactive', backrun: 'interactive', plan: 'background' }

interface RunningTask {
  /** set when the pool itself ended the task (the watchdog) */
  failure?: Error
  host?: TaskHost
  /** why the caller gave up before a worker said it took the task: cancelled when one does */
  abandoned?: Error
  /**
   * answers the caller with `reason` now, without waiting for piscina's answer (a caller that gave
   * up, a worker the watchdog stopped); piscina's answer, when it comes, is then ignored
   */
  fail: (reason: Error) => void
}

const ZERO_COUNTERS: WorkerCounters = {
  quote: { quotesExecuted: 0, mathDisagreements: 0, cacheHits: 0 },
  backrun: { requests: 0, userCallReverted: 0, found: 0, verificationMisses: 0 },
  remoteReads: 0,
  remoteBatches: 0,
  l1Hits: 0,
  l1Carried: 0,
  heapUsedBytes: 0,
}

/** --cpu-prof and its directory and interval among `execArgv` (the name is per process: each thread gets its own file) */
export function cpuProfilerFlags(execArgv: readonly string[]): string[] {
  return execArgv.includes('--cpu-prof') ? execArgv.filter((f) => f === '--cpu-prof' || f.startsWith('--cpu-prof-dir=') || f.startsWith('--cpu-prof-interval=')) : []
}

type PiscinaPool = Piscina<WorkerTask, WorkerAnswer>

export class WorkerPool {
  /** the instance new tasks go to (see the file's comment on renewals) */
  private piscina: PiscinaPool
  /** instances a renewal replaced, finishing the tasks they hold before they stop */
  private readonly draining = new Set<PiscinaPool>()
  /** tasks the instances that stopped completed */
  private completedBefore = 0
  private renewed = 0
  private lastRenewal = Number.NEGATIVE_INFINITY
  private renewTimer: NodeJS.Timeout | undefined
  private readonly host: StateHost
  private readonly links = new Map<number, WorkerLink>()
  private readonly tasks = new Map<number, RunningTask>()
  private readonly watchdog: HangWatchdog
  /** the pool's queue: one task per worker handed to piscina, the rest wait here */
  private readonly gate: TaskGate
  private readonly unsubscribeHeads: () => void
  private nextTaskId = 1
  private readonly timingListeners = new Set<(timing: TaskTiming) => void>()
  /** the latest counters each live worker reported; those of workers gone are folded into `retired` */
  private readonly counters = new Map<number, WorkerCounters>()
  private retired: WorkerCounters = structuredClone(ZERO_COUNTERS)
  private hung = 0
  private crashed = 0
  private closing = false
  private readonly started: Promise<void>
  /** rejects `started` (a worker failed to load); later calls do nothing */
  private startFailed: (err: unknown) => void = () => {}
  /** a worker warmed up: `started` resolves when WORKERS have */
  private onWarm: () => void = () => {}

  constructor(private readonly options: WorkerPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`a worker pool needs at least one thread, got ${options.threads}`)
    this.host = new StateHost(options.chain)
    this.gate = new TaskGate({
      places: options.threads,
      maxWaiting: options.maxQueued ?? MAX_QUEUED_TASKS,
      backgroundEvery: options.backgroundEvery ?? BACKGROUND_EVERY,
      ...(options.maxBackgroundRunning === undefined ? {} : { maxBackgroundRunning: options.maxBackgroundRunning }),
      ...(options.interactiveMaxWaitMs === undefined ? {} : { interactiveMaxWaitMs: options.interactiveMaxWaitMs }),
    })
    let warmed = 0
    this.started = new Promise<void>((resolve, reject) => {
      this.startFailed = reject
      this.onWarm = (): void => {
        if (++warmed === options.threads) resolve()
      }
    })
    // never an unhandled rejection: ready() is where the failure is reported
    this.started.catch(() => {})
    this.piscina = this.startPiscina()
    this.unsubscribeHeads = this.host.onNewHead(() => {
      const head = this.host.pinLatest()
      const diff = this.host.diffOf(head)
      for (const link of this.links.values()) link.announceHead(head.block, diff)
    })
    const silenceLimitMs = options.engines.evm.maxMs + HANG_GRACE_MS
    this.watchdog = new HangWatchdog({
      silenceLimitMs,
      links: () => this.links.values(),
      onHung: (link, silentMs) => this.terminateHung(link, silentMs, silenceLimitMs),
    })
  }

  /** A piscina instance of WORKERS workers, its events wired to this pool (the first one, and each renewal's). */
  private startPiscina(): PiscinaPool {
    const { options } = this
    const { chain } = options
    // a renewal's workers start on the head of the moment
    const settings: WorkerSettings = { engines: options.engines, nice: options.nice ?? 0, chainKind: chain.kind, chainId: chain.chainId, head: headerOnly(chain.latest().block) }
    const piscina: PiscinaPool = new Piscina<WorkerTask, WorkerAnswer>({
      filename: WORKER_BOOTSTRAP,
      minThreads: options.threads,
      maxThreads: options.threads,
      // workers never idle out: their engines, caches and jump analyses are the point of keeping them
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      maxQueue: options.maxQueued ?? MAX_QUEUED_TASKS,
      // workers also listen on their state channel: their event loop must turn while idle
      atomics: 'disabled',
      // nothing inherited from this process's flags (npm start's --import tsx, a test runner's):
      // the bootstrap loads TypeScript itself; except V8's CPU profiler, so that a process started
      // with --cpu-prof (scripts/profile-quote.ts) profiles its workers too, one file per thread
      execArgv: cpuProfilerFlags(process.execArgv),
      resourceLimits: { maxOldGenerationSizeMb: WORKER_MAX_OLD_GENERATION_MB, ...(options.maxYoungGenerationMb === undefined ? {} : { maxYoungGenerationSizeMb: options.maxYoungGenerationMb }) },
      workerData: settings,
    })
    piscina.on('message', (message: unknown) => this.offered(piscina, message))
    piscina.on('error', (err: unknown) => {
      this.startFailed(err)
      // a worker that dies while idle: replaced (by piscina, or by a renewal) and reported here (never thrown)
      options.log.warn({ err }, 'a pool worker failed outside a task (it is replaced)')
    })
    // piscina removed a worker and has replaced it by now, or never will: see renewIfShort
    piscina.on('workerDestroy', () => setImmediate(() => this.renewIfShort(piscina)))
    return piscina
  }

  /** A worker of `piscina` offered its state channel (worker-entry.ts): linked, and told the head. */
  private offered(piscina: PiscinaPool, message: unknown): void {
    if (!isStatePortOffer(message)) return
    const thread = piscina.threads.find((t) => t.threadId === message.threadId)
    if (thread === undefined) {
      // the offer of a worker already gone (its message came after its exit)
      message.port.close()
      return
    }
    const link = new WorkerLink(message.threadId, message.port, this.host, this.options.log, (closed) => this.retire(closed), () => this.onWarm(), (taskId, call) => this.answerCall(taskId, call), (started, taskId) => this.taskStarted(started, taskId), message.nativeCalls)
    this.links.set(link.threadId, link)
    // the port's 'close' may come late (or never) after its thread was terminated; 'exit' does not
    thread.once('exit', () => this.retire(link))
    // its first head (it warms up on it): kept readable, as every head announced
    link.announceHead(this.host.pinLatest().block)
  }

  /**
   * After piscina removed a worker of `piscina`: if it is the current instance and it is short of
   * threads, piscina will not replace the worker (see the file's comment): renewed, at once or when
   * the renewal interval since the last one is over (checked again then).
   */
  private renewIfShort(piscina: PiscinaPool): void {
    if (this.closing || piscina !== this.piscina || this.renewTimer !== undefined) return
    if (piscina.threads.length >= this.options.threads) return
    const waitMs = this.lastRenewal + (this.options.renewMinIntervalMs ?? POOL_RENEW_MIN_INTERVAL_MS) - performance.now()
    if (waitMs > 0) {
      this.renewTimer = setTimeout(() => {
        this.renewTimer = undefined
        this.renewIfShort(piscina)
      }, waitMs)
      // housekeeping: never what keeps the process alive (piscina's workers do not either)
      this.renewTimer.unref()
      return
    }
    this.renew()
  }

  /** A new piscina instance takes every new task; the current one finishes what it holds and stops. */
  private renew(): void {
    const old = this.piscina
    this.renewed++
    this.lastRenewal = performance.now()
    this.options.log.warn(
      { threads: old.threads.length, wanted: this.options.threads, renewals: this.renewed },
      'piscina stopped replacing the pool\'s workers (one was lost while it started): a new set of workers takes over, the old ones finish their tasks',
    )
    this.piscina = this.startPiscina()
    this.draining.add(old)
    // close() waits for the tasks its workers hold (a hung one is stopped by the watchdog), then stops them
    void old.close().finally(() => {
      this.completedBefore += old.completed
      this.draining.delete(old)
    })
  }

  /** Every piscina instance with live workers: the current one and those draining. */
  private instances(): PiscinaPool[] {
    return [this.piscina, ...this.draining]
  }

  /**
   * Resolves when every worker has loaded and warmed up (worker-entry.ts); rejects when one failed
   * to load, or after WORKER_START_TIMEOUT_MS. Tasks run before it wait for their worker.
   */
  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the worker pool did not start within ${WORKER_START_TIMEOUT_MS} ms`)), WORKER_START_TIMEOUT_MS)
    })
    try {
      await Promise.race([this.started, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** The main thread's latest reader, kept readable by workers: what a task run on it names. */
  pinLatest(): StateReader {
    return this.host.pinLatest()
  }

  /** The chain the workers compute for and its contracts (what the engines were built with). */
  chainSettings(): { chainId: bigint; contracts: ChainContracts } {
    return { chainId: this.options.chain.chainId, contracts: this.options.engines.contracts }
  }

  /**
   * Runs one task in a worker on the block of `reader` (default: the main thread's latest);
   * rejects with the engine's own error (the same class as in-process), a WorkerTaskError, or the
   * reason of `options.signal` when the caller gave up.
   */
  async run<K extends TaskKind>(kind: K, request: TaskKinds[K]['request'], reader: StateReader = this.host.pinLatest(), options: RunOptions = {}): Promise<TaskKinds[K]['value']> {
    if (this.closing) throw new WorkerTaskError('closed', 'the worker pool is closing')
    const { signal } = options
    if (signal?.aborted === true) throw abortReason(signal)
    const maxQueued = this.options.maxQueued ?? MAX_QUEUED_TASKS
    const arrived = performance.now()
    const priority = options.priority ?? PRIORITY[kind]
    await this.gate.enter(
      priority,
      signal,
      () => new WorkerTaskError('busy', `the service is overloaded: ${maxQueued} requests are already waiting for a worker`),
      (waitedMs) => new WorkerTaskError('busy', `the service is overloaded: no worker was free within ${waitedMs} ms`),
    )
    if (this.closing || (signal !== undefined && isAborted(signal))) {
      this.gate.leave(priority)
      // given up in the instant between its turn and here (the gate no longer listens then)
      throw this.closing ? new WorkerTaskError('closed', 'the worker pool is closing') : abortReason(signal!)
    }
    const taskId = this.nextTaskId++
    const running: RunningTask = { host: options.host, fail: () => {} }
    const giveUp = signal === undefined ? undefined : (): void => this.giveUp(taskId, running, abortReason(signal))
    this.tasks.set(taskId, running)
    if (giveUp !== undefined) signal!.addEventListener('abort', giveUp, { once: true })
    options.onStart?.()
    const task: WorkerTask<K> = { taskId, kind, request, block: headerOnly(reader.block) }
    const handed = performance.now()
    // One promise per task and no abort signal handed to piscina (issue 12): piscina adds and
    // removes an 'abort' listener on a task's signal and an AbortController is one more object
    // graph per task, all on the main thread, while only the watchdog ever stopped a running task
    // that way; it now terminates the worker's thread itself (terminateHung), which piscina treats
    // as it treated an abort (the task fails, a new worker takes the thread's place). `fail`
    // answers the caller at once when it gives up or its worker hung, as the race with an
    // `abandoned` promise did.
    const answer = await new Promise<WorkerAnswer>((resolve, reject) => {
      running.fail = reject
      // the worker's place is free again only when piscina has its answer, also for a task given up
      const done = (): void => {
        this.tasks.delete(taskId)
        // the answer ends the task for its worker's link too (the worker sends no 'task-end')
        for (const link of this.links.values()) link.tasks.delete(taskId)
        if (giveUp !== undefined) signal!.removeEventListener('abort', giveUp)
        this.gate.leave(priority)
      }
      this.piscina.run(task).then(
        (answer) => {
          done()
          this.record(answer)
          if (this.timingListeners.size > 0) this.emitTiming({ kind, waitMs: handed - arrived, runMs: performance.now() - handed, computeMs: answer.computeMs })
          resolve(answer)
        },
        (err: unknown) => {
          done()
          reject(running.failure ?? this.poolFailure(err))
        },
      )
    })
    if (!answer.ok) throw domainErrors.rebuild(answer.error)
    return answer.value as TaskKinds[K]['value']
  }

  /** Calls `listener` with the timings of every task answered from now on (see TaskTiming); returns its unsubscribe. */
  onTaskTimed(listener: (timing: TaskTiming) => void): () => void {
    this.timingListeners.add(listener)
    return () => this.timingListeners.delete(listener)
  }

  /** The workers' quote counters, summed (answer-cache hits are the facade's). */
  quoteStats(): QuoteServiceStats {
    const total = { quotesExecuted: 0, mathDisagreements: 0, cacheHits: 0 }
    for (const c of this.allCounters()) {
      total.quotesExecuted += c.quote.quotesExecuted
      total.mathDisagreements += c.quote.mathDisagreements
      total.cacheHits += c.quote.cacheHits
    }
    return total
  }

  /** The workers' backrun engine counters, summed. */
  backrunStats(): BackrunEngineStats {
    const total = { requests: 0, userCallReverted: 0, found: 0, verificationMisses: 0 }
    for (const c of this.allCounters()) {
      total.requests += c.backrun.requests
      total.userCallReverted += c.backrun.userCallReverted
      total.found += c.backrun.found
      total.verificationMisses += c.backrun.verificationMisses
    }
    return total
  }

  /** Each live worker's V8 limits as Node applied them (Worker.resourceLimits): what its isolate runs with. */
  resourceLimits(): ResourceLimits[] {
    return this.instances().flatMap((p) => p.threads.map((t) => ({ ...t.resourceLimits })))
  }

  stats(): WorkerPoolStats {
    let remoteReads = 0
    let remoteBatches = 0
    let l1Hits = 0
    let l1Carried = 0
    for (const c of this.allCounters()) {
      remoteReads += c.remoteReads
      remoteBatches += c.remoteBatches
      l1Hits += c.l1Hits
      l1Carried += c.l1Carried
    }
    let running = 0
    for (const link of this.links.values()) running += link.tasks.size
    let heapUsedBytes = 0
    for (const c of this.counters.values()) heapUsedBytes += c.heapUsedBytes
    let threads = 0
    let queued = this.gate.waiting
    let completed = this.completedBefore
    for (const piscina of this.instances()) {
      threads += piscina.threads.length
      queued += piscina.queueSize
      completed += piscina.completed
    }
    return {
      threads,
      running,
      queued,
      completed,
      hung: this.hung,
      crashed: this.crashed,
      renewed: this.renewed,
      remoteReads,
      remoteBatches,
      l1Hits,
      l1Carried,
      heapUsedBytes,
    }
  }

  /** The live worker threads, for inspection (resource use, event-loop utilization). */
  workerThreads(): readonly Worker[] {
    return this.instances().flatMap((piscina) => piscina.threads)
  }

  /** What collecting each warmed worker's module-loader isolate gave back (worker-entry.ts warmUp), by thread id. */
  loaderCollections(): Map<number, LoaderCollection | undefined> {
    const out = new Map<number, LoaderCollection | undefined>()
    for (const link of this.links.values()) if (link.warm) out.set(link.threadId, link.loaderCollection)
    return out
  }

  /** What analysing the known contracts' code ahead did in each warmed worker (code-analyses-ahead.ts), by thread id. */
  codeAnalysesAhead(): Map<number, CodeAnalysesAhead | undefined> {
    const out = new Map<number, CodeAnalysesAhead | undefined>()
    for (const link of this.links.values()) if (link.warm) out.set(link.threadId, link.codeAnalysesAhead)
    return out
  }

  /** The thread ids of the live workers that offered their state channel. */
  workerThreadIds(): number[] {
    return [...this.links.keys()]
  }

  async close(): Promise<void> {
    if (this.closing) return
    this.closing = true
    this.gate.close(new WorkerTaskError('closed', 'the worker pool closed before this request was answered'))
    this.watchdog.stop()
    this.unsubscribeHeads()
    clearTimeout(this.renewTimer)
    // destroy() terminates every thread, some perhaps inside a native call: those leave it first
    await Promise.all([...this.links.values()].map((link) => this.closeNativeCalls(link)))
    await Promise.all(this.instances().map((piscina) => piscina.destroy()))
    for (const link of this.links.values()) link.close()
    this.links.clear()
  }

  private terminateHung(link: WorkerLink, silentMs: number, limitMs: number): void {
    const taskIds = [...link.tasks]
    link.tasks.clear()
    this.hung++
    this.options.log.warn({ workerThreadId: link.threadId, silentMs: Math.round(silentMs), limitMs, tasks: taskIds.length }, 'a pool worker stopped answering while running a task: terminated and replaced')
    for (const taskId of taskIds) {
      const running = this.tasks.get(taskId)
      if (running === undefined) continue
      running.failure = new WorkerTaskError(
        'hung',
        `the worker running this request did not answer for ${Math.round(silentMs)} ms, more than the execution budget allows (EVM_MAX_MS ${this.options.engines.evm.maxMs} ms + ${limitMs - this.options.engines.evm.maxMs} ms): it was stopped and replaced`,
      )
      // answered now: the thread may take a moment to stop
      running.fail(running.failure)
    }
    // piscina fails the tasks of a worker whose thread exits and starts another in its place
    const thread = this.workerThreads().find((t) => t.threadId === link.threadId)
    void this.closeNativeCalls(link)
      .then(() => thread?.terminate())
      .catch(() => {})
    // gone now for piscina too; its thread's 'exit' comes when it has stopped
    this.retire(link)
  }

  /** A worker's native calls closed before its thread is terminated; one still inside after the drain is logged. */
  private async closeNativeCalls(link: WorkerLink): Promise<void> {
    if (await link.closeNativeCalls(NATIVE_CALL_DRAIN_MS)) return
    this.options.log.warn({ workerThreadId: link.threadId, drainMs: NATIVE_CALL_DRAIN_MS }, 'a pool worker was still inside a native call after the drain: terminated anyway (the process may abort)')
  }

  /**
   * The caller gave up on a task: cancelled in its worker if one said it took it; else answered now
   * and cancelled when its worker says so (taskStarted). Never piscina's abort: see the file's comment.
   */
  private giveUp(taskId: number, running: RunningTask, reason: Error): void {
    for (const link of this.links.values()) {
      if (link.tasks.has(taskId)) {
        // it ends at its next check, with this reason, having given back what it held
        link.cancel(taskId, reason.message)
        return
      }
    }
    running.abandoned = reason
    running.fail(reason)
  }

  /** A worker said it took task `taskId`: one whose caller gave up before is told to stop now. */
  private taskStarted(link: WorkerLink, taskId: number): void {
    const running = this.tasks.get(taskId)
    // its 'task-start' came on the worker's own channel after piscina's answer (two ports, no order
    // between them): the task is over, and a link must not hold it (the watchdog would take the
    // idle worker for hung)
    if (running === undefined) {
      link.tasks.delete(taskId)
      return
    }
    const reason = running.abandoned
    if (reason !== undefined) link.cancel(taskId, reason.message)
  }

  /** A running task's call: answered by its host, or refused when it has none (or is gone). */
  private answerCall(taskId: number, call: TaskCall): Promise<unknown> {
    const host = this.tasks.get(taskId)?.host
    if (host === undefined) return Promise.reject(new Error(`task ${taskId} is not running, or takes no calls (${call.op})`))
    return host(call)
  }

  private poolFailure(err: unknown): WorkerTaskError {
    const message = err instanceof Error ? err.message : String(err)
    if (this.closing) return new WorkerTaskError('closed', 'the worker pool closed before this request was answered', { cause: err })
    if (message === 'Task queue is at limit') return new WorkerTaskError('busy', `the service is overloaded: ${this.options.maxQueued ?? MAX_QUEUED_TASKS} requests are already waiting for a worker`, { cause: err })
    this.crashed++
    this.options.log.warn({ err }, 'a pool worker died while running a task and was replaced')
    return new WorkerTaskError('crashed', `the worker running this request failed (${message}) and was replaced`, { cause: err })
  }

  private emitTiming(timing: TaskTiming): void {
    for (const listener of this.timingListeners) listener(timing)
  }

  /** A worker runs one task at a time, so its answers arrive in order: the last one has its current counters. */
  private record(answer: WorkerAnswer): void {
    this.counters.set(answer.threadId, answer.counters)
  }

  /** A worker is gone (its thread exited or its channel closed; either may come first, or both). */
  private retire(link: WorkerLink): void {
    if (this.links.get(link.threadId) !== link) return
    this.links.delete(link.threadId)
    link.close()
    const last = this.counters.get(link.threadId)
    if (last === undefined) return
    this.counters.delete(link.threadId)
    this.retired = addCounters(this.retired, last)
  }

  private allCounters(): WorkerCounters[] {
    return [this.retired, ...this.counters.values()]
  }
}

function addCounters(a: WorkerCounters, b: WorkerCounters): WorkerCounters {
  return {
    quote: {
      quotesExecuted: a.quote.quotesExecuted + b.quote.quotesExecuted,
      mathDisagreements: a.quote.mathDisagreements + b.quote.mathDisagreements,
      cacheHits: a.quote.cacheHits + b.quote.cacheHits,
    },
    backrun: {
      requests: a.backrun.requests + b.backrun.requests,
      userCallReverted: a.backrun.userCallReverted + b.backrun.userCallReverted,
      found: a.backrun.found + b.backrun.found,
      verificationMisses: a.backrun.verificationMisses + b.backrun.verificationMisses,
    },
    remoteReads: a.remoteReads + b.remoteReads,
    remoteBatches: a.remoteBatches + b.remoteBatches,
    l1Hits: a.l1Hits + b.l1Hits,
    l1Carried: a.l1Carried + b.l1Carried,
    // a gauge: a worker gone holds no heap
    heapUsedBytes: 0,
  }
}

/** Read through a call: TypeScript keeps the narrowing of an earlier check across awaits. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted
}

/** Why the caller gave up, as an Error (AbortSignal.reason may be anything). */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(`the caller gave up on the task (${String(signal.reason)})`)
}
