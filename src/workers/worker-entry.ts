/**
 * A worker of the pool (piscina loads this module in each worker thread; its default export runs
 * one task). At load it builds the engines of the main thread (engines.ts: simulator, routing,
 * quote service, backrun engine, and the dispatcher's submission simulator and backrun planning)
 * over a RemoteChainSource, whose reads go to the main thread through a MessageChannel offered to
 * it now, before the first task.
 *
 * The dispatcher's tasks carry the user's transactions as raw bytes, decoded here with the chain's
 * rules (the same as the main thread's), and the abort signal of the dispatcher's preparation is
 * this task's own controller, which the main thread's 'cancel' aborts. Planning reaches the
 * searcher keys through the channel (TaskCall), never holding one.
 *
 * The quote service here keeps no answer cache: the main thread's facade keeps the one cache
 * (pooled-quote-service.ts), so a repeated request is a hit whichever worker computed it.
 *
 * While it holds a task the worker posts a tick every TICK_MS: the main thread's watchdog takes a
 * worker whose ticks stop for longer than the execution budget (and a grace) as hung.
 */
import { getPriority, setPriority } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import { MessageChannel, parentPort, threadId, workerData } from 'node:worker_threads'
import { BackrunEngine } from '../backrun/backrun-engine.ts'
import { installNativeCallGate } from '../crypto/native-call-gate.ts'
import type { Address, BlockInfo, Hex } from '../chain/types.ts'
import { EvmQuoteService } from '../quote/evm-quote-service.ts'
import { quoteJson } from '../server/quote/quote-json.ts'
import { planBackrun, type SearcherKeyLeases } from '../submission/backrun-planning.ts'
import { engineSubmissionSimulator } from '../submission/engine-simulator.ts'
import { decodeSignedTransaction, type DecodedTransaction } from '../tx/decode-transaction.ts'
import { analyseKnownCode, type CodeAnalysesAhead } from './code-analyses-ahead.ts'
import { buildEngines } from './engines.ts'
import { domainErrors } from './error-registry.ts'
import { collectLoaderIsolateGarbage } from './loader-gc.ts'
import { STATE_PORT_OFFER, type StatePortOffer } from './protocol.ts'
import { RemoteChainSource } from './remote-chain-source.ts'
import { StateRequester } from './state-requester.ts'
import type { TaskCall, TaskKind, TaskKinds, WorkerAnswer, WorkerCounters, WorkerSettings, WorkerTask } from './tasks.ts'

/** How often a busy worker says its event loop turns, ms. */
export const TICK_MS = 100
/** the sender of the warm-up call: any address */
const WARM_UP_SENDER = '0x0000000000000000000000000000000000000001'

if (parentPort === null) throw new Error('worker-entry.ts runs in a worker thread of the pool only')
const settings = workerData as WorkerSettings

const source = new RemoteChainSource({ kind: settings.chainKind, chainId: settings.chainId, head: settings.head })
const channel = new MessageChannel()
/** the running tasks' abort controllers: the main thread cancels a task through them */
const cancellers = new Map<number, AbortController>()
const requester = new StateRequester(
  channel.port1,
  (block, diff) => source.adoptHead(block, diff),
  (taskId, reason) => cancellers.get(taskId)?.abort(new Error(reason)),
)
source.connect(requester)
// before any task: from here on, this thread's native addon calls pass the gate the pool closes
// before it terminates the thread (a thread stopped inside one aborts the process)
const offer: StatePortOffer = { kind: STATE_PORT_OFFER, threadId, port: channel.port2, nativeCalls: installNativeCallGate() }
parentPort.postMessage(offer, [channel.port2])

const log = {
  warn(obj: object, msg: string): void {
    try {
      requester.post({ t: 'log', obj: loggable(obj), msg })
    } catch {
      requester.post({ t: 'log', obj: {}, msg })
    }
  },
}
lowerThreadPriority(settings.nice)
const engines = buildEngines(source, settings.engines, log)
const quoteService = new EvmQuoteService({ ...engines.quoteOptions, maxCachedQuotes: 0 })
const backrunEngine = new BackrunEngine(engines.backrunOptions)
const simulateSubmission = engineSubmissionSimulator({ chain: source, simulator: engines.simulator })
/** the dispatcher's transactions are decoded with the rules the main thread decodes them with (src/node/submission.ts) */
const decodeRules = { chainId: settings.chainId, common: engines.simulator.common }
// the main thread announces its head as soon as it has this worker's channel: warmed on that block
const firstHead = new Promise<BlockInfo>((resolve) => {
  const unsubscribe = source.onNewHead((block) => {
    unsubscribe()
    resolve(block)
  })
})
const warm = firstHead.then(warmUp)

let running = 0
let ticker: NodeJS.Timeout | undefined

export default async function runTask(task: WorkerTask): Promise<WorkerAnswer> {
  await warm
  const started = performance.now()
  requester.post({ t: 'task-start', taskId: task.taskId })
  if (running++ === 0) ticker = setInterval(() => requester.post({ t: 'tick' }), TICK_MS)
  const canceller = new AbortController()
  cancellers.set(task.taskId, canceller)
  try {
    const value = await source.runAt(task.block, () => run(task, canceller.signal))
    return { threadId, counters: counters(), computeMs: performance.now() - started, ok: true, value }
  } catch (err) {
    return { threadId, counters: counters(), computeMs: performance.now() - started, ok: false, error: domainErrors.serialize(err) }
  } finally {
    cancellers.delete(task.taskId)
    // no 'task-end' message: piscina's answer tells the main thread the task is over (one message
    // fewer per task for both threads; the pool forgets the task when it has the answer)
    if (--running === 0) clearInterval(ticker)
  }
}

