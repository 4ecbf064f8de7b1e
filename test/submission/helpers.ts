/** Real HTTP relays, signed transactions and fake chain collaborators for the submission tests. */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, beforeEach } from 'vitest'

import type { Address, Hex } from '../../src/chain/types.ts'
import type {
  BackrunPlan,
  BackrunPlanInput,
  BackrunPlanner,
  HeadInfo,
  HeadReorg,
  HeadSource,
  InclusionChecker,
  InclusionQuery,
  InclusionStatus,
  SimulationReport,
  SubmissionSimulator,
} from '../../src/submission/index.ts'

export const CHAIN_ID = 1n
/** anvil's well-known dev keys: public test keys, not secrets */
export const USER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const SEARCHER_KEY_HEX = '0x59c6995e998f97a5a0044966f0945389dc9eabae3cc8fe0c0b08b3f7fbe5a8f1'
export const BACKRUN_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
export const PROFIT_TOKEN = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2'

const userAccount = privateKeyToAccount(USER_KEY)
const backrunAccount = privateKeyToAccount(BACKRUN_KEY)

/** A valid signed EIP-1559 transfer for chain 1; distinct per nonce. */
export async function userTx(nonce: number, data: Hex = '0x'): Promise<Hex> {
  return (await userAccount.signTransaction({
    chainId: Number(CHAIN_ID),
    type: 'eip1559',
    nonce,
    to: '0x000000000000000000000000000000000000dEaD',
    value: 1n,
    data,
    gas: 60_000n,
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  })) as Hex
}

export async function backrunTx(nonce: number): Promise<Hex> {
  return (await backrunAccount.signTransaction({
    chainId: Number(CHAIN_ID),
    type: 'eip1559',
    nonce,
    to: '0x1111111111111111111111111111111111111111',
    value: 0n,
    data: '0xdeadbeef',
    gas: 300_000n,
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 2_000_000_000n,
  })) as Hex
}

export async function tempDir(prefix = 'outbox-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) }
}

/** A temporary directory for each test of a file, and what that test leaves to close (dirPerTest). */
export interface PerTestDir {
  /** the running test's directory */
  readonly path: string
  /** run after the test, the newest first (their errors ignored), before its directory is removed */
  readonly cleanups: Array<() => Promise<void>>
  /** removes the running test's directory and gives it a fresh one (a test that runs cases in turn) */
  renew(): Promise<void>
}

/**
 * A fresh temporary directory (`prefix`...) before each test of the file that calls this at its top
 * level, and after each test its cleanups, the newest first, then the directory removed.
 */
