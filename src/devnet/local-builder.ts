/**
 * The embedded devnet's block builder, reachable as a relay: it takes Flashbots-style bundles
 * (`eth_sendBundle`) and public transactions (`eth_sendRawTransaction`) over a real HTTP
 * JSON-RPC endpoint, builds the next devnet block on a timer (or on `mineNow()`), and commits it
 * to the DevnetStateSource, whose head listeners (the service) then see the new block. Receipts
 * (`eth_getTransactionReceipt`) tell what landed, as a node does in fork mode.
 *
 * A block is built in the simulator on top of the head, in the head's next-block context (the
 * one the service simulates in) with the builder's coinbase, as mev-geth / rbuilder build one
 * (builder/bundle-merge.ts):
 * 1. ALL bundles targeting this block, each simulated on the block's starting state: one that
 *    fails there (nonce, funds, fee below the base fee, a revert or halt not allowed by
 *    revertingTxHashes, a transaction already on chain, the block's timestamp outside
 *    [minTimestamp, maxTimestamp]) is `invalid`. The others are ordered by what they pay the
 *    coinbase (balance delta: priority fees plus direct transfers) per gas used, ties in arrival
 *    order, and merged greedily in that order on the block so far, each atomically: one sharing a
 *    transaction with a bundle already merged, or failing on the block so far (its state was
 *    taken), is `outbid` and left out whole. A bundle lands in its blockNumber or never: one for a
 *    later block waits, one whose block passed is `expired`.
 * 2. then the public transactions, highest effective tip first, each sender's in nonce order
 *    (builder/public-txs.ts). These land even when they revert (they pay for their gas); one that
 *    cannot be included yet (nonce gap, funds, fee, gas left) waits for a later block, up to
 *    `pendingTxTtlBlocks` blocks; one whose nonce is used is dropped.
 *
 * What became of each bundle for each block it was sent for is recorded per (bundle hash, block)
 * (builder/bundle-stats.ts) and answered by `flashbots_getBundleStatsV2`; `devnet_bundleStatus`
 * answers a summary per bundle hash.
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
 * bodies, batches and request time are all bounded; receipts, (bundle, block) records and block
 * history are kept for the last `maxReceipts`, `maxTrackedBundles` (and `bundleStatsBlocks`
 * blocks) and `historyBlocks` entries. The simulations' states live only while a block is built.
 *
 * A block is built in slices of the event loop (`sliceMs`, builder/time-slices.ts): the builder
 * shares its thread with the service on the embedded devnet, and a block of hundreds of bundles
 * built in one go held every request of that thread for its whole duration. Between slices
 * requests are served as at any other time: they see the head before the block until it is
 * committed (in one synchronous turn with its receipts and records), and a bundle for the block
 * being built that arrives meanwhile is `expired`, as before (it was not among the candidates).
 */
import { toHex } from '../chain/quantity.ts'
import type { Address, Hex, StateReader } from '../chain/types.ts'
import type { DevnetBlockInfo } from '../chain/memory/layered-state-reader.ts'
import type { DevnetStateSource } from '../chain/memory/devnet-source.ts'
import { nextBlockContext, type ExecutionBlock } from '../evm/block-context.ts'
import type { Simulator } from '../evm/simulator.ts'
import { bundleHash as computeBundleHash, decodeSignedTransaction, isTxDecodeError, type DecodedTransaction } from '../tx/index.ts'
import { mergeBundles, type Executed, type MergeContext } from './builder/bundle-merge.ts'
import { BundleStatsStore } from './builder/bundle-stats.ts'
import { includePublicTxs } from './builder/public-txs.ts'
import { TimeSlices } from './builder/time-slices.ts'
import { packReceipt, unpackReceipt, type KeptReceipt } from './builder/kept-receipts.ts'
import {
  blockJson,
  bundleRecordJson,
  bundleStatsJson,
  bytesHex,
  min,
  parseAddressParam,
  parseBundleStatsParams,
  parseCallParam,
  parseHashParam,
  parseQuantityParam,
  parseSendBundleRequest,
  receiptJson,
  rpcCall,
  rpcCallAsync,
} from './builder/rpc-codec.ts'
import {
  DEVNET_BUILDER_COINBASE,
  LOCAL_BUILDER_DEFAULTS,
  LocalBuilderError,
  type BuilderReceipt,
  type BuiltBlock,
  type BundleBlockStatus,
  type BundleEntry,
  type BundleRecord,
  type BundleStatsRecord,
  type LocalBuilderLimits,
  type LocalBuilderOptions,
  type PendingBundle,
  type PendingTx,
  type SendBundleRequest,
} from './builder/types.ts'
import { JsonRpcCode } from '../transport/json-rpc-codes.ts'
import { JsonRpcHttpServer, RpcError, type RpcCaller, type RpcMethod } from './json-rpc-http.ts'