function run(task: WorkerTask, signal: AbortSignal): Promise<TaskKinds[TaskKind]['value']> {
  switch (task.kind) {
    case 'quote':
      // written here, not on the main thread: it sends the string as it comes (quote-json.ts)
      return quoteService.quote((task as WorkerTask<'quote'>).request).then(quoteJson)
    case 'backrun':
      return backrunEngine.backrun((task as WorkerTask<'backrun'>).request)
    case 'simulate': {
      const { id, kind, rawTxs } = (task as WorkerTask<'simulate'>).request
      return simulateSubmission({ id, kind, userTxs: decodeAll(rawTxs), signal })
    }
    case 'plan': {
      const { id, kind, rawTxs, simulation, tipFloor, settings: planning, searcherKeys } = (task as WorkerTask<'plan'>).request
      const keys = remoteKeys(task.taskId, searcherKeys)
      return planBackrun(
        { chain: source, simulator: engines.simulator, engine: backrunEngine, keys, settings: planning },
        { id, kind, userTxs: decodeAll(rawTxs), simulation, tipFloor, signal },
      )
    }
  }
}

function decodeAll(rawTxs: readonly Hex[]): DecodedTransaction[] {
  return rawTxs.map((raw) => decodeSignedTransaction(raw, decodeRules))
}

/** The searcher keys of task `taskId`, held by the main thread: every use is a call to it. */
function remoteKeys(taskId: number, size: number): SearcherKeyLeases {
  const call = (c: TaskCall): Promise<unknown> => requester.call(taskId, c)
  return {
    size,
    lease: (head, target, owner) => call({ op: 'lease', head, target, owner }) as Promise<Address | undefined>,
    sign: (target, owner, request) => call({ op: 'sign', target, owner, request }) as Promise<Hex>,
    release: async (target, owner) => {
      await call({ op: 'release', target, owner })
    },
  }
}

/**
 * What a worker's first request would otherwise pay, paid before it takes one: the first VM and the
 * interpreter patches, the compilation of the route search and of the EVM's hot paths (a first
 * quote took ~350 ms with gaps of ~150 ms where the event loop did not turn: on a busy machine
 * enough to look hung). One quote between the chain's WETH and another base token, by a quote
 * service of its own (its counters are not the worker's), on the head; a failure only means less
 * was warmed. Then collects the module-loader isolate's start-up garbage (~0.7 s of this thread,
 * before it takes a task). Ends by telling the main thread this worker is ready (the pool's
 * ready()); tasks wait for it.
 */
async function warmUp(head: BlockInfo): Promise<void> {
  const { contracts } = settings.engines
  const other = contracts.baseTokens.find((token) => token !== contracts.weth)
  let ahead: CodeAnalysesAhead | undefined
  try {
    await source.runAt(head, async () => {
      // first, so that the warm-up's own executions find them (code-analyses-ahead.ts)
      ahead = await analyseKnownCode(engines.simulator.common, source.latest(), settings.engines.knownCode)
      const state = engines.simulator.openState(source.latest())
      await engines.simulator.call(state, { from: WARM_UP_SENDER, to: contracts.router, data: '0x' })
      if (other !== undefined) await new EvmQuoteService({ ...engines.quoteOptions, maxCachedQuotes: 0 }).quote({ tokenIn: contracts.weth, tokenOut: other, amountIn: 10n ** 15n })
    })
  } catch {
    // a chain without that route, an upstream hiccup: the first request warms the rest
  }
  // every module this worker runs is loaded now (the warm-up ran the lazy imports of the interpreter
  // patches): its loader isolate gives back its start-up heap here, not minutes later (loader-gc.ts)
  const loader = await collectLoaderIsolateGarbage()
  requester.post({ t: 'warm', ...(loader === undefined ? {} : { loader }), ...(ahead === undefined ? {} : { ahead }) })
}

function counters(): WorkerCounters {
  const reads = requester.stats()
  return {
    quote: quoteService.stats(),
    backrun: backrunEngine.stats(),
    remoteReads: reads.reads,
    remoteBatches: reads.batches,
    l1Hits: source.l1Hits(),
    l1Carried: source.l1Carried(),
    heapUsedBytes: getHeapStatistics().used_heap_size,
  }
}

/** A log object structured clone accepts: errors become their name, message and stack. */
function loggable(obj: object): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(obj)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, stack: value.stack } : value
  }
  return out
}

/**
 * WORKER_NICE, added to the niceness the thread started with: on Linux setpriority(PRIO_PROCESS, 0) names the calling thread, not the process
 * (threads are scheduled one by one), so this worker yields a core to the main thread, which
 * acknowledges submissions and answers HTTP, whenever both want one. Elsewhere the same call would
 * lower the whole process, so it is left alone there.
 */
function lowerThreadPriority(nice: number): void {
  if (nice === 0) return
  if (process.platform !== 'linux') {
    log.warn({ nice, platform: process.platform }, 'WORKER_NICE applies on Linux only (per thread); the workers keep the process priority')
    return
  }
  try {
    // relative to the thread that started it (a service run under `nice` keeps its workers below it)
    setPriority(Math.min(19, getPriority() + nice))
  } catch (err) {
    log.warn({ nice, err: String(err) }, 'WORKER_NICE could not be applied; the workers keep the process priority')
  }
}
