/**
 * The embedded devnet's block builder, reachable as a relay: it takes Flashbots-style bundles
 * (`eth_sendBundle`) and public transactions (`eth_sendRawTransaction`) over a real HTTP
 * JSON-RPC endpoint, builds the next devnet block on a timer (or on `mineNow()`), and commits it
 * to the DevnetStateSource, whose head listeners (the service) then see the new block. Receipts
 * (`eth_getTransactionReceipt`) tell what landed, as a node does in fork mode.
 *
 * A block is built in the simulator on top of the head, in the head's next-block context (the
 * one the service simulates in) with the builder's coinbase:
 * 1. bundles targeting this block, in arrival order. Each is atomic: its transactions execute in
 *    order on top of the block so far, and the whole bundle is dropped when one cannot be included
 *    (nonce, funds, fee, gas left), reverts or halts (unless its hash is in revertingTxHashes), is
 *    already in the block or on chain (an earlier bundle took it), or the block's timestamp is
 *    outside [minTimestamp, maxTimestamp]. A bundle lands in its blockNumber or never: one for a
 *    later block waits, one whose block passed is dropped.
 * 2. then the public transactions, in arrival order. These land even when they revert (they pay
 *    for their gas); one that cannot be included yet (nonce gap, funds, fee above its cap, gas left)
 *    waits for a later block, up to `pendingTxTtlBlocks` blocks; one whose nonce is used is dropped.
 *
 * Hash references (notify bundles): a bundle entry that is a 32-byte hash, as a bare string (the
 * MEV Blocker dialect our RelayClient speaks) or as `{ "hash": "0x..." }`, stands for a
 * transaction this builder received with eth_sendRawTransaction and has not included yet.
 *
 * X-Flashbots-Signature is verified when present and its signer recorded with the bundle (it
 * scopes replacementUuid); a bad signature refuses the request with HTTP 403. Unsigned requests
 * are accepted: this is a local devnet.
 *
 * Limits: pending bundles, transactions per bundle, blocks ahead, public transactions, request
 * bodies, batches and request time are all bounded; receipts, bundle records and block history
 * are kept for the last `maxReceipts`, `maxTrackedBundles` and `historyBlocks` entries.
 */
import { toHex } from '../chain/quantity.ts'
import type { Address, BlockInfo, Hex, StateReader } from '../chain/types.ts'
import type { DevnetBlockInfo } from '../chain/memory/layered-state-reader.ts'
import type { DevnetStateSource } from '../chain/memory/devnet-source.ts'
import { nextBlockContext, type ExecutionBlock } from '../evm/block-context.ts'
import { TransactionRejectedError, type SimulationLog, type SimulationState, type Simulator, type TransactionResult } from '../evm/simulator.ts'
import { bundleHash as computeBundleHash, decodeSignedTransaction, isTxDecodeError, type DecodedTransaction } from '../tx/index.ts'
import {
  JsonRpcHttpServer,
  RPC_EXECUTION_REVERTED,
  RPC_INVALID_PARAMS,
  RPC_LIMIT_EXCEEDED,
  RPC_REFUSED,
  RpcError,
  type RpcCaller,
  type RpcMethod,
} from './json-rpc-http.ts'

/** The devnet builder's fee recipient: priority fees of every built block go here. */
export const DEVNET_BUILDER_COINBASE: Address = '0x0000000000000000000000000000000000c0ffee'

export const LOCAL_BUILDER_DEFAULTS = {
  blockTimeMs: 1_000,
  mineEmptyBlocks: true,
  maxPendingBundles: 1_000,
  maxTxsPerBundle: 100,
  maxBlocksAhead: 1_000,
  maxPendingTxs: 10_000,
  pendingTxTtlBlocks: 64,
  maxReceipts: 100_000,
  maxTrackedBundles: 10_000,
  historyBlocks: 128,
  maxBodyBytes: 1024 * 1024,
  maxBatchSize: 100,
  requestTimeoutMs: 10_000,
} as const

export interface LocalBuilderOptions {
  source: DevnetStateSource
  /** executes the blocks; its blockTimeSeconds sets the block timestamps (head + that) */
  simulator: Simulator
  /** ms between blocks; 0: no timer, blocks are built by mineNow() only. Default 1000. */
  blockTimeMs?: number
  /** build a block on every tick even with nothing to include (a chain keeps producing blocks). Default true. */
  mineEmptyBlocks?: boolean
  /** Default DEVNET_BUILDER_COINBASE. */
  coinbase?: Address
  /** bundles waiting, all target blocks together. Default 1000. */
  maxPendingBundles?: number
  /** Default 100. */
  maxTxsPerBundle?: number
  /** a bundle's blockNumber may be at most head + this. Default 1000. */
  maxBlocksAhead?: number
  /** public transactions waiting. Default 10 000. */
  maxPendingTxs?: number
  /** blocks a public transaction may wait for a nonce gap or funds before it is dropped. Default 64. */
  pendingTxTtlBlocks?: number
  /** receipts kept (oldest forgotten first). Default 100 000. */
  maxReceipts?: number
  /** bundle records kept for bundleStatus / devnet_bundleStatus. Default 10 000. */
  maxTrackedBundles?: number
  /** recent blocks whose header and state eth_getBlockByNumber / eth_getBalance / eth_call can read. Default 128. */
  historyBlocks?: number
  /** HTTP request body cap. Default 1 MiB. */
  maxBodyBytes?: number
  /** JSON-RPC batch cap. Default 100. */
  maxBatchSize?: number
  /** a whole HTTP request must arrive within this. Default 10 000 ms. */
  requestTimeoutMs?: number
  /** failures with no caller: a timer-built block that failed, a bundle whose simulation threw */
  onError?: (error: unknown) => void
  /** told of every block built (after it is the head) */
  onBlock?: (block: BuiltBlock) => void
}