export { DEVNET_BUILDER_COINBASE, LOCAL_BUILDER_DEFAULTS, LocalBuilderError, parseSendBundleRequest }
export type {
  BuilderReceipt,
  BuiltBlock,
  BundleBlockStatus,
  BundleEntry,
  BundleRecord,
  BundleStatsRecord,
  BundleStatus,
  LocalBuilderOptions,
  SendBundleRequest,
} from './builder/types.ts'

/** What a local builder did since it was made (for metrics). */
export interface LocalBuilderTotals {
  blocksBuilt: number
  /** what became of bundles, per (bundle, block): `invalid` includes replaced and cancelled ones */
  bundles: Record<Exclude<BundleBlockStatus, 'pending'>, number>
}

export class LocalBuilder {
  readonly coinbase: Address
  private readonly source: DevnetStateSource
  private readonly simulator: Simulator
  private readonly limits: LocalBuilderLimits
  private readonly onError: (error: unknown) => void
  private readonly onBlock: ((block: BuiltBlock) => void) | undefined
  private readonly now: () => number

  /** waiting bundles, arrival order */
  private bundles: PendingBundle[] = []
  /** public transactions, arrival order */
  private readonly mempool = new Map<Hex, PendingTx>()
  /** the history window's receipts, their logs packed (builder/kept-receipts.ts): the bulk of what the builder keeps */
  private readonly receipts = new Map<Hex, KeptReceipt>()
  private readonly stats: BundleStatsStore
  /** the build's slices of the event loop (builder/time-slices.ts) */
  private readonly slices: TimeSlices
  private readonly pause = (): Promise<void> => this.slices.pause()
  private readonly history = new Map<bigint, { reader: StateReader; transactions: Hex[] }>()
  private seq = 0
  private readonly counts: LocalBuilderTotals = { blocksBuilt: 0, bundles: { included: 0, outbid: 0, invalid: 0, expired: 0 } }