export function dirPerTest(prefix: string): PerTestDir {
  let current: { path: string; cleanup: () => Promise<void> } | undefined
  const cleanups: Array<() => Promise<void>> = []
  beforeEach(async () => {
    current = await tempDir(prefix)
  })
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined)
    await current?.cleanup()
  })
  return {
    get path(): string {
      if (current === undefined) throw new Error('dirPerTest: no test is running')
      return current.path
    },
    cleanups,
    async renew(): Promise<void> {
      await current?.cleanup()
      current = await tempDir(prefix)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Recording relay

export interface RecordedRequest {
  body: string
  method: string | undefined
  params: Record<string, unknown>
  headers: IncomingHttpHeaders
  /** ms, performance.now() */
  at: number
  /** which request this was at this relay, 1-based */
  n: number
  /** true when the relay answered with a failure */
  failed: boolean
  /** the client's port: requests on one kept-alive connection share it */
  remotePort: number | undefined
}

export interface RelayBehaviour {
  /** answer the first N requests with failStatus (default 500) */
  failFirst?: number
  failStatus?: number
  /** delay before answering, ms */
  delayMs?: number
  /** answer with this JSON-RPC error instead of a result */
  rpcError?: { code: number; message: string }
  /** the answer to flashbots_getBundleStatsV2 for `{ bundleHash, blockNumber }` */
  bundleStats?: (params: { bundleHash: string; blockNumber: string }) => object
  /** answers every other request (a builder's rules): its JSON-RPC error, or undefined for the usual result */
  refuse?: (method: string | undefined, params: Record<string, unknown>) => { code: number; message: string } | undefined
}

export interface RecordingRelay {
  url: string
  requests: RecordedRequest[]
  /** requests answered with a result */
  accepted(): RecordedRequest[]
  waitFor(count: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startRelay(behaviour: RelayBehaviour = {}): Promise<RecordingRelay> {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const n = requests.length + 1
      let json: { id?: unknown; method?: string; params?: unknown[] } = {}
      try {
        json = JSON.parse(body) as typeof json
      } catch {
        // recorded as is
      }
      const failed = n <= (behaviour.failFirst ?? 0)
      const refusal = failed ? undefined : behaviour.refuse?.(json.method, (Array.isArray(json.params) ? json.params[0] : {}) as Record<string, unknown>)
      const rpcError = behaviour.rpcError ?? refusal
      requests.push({
        body,
        method: json.method,
        params: (Array.isArray(json.params) ? json.params[0] : {}) as Record<string, unknown>,
        headers: req.headers,
        at: performance.now(),
        n,
        failed: failed || rpcError !== undefined,
        remotePort: req.socket.remotePort,
      })
      const answer = (): void => {
        if (failed) {
          res.writeHead(behaviour.failStatus ?? 500, { 'content-type': 'text/plain' }).end('relay overloaded')
          return
        }
        const stats = json.method === 'flashbots_getBundleStatsV2' ? behaviour.bundleStats : undefined
        const payload = rpcError !== undefined
          ? { jsonrpc: '2.0', id: json.id ?? null, error: rpcError }
          : stats !== undefined
            ? { jsonrpc: '2.0', id: json.id ?? null, result: stats((json.params?.[0] ?? {}) as { bundleHash: string; blockNumber: string }) }
            : { jsonrpc: '2.0', id: json.id ?? null, result: { bundleHash: `0x${n.toString(16).padStart(64, '0')}` } }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
      }
      if (behaviour.delayMs !== undefined) setTimeout(answer, behaviour.delayMs)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    accepted: () => requests.filter((r) => !r.failed),
    async waitFor(count, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs
      while (requests.length < count) {
        if (Date.now() > until) throw new Error(`relay got ${requests.length} requests, expected ${count}`)
        await new Promise((r) => setTimeout(r, 5))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The tx strings of an eth_sendBundle request. */
export function sentTxs(request: RecordedRequest): string[] {
  return request.params.txs as string[]
}

// ---------------------------------------------------------------------------------------------
// Fake chain collaborators

export class ManualHeads implements HeadSource {
  private readonly listeners = new Set<(head: HeadInfo) => void>()
  private readonly reorgListeners = new Set<(reorg: HeadReorg) => void>()
  current: HeadInfo | undefined

  constructor(start?: bigint, private timestampOf: (n: bigint) => bigint = (n) => 1_700_000_000n + n * 12n) {
    if (start !== undefined) this.current = { number: start, timestamp: this.timestampOf(start) }
  }

  onNewHead(listener: (head: HeadInfo) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  onReorg(listener: (reorg: HeadReorg) => void): () => void {
    this.reorgListeners.add(listener)
    return () => this.reorgListeners.delete(listener)
  }

  currentHead(): HeadInfo | undefined {
    return this.current
  }

  /** `transactionHashes`: the block's tx hashes, as a head source that has them sends them */
  emit(number: bigint, transactionHashes?: readonly Hex[]): void {
    this.current = { number, timestamp: this.timestampOf(number), ...(transactionHashes === undefined ? {} : { transactionHashes }) }
    for (const l of this.listeners) l(this.current)
  }

  /**
   * As the fork source tells a reorg: the blocks above `commonAncestor` (undefined: every block)
   * up to the current head were replaced, and `number` is the new head (equal to or lower than the
   * current one, or higher): onReorg, then onNewHead with it.
   */
  reorg(commonAncestor: bigint | undefined, number: bigint, transactionHashes?: readonly Hex[]): void {
    const dropped: Array<{ number: bigint }> = []
    for (let n = (commonAncestor ?? -1n) + 1n; n <= (this.current?.number ?? -1n); n++) dropped.push({ number: n })
    const newHead: HeadInfo = { number, timestamp: this.timestampOf(number) + 1n, ...(transactionHashes === undefined ? {} : { transactionHashes }) }
    for (const l of this.reorgListeners) l({ commonAncestor: commonAncestor === undefined ? undefined : { number: commonAncestor }, dropped, newHead })
    this.current = newHead
    for (const l of this.listeners) l(newHead)
  }

  listenerCount(): number {
    return this.listeners.size
  }

  reorgListenerCount(): number {
    return this.reorgListeners.size
  }
}

/** Reports inclusion for hashes marked with include(); records every query. */
export class ManualInclusion implements InclusionChecker {
  readonly included = new Map<string, bigint>()
  readonly dropped = new Map<string, string>()
  readonly queries: InclusionQuery[] = []

  include(hash: Hex, block: bigint): void {
    this.included.set(hash, block)
  }

  async check(query: InclusionQuery): Promise<InclusionStatus> {
    this.queries.push(query)
    const last = query.txHashes[query.txHashes.length - 1]
    const reason = this.dropped.get(last)
    if (reason !== undefined) return { status: 'dropped', reason }
    const block = this.included.get(last)
    if (block === undefined) return { status: 'pending' }
    return { status: 'included', blockNumber: block, backrunIncluded: query.backrunTxHash !== undefined && this.included.has(query.backrunTxHash) }
  }
}

/**
 * A ManualInclusion that can also read blocks (the node's eth_getBlockByNumber): a block holds the
 * hashes included in it; blocks in `failing` throw, blocks above `known` are unknown (null).
 */
export class BlockReadingInclusion extends ManualInclusion {
  readonly blockReads: bigint[] = []
  readonly failing = new Set<bigint>()
  known = 1n << 62n

  async blockTransactions(number: bigint): Promise<readonly Hex[] | null> {
    this.blockReads.push(number)
    if (this.failing.has(number)) throw new Error(`block ${number} unavailable`)
    if (number > this.known) return null
    return [...this.included].filter(([, block]) => block === number).map(([hash]) => hash as Hex)
  }
}

/** A planner that returns a fixed backrun (signed from nonce 0 upwards) or null, and records its inputs. */
export class FixedPlanner implements BackrunPlanner {
  readonly calls: BackrunPlanInput[] = []
  private nonce = 0

  readonly released: Array<{ id: string; block: bigint }> = []

  constructor(
    private readonly mode: 'backrun' | 'none' | 'throw' | 'slow' = 'backrun',
    readonly profit = 123_456_789_000_000_000n,
    /** the pools every plan says its bundle moves */
    private readonly pools?: Address[],
  ) {}

  release(id: string, block: bigint): void {
    this.released.push({ id, block })
  }

  async plan(input: BackrunPlanInput): Promise<BackrunPlan | null> {
    this.calls.push(input)
    if (this.mode === 'none') return null
    if (this.mode === 'throw') throw new Error('planner exploded')
    if (this.mode === 'slow') await new Promise((resolve, reject) => input.signal.addEventListener('abort', () => reject(input.signal.reason)))
    return { rawBackrunTx: await backrunTx(this.nonce++), grossProfit: this.profit, profitToken: PROFIT_TOKEN, netProfitWei: 1_000n, ...(this.pools === undefined ? {} : { pools: this.pools }) }
  }
}

export function simulator(report: SimulationReport = { success: true, gasUsed: 21_000n }): SubmissionSimulator & { calls: number } {
  const fn = Object.assign(
    async () => {
      fn.calls++
      return report
    },
    { calls: 0 },
  )
  return fn
}

export async function until(condition: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}
