/**
 * `ChainStateSource` over an upstream JSON-RPC node: pinned to one block, follows new heads.
 *
 * On a new head (polled with eth_blockNumber, or `advanceTo`), the header is fetched, the accounts
 * and slots callers read lately are re-fetched at the new block in one batch (so hot pools stay
 * warm), and only then is a new reader adopted and listeners told. Readers already handed out keep
 * reading their own block. Code is cached by hash across blocks and not re-fetched for contracts.
 *
 * Heads are followed by number: when the poll sees several new blocks at once, only the newest is
 * adopted. A same-height reorg is not detected by eth_blockNumber; it is picked up at the next
 * block (reads are keyed by number, not hash).
 */
import { UpstreamError, type BlockInfo, type ChainStateSource } from '../types.ts'
import { ForkStateReader } from './fork-state-reader.ts'
import { HeadFollower } from './head-follower.ts'
import { RecentReads, type RecentReadsOptions } from './recent-reads.ts'
import { decodeBlock, decodeQuantity, malformed } from './rpc-decode.ts'
import { StateCache, type StateCacheOptions, type StateCacheStats } from './state-cache.ts'
import { blockTag, StateLoader, type StateLoaderStats } from './state-loader.ts'
import { UpstreamClient, type UpstreamClientOptions, type UpstreamClientStats } from './upstream-client.ts'

export interface ForkStateSourceOptions extends UpstreamClientOptions {
  /** Block to pin to first. Default 'latest'. */
  blockNumber?: bigint | 'latest'
  /** Poll for new heads. Default: true when `blockNumber` is 'latest' or absent, false when pinned to a number. */
  followHeads?: boolean
  /** eth_blockNumber poll interval, ms. Default 1000. */
  pollIntervalMs?: number
  cache?: StateCacheOptions
  /** What is re-fetched on a new head. Defaults: the last 2048 keys read, read within 16 blocks. */
  warm?: RecentReadsOptions
  /** Failures that have no caller to reject: polling, warm-up, header fetch on a polled head, listeners. */
  onError?: (error: unknown) => void
}

export const FORK_SOURCE_DEFAULTS = { pollIntervalMs: 1_000 } as const

/** Counters for tests and /metrics. All plain numbers (JSON-serializable). */
export interface ForkStats extends Omit<UpstreamClientStats, 'errors'>, StateLoaderStats, StateCacheStats {
  /** calls that finally failed with an UpstreamError */
  upstreamErrors: number
  /** heads adopted after the first one */
  headsAdopted: number
  /** keys re-fetched when adopting heads */
  warmedKeys: number
  warmupErrors: number
  pollErrors: number
}

export class ForkStateSource implements ChainStateSource {
  readonly kind = 'fork' as const
  private current: ForkStateReader
  private readonly listeners = new Set<(block: BlockInfo) => void>()
  private readonly follower: HeadFollower | undefined
  private adoptions: Promise<unknown> = Promise.resolve()
  private closed = false
  private readonly counters = { headsAdopted: 0, warmedKeys: 0, warmupErrors: 0, pollErrors: 0 }

  private constructor(
    readonly chainId: bigint,
    block: BlockInfo,
    private readonly client: UpstreamClient,
    private readonly cache: StateCache,
    private readonly loader: StateLoader,
    private readonly recent: RecentReads,
    private readonly onError: (error: unknown) => void,
    follow: boolean,
    pollIntervalMs: number,
  ) {
    this.current = new ForkStateReader(block, loader, recent)
    this.follower = follow
      ? new HeadFollower({
          intervalMs: pollIntervalMs,
          // no retries: the next poll is the retry
          poll: async () => decodeQuantity(await this.client.call('eth_blockNumber', [], { maxRetries: 0 }), 'eth_blockNumber'),
          current: () => this.current.block.number,
          onNewHead: async (blockNumber) => {
            await this.enqueueAdoption(blockNumber, false)
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
    const source = new ForkStateSource(
      chainId,
      block,
      client,
      cache,
      new StateLoader(client, cache),
      recent,
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

  /**
   * Pins the source to `blockNumber` now (tests, manual control; also backwards). Resolves with the
   * adopted block once the warm-up batch is done; rejects with an UpstreamError if the header cannot
   * be read. Adoptions are serialized.
   */
  advanceTo(blockNumber: bigint): Promise<BlockInfo> {
    if (typeof blockNumber !== 'bigint' || blockNumber < 0n) return Promise.reject(new RangeError('blockNumber must be a non-negative bigint'))
    return this.enqueueAdoption(blockNumber, true)
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
    return { ...client, upstreamErrors: errors, ...this.loader.stats(), ...this.cache.stats(), ...this.counters }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.follower?.stop()
    this.client.close()
    this.listeners.clear()
    await this.adoptions.catch(() => {})
  }

  private enqueueAdoption(blockNumber: bigint, force: boolean): Promise<BlockInfo> {
    const next = this.adoptions.then(() => this.adopt(blockNumber, force))
    this.adoptions = next.catch(() => {})
    return next
  }

  private async adopt(blockNumber: bigint, force: boolean): Promise<BlockInfo> {
    if (this.closed) throw new UpstreamError('fork state source closed', 'network')
    const previous = this.current.block
    // a polled head may have been overtaken by an adoption queued before it
    if (!force && blockNumber <= previous.number) return previous
    const tag = blockTag(blockNumber)
    const block = decodeBlock(await this.client.call('eth_getBlockByNumber', [tag, false]), 'eth_getBlockByNumber', tag)
    if (block.number !== blockNumber) throw malformed('eth_getBlockByNumber', `asked for block ${blockNumber}, got ${block.number}`)
    if (block.number === previous.number && block.hash === previous.hash) return previous

    const warm = this.recent.select(previous.number)
    const keys = warm.accounts.length + warm.storage.length
    if (keys > 0) {
      this.counters.warmedKeys += keys
      try {
        await this.loader.prefetch(block.number, warm)
      } catch (error) {
        // a cold cache is slower, not wrong: adopt anyway
        this.counters.warmupErrors++
        this.onError(error)
      }
    }
    if (this.closed) return block
    this.current = new ForkStateReader(block, this.loader, this.recent)
    this.counters.headsAdopted++
    for (const listener of [...this.listeners]) {
      try {
        listener(block)
      } catch (error) {
        this.onError(error)
      }
    }
    return block
  }
}
