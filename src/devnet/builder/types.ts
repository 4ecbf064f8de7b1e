/**
 * The local builder's public types, defaults and its error, shared by its parts (mempool, bundle
 * simulation and ordering, block sealing, bundle records, JSON-RPC). `src/devnet/local-builder.ts`
 * re-exports everything public from here.
 */
import type { Address, Hex } from '../../chain/types.ts'
import type { DevnetBlockInfo } from '../../chain/memory/layered-state-reader.ts'
import type { DevnetStateSource } from '../../chain/memory/devnet-source.ts'
import type { SimulationLog, Simulator } from '../../evm/simulator.ts'
import type { DecodedTransaction } from '../../tx/index.ts'
import { BaseError } from '../../primitives/base-error.ts'

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
  maxReceipts: 20_000,
  maxTrackedBundles: 10_000,
  bundleStatsBlocks: 256,
  historyBlocks: 128,
  maxBodyBytes: 1024 * 1024,
  maxBatchSize: 100,
  requestTimeoutMs: 10_000,
  sliceMs: 10,
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
  /** receipts kept (oldest forgotten first), and never longer than their block is kept (historyBlocks). Default 20 000 (~1.5 KB each with their logs: ~30 MB; the dispatcher reads a receipt within blocks of its inclusion). */
  maxReceipts?: number
  /**
   * (bundle hash, block) records kept for flashbots_getBundleStatsV2 / devnet_bundleStatus: the
   * oldest settled record is forgotten first (pending ones only when nothing else is left).
   * Default 10 000.
   */
  maxTrackedBundles?: number
  /** settled records of a block more than this many blocks behind the head are forgotten. Default 256. */
  bundleStatsBlocks?: number
  /** recent blocks whose header and state eth_getBlockByNumber / eth_getBalance / eth_call can read. Default 128. */
  historyBlocks?: number
  /** HTTP request body cap. Default 1 MiB. */
  maxBodyBytes?: number
  /** JSON-RPC batch cap. Default 100. */
  maxBatchSize?: number
  /** a whole HTTP request must arrive within this. Default 10 000 ms. */
  requestTimeoutMs?: number
  /**
   * the longest synchronous stretch of block building, ms: past it the build gives the event loop
   * a turn before its next transaction, so requests to the process that hosts the builder (the
   * service itself on the embedded devnet) are not held for a whole block. Default 10.
   */
  sliceMs?: number
  /** failures with no caller: a timer-built block that failed, a bundle whose simulation threw */
  onError?: (error: unknown) => void
  /** told of every block built (after it is the head) */
  onBlock?: (block: BuiltBlock) => void
  /** clock of the records' times (ms since the epoch). Default Date.now. */
  now?: () => number
}

export type LocalBuilderLimits = Required<Omit<LocalBuilderOptions, 'source' | 'simulator' | 'coinbase' | 'onError' | 'onBlock' | 'now'>>

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

/** devnet_bundleStatus' summary of a bundle over every block it was sent for. */
export type BundleStatus = 'pending' | 'included' | 'dropped'

/**
 * What became of one bundle for one block it targeted:
 * - `pending`: its block is not built yet
 * - `included`: it landed in that block
 * - `outbid`: valid at the top of the block, but a more paying bundle took one of its transactions
 *   or the state it needed (it failed after the bundles merged before it), or the block was full
 * - `invalid`: it could not land even at the top of the block (nonce, funds, fee below the base
 *   fee, a revert not allowed by revertingTxHashes, timestamps), or it was replaced or cancelled
 * - `expired`: its block was built before it could be considered
 */
export type BundleBlockStatus = 'pending' | 'included' | 'outbid' | 'invalid' | 'expired'

/** devnet_bundleStatus' answer: the bundle's latest or best outcome over the blocks it was sent for. */
export interface BundleRecord {
  bundleHash: Hex
  txHashes: Hex[]
  /** the block it targets (pending, dropped) or landed in (included) */
  blockNumber: bigint
  status: BundleStatus
  /** the per-block status this summary comes from */
  outcome: BundleBlockStatus
  /** why it was dropped (or why an earlier copy was, while a later one waits) */
  reason?: string
  /** the X-Flashbots-Signature signer, lowercase */
  signer?: Address
  replacementUuid?: string
}

/** One (bundle hash, block) record: what flashbots_getBundleStatsV2 answers. */
export interface BundleStatsRecord {
  bundleHash: Hex
  /** the block targeted */
  blockNumber: bigint
  txHashes: Hex[]
  status: BundleBlockStatus
  /** why it did not land (outbid, invalid, expired) */
  reason?: string
  /** the block it landed in (included) */
  includedBlock?: bigint
  signer?: Address
  replacementUuid?: string
  /** ms since the epoch */
  receivedAt: number
  /** when it was simulated at the top of its block */
  simulatedAt?: number
  /** when the builder merged it into (or rejected it from) its block */
  consideredAt?: number
  /** when the block that included it was sealed */
  sealedAt?: number
  /** what it paid the coinbase at the top of the block (wei), and the gas it used there */
  payment?: bigint
  gasUsed?: bigint
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
  /** every bundle considered for this block, with its status for it (included, outbid, invalid, expired) */
  outcomes: Array<{ bundleHash: Hex; status: BundleBlockStatus; reason?: string }>
}

/** A request the builder refuses; `kind` says how (invalid input, refused, a bound reached). */
export class LocalBuilderError extends BaseError<{ kind: 'invalid' | 'refused' | 'limit' }> {
  override readonly name = 'LocalBuilderError'
  constructor(
    readonly kind: 'invalid' | 'refused' | 'limit',
    message: string,
  ) {
    super(message, { details: { kind } })
  }
}

/** A bundle waiting for its block. */
export interface PendingBundle {
  bundleHash: Hex
  txs: DecodedTransaction[]
  blockNumber: bigint
  minTimestamp?: bigint
  maxTimestamp?: bigint
  reverting: ReadonlySet<Hex>
  replacementUuid?: string
  signer?: Address
  /** arrival order (ties of the payment ordering) */
  seq: number
}

/** A public transaction waiting in the mempool. */
export interface PendingTx {
  tx: DecodedTransaction
  /** the block being built when it arrived */
  firstBlock: bigint
  /** arrival order (ties of the tip ordering) */
  seq: number
}