/** One bundle entry: a raw signed transaction, or the hash of one sent before with eth_sendRawTransaction. */
export type BundleEntry = { raw: Hex } | { hash: Hex }

/** eth_sendBundle's parameter object, parsed. */
export interface SendBundleRequest {
  txs: BundleEntry[]
  blockNumber: bigint
  /** unix seconds: the block's timestamp must be at least this */
  minTimestamp?: bigint
  /** unix seconds: the block's timestamp must be at most this */
  maxTimestamp?: bigint
  /** transactions of the bundle allowed to revert */
  revertingTxHashes?: Hex[]
  /** a later bundle with the same uuid (and signer) replaces this one while it waits */
  replacementUuid?: string
}

export type BundleStatus = 'pending' | 'included' | 'dropped'

export interface BundleRecord {
  bundleHash: Hex
  txHashes: Hex[]
  /** the block it targets (pending, dropped) or landed in (included) */
  blockNumber: bigint
  status: BundleStatus
  /** why it was dropped */
  reason?: string
  /** the X-Flashbots-Signature signer, lowercase */
  signer?: Address
  replacementUuid?: string
}

export interface BuilderReceipt {
  transactionHash: Hex
  transactionIndex: number
  blockNumber: bigint
  blockHash: Hex
  from: Address
  to: Address | null
  /** 1 success, 0 reverted or halted */
  status: 0 | 1
  gasUsed: bigint
  cumulativeGasUsed: bigint
  effectiveGasPrice: bigint
  type: number
  logs: SimulationLog[]
  contractAddress: Address | null
  /** the bundle it landed with; undefined for a public transaction */
  bundleHash?: Hex
}

export interface BuiltBlock {
  block: DevnetBlockInfo
  receipts: BuilderReceipt[]
  /** bundles included, in block order */
  bundles: Hex[]
  /** bundles that targeted this block (or an earlier one) and did not land, with why */
  dropped: Array<{ bundleHash: Hex; reason: string }>
}

/** A request the builder refuses; `kind` says how (invalid input, refused, a bound reached). */
export class LocalBuilderError extends Error {
  override readonly name = 'LocalBuilderError'
  constructor(
    readonly kind: 'invalid' | 'refused' | 'limit',
    message: string,
  ) {
    super(message)
  }
}

interface PendingBundle {
  bundleHash: Hex
  txs: DecodedTransaction[]
  blockNumber: bigint
  minTimestamp?: bigint
  maxTimestamp?: bigint
  reverting: ReadonlySet<Hex>
  replacementUuid?: string
  signer?: Address
}

interface PendingTx {
  tx: DecodedTransaction
  /** the block being built when it arrived */
  firstBlock: bigint
}

interface Executed {
  result: TransactionResult
  tx: DecodedTransaction
  bundleHash?: Hex
}

type BundleOutcome = { state: SimulationState; gasUsed: bigint; executed: Executed[] } | { reason: string }

const HASH = /^0x[0-9a-fA-F]{64}$/
const HEX = /^0x([0-9a-fA-F]{2})*$/
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'

export class LocalBuilder {
  readonly coinbase: Address
  private readonly source: DevnetStateSource
  private readonly simulator: Simulator
  private readonly limits: Required<Omit<LocalBuilderOptions, 'source' | 'simulator' | 'coinbase' | 'onError' | 'onBlock'>>
  private readonly onError: (error: unknown) => void
  private readonly onBlock: ((block: BuiltBlock) => void) | undefined

  /** waiting bundles, arrival order */
  private bundles: PendingBundle[] = []
  /** public transactions, arrival order */
  private readonly mempool = new Map<Hex, PendingTx>()
  private readonly receipts = new Map<Hex, BuilderReceipt>()
  private readonly records = new Map<Hex, BundleRecord>()
  private readonly history = new Map<bigint, { reader: StateReader; transactions: Hex[] }>()

  private server: JsonRpcHttpServer | undefined
  private endpoint: string | undefined
  private timer: NodeJS.Timeout | undefined
  private building: Promise<unknown> = Promise.resolve()
  private closed = false

