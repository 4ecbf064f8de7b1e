/**
 * `ChainStateSource` over an upstream JSON-RPC node: pinned to one block, follows new heads.
 *
 * Heads are polled as the 'latest' header (eth_getBlockByNumber: number, hash and parent hash in
 * one call). A polled header that is not the adopted head is checked against the recorded chain
 * (ancestry.ts): a header on top of the adopted one is adopted; an older block of the same chain
 * (a lagging node behind a load balancer) is ignored; a header whose chain does not hold the
 * adopted blocks (replaced at the same height, a parent-hash mismatch, a shorter chain) is a
 * reorg: what was cached for the replaced numbers is dropped (state entries, code locations,
 * recorded hashes, shared in-flight reads), onReorg listeners are told, then the new head is
 * adopted like any other. When the poll sees several new blocks at once, only the newest is
 * adopted (the ones in between are read in one batch to check the ancestry).
 *
 * Adopting a head: the accounts and slots callers read lately are re-fetched at the new block in
 * one batch (so hot pools stay warm), and only then is a new reader adopted and listeners told.
 * Readers already handed out keep reading their own block. Code is cached by hash across blocks
 * and not re-fetched for contracts.
 *
 * BLOCKHASH: a reader answers the hashes of its own block and the 256 before it from the record
 * of block hashes (block-hashes.ts), which the adopted headers fill, reading a missing one with
 * eth_getBlockByNumber.
 */
import { UpstreamError, type BlockInfo, type ChainReorg, type ChainStateSource } from '../types.ts'
import { ChainMovedError, findCommonAncestor } from './ancestry.ts'
import { BlockHashRecord, type BlockHashRecordOptions, type BlockHashRecordStats } from './block-hashes.ts'
import { ForkStateReader } from './fork-state-reader.ts'
import { HeadFollower } from './head-follower.ts'
import { RecentReads, type RecentReadsOptions } from './recent-reads.ts'
import { decodeBlock, decodeQuantity, malformed } from './rpc-decode.ts'
import { nonNegativeInt } from '../../primitives/numbers.ts'
import { StateCache, type StateCacheOptions, type StateCacheStats } from './state-cache.ts'
import { blockTag, StateLoader, type StateLoaderStats } from './state-loader.ts'
import { unchangedKeys } from './unchanged-keys.ts'
import { UpstreamClient, type UpstreamClientOptions, type UpstreamClientStats } from './upstream-client.ts'

export interface ForkStateSourceOptions extends UpstreamClientOptions {
  /** Block to pin to first. Default 'latest'. */
  blockNumber?: bigint | 'latest'
  /** Poll for new heads. Default: true when `blockNumber` is 'latest' or absent, false when pinned to a number. */
  followHeads?: boolean
  /** Head poll interval, ms. Default 1000. */
  pollIntervalMs?: number
  /**
   * Deepest reorg looked through, and widest run of blocks read at once to check a new head's
   * ancestry, in blocks. Default 64. Past it the recorded hashes are forgotten and, when the
   * adopted blocks were replaced, every cached state entry too.
   */
  maxReorgDepth?: number
  cache?: StateCacheOptions
  /** The record of block hashes (BLOCKHASH, reorg detection). */
  blockHashes?: BlockHashRecordOptions
  /** What is re-fetched on a new head. Defaults: the last 2048 keys read, read within 16 blocks. */
  warm?: RecentReadsOptions
  /** Failures that have no caller to reject: polling, warm-up, header fetch on a polled head, listeners. */
  onError?: (error: unknown) => void
}

export const FORK_SOURCE_DEFAULTS = { pollIntervalMs: 1_000, maxReorgDepth: 64 } as const

/** Counters for tests and /metrics. All plain numbers (JSON-serializable). */
export interface ForkStats extends Omit<UpstreamClientStats, 'errors'>, StateLoaderStats, StateCacheStats, BlockHashRecordStats {
  /** calls that finally failed with an UpstreamError */
  upstreamErrors: number
  /** heads adopted after the first one */
  headsAdopted: number
  /** keys re-fetched when adopting heads */
  warmedKeys: number
  warmupErrors: number
  pollErrors: number
  /** reorgs adopted (blocks the source had adopted were replaced) */
  reorgs: number
  /** blocks dropped by reorgs */
  reorgedBlocks: number
  /** cached state entries dropped by reorgs */
  reorgDroppedEntries: number
  /** cached state entries dropped because their block fell more than the cache's maxBlocks behind the head */
  oldBlockDroppedEntries: number
}

export class ForkStateSource implements ChainStateSource {
  readonly kind = 'fork' as const
  private current: ForkStateReader
  private readonly listeners = new Set<(block: BlockInfo) => void>()
  private readonly reorgListeners = new Set<(reorg: ChainReorg) => void>()
  private readonly follower: HeadFollower<BlockInfo> | undefined
  private adoptions: Promise<unknown> = Promise.resolve()
  private closed = false
  private readonly counters = { headsAdopted: 0, warmedKeys: 0, warmupErrors: 0, pollErrors: 0, reorgs: 0, reorgedBlocks: 0, reorgDroppedEntries: 0, oldBlockDroppedEntries: 0 }

