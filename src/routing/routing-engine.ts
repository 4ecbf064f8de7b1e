/**
 * The routing engine's one entry point for a quote: discover the pools around the pair, load their
 * state at the reader's block (both cached per block), and search. The next block's base fee
 * prices gas unless the caller gives a gas price.
 */
import type { Address, StateReader } from '../chain/types.ts'
import { nextBaseFee } from '../evm/block-context.ts'
import type { Simulator } from '../evm/simulator.ts'
import { BlockScopedCache } from '../pools/block-scoped-cache.ts'
import { blockKey } from '../pools/view-calls.ts'
import { PoolDiscovery, type DexDeployment, type PoolDiscoveryOptions } from '../pools/pool-discovery.ts'
import { pathFailure, rememberingHopQuoter, type HopQuoter } from '../pools/pool-quote.ts'
import { PoolStateLoader, type PoolLoadResult, type PoolStateLoaderOptions } from '../pools/pool-state.ts'
import type { PoolSnapshot } from '../pools/pools.ts'
import { PreparedPathsCache } from './prepared-paths-cache.ts'
import { findBestPlan, type RoutedPlan, type RouteSearchParams } from './route-search.ts'
import { MAX_HOPS, planHasEstimatedHops } from './swap-plan.ts'

type SearchSettings = Pick<RouteSearchParams, 'maxHops' | 'maxSplits' | 'splitParts' | 'gasModel' | 'maxPaths' | 'maxSplitCandidates'>

export interface RoutingEngineOptions {
  dex: DexDeployment
  discovery?: PoolDiscoveryOptions
  poolState?: PoolStateLoaderOptions
  search?: SearchSettings
}

export interface PlanRequest {
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  /** default: the next block's base fee (0 before London) */
  gasPriceWei?: bigint
  /**
   * leave out the pools whose math is only an estimate (V4 pools whose hook may change a swap:
   * pools/uniswap-v4-hooks.ts), so that every hop of the plan is quoted exactly
   */
  exactPoolsOnly?: boolean
}

/**
 * The search's answer with the reason when there is no plan: no path of pools joins the tokens
 * (`no-route`); paths exist but the amount is so small that the output rounds down to zero on a
 * path that takes it whole (`amount-too-small`: a larger amount would be quoted); or paths exist
 * but none can take the amount (`insufficient-liquidity`: the pools are too shallow).
 */
export type RouteOutcome =
  | {
      kind: 'plan'
      plan: RoutedPlan
      /**
       * when the plan crosses a pool the math only estimates (and the request did not already leave
       * such pools out): the outcome of the same request over the exactly quoted pools alone, searched
       * with the same snapshots and hop quotes (what `exactPoolsOnly` would answer, for less)
       */
      exactPools?: RouteOutcome
    }
  | { kind: 'no-route' }
  | { kind: 'amount-too-small' }
  | { kind: 'insufficient-liquidity' }

export class RoutingEngine {
  readonly discovery: PoolDiscovery
  readonly poolStates: PoolStateLoader
  /** every search's paths and gas rate, per block and pair */
  private readonly paths = new PreparedPathsCache()
  /**
   * loadPools' complete answers (no pool failed), per block and pair, with the exactly quoted pools
   * among them: discovery and the pool states are cached per block already, but asking them again
   * for every quote (the pairs among ~7 routing tokens, a cache lookup and a promise per pair and
   * per pool) cost ~6% of a route() over the bench:quote mix. An answer with a failed pool is not
   * kept: a view call that halted may not halt again.
   */
  private readonly loads = new BlockScopedCache<Promise<PoolLoads>>({ blocks: 2, maxPerBlock: 1_024 })

  constructor(
    simulator: Simulator,
    private readonly options: RoutingEngineOptions,
  ) {
    this.discovery = new PoolDiscovery(simulator, options.dex, options.discovery)
    this.poolStates = new PoolStateLoader(simulator, options.poolState)
  }

  /**
   * the pools of every pair among tokenIn, tokenOut and the base tokens, loaded at the reader's
   * block (the same frozen answer for every call of the pair at the block, unless a pool failed)
   */
  async loadPools(reader: StateReader, tokenIn: Address, tokenOut: Address): Promise<PoolLoadResult> {
    return (await this.poolLoads(reader, tokenIn, tokenOut)).loaded
  }