  constructor(options: LocalBuilderOptions) {
    this.source = options.source
    this.simulator = options.simulator
    this.coinbase = (options.coinbase ?? DEVNET_BUILDER_COINBASE).toLowerCase() as Address
    if (!/^0x[0-9a-f]{40}$/.test(this.coinbase)) throw new RangeError(`coinbase must be a 20-byte address, got ${options.coinbase}`)
    const limits = { ...LOCAL_BUILDER_DEFAULTS }
    for (const key of Object.keys(LOCAL_BUILDER_DEFAULTS) as Array<keyof typeof LOCAL_BUILDER_DEFAULTS>) {
      const value = options[key]
      if (value === undefined) continue
      if (key === 'mineEmptyBlocks') {
        if (typeof value !== 'boolean') throw new RangeError('mineEmptyBlocks must be a boolean')
      } else if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (key === 'blockTimeMs' ? 0 : 1)) {
        throw new RangeError(`${key} must be a ${key === 'blockTimeMs' ? 'non-negative' : 'positive'} integer, got ${String(value)}`)
      }
      ;(limits as Record<string, number | boolean>)[key] = value
    }
    this.limits = limits
    this.onError = options.onError ?? (() => {})
    this.onBlock = options.onBlock
    this.remember(this.source.latest(), [])
  }

  /** The JSON-RPC URL once started. */
  get url(): string {
    if (this.endpoint === undefined) throw new Error('the local builder is not started')
    return this.endpoint
  }

  /**
   * Serves the JSON-RPC endpoint on host:port (port 0: any free port) and starts the block timer.
   * @returns the URL and the bound port
   */
  async start(options: { host?: string; port?: number } = {}): Promise<{ url: string; port: number }> {
    if (this.closed) throw new Error('the local builder is closed')
    if (this.server !== undefined) throw new Error('the local builder is already started')
    const host = options.host ?? '127.0.0.1'
    const server = new JsonRpcHttpServer(this.rpcMethods(), {
      maxBodyBytes: this.limits.maxBodyBytes,
      maxBatchSize: this.limits.maxBatchSize,
      requestTimeoutMs: this.limits.requestTimeoutMs,
    })
    const port = await server.listen(host, options.port ?? 0)
    this.server = server
    this.endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    this.scheduleTick()
    return { url: this.endpoint, port }
  }

  /** Stops the timer and the server, and waits for a block being built. Idempotent. */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    await this.building
    await this.server?.close()
    this.server = undefined
  }

  /** Builds the next block now (after any block being built) and commits it. */
  mineNow(): Promise<BuiltBlock> {
    const run = this.building.then(() => this.build())
    this.building = run.catch(() => undefined)
    return run
  }

  /**
   * Queues a bundle for its blockNumber.
   * @throws LocalBuilderError: invalid (malformed entry, past or too distant block), refused
   *   (unknown or already included hash reference), limit (too many pending bundles)
   */
  sendBundle(request: SendBundleRequest, signer?: Address): { bundleHash: Hex } {
    const head = this.source.latest().block
    if (request.txs.length === 0) throw new LocalBuilderError('invalid', 'txs: a bundle needs at least one transaction')
    if (request.txs.length > this.limits.maxTxsPerBundle) {
      throw new LocalBuilderError('invalid', `txs: ${request.txs.length} transactions, at most ${this.limits.maxTxsPerBundle} per bundle`)
    }
    if (request.blockNumber <= head.number) {
      throw new LocalBuilderError('invalid', `blockNumber ${toHex(request.blockNumber)} is not in the future: the head is ${head.number}, the next block is ${head.number + 1n}`)
    }
    if (request.blockNumber > head.number + BigInt(this.limits.maxBlocksAhead)) {
      throw new LocalBuilderError('invalid', `blockNumber ${toHex(request.blockNumber)} is more than ${this.limits.maxBlocksAhead} blocks ahead of the head ${head.number}`)
    }
    if (request.minTimestamp !== undefined && request.maxTimestamp !== undefined && request.minTimestamp > request.maxTimestamp) {
      throw new LocalBuilderError('invalid', `minTimestamp ${request.minTimestamp} is after maxTimestamp ${request.maxTimestamp}`)
    }
    const txs = request.txs.map((entry, i) => this.resolveEntry(entry, i))
    const seen = new Set<Hex>()
    for (const [i, tx] of txs.entries()) {
      if (seen.has(tx.hash)) throw new LocalBuilderError('invalid', `txs[${i}]: ${tx.hash} appears twice in the bundle`)
      seen.add(tx.hash)
    }
    const hash = computeBundleHash(txs.map((t) => t.hash))
    const signerKey = signer?.toLowerCase() as Address | undefined
    if (this.bundles.some((b) => b.bundleHash === hash && b.blockNumber === request.blockNumber && b.signer === signerKey)) return { bundleHash: hash }

    const replaced =
      request.replacementUuid === undefined ? -1 : this.bundles.findIndex((b) => b.replacementUuid === request.replacementUuid && b.signer === signerKey)
    if (replaced < 0 && this.bundles.length >= this.limits.maxPendingBundles) {
      throw new LocalBuilderError('limit', `${this.bundles.length} bundles are pending, the most this builder holds: retry after the next block`)
    }
    if (replaced >= 0) {
      const old = this.bundles[replaced]
      this.bundles.splice(replaced, 1)
      this.settleDropped(old, `replaced by bundle ${hash} (same replacementUuid)`)
    }
    const bundle: PendingBundle = {
      bundleHash: hash,
      txs,
      blockNumber: request.blockNumber,
      minTimestamp: request.minTimestamp,
      maxTimestamp: request.maxTimestamp,
      reverting: new Set((request.revertingTxHashes ?? []).map((h) => h.toLowerCase() as Hex)),
      replacementUuid: request.replacementUuid,
      signer: signerKey,
    }
    this.bundles.push(bundle)
    const previous = this.records.get(hash)
    if (previous?.status !== 'included') {
      this.track({
        bundleHash: hash,
        txHashes: txs.map((t) => t.hash),
        blockNumber: request.blockNumber,
        status: 'pending',
        ...(signerKey === undefined ? {} : { signer: signerKey }),
        ...(request.replacementUuid === undefined ? {} : { replacementUuid: request.replacementUuid }),
      })
    }
    return { bundleHash: hash }
  }

  /** Removes the waiting bundles with this replacementUuid (and signer). Returns how many. */
  cancelBundle(replacementUuid: string, signer?: Address): number {
    const signerKey = signer?.toLowerCase() as Address | undefined
    const cancelled = this.bundles.filter((b) => b.replacementUuid === replacementUuid && b.signer === signerKey)
    if (cancelled.length === 0) return 0
    this.bundles = this.bundles.filter((b) => !cancelled.includes(b))
    for (const b of cancelled) this.settleDropped(b, 'cancelled (eth_cancelBundle)')
    return cancelled.length
  }

  /**
   * Puts a public transaction in the mempool (it goes into the next block, after the bundles).
   * Idempotent for a transaction already waiting.
   * @throws LocalBuilderError: invalid (undecodable), refused (already included, nonce used),
   *   limit (mempool full)
   */
  async sendRawTransaction(raw: string): Promise<Hex> {
    const tx = this.decode(raw, 'transaction')
    if (this.mempool.has(tx.hash)) return tx.hash
    const landed = this.receipts.get(tx.hash)
    if (landed !== undefined) throw new LocalBuilderError('refused', `transaction ${tx.hash} is already included in block ${landed.blockNumber}`)
    const account = await this.source.latest().getAccount(tx.sender)
    const nonce = account?.nonce ?? 0n
    if (tx.nonce < nonce) throw new LocalBuilderError('refused', `nonce too low: ${tx.sender} is at nonce ${nonce}, the transaction has ${tx.nonce}`)
    if (this.mempool.size >= this.limits.maxPendingTxs) {
      throw new LocalBuilderError('limit', `the mempool holds ${this.mempool.size} transactions, its bound: retry after the next block`)
    }
    this.mempool.set(tx.hash, { tx, firstBlock: this.source.latest().block.number + 1n })
    return tx.hash
  }

  /** The receipt of a transaction this builder included (while kept), else undefined. */
  receipt(hash: Hex): BuilderReceipt | undefined {
    const r = this.receipts.get(hash.toLowerCase() as Hex)
    return r === undefined ? undefined : { ...r, logs: [...r.logs] }
  }

  /** What became of a bundle (while its record is kept), else undefined. */
  bundleStatus(hash: Hex): BundleRecord | undefined {
    const r = this.records.get(hash.toLowerCase() as Hex)
    return r === undefined ? undefined : { ...r, txHashes: [...r.txHashes] }
  }

  /** Bundles waiting and public transactions waiting. */
  get pending(): { bundles: number; transactions: number } {
    return { bundles: this.bundles.length, transactions: this.mempool.size }
  }

  // ---- block building ----

  private scheduleTick(): void {
    if (this.closed || this.limits.blockTimeMs === 0) return
    this.timer = setTimeout(() => void this.tick(), this.limits.blockTimeMs)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    this.timer = undefined
    try {
      if (this.limits.mineEmptyBlocks || this.bundles.length > 0 || this.mempool.size > 0) await this.mineNow()
    } catch (error) {
      this.onError(error)
    } finally {
      this.scheduleTick()
    }
  }

  private async build(): Promise<BuiltBlock> {
    if (this.closed) throw new Error('the local builder is closed')
    const head = this.source.latest()
    const context: ExecutionBlock = { ...nextBlockContext(head.block, this.simulator.blockTimeSeconds), coinbase: this.coinbase }
    const target = context.number
    let state = this.simulator.openState(head, context)
    let gasUsed = 0n
    const executed: Executed[] = []
    const inBlock = new Set<Hex>()
    const included: PendingBundle[] = []
    const dropped: Array<{ bundle: PendingBundle; reason: string }> = []

    const candidates = this.bundles.filter((b) => b.blockNumber <= target)
    for (const bundle of candidates) {
      if (bundle.blockNumber < target) {
        dropped.push({ bundle, reason: `its block ${bundle.blockNumber} was built before it could be considered` })
        continue
      }
      const outcome = await this.tryBundle(bundle, state, gasUsed, inBlock, context)
      if ('reason' in outcome) {
        dropped.push({ bundle, reason: outcome.reason })
        continue
      }
      state = outcome.state
      gasUsed = outcome.gasUsed
      executed.push(...outcome.executed)
      for (const e of outcome.executed) inBlock.add(e.tx.hash)
      included.push(bundle)
    }

    const leaving = new Set<Hex>()
    for (const [hash, pending] of [...this.mempool]) {
      const tx = pending.tx
      if (inBlock.has(hash) || this.receipts.has(hash)) {
        leaving.add(hash)
        continue
      }
      const expired = target - pending.firstBlock >= BigInt(this.limits.pendingTxTtlBlocks)
      if (gasUsed + tx.gasLimit > context.gasLimit) {
        if (expired) leaving.add(hash)
        continue
      }
      const nonce = (await state.overlay.readAccount(tx.sender))?.nonce ?? 0n
      if (tx.nonce < nonce) {
        leaving.add(hash)
        continue
      }
      if (tx.nonce > nonce) {
        if (expired) leaving.add(hash)
        continue
      }
      let result: TransactionResult
      try {
        result = await this.simulator.transaction(state, tx.tx)
      } catch (error) {
        // funds or fee: may become includable later; anything else will never be
        if (!(error instanceof TransactionRejectedError)) this.onError(error)
        if (expired || !(error instanceof TransactionRejectedError)) leaving.add(hash)
        continue
      }
      state = result.state
      gasUsed += result.gasUsed
      executed.push({ result, tx })
      inBlock.add(hash)
      leaving.add(hash)
    }

    const reader = this.source.commitBlock(state, { ...context, gasUsed, transactionHashes: executed.map((e) => e.tx.hash) })
    // everything below runs in the same synchronous turn as the commit: a request that sees the
    // new head also sees its receipts
    const block = reader.block
    const receipts = this.recordReceipts(block, context, executed)
    const settled = new Set<PendingBundle>([...included, ...dropped.map((d) => d.bundle)])
    this.bundles = this.bundles.filter((b) => !settled.has(b))
    for (const bundle of included) this.settleIncluded(bundle, block.number)
    for (const d of dropped) this.settleDropped(d.bundle, d.reason)
    for (const hash of leaving) this.mempool.delete(hash)
    this.remember(reader, executed.map((e) => e.tx.hash))
    const built: BuiltBlock = {
      block,
      receipts,
      bundles: included.map((b) => b.bundleHash),
      dropped: dropped.map((d) => ({ bundleHash: d.bundle.bundleHash, reason: d.reason })),
    }
    if (this.onBlock !== undefined) {
      try {
        this.onBlock(built)
      } catch (error) {
        this.onError(error)
      }
    }
    return built
  }

  /** Executes one bundle atomically on top of `state`; the bundle's result, or why it cannot land. */
  private async tryBundle(bundle: PendingBundle, state: SimulationState, gasUsed: bigint, inBlock: ReadonlySet<Hex>, context: ExecutionBlock): Promise<BundleOutcome> {
    if (bundle.minTimestamp !== undefined && context.timestamp < bundle.minTimestamp) {
      return { reason: `the block's timestamp ${context.timestamp} is before minTimestamp ${bundle.minTimestamp}` }
    }
    if (bundle.maxTimestamp !== undefined && context.timestamp > bundle.maxTimestamp) {
      return { reason: `the block's timestamp ${context.timestamp} is after maxTimestamp ${bundle.maxTimestamp}` }
    }
    for (const [i, tx] of bundle.txs.entries()) {
      if (inBlock.has(tx.hash)) return { reason: `tx ${i} (${tx.hash}) is already in this block: an earlier bundle included it` }
      const landed = this.receipts.get(tx.hash)
      if (landed !== undefined) return { reason: `tx ${i} (${tx.hash}) is already included in block ${landed.blockNumber}` }
    }
    let current = state
    let used = gasUsed
    const executed: Executed[] = []
    for (const [i, tx] of bundle.txs.entries()) {
      if (used + tx.gasLimit > context.gasLimit) {
        return { reason: `tx ${i} (${tx.hash}): its gas limit ${tx.gasLimit} exceeds the gas left in the block (${context.gasLimit - used})` }
      }
      let result: TransactionResult
      try {
        result = await this.simulator.transaction(current, tx.tx)
      } catch (error) {
        if (error instanceof TransactionRejectedError) return { reason: `tx ${i} (${tx.hash}) cannot be included: ${error.message}` }
        this.onError(error)
        return { reason: `tx ${i} (${tx.hash}): the simulation failed: ${error instanceof Error ? error.message : String(error)}` }
      }
      if (result.status !== 'success' && !bundle.reverting.has(tx.hash)) {
        const why = result.status === 'reverted' ? `reverted${result.revertReason === undefined ? '' : `: ${result.revertReason}`}` : `halted: ${result.error ?? 'unknown'}`
        return { reason: `tx ${i} (${tx.hash}) ${why}, and it is not in revertingTxHashes` }
      }
      executed.push({ result, tx, bundleHash: bundle.bundleHash })
      used += result.gasUsed
      current = result.state
    }
    return { state: current, gasUsed: used, executed }
  }

  private recordReceipts(block: DevnetBlockInfo, context: ExecutionBlock, executed: readonly Executed[]): BuilderReceipt[] {
    let cumulative = 0n
    const out: BuilderReceipt[] = []
    for (const [index, e] of executed.entries()) {
      cumulative += e.result.gasUsed
      const tx = e.tx
      const baseFee = context.baseFeePerGas
      const effectiveGasPrice =
        tx.type === 0 || tx.type === 1 || baseFee === undefined ? tx.gasFeeCap : min(tx.gasFeeCap, baseFee + tx.gasTipCap)
      const receipt: BuilderReceipt = {
        transactionHash: tx.hash,
        transactionIndex: index,
        blockNumber: block.number,
        blockHash: block.hash,
        from: tx.sender,
        to: tx.to,
        status: e.result.status === 'success' ? 1 : 0,
        gasUsed: e.result.gasUsed,
        cumulativeGasUsed: cumulative,
        effectiveGasPrice,
        type: tx.type,
        logs: e.result.logs,
        contractAddress: e.result.createdAddress ?? null,
        ...(e.bundleHash === undefined ? {} : { bundleHash: e.bundleHash }),
      }
      out.push(receipt)
      this.receipts.set(tx.hash, receipt)
      if (this.receipts.size > this.limits.maxReceipts) this.receipts.delete(this.receipts.keys().next().value as Hex)
    }
    return out
  }

  private settleIncluded(bundle: PendingBundle, blockNumber: bigint): void {
    const record = this.records.get(bundle.bundleHash)
    if (record === undefined) return
    this.track({ ...record, status: 'included', blockNumber, reason: undefined })
  }

  private settleDropped(bundle: PendingBundle, reason: string): void {
    const record = this.records.get(bundle.bundleHash)
    if (record === undefined || record.status === 'included') return
    // another copy (the same bundle resubmitted for a later block) still waits
    const waiting = this.bundles.find((b) => b.bundleHash === bundle.bundleHash)
    if (waiting !== undefined) {
      this.track({ ...record, blockNumber: waiting.blockNumber, status: 'pending', reason })
      return
    }
    this.track({ ...record, status: 'dropped', blockNumber: bundle.blockNumber, reason })
  }

  private track(record: BundleRecord): void {
    if (record.reason === undefined) delete record.reason
    this.records.delete(record.bundleHash)
    this.records.set(record.bundleHash, record)
    if (this.records.size > this.limits.maxTrackedBundles) this.records.delete(this.records.keys().next().value as Hex)
  }

  private remember(reader: StateReader, transactions: Hex[]): void {
    this.history.set(reader.block.number, { reader, transactions })
    while (this.history.size > this.limits.historyBlocks) this.history.delete(this.history.keys().next().value as bigint)
  }

  // ---- input ----

  private resolveEntry(entry: BundleEntry, i: number): DecodedTransaction {
    if ('raw' in entry) return this.decode(entry.raw, `txs[${i}]`)
    const hash = entry.hash.toLowerCase() as Hex
    const pending = this.mempool.get(hash)
    if (pending !== undefined) return pending.tx
    const landed = this.receipts.get(hash)
    if (landed !== undefined) throw new LocalBuilderError('refused', `txs[${i}]: the referenced transaction ${hash} is already included in block ${landed.blockNumber}`)
    throw new LocalBuilderError('refused', `txs[${i}]: the referenced transaction ${hash} is unknown to this builder: send it with eth_sendRawTransaction first`)
  }

  private decode(raw: string, what: string): DecodedTransaction {
    try {
      return decodeSignedTransaction(raw, { chainId: this.source.chainId, common: this.simulator.common })
    } catch (error) {
      if (isTxDecodeError(error)) throw new LocalBuilderError('invalid', `${what}: ${error.message}`)
      throw error
    }
  }

  private readerAt(tag: unknown): StateReader {
    const head = this.source.latest()
    if (tag === undefined || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') return head
    const number = tag === 'earliest' ? 0n : parseQuantityParam(tag, 'block')
    if (number === head.block.number) return head
    const kept = this.history.get(number)
    if (kept !== undefined) return kept.reader
    if (number > head.block.number) throw new RpcError(RPC_REFUSED, `block ${number} is not built yet (the head is ${head.block.number})`)
    throw new RpcError(RPC_REFUSED, `block ${number} is no longer kept: the last ${this.limits.historyBlocks} blocks are`)
  }

  // ---- JSON-RPC ----

  private rpcMethods(): Map<string, RpcMethod> {
    const m = new Map<string, RpcMethod>()
    m.set('eth_sendBundle', (params, caller: RpcCaller) => {
      const request = parseSendBundleRequest(params[0])
      return rpcCall(() => this.sendBundle(request, caller.signer))
    })
    m.set('eth_cancelBundle', (params, caller: RpcCaller) => {
      const p = params[0] as { replacementUuid?: unknown } | undefined
      if (p === null || typeof p !== 'object' || typeof p.replacementUuid !== 'string') {
        throw new RpcError(RPC_INVALID_PARAMS, 'expected [{ replacementUuid }]')
      }
      this.cancelBundle(p.replacementUuid, caller.signer)
      return null
    })
    m.set('eth_sendRawTransaction', async (params) => {
      if (typeof params[0] !== 'string') throw new RpcError(RPC_INVALID_PARAMS, 'expected [rawTransactionHex]')
      const raw = params[0]
      return rpcCallAsync(() => this.sendRawTransaction(raw))
    })
    m.set('eth_blockNumber', () => toHex(this.source.latest().block.number))
    m.set('eth_chainId', () => toHex(this.source.chainId))
    m.set('net_version', () => this.source.chainId.toString())
    m.set('web3_clientVersion', () => 'swap-backrun-router/local-builder')
    m.set('eth_getTransactionReceipt', (params) => {
      const hash = parseHashParam(params[0], 'transaction hash')
      const receipt = this.receipts.get(hash)
      return receipt === undefined ? null : receiptJson(receipt)
    })
    m.set('eth_getBlockByNumber', (params) => {
      let reader: StateReader
      try {
        reader = this.readerAt(params[0])
      } catch (error) {
        if (error instanceof RpcError && error.code === RPC_REFUSED) return null
        throw error
      }
      return blockJson(reader.block, this.history.get(reader.block.number)?.transactions ?? [])
    })
    m.set('devnet_bundleStatus', (params) => {
      const record = this.bundleStatus(parseHashParam(params[0], 'bundle hash'))
      return record === undefined ? null : bundleRecordJson(record)
    })
    m.set('eth_getBalance', async (params) => toHex((await this.readerAt(params[1]).getAccount(parseAddressParam(params[0])))?.balance ?? 0n))
    m.set('eth_getTransactionCount', async (params) => toHex((await this.readerAt(params[1]).getAccount(parseAddressParam(params[0])))?.nonce ?? 0n))
    m.set('eth_getCode', async (params) => bytesHex(await this.readerAt(params[1]).getCode(parseAddressParam(params[0]))))
    m.set('eth_getStorageAt', async (params) => {
      const value = await this.readerAt(params[2]).getStorage(parseAddressParam(params[0]), parseQuantityParam(params[1], 'slot'))
      return `0x${value.toString(16).padStart(64, '0')}`
    })
    m.set('eth_call', async (params) => {
      const call = parseCallParam(params[0])
      const result = await this.simulator.call(this.simulator.openState(this.readerAt(params[1])), call)
      const data = bytesHex(result.returnData)
      if (result.status === 'reverted') throw new RpcError(RPC_EXECUTION_REVERTED, `execution reverted${result.revertReason === undefined ? '' : `: ${result.revertReason}`}`, data)
      if (result.status === 'halted') throw new RpcError(RPC_REFUSED, `execution halted: ${result.error ?? 'unknown'}`)
      return data
    })
    return m
  }
}

