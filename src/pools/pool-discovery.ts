/**
 * Pool discovery: every pool of every venue between any two tokens of {tokenIn, tokenOut} ∪
 * baseTokens, found by asking each venue's factory (a V2 factory's getPair, a V3 factory's getPool
 * for each fee tier: the venue's PoolKind says how) through view calls on the pinned state. Works
 * the same on the devnet and on a fork.
 *
 * Results are cached per (block, token pair), bounded. The cache holds promises, so concurrent
 * requests for the same pair at the same block share one lookup.
 */
import type { Address, StateReader } from '../chain/types.ts'
import type { Simulator } from '../evm/simulator.ts'
import { BlockScopedCache } from './block-scoped-cache.ts'
import { poolKind } from './pool-kinds.ts'
import { poolPairKey, sortTokens, type PoolRef, type Venue } from './pools.ts'
import { blockKey, DEFAULT_VIEW_CALL_CONCURRENCY, ViewCaller } from './view-calls.ts'
import { venueContract } from './venues.ts'

/** Where a chain's venues are and which tokens routes may pass through. */
export interface DexDeployment {
  weth: Address
  /** intermediate tokens of multi-hop routes (WETH, the large stablecoins, ...) */
  baseTokens: readonly Address[]
  /** every venue routes may use, V2- and V3-style alike (venues.ts); asked in this order */
  venues: readonly Venue[]
}

export interface PoolDiscoveryOptions {
  /** (block, pair) entries kept; default 20,000 */
  maxCacheEntries?: number
  /** view calls in flight per discovery; default 16 */
  concurrency?: number
}

export class PoolDiscovery {
  private readonly cache: BlockScopedCache<Promise<PoolRef[]>>
  /** the venues asked, in the deployment's order */
  readonly venues: readonly Venue[]
  /** the contracts the venues' lookups read: their factories, a V4 venue's PoolManager */
  private readonly venueContracts: readonly Address[]
  private readonly concurrency: number

  constructor(
    private readonly simulator: Simulator,
    readonly dex: DexDeployment,
    options: PoolDiscoveryOptions = {},
  ) {
    this.cache = new BlockScopedCache({ blocks: 4, maxPerBlock: options.maxCacheEntries ?? 20_000 })
    this.venues = dex.venues
    this.venueContracts = dex.venues.map(venueContract)
    this.concurrency = options.concurrency ?? DEFAULT_VIEW_CALL_CONCURRENCY
  }

  /** the tokens routes between tokenIn and tokenOut may touch: both ends and the base tokens */
  routingTokens(tokenIn: Address, tokenOut: Address): Address[] {
    return [...new Set([tokenIn, tokenOut, ...this.dex.baseTokens].map((t) => t.toLowerCase() as Address))]
  }

  /** every pair / pool among the routing tokens of (tokenIn, tokenOut), at the reader's block */
  async findPools(reader: StateReader, tokenIn: Address, tokenOut: Address): Promise<PoolRef[]> {
    const tokens = this.routingTokens(tokenIn, tokenOut)
    const caller = new ViewCaller(this.simulator, reader, this.concurrency)
    const lookups: Array<Promise<PoolRef[]>> = []
    for (let i = 0; i < tokens.length; i++) {
      for (let j = i + 1; j < tokens.length; j++) lookups.push(this.pairPools(caller, tokens[i], tokens[j]))
    }
    return (await Promise.all(lookups)).flat()
  }

  /** the pools of one token pair, at the caller's block */
  pairPools(caller: ViewCaller, a: Address, b: Address): Promise<PoolRef[]> {
    const block = blockKey(caller.reader)
    const key = poolPairKey(a, b)
    let entry = this.cache.get(block, key)
    if (entry === undefined) {
      // a pair's pools are found in the venues' factories (and a V4 venue's PoolManager) alone
      entry = this.cache.carried(caller.reader, key, this.venueContracts) ?? this.lookUpPair(caller, a, b)
      this.cache.set(block, key, entry)
      // a failed lookup (upstream down) must not stay cached
      entry.catch(() => {
        if (this.cache.get(block, key) === entry) this.cache.delete(block, key)
      })
    }
    return entry
  }

  private async lookUpPair(caller: ViewCaller, a: Address, b: Address): Promise<PoolRef[]> {
    const [token0, token1] = sortTokens(a, b)
    const weth = this.dex.weth.toLowerCase() as Address
    const lookups = this.venues.flatMap((venue) => poolKind(venue.protocol).lookUp(caller, venue, token0, token1, weth))
    return (await Promise.all(lookups)).filter((p): p is PoolRef => p !== undefined)
  }
}