  private constructor(
    readonly chainId: bigint,
    block: BlockInfo,
    private readonly client: UpstreamClient,
    private readonly cache: StateCache,
    private readonly loader: StateLoader,
    private readonly recent: RecentReads,
    private readonly hashes: BlockHashRecord,
    private readonly maxReorgDepth: number,
    private readonly onError: (error: unknown) => void,
    follow: boolean,
    pollIntervalMs: number,
  ) {
    hashes.record(block)
    this.current = new ForkStateReader(block, loader, recent, hashes)
    this.follower = follow
      ? new HeadFollower<BlockInfo>({
          intervalMs: pollIntervalMs,
          // no retries: the next poll is the retry
          poll: async () => decodeBlock(await this.client.call('eth_getBlockByNumber', ['latest', false], { maxRetries: 0 }), 'eth_getBlockByNumber', 'latest'),
          isNew: (head) => head.hash !== this.current.block.hash,
          onNewHead: async (head) => {
            await this.enqueueAdoption(head, false)
          },
          onError: (error) => {
            this.counters.pollErrors++
            this.onError(error)
          },
        })
      : undefined
  }

  /** Connects, reads the chain id and the pinned block's header (one batch), and starts following heads. */
  static async create(options: ForkStateSourceOptions): Promise<ForkStateSource> {
    const client = new UpstreamClient(options)
    const cache = new StateCache(options.cache)
    const recent = new RecentReads(options.warm)
    const requested = options.blockNumber ?? 'latest'
    if (requested !== 'latest' && (typeof requested !== 'bigint' || requested < 0n)) {
      throw new RangeError(`blockNumber must be a non-negative bigint or 'latest'`)
    }
    const tag = requested === 'latest' ? 'latest' : blockTag(requested)
    let chainId: bigint
    let block: BlockInfo
    try {
      const [chainIdRaw, blockRaw] = await Promise.all([
        client.call('eth_chainId'),
        client.call('eth_getBlockByNumber', [tag, false]),
      ])
      chainId = decodeQuantity(chainIdRaw, 'eth_chainId')
      block = decodeBlock(blockRaw, 'eth_getBlockByNumber', tag)
      if (requested !== 'latest' && block.number !== requested) {
        throw malformed('eth_getBlockByNumber', `asked for block ${requested}, got ${block.number}`)
      }
    } catch (error) {
      client.close()
      throw error
    }
    const follow = options.followHeads ?? requested === 'latest'
    let hashes: BlockHashRecord
    let maxReorgDepth: number
    try {
      hashes = new BlockHashRecord(client, options.blockHashes)
      maxReorgDepth = nonNegativeInt('maxReorgDepth', options.maxReorgDepth ?? FORK_SOURCE_DEFAULTS.maxReorgDepth)
    } catch (error) {
      client.close()
      throw error
    }
    const source = new ForkStateSource(
      chainId,
      block,
      client,
      cache,
      new StateLoader(client, cache),
      recent,
      hashes,
      maxReorgDepth,
      options.onError ?? (() => {}),
      follow,
      options.pollIntervalMs ?? FORK_SOURCE_DEFAULTS.pollIntervalMs,
    )
    source.follower?.start()
    return source
  }

  /** The newest adopted head. */
  get head(): BlockInfo {
    return this.current.block
  }

  latest(): ForkStateReader {
    return this.current
  }