// ---- parameter parsing (JSON-RPC input -> typed requests) ----

/**
 * eth_sendBundle's parameter object: `{ txs, blockNumber, minTimestamp?, maxTimestamp?,
 * revertingTxHashes?, replacementUuid? }`. A txs entry is a raw signed transaction (hex), or a
 * 32-byte hash (bare, or `{ hash }`) of a transaction sent before.
 * @throws RpcError -32602 naming the field
 */
export function parseSendBundleRequest(value: unknown): SendBundleRequest {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected [{ txs, blockNumber, ... }]')
  const p = value as Record<string, unknown>
  if (!Array.isArray(p.txs)) throw invalid('txs must be an array of raw signed transactions (hex)')
  const txs: BundleEntry[] = p.txs.map((entry: unknown, i): BundleEntry => {
    if (typeof entry === 'string') {
      if (HASH.test(entry)) return { hash: entry.toLowerCase() as Hex }
      if (!HEX.test(entry) || entry.length <= 2) throw invalid(`txs[${i}] is not a raw transaction in 0x-hex`)
      return { raw: entry.toLowerCase() as Hex }
    }
    if (entry !== null && typeof entry === 'object' && typeof (entry as { hash?: unknown }).hash === 'string') {
      const hash = (entry as { hash: string }).hash
      if (!HASH.test(hash)) throw invalid(`txs[${i}].hash is not a 32-byte 0x-hex hash`)
      return { hash: hash.toLowerCase() as Hex }
    }
    throw invalid(`txs[${i}] must be a raw transaction (0x-hex) or { "hash": "0x..." }`)
  })
  if (p.blockNumber === undefined) throw invalid('blockNumber is required (hex)')
  const request: SendBundleRequest = { txs, blockNumber: parseQuantityParam(p.blockNumber, 'blockNumber') }
  if (p.minTimestamp !== undefined && p.minTimestamp !== null) request.minTimestamp = parseQuantityParam(p.minTimestamp, 'minTimestamp')
  if (p.maxTimestamp !== undefined && p.maxTimestamp !== null) request.maxTimestamp = parseQuantityParam(p.maxTimestamp, 'maxTimestamp')
  if (p.revertingTxHashes !== undefined && p.revertingTxHashes !== null) {
    if (!Array.isArray(p.revertingTxHashes)) throw invalid('revertingTxHashes must be an array of 32-byte hashes')
    request.revertingTxHashes = p.revertingTxHashes.map((h: unknown, i) => {
      if (typeof h !== 'string' || !HASH.test(h)) throw invalid(`revertingTxHashes[${i}] is not a 32-byte 0x-hex hash`)
      return h.toLowerCase() as Hex
    })
  }
  if (p.replacementUuid !== undefined && p.replacementUuid !== null) {
    if (typeof p.replacementUuid !== 'string' || p.replacementUuid.length === 0 || p.replacementUuid.length > 128) {
      throw invalid('replacementUuid must be a string of 1-128 characters')
    }
    request.replacementUuid = p.replacementUuid
  }
  return request
}