  private server: JsonRpcHttpServer | undefined
  private endpoint: string | undefined
  private timer: NodeJS.Timeout | undefined
  private building: Promise<unknown> = Promise.resolve()
  /**
   * The bundles the block being built considers. Built in slices, a block lets requests in while
   * it is built: one of these cancelled or replaced meanwhile leaves the pending set but is
   * settled by the build, with what became of it in the block (a cancellation that comes while
   * its block is built is too late, as Flashbots' is best effort), and is counted once.
   */
  private inBuild: ReadonlySet<PendingBundle> = new Set()
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
    this.now = options.now ?? Date.now
    this.stats = new BundleStatsStore(this.limits.maxTrackedBundles, this.limits.bundleStatsBlocks)
    this.slices = new TimeSlices(this.limits.sliceMs)
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
   * Queues a bundle for its blockNumber. The same bundle sent again for the same block (and
   * signer) is the same bundle; sent for another block, it is one more bundle, with its own record.
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
      if (!this.inBuild.has(old)) this.settle(old, 'invalid', `replaced by bundle ${hash} (same replacementUuid)`)
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
      seq: this.seq++,
    }
    this.bundles.push(bundle)
    this.stats.received({
      bundleHash: hash,
      blockNumber: request.blockNumber,
      txHashes: txs.map((t) => t.hash),
      status: 'pending',
      receivedAt: this.now(),
      ...(signerKey === undefined ? {} : { signer: signerKey }),
      ...(request.replacementUuid === undefined ? {} : { replacementUuid: request.replacementUuid }),
    })
    return { bundleHash: hash }
  }

  /** Removes the waiting bundles with this replacementUuid (and signer). Returns how many. */
  cancelBundle(replacementUuid: string, signer?: Address): number {
    const signerKey = signer?.toLowerCase() as Address | undefined
    const cancelled = this.bundles.filter((b) => b.replacementUuid === replacementUuid && b.signer === signerKey)
    if (cancelled.length === 0) return 0
    this.bundles = this.bundles.filter((b) => !cancelled.includes(b))
    // one in the block being built is settled by that build (see inBuild)
    for (const b of cancelled) if (!this.inBuild.has(b)) this.settle(b, 'invalid', 'cancelled (eth_cancelBundle)')
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
    this.mempool.set(tx.hash, { tx, firstBlock: this.source.latest().block.number + 1n, seq: this.seq++ })
    return tx.hash
  }

  /** The receipt of a transaction this builder included (while kept), else undefined. */
  receipt(hash: Hex): BuilderReceipt | undefined {
    const r = this.receipts.get(hash.toLowerCase() as Hex)
    return r === undefined ? undefined : unpackReceipt(r)
  }

  /** What became of a bundle over the blocks it was sent for (while its records are kept), else undefined. */
  bundleStatus(hash: Hex): BundleRecord | undefined {
    return this.stats.summary(hash.toLowerCase() as Hex)
  }

  /** What became of a bundle for one block it was sent for (while kept), else undefined. */
  bundleStats(hash: Hex, blockNumber: bigint): BundleStatsRecord | undefined {
    const r = this.stats.get(hash.toLowerCase() as Hex, blockNumber)
    return r === undefined ? undefined : { ...r, txHashes: [...r.txHashes] }
  }

  /** Bundles waiting and public transactions waiting. */
  get pending(): { bundles: number; transactions: number } {
    return { bundles: this.bundles.length, transactions: this.mempool.size }
  }

  /** Blocks built and bundle outcomes since this builder was made (a copy). */
  get totals(): LocalBuilderTotals {
    return { blocksBuilt: this.counts.blocksBuilt, bundles: { ...this.counts.bundles } }
  }

  /** (bundle, block) records held (bounded by maxTrackedBundles). */
  get trackedBundles(): number {
    return this.stats.size
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
    const candidates = this.bundles.filter((b) => b.blockNumber === context.number)
    this.inBuild = new Set(candidates)
    try {
      return await this.buildOn(head, context, candidates)
    } finally {
      this.inBuild = new Set()
    }
  }

  private async buildOn(head: StateReader, context: ExecutionBlock, candidates: PendingBundle[]): Promise<BuiltBlock> {
    const top = this.simulator.openState(head, context)

    // 1. bundles: simulate at the top of the block, order by payment per gas, merge greedily
    // the block is built in slices of the event loop: the service's requests interleave with it
    this.slices.restart()
    const pause = this.pause
    const ctx: MergeContext = { simulator: this.simulator, context, coinbase: this.coinbase, receipts: this.receipts, onError: this.onError, now: this.now, pause }
    const merged = await mergeBundles(ctx, candidates, top)
    const inBlock = new Set<Hex>(merged.executed.map((e) => e.tx.hash))

    // 2. public transactions, highest tip first
    const pub = await includePublicTxs({
      simulator: this.simulator,
      context,
      state: merged.state,
      gasUsed: merged.gasUsed,
      mempool: this.mempool,
      isIncluded: (hash) => inBlock.has(hash) || this.receipts.has(hash),
      ttlBlocks: this.limits.pendingTxTtlBlocks,
      onError: this.onError,
      pause,
    })
    const executed: Executed[] = [...merged.executed, ...pub.executed]
    const gasUsed = pub.gasUsed

    const reader = this.source.commitBlock(pub.state, { ...context, gasUsed, transactionHashes: executed.map((e) => e.tx.hash) })
    // everything below runs in the same synchronous turn as the commit: a request that sees the
    // new head also sees its receipts and the bundles' records
    const block = reader.block
    this.counts.blocksBuilt++
    const sealedAt = this.now()
    const receipts = this.recordReceipts(block, context, executed)
    for (const sim of merged.simulations) {
      if (sim.simulatedAt !== undefined) {
        this.stats.annotate(sim.bundle.bundleHash, sim.bundle.blockNumber, { simulatedAt: sim.simulatedAt, payment: sim.payment, gasUsed: sim.gasUsed })
      }
    }
    const outcomes: BuiltBlock['outcomes'] = []
    const included: Hex[] = []
    for (const o of merged.outcomes) {
      if (o.status === 'included') {
        included.push(o.bundle.bundleHash)
        this.settle(o.bundle, 'included', undefined, { consideredAt: o.consideredAt, sealedAt, includedBlock: block.number })
        outcomes.push({ bundleHash: o.bundle.bundleHash, status: 'included' })
      } else {
        this.settle(o.bundle, o.status, o.reason, { consideredAt: o.consideredAt })
        outcomes.push({ bundleHash: o.bundle.bundleHash, status: o.status, reason: o.reason })
      }
    }
    // bundles for this block (or an earlier one) that were not considered: they arrived while it
    // was being built
    const considered = new Set<PendingBundle>(candidates)
    for (const b of this.bundles) {
      if (b.blockNumber > block.number || considered.has(b)) continue
      const reason = `its block ${b.blockNumber} was built before it could be considered`
      this.settle(b, 'expired', reason)
      outcomes.push({ bundleHash: b.bundleHash, status: 'expired', reason })
      considered.add(b)
    }
    this.bundles = this.bundles.filter((b) => !considered.has(b))
    for (const hash of pub.leaving) this.mempool.delete(hash)
    this.stats.prune(block.number)
    this.remember(reader, executed.map((e) => e.tx.hash))
    const built: BuiltBlock = {
      block,
      receipts,
      bundles: included,
      dropped: outcomes.filter((o) => o.status !== 'included').map((o) => ({ bundleHash: o.bundleHash, reason: o.reason ?? '' })),
      outcomes,
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
      this.receipts.set(tx.hash, packReceipt(receipt))
      if (this.receipts.size > this.limits.maxReceipts) this.receipts.delete(this.receipts.keys().next().value as Hex)
    }
    return out
  }

  private settle(bundle: PendingBundle, status: Exclude<BundleBlockStatus, 'pending'>, reason: string | undefined, fields: Partial<BundleStatsRecord> = {}): void {
    this.counts.bundles[status]++
    this.stats.settle(bundle.bundleHash, bundle.blockNumber, status, { consideredAt: this.now(), ...fields, ...(reason === undefined ? {} : { reason }) })
  }

  /**
   * Keeps the block's reader and transaction hashes for historyBlocks blocks. A block's receipts
   * leave with it: what the builder retains grows with the window, not with the chain, so a
   * long-running service reaches its steady memory once historyBlocks blocks have passed.
   */
  private remember(reader: StateReader, transactions: Hex[]): void {
    this.history.set(reader.block.number, { reader, transactions })
    while (this.history.size > this.limits.historyBlocks) {
      const oldest = this.history.keys().next().value as bigint
      for (const hash of this.history.get(oldest)?.transactions ?? []) this.receipts.delete(hash)
      this.history.delete(oldest)
    }
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
    if (number > head.block.number) throw new RpcError(JsonRpcCode.invalidInput, `block ${number} is not built yet (the head is ${head.block.number})`)
    throw new RpcError(JsonRpcCode.invalidInput, `block ${number} is no longer kept: the last ${this.limits.historyBlocks} blocks are`)
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
        throw new RpcError(JsonRpcCode.invalidParams, 'expected [{ replacementUuid }]')
      }
      this.cancelBundle(p.replacementUuid, caller.signer)
      return null
    })
    m.set('eth_sendRawTransaction', async (params) => {
      if (typeof params[0] !== 'string') throw new RpcError(JsonRpcCode.invalidParams, 'expected [rawTransactionHex]')
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
      return receipt === undefined ? null : receiptJson(unpackReceipt(receipt))
    })
    m.set('eth_getBlockByNumber', (params) => {
      let reader: StateReader
      try {
        reader = this.readerAt(params[0])
      } catch (error) {
        if (error instanceof RpcError && error.code === JsonRpcCode.invalidInput) return null
        throw error
      }
      return blockJson(reader.block, this.history.get(reader.block.number)?.transactions ?? [])
    })
    m.set('flashbots_getBundleStatsV2', (params) => {
      const { bundleHash, blockNumber } = parseBundleStatsParams(params[0])
      return bundleStatsJson(this.stats.get(bundleHash, blockNumber), this.coinbase)
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
      if (result.status === 'reverted') throw new RpcError(JsonRpcCode.executionReverted, `execution reverted${result.revertReason === undefined ? '' : `: ${result.revertReason}`}`, data)
      if (result.status === 'halted') throw new RpcError(JsonRpcCode.invalidInput, `execution halted: ${result.error ?? 'unknown'}`)
      return data
    })
    return m
  }
}