  onNewHead(listener: (block: BlockInfo) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  onReorg(listener: (reorg: ChainReorg) => void): () => void {
    this.reorgListeners.add(listener)
    return () => {
      this.reorgListeners.delete(listener)
    }
  }

  /**
   * Pins the source to `blockNumber` now (tests, manual control; also backwards). Resolves with the
   * adopted block once the warm-up batch is done; rejects with an UpstreamError if the header cannot
   * be read. The header's ancestry is checked as a polled head's is (a replaced block is a reorg).
   * Adoptions are serialized.
   */
  advanceTo(blockNumber: bigint): Promise<BlockInfo> {
    if (typeof blockNumber !== 'bigint' || blockNumber < 0n) return Promise.reject(new RangeError('blockNumber must be a non-negative bigint'))
    const next = this.adoptions.then(async () => {
      const header = await this.readHeader(blockNumber)
      return this.adopt(header, true)
    })
    this.adoptions = next.catch(() => {})
    return next
  }

  /** True when the upstream answers eth_blockNumber within the timeout (one attempt). */
  async ready(): Promise<boolean> {
    if (this.closed) return false
    try {
      decodeQuantity(await this.client.call('eth_blockNumber', [], { maxRetries: 0 }), 'eth_blockNumber')
      return true
    } catch {
      return false
    }
  }

  stats(): ForkStats {
    const { errors, ...client } = this.client.stats()
    return { ...client, upstreamErrors: errors, ...this.loader.stats(), ...this.cache.stats(), ...this.hashes.stats(), ...this.counters }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.follower?.stop()
    this.client.close()
    this.listeners.clear()
    this.reorgListeners.clear()
    await this.adoptions.catch(() => {})
  }

  private enqueueAdoption(head: BlockInfo, force: boolean): Promise<BlockInfo> {
    const next = this.adoptions.then(() => this.adopt(head, force))
    this.adoptions = next.catch(() => {})
    return next
  }

  private async readHeader(blockNumber: bigint): Promise<BlockInfo> {
    const tag = blockTag(blockNumber)
    const block = decodeBlock(await this.client.call('eth_getBlockByNumber', [tag, false]), 'eth_getBlockByNumber', tag)
    if (block.number !== blockNumber) throw malformed('eth_getBlockByNumber', `asked for block ${blockNumber}, got ${block.number}`)
    return block
  }

  /**
   * Adopts `head` (a polled header, or with `force` one asked for by advanceTo): checks its
   * ancestry, drops what a reorg replaced, warms the recent reads at it, then tells the listeners.
   * A polled head that is an older block of the adopted chain is not adopted.
   */
  private async adopt(head: BlockInfo, force: boolean): Promise<BlockInfo> {
    if (this.closed) throw new UpstreamError('fork state source closed', 'network')
    const previous = this.current.block
    if (head.hash === previous.hash) return previous

    let ancestry
    try {
      ancestry = await findCommonAncestor({
        head,
        known: (n) => this.hashes.known(n),
        newestKnown: this.hashes.newest(),
        readHeaders: (numbers) => Promise.all(numbers.map((n) => this.readHeader(n))),
        maxDepth: this.maxReorgDepth,
      })
    } catch (error) {
      // the upstream moved while its headers were read: the next poll sees where it settled
      if (error instanceof ChainMovedError) throw new UpstreamError(`head ${head.number} not adopted: ${error.message}`, 'rpc', { method: 'eth_getBlockByNumber' }, { cause: error })
      throw error
    }
    if (this.closed) return previous
    // an older block of the chain already adopted (a node behind a load balancer lagging): keep ours
    if (!ancestry.diverged && head.number <= previous.number && !force) return previous

    let reorg: ChainReorg | undefined
    if (ancestry.diverged) {
      reorg = this.dropReplaced(ancestry.commonAncestor, head)
    } else if (ancestry.commonAncestor === undefined) {
      // a gap wider than maxReorgDepth: the recorded hashes can no longer be vouched for; nothing
      // was cached at the new head's number or above, so the state cache stays
      this.hashes.clear()
    }
    this.hashes.record(head)
    for (const header of ancestry.headers) this.hashes.record(header)

    const warm = this.recent.select(previous.number)
    const keys = warm.accounts.length + warm.storage.length
    if (keys > 0) {
      this.counters.warmedKeys += keys
      try {
        await this.loader.prefetch(head.number, warm)
      } catch (error) {
        // a cold cache is slower, not wrong: adopt anyway
        this.counters.warmupErrors++
        this.onError(error)
      }
    }
    if (this.closed) return head
    // the re-read keys whose values did not move: what workers may keep of their parent's cache
    const diff = reorg === undefined ? unchangedKeys(this.loader, previous, head, warm) : undefined
    this.current = new ForkStateReader(head, this.loader, this.recent, this.hashes, diff)
    this.counters.headsAdopted++
    // after the diff above, which compares with the previous block's entries
    this.counters.oldBlockDroppedEntries += this.cache.dropBlocksBelow(head.number)
    if (reorg !== undefined) this.tell(this.reorgListeners, reorg)
    this.tell(this.listeners, head)
    return head
  }

  /** Forgets what was cached for the blocks above the common ancestor (all of it when it is unknown). */
  private dropReplaced(commonAncestor: ChainReorg['commonAncestor'], head: BlockInfo): ChainReorg {
    const above = commonAncestor?.number ?? -1n
    const dropped = commonAncestor === undefined ? this.hashes.dropAbove(-1n) : this.hashes.dropAbove(above)
    this.client.forgetInflight()
    this.loader.forgetInflight()
    this.counters.reorgDroppedEntries += this.cache.dropBlocksAbove(above)
    this.counters.reorgs++
    this.counters.reorgedBlocks += dropped.length
    return { commonAncestor, dropped, newHead: head }
  }

  private tell<T>(listeners: Set<(value: T) => void>, value: T): void {
    for (const listener of [...listeners]) {
      try {
        listener(value)
      } catch (error) {
        this.onError(error)
      }
    }
  }
}