function parseQuantityParam(value: unknown, field: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  if (typeof value === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(value)) return BigInt(value)
  if (typeof value === 'string' && /^[0-9]{1,78}$/.test(value)) return BigInt(value)
  throw invalid(`${field} must be a hex quantity (0x...)`)
}

function parseHashParam(value: unknown, field: string): Hex {
  if (typeof value !== 'string' || !HASH.test(value)) throw invalid(`${field} must be a 32-byte 0x-hex hash`)
  return value.toLowerCase() as Hex
}

function parseAddressParam(value: unknown): Address {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw invalid('address must be 20 bytes of 0x-hex')
  return value.toLowerCase() as Address
}

function parseCallParam(value: unknown): { from: Address; to?: Address; data?: Hex; value?: bigint; gasLimit?: bigint } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('expected [{ to, data, ... }, block?]')
  const p = value as Record<string, unknown>
  const data = p.input ?? p.data
  if (data !== undefined && (typeof data !== 'string' || !HEX.test(data))) throw invalid('data must be 0x-hex')
  return {
    from: p.from === undefined || p.from === null ? ZERO_ADDRESS : parseAddressParam(p.from),
    ...(p.to === undefined || p.to === null ? {} : { to: parseAddressParam(p.to) }),
    ...(data === undefined ? {} : { data: data as Hex }),
    ...(p.value === undefined || p.value === null ? {} : { value: parseQuantityParam(p.value, 'value') }),
    ...(p.gas === undefined || p.gas === null ? {} : { gasLimit: parseQuantityParam(p.gas, 'gas') }),
  }
}

