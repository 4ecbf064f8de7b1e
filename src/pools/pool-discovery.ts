/**
 * Pool discovery: every Uniswap V2 pair and V3 pool between any two tokens of
 * {tokenIn, tokenOut} ∪ baseTokens, found by asking the factories (getPair, getPool for each fee
 * tier) through view calls on the pinned state. Works the same on the devnet and on a fork.
 *
 * Results are cached per (block, token pair), bounded. The cache holds promises, so concurrent
 * requests for the same pair at the same block share one lookup.
 */
import type { Address, StateReader } from '../chain/types.ts'
import type { Simulator } from '../evm/simulator.ts'
import { V2_FACTORY_ABI, V3_FACTORY_ABI } from './abis.ts'
import { poolPairKey, sortTokens, V2_FEE_PIPS, type PoolRef } from './pools.ts'
import { BlockScopedCache } from './block-scoped-cache.ts'
import { blockKey, DEFAULT_VIEW_CALL_CONCURRENCY, ViewCaller } from './view-calls.ts'

/** The fee tiers the Uniswap V3 factory enables by default (0.01%, 0.05%, 0.3%, 1%). */
export const DEFAULT_V3_FEE_TIERS: readonly number[] = [100, 500, 3000, 10000]

/** Where a chain's Uniswap deployments are and which tokens routes may pass through. */
export interface DexDeployment {
  weth: Address
  /** intermediate tokens of multi-hop routes (WETH, the large stablecoins, ...) */
  baseTokens: readonly Address[]
  v2Factory?: Address
  v3Factory?: Address
  /** default DEFAULT_V3_FEE_TIERS */
  v3FeeTiers?: readonly number[]
}

export interface PoolDiscoveryOptions {
  /** (block, pair) entries kept; default 20,000 */
  maxCacheEntries?: number
  /** view calls in flight per discovery; default 16 */
  concurrency?: number
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

export class PoolDiscovery {
  private readonly cache: BlockScopedCache<Promise<PoolRef[]>>
  private readonly feeTiers: readonly number[]
  private readonly concurrency: number

  constructor(
    private readonly simulator: Simulator,
    readonly dex: DexDeployment,
    options: PoolDiscoveryOptions = {},
  ) {
    this.cache = new BlockScopedCache({ blocks: 4, maxPerBlock: options.maxCacheEntries ?? 20_000 })
    this.feeTiers = dex.v3FeeTiers ?? DEFAULT_V3_FEE_TIERS
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
      entry = this.lookUpPair(caller, a, b)
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
    const lookups: Array<Promise<PoolRef | undefined>> = []
    const { v2Factory, v3Factory } = this.dex
    if (v2Factory !== undefined) {
      lookups.push(
        caller.read(v2Factory, V2_FACTORY_ABI, 'getPair', [token0, token1]).then((pair) => found(pair, { protocol: 'uniswap-v2', token0, token1, fee: V2_FEE_PIPS })),
      )
    }
    if (v3Factory !== undefined) {
      for (const fee of this.feeTiers) {
        lookups.push(
          caller.read(v3Factory, V3_FACTORY_ABI, 'getPool', [token0, token1, fee]).then((pool) => found(pool, { protocol: 'uniswap-v3', token0, token1, fee })),
        )
      }
    }
    return (await Promise.all(lookups)).filter((p): p is PoolRef => p !== undefined)
  }
}

function found(address: string, rest: Omit<PoolRef, 'address'>): PoolRef | undefined {
  const lower = address.toLowerCase() as Address
  return lower === ZERO_ADDRESS ? undefined : { ...rest, address: lower }
}