  private poolLoads(reader: StateReader, tokenIn: Address, tokenOut: Address): Promise<PoolLoads> {
    const block = blockKey(reader)
    const key = `${tokenIn.toLowerCase()}:${tokenOut.toLowerCase()}`
    const kept = this.loads.get(block, key)
    if (kept !== undefined) return kept
    const loads = this.discovery
      .findPools(reader, tokenIn.toLowerCase() as Address, tokenOut.toLowerCase() as Address)
      .then((refs) => this.poolStates.loadAll(reader, refs))
      .then((loaded): PoolLoads => {
        if (loaded.failed.length > 0 && this.loads.get(block, key) === loads) this.loads.delete(block, key)
        return { loaded: { pools: Object.freeze(loaded.pools) as PoolSnapshot[], failed: Object.freeze(loaded.failed) as PoolLoadResult['failed'] }, exactPools: loaded.pools.filter(isExactlyQuoted) }
      })
    this.loads.set(block, key, loads)
    // an upstream failure is not a fact about the block
    loads.catch(() => {
      if (this.loads.get(block, key) === loads) this.loads.delete(block, key)
    })
    return loads
  }

  async findBestPlan(reader: StateReader, request: PlanRequest): Promise<RoutedPlan | undefined> {
    const outcome = await this.route(reader, request)
    return outcome.kind === 'plan' ? outcome.plan : undefined
  }

  async route(reader: StateReader, request: PlanRequest): Promise<RouteOutcome> {
    const { loaded, exactPools } = await this.poolLoads(reader, request.tokenIn, request.tokenOut)
    const gasPriceWei = request.gasPriceWei ?? nextBaseFee(reader.block) ?? 0n
    const block = blockKey(reader)
    // a search makes its own hop memo (route-search.ts: it then quotes last hops directly) unless a
    // second search may read it: only where some pool is estimated can a plan need the exact pools' one
    if (request.exactPoolsOnly === true) return this.search(block, request, exactPools, gasPriceWei, undefined)
    const hopQuoter = exactPools.length < loaded.pools.length ? rememberingHopQuoter() : undefined
    const outcome = this.search(block, request, loaded.pools, gasPriceWei, hopQuoter)
    // the quote executes the exact pools' best plan beside a plan through an estimated pool: the
    // same snapshots and hop quotes serve it (its paths are a subset of the first search's)
    if (outcome.kind !== 'plan' || !planHasEstimatedHops(outcome.plan)) return outcome
    return { ...outcome, exactPools: this.search(block, request, exactPools, gasPriceWei, hopQuoter) }
  }

  private search(block: string, request: PlanRequest, pools: readonly PoolSnapshot[], gasPriceWei: bigint, hopQuoter: HopQuoter | undefined): RouteOutcome {
    const tokenIn = request.tokenIn.toLowerCase() as Address
    const tokenOut = request.tokenOut.toLowerCase() as Address
    const weth = this.options.dex.weth.toLowerCase() as Address
    // the same paths and gas rate for every quote of the pair at this block (prepared-paths-cache.ts)
    const prepared =
      tokenIn === tokenOut
        ? undefined
        : this.paths.get({ block, pools, tokenIn, tokenOut, weth, maxHops: this.options.search?.maxHops ?? MAX_HOPS, maxPaths: this.options.search?.maxPaths ?? 2_000 })
    const plan = findBestPlan({
      ...this.options.search,
      tokenIn: request.tokenIn,
      tokenOut: request.tokenOut,
      amountIn: request.amountIn,
      pools,
      gasPriceWei,
      weth: this.options.dex.weth,
      ...(hopQuoter === undefined ? {} : { hopQuoter }),
      ...(prepared === undefined ? {} : { prepared }),
    })
    if (plan !== undefined) return { kind: 'plan', plan }
    const paths = prepared?.paths ?? []
    if (paths.length === 0) return { kind: 'no-route' }
    // dust: a path takes the whole amount but its output rounds down to zero (pools too shallow
    // never give zero for a small amount; they refuse a large one)
    return paths.some((path) => pathFailure(path, request.amountIn) === 'zero-output') ? { kind: 'amount-too-small' } : { kind: 'insufficient-liquidity' }
  }
}

interface PoolLoads {
  loaded: PoolLoadResult
  /** loaded.pools without the pools the math only estimates (isExactlyQuoted) */
  exactPools: PoolSnapshot[]
}

/** the pool's math gives exactly what executing it gives (all but V4 pools whose hook may change a swap) */
function isExactlyQuoted(pool: PoolSnapshot): boolean {
  return pool.protocol !== 'uniswap-v4' || !pool.hookAltersSwap
}