function invalid(message: string): RpcError {
  return new RpcError(RPC_INVALID_PARAMS, message)
}

function toRpcError(error: unknown): unknown {
  if (!(error instanceof LocalBuilderError)) return error
  const code = error.kind === 'invalid' ? RPC_INVALID_PARAMS : error.kind === 'limit' ? RPC_LIMIT_EXCEEDED : RPC_REFUSED
  return new RpcError(code, error.message)
}

function rpcCall<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw toRpcError(error)
  }
}

async function rpcCallAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    throw toRpcError(error)
  }
}

// ---- JSON output (quantities as hex, as nodes answer) ----

function receiptJson(r: BuilderReceipt): Record<string, unknown> {
  return {
    transactionHash: r.transactionHash,
    transactionIndex: toHex(BigInt(r.transactionIndex)),
    blockHash: r.blockHash,
    blockNumber: toHex(r.blockNumber),
    from: r.from,
    to: r.to,
    status: r.status === 1 ? '0x1' : '0x0',
    gasUsed: toHex(r.gasUsed),
    cumulativeGasUsed: toHex(r.cumulativeGasUsed),
    effectiveGasPrice: toHex(r.effectiveGasPrice),
    type: toHex(BigInt(r.type)),
    contractAddress: r.contractAddress,
    logs: r.logs.map((log, i) => ({
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: toHex(r.blockNumber),
      blockHash: r.blockHash,
      transactionHash: r.transactionHash,
      transactionIndex: toHex(BigInt(r.transactionIndex)),
      // index within the receipt (the block-wide index is not tracked)
      logIndex: toHex(BigInt(i)),
      removed: false,
    })),
    ...(r.bundleHash === undefined ? {} : { bundleHash: r.bundleHash }),
  }
}

function blockJson(block: BlockInfo, transactions: readonly Hex[]): Record<string, unknown> {
  const parentHash = (block as Partial<DevnetBlockInfo>).parentHash ?? `0x${'00'.repeat(32)}`
  return {
    number: toHex(block.number),
    hash: block.hash,
    parentHash,
    timestamp: toHex(block.timestamp),
    gasLimit: toHex(block.gasLimit),
    gasUsed: toHex(block.gasUsed),
    ...(block.baseFeePerGas === undefined ? {} : { baseFeePerGas: toHex(block.baseFeePerGas) }),
    miner: block.coinbase,
    mixHash: block.prevRandao,
    difficulty: toHex(block.difficulty),
    transactions: [...transactions],
  }
}

function bundleRecordJson(r: BundleRecord): Record<string, unknown> {
  return { ...r, blockNumber: toHex(r.blockNumber), txHashes: [...r.txHashes] }
}

function bytesHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
