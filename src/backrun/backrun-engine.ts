/**
 * The eth_backrun engine: simulate the user's call, find the pools it moved, search the cycles
 * through them with native math, and verify the best candidates by executing the backrun in the
 * EVM right after the user's call. `grossProfit` and `gas` in the answer are the EVM's.
 *
 *   user call (synthetic sender funded with tokenIn / value, approval to `to`)
 *     -> Sync / Swap logs, and the V4 PoolManager's Swap / ModifyLiquidity -> moved pools (only those
 *        the factories name, or the V4 venue's pool keys by PoolId from its PoolManager: look-alike
 *        events are ignored)
 *     -> pools around them (discovery among their tokens and the base tokens, then the pools that join
 *        each moved pool's tokens to a third token: the cycle tokens, at most maxThirdTokens of them),
 *        post-swap states
 *     -> findBackrunCandidates (closed form for V2 pairs, bracketed search elsewhere; any token)
 *     -> each of the best few: BackrunExecutor.backrun executed on the post-swap state, with the
 *        minimum profit of the final calldata at an estimate of its gas (backrun-gas.ts)
 *     -> the most net profit, if above the configured minimum: that execution is the answer when
 *        the estimate covered the executed gas, else the calldata is encoded from the executed gas
 *        and executed again
 */
import { LRUCache } from 'lru-cache'
import { decodeAbiParameters, encodeFunctionData, parseAbi } from 'viem'
import { bytesToHexString } from '../chain/quantity.ts'
import type { Address, ChainStateSource } from '../chain/types.ts'
import type { Erc20StateWriter } from '../evm/erc20-slots.ts'
import type { SimulationLog, SimulationState, Simulator } from '../evm/simulator.ts'
import { BaseError } from '../primitives/base-error.ts'
import { applyAccountOverrides } from '../evm/state-overrides.ts'
import type { PoolRef, PoolSnapshot, V4PoolRef } from '../pools/pools.ts'
import { v4PoolRef } from '../pools/uniswap-v4.ts'
import { blockKey, ViewCaller, ViewCallError } from '../pools/view-calls.ts'
import type { RoutingEngine } from '../routing/routing-engine.ts'
import { encodeBackrunCall } from './backrun-calldata.ts'
import { estimateBackrunGas } from './backrun-gas.ts'
import { cycleHasEstimatedHops, DEFAULT_MAX_POOLS_PER_PAIR, DEFAULT_MAX_THIRD_TOKENS, DEFAULT_SEARCH_BUDGET_MS, findBackrunCandidates, poolsOfCycle, searchValuer, type BackrunCandidate } from './cycle-search.ts'
import { applyPoolMove, readPoolMoves, type PoolMove } from './pool-moves.ts'
import { USD_DECIMALS, type BackrunFound, type BackrunRequest, type BackrunService } from './types.ts'

/** The user the call is simulated for: holds exactly what the request says it spends. */
/**
 * The ETH/USD feed could not be read (it reverted, or answered a price that is not positive): the
 * profit cannot be valued in USD. A fact about the feed, not about the request.
 */
export class PriceFeedError extends BaseError<{ feed: Address }> {
  override readonly name = 'PriceFeedError'
  constructor(feed: Address, shortMessage: string) {
    super(shortMessage, { details: { feed } })
  }
}

export const SYNTHETIC_USER: Address = '0x00000000000000000000000000000000000ba5e0'
/** a transaction's base cost, paid once by the user's transaction, not by the backrun in it */
const TX_BASE_GAS = 21_000n
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'
const NATIVE_TOKENS = new Set<string>([ZERO_ADDRESS, '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'])
const MAX_UINT256 = (1n << 256n) - 1n

const POOL_TOKENS_ABI = parseAbi(['function token0() view returns (address)', 'function token1() view returns (address)'])
const FEED_ABI = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
])

export interface BackrunEngineOptions {
  chain: ChainStateSource
  simulator: Simulator
  erc20: Erc20StateWriter
  routing: RoutingEngine
  weth: Address
  baseTokens: readonly Address[]
  /** the deployed BackrunExecutor */
  executor: Address
  ethUsdFeed: Address
  /** answered only when the net profit exceeds this, wei */
  minNetProfitWei: bigint
  /** tip assumed on top of the next base fee, wei per gas */
  priorityFeeWei: bigint
  /** share of the gross profit paid back to the user (tx.origin), basis points */
  refundBps: number
  /**
   * candidates executed in the EVM per request, best by native math first; default 3. As many
   * more may be executed among the cycles through a pool whose hook makes the math an estimate
   */
  maxVerified?: number
  /**
   * tokens a triangle may pass through besides the base tokens and the moved pools' own tokens
   * (BACKRUN_CYCLE_TOKENS; on the devnet every token of its registry): their pools with each moved
   * pool's tokens are discovered through the factories, per block cached
   */
  cycleTokens?: readonly Address[]
  /** N: third tokens of triangles per moved pool, in discovery and in the search; default 16 */
  maxThirdTokens?: number
  /** K: pools of one token pair in the cycles; default 5 */
  maxPoolsPerPair?: number
  /** the native search's time budget, ms; default 20 */
  searchBudgetMs?: number
  log: { warn(obj: object, msg: string): void }
}

/** How BackrunEngine.searchAfter executes and encodes the backrun. */
export interface BackrunSearchOptions {
  /** tx.origin of the backrun's execution: the user's account, or the searcher's for a backrun transaction of its own */
  origin: Address
  /** share of the gross profit refunded, basis points (0..10000) */
  refundBps: number
  /** receives the refund; omitted (or the zero address): tx.origin, i.e. `origin` */
  refundRecipient?: Address
}

export interface BackrunEngineStats {
  requests: number
  userCallReverted: number
  found: number
  /** candidates the exact math found profitable whose backrun reverted in the EVM (not those through a hook it only estimates) */
  verificationMisses: number
}

interface Probed {
  candidate: BackrunCandidate
  /** the EVM's gross profit of the probe */
  grossProfit: bigint
  gasCostWei: bigint
  netProfitWei: bigint
  /**
   * the probe's calldata, gas and profit when it can be the answer as it stands: its minimum profit
   * (from the gas estimate) covers the gas the EVM spent, at its executed profit's rate
   */
  final?: { calldata: `0x${string}`; gas: bigint; grossProfit: bigint }
}

export class BackrunEngine implements BackrunService {
  private readonly counters: BackrunEngineStats = { requests: 0, userCallReverted: 0, found: 0, verificationMisses: 0 }
  /** a pool's tokens never change: remembered once read (answers that are not a pool are not) */
  private readonly poolTokens = new LRUCache<Address, [Address, Address]>({ max: 10_000 })
  /** the feed's answer and decimals per block */
  private readonly ethUsd = new LRUCache<string, Promise<{ answer: bigint; decimals: number }>>({ max: 16 })
  /** the configured V4 venues' pools by PoolId (bounded by the venues: at most 256 keys each) */
  private readonly v4Pools: ReadonlyMap<Address, V4PoolRef>
  /** their PoolManagers: only these V4 events are read */
  private readonly poolManagers: ReadonlySet<Address>

  constructor(private readonly options: BackrunEngineOptions) {
    const v4Pools = new Map<Address, V4PoolRef>()
    for (const venue of options.routing.discovery.venues) {
      if (venue.protocol !== 'uniswap-v4') continue
      for (const key of venue.pools) {
        const ref = v4PoolRef(venue.poolManager, key, venue.name, options.weth)
        v4Pools.set(ref.address.toLowerCase() as Address, ref)
      }
    }
    this.v4Pools = v4Pools
    this.poolManagers = new Set([...v4Pools.values()].map((ref) => ref.poolManager))
  }

  stats(): BackrunEngineStats {
    return { ...this.counters }
  }

  async backrun(request: BackrunRequest): Promise<BackrunFound | null> {
    this.counters.requests++
    const { simulator, chain } = this.options
    const reader = chain.latest()
    const base = simulator.openState(reader)

    const funded = await this.fundUser(base, request)
    const user = await simulator.call(funded, { from: SYNTHETIC_USER, to: request.to, data: request.calldata, value: request.value })
    if (user.status !== 'success') {
      this.counters.userCallReverted++
      return null
    }
    return this.searchAfter(base, user.state, user.logs, { origin: SYNTHETIC_USER, refundBps: this.options.refundBps })
  }

  /**
   * The best backrun behind transactions already executed on `base`: `after` is the state they
   * left, `logs` their logs. The backrun is executed from `origin` (its tx.origin). The refund
   * share goes to `refundRecipient` when given (encoded in the calldata), else to tx.origin: give
   * it when the backrun is a transaction of its own signed by someone other than the user. Used by
   * eth_backrun (the user's call, refund to tx.origin) and by private submission (the user's signed
   * transactions, then a backrun transaction of the searcher: origin = the searcher,
   * refundRecipient = the user). The calldata returned is exactly the calldata verified in the EVM.
   */
  async searchAfter(base: SimulationState, after: SimulationState, logs: readonly SimulationLog[], how: BackrunSearchOptions): Promise<BackrunFound | null> {
    const reader = base.reader
    const moves = readPoolMoves(logs, { poolManagers: this.poolManagers })
    if (moves.size === 0) return null

    const { pools, moved } = await this.poolsAfter(base, after, moves)
    if (moved.length === 0) return null
    const { weth } = this.options
    // a profit is worth what selling it for WETH gives, outside its own cycle's pools when it can
    // be: the search ranks its candidates so, and the net-of-gas decision and netProfitUsd rest on
    // the same valuation (one valuer: each token's paths to WETH enumerated once per request)
    const valuer = searchValuer(pools, weth)
    const candidates = findBackrunCandidates({
      pools,
      movedPools: moved,
      weth,
      baseTokens: this.options.baseTokens,
      maxThirdTokens: this.options.maxThirdTokens ?? DEFAULT_MAX_THIRD_TOKENS,
      maxPoolsPerPair: this.options.maxPoolsPerPair ?? DEFAULT_MAX_POOLS_PER_PAIR,
      budgetMs: this.options.searchBudgetMs ?? DEFAULT_SEARCH_BUDGET_MS,
      valuer,
    })
    if (candidates.length === 0) return null

    const gasPriceWei = (base.block.baseFeePerGas ?? 0n) + this.options.priorityFeeWei
    const toWei = (candidate: BackrunCandidate, amount: bigint) => valuer.toWei(candidate.startToken, amount, poolsOfCycle(candidate))
    // 1. the best few by native math, executed in the EVM (each once when the gas estimate holds,
    // see below; an execution whose minimum profit is 1 tells the EVM's profit and gas). A cycle
    // through a pool whose hook may change the swap (beforeSwap, return deltas) has only an
    // estimated profit: the best few of those are executed too, beside (not instead of) the best
    // few exact ones, and only the EVM's profit counts for them, as for every candidate
    const maxVerified = this.options.maxVerified ?? 3
    const verified = { exact: 0, estimated: 0 }
    let best: Probed | undefined
    for (const candidate of candidates) {
      const estimated = cycleHasEstimatedHops(candidate.hops)
      const kind = estimated ? 'estimated' : 'exact'
      if (verified[kind] >= maxVerified) {
        if (verified.exact >= maxVerified && verified.estimated >= maxVerified) break
        continue
      }
      verified[kind]++
      // a profit that cannot be valued in ETH cannot be weighed against its gas
      const grossWei = toWei(candidate, candidate.expectedProfit)
      if (grossWei === undefined) continue
      // its net cannot exceed its gross (the exact math's), so it cannot beat a net already found;
      // an estimate bounds nothing
      if (best !== undefined && !estimated && grossWei <= best.netProfitWei) continue
      // first with the minimum profit the final calldata would carry at the estimated gas (when the
      // estimate leaves a profit): within the estimate, that execution is the answer as it stands
      const estimatedCostWei = estimateBackrunGas(candidate.hops, candidate.ticksCrossed) * gasPriceWei
      let minProfit = 1n
      let probe: Executed | undefined
      if (grossWei > estimatedCostWei) {
        minProfit = atLeastOne(ceilDiv(estimatedCostWei * candidate.expectedProfit, grossWei))
        probe = await this.execute(after, how.origin, this.encode(candidate, minProfit, how))
      }
      // otherwise (or when it reverts: a profit below that minimum, or any other failure) as it
      // always was, with a minimum profit of 1, to learn the gas and profit the EVM gives
      if (probe === undefined) {
        minProfit = 1n
        probe = await this.execute(after, how.origin, this.encode(candidate, minProfit, how))
      }
      if (probe === undefined) {
        // an estimate the EVM does not confirm is no math/EVM disagreement (as for quotes)
        if (!estimated) this.counters.verificationMisses++
        continue
      }
      const gasCostWei = portion(probe.gasUsed) * gasPriceWei
      const netProfitWei = (toWei(candidate, probe.grossProfit) ?? 0n) - gasCostWei
      if (best === undefined || netProfitWei > best.netProfitWei) {
        const answerAsIs = minProfit >= finalMinProfit(gasCostWei, probe.grossProfit, toWei(candidate, probe.grossProfit) ?? 0n)
        best = { candidate, grossProfit: probe.grossProfit, gasCostWei, netProfitWei, ...(answerAsIs ? { final: { calldata: probe.calldata, gas: portion(probe.gasUsed), grossProfit: probe.grossProfit } } : {}) }
      }
    }
    if (best === undefined || best.netProfitWei <= this.options.minNetProfitWei) return null
    // 2. the winner's final calldata: its minimum profit is its gas cost in the profit token (it
    // reverts rather than run at a loss once the state has moved), at the rate its executed profit
    // sells at (for an exact cycle that is its expected profit). The probe is that calldata when its
    // minimum, from the gas estimate, is at least this (the estimate was above the executed gas);
    // otherwise the calldata is encoded with this minimum and executed again. Either way the
    // answer's gas and profit are the EVM's for the exact bytes returned
    let final = best.final
    if (final === undefined) {
      const calldata = this.encode(best.candidate, finalMinProfit(best.gasCostWei, best.grossProfit, toWei(best.candidate, best.grossProfit) ?? 0n), how)
      const executed = await this.execute(after, how.origin, calldata)
      if (executed === undefined) {
        this.counters.verificationMisses++
        return null
      }
      final = { calldata, gas: portion(executed.gasUsed), grossProfit: executed.grossProfit }
    }
    const { calldata, gas } = final
    const netProfitWei = (toWei(best.candidate, final.grossProfit) ?? 0n) - gas * gasPriceWei
    if (netProfitWei <= this.options.minNetProfitWei) return null

    this.counters.found++
    return {
      calldata,
      contract: this.options.executor,
      gas,
      profitToken: best.candidate.startToken,
      grossProfit: final.grossProfit,
      netProfitWei,
      netProfitUsd: await this.toUsd(base, netProfitWei),
      hops: best.candidate.hops.map((h) => ({ protocol: h.protocol, pool: h.pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.fee, ...(h.v4 === undefined ? {} : { v4: { ...h.v4 } }) })),
      amountIn: best.candidate.amountIn,
      blockNumber: reader.block.number,
    }
  }

  /** A child of base where the synthetic user holds what the call spends and has approved `to`. */
  private async fundUser(base: SimulationState, request: BackrunRequest): Promise<SimulationState> {
    const funded = base.fork()
    if (request.value > 0n) await applyAccountOverrides(funded, new Map([[SYNTHETIC_USER, { balance: request.value }]]))
    if (!NATIVE_TOKENS.has(request.tokenIn)) {
      await this.options.erc20.setBalance(funded, request.tokenIn, SYNTHETIC_USER, request.amountIn)
      await this.options.erc20.setAllowance(funded, request.tokenIn, SYNTHETIC_USER, request.to, MAX_UINT256)
    }
    return funded
  }

  /**
   * The pools around the moved ones, as they are after the user's call: the block's snapshots with
   * the moves applied (or read afresh from the post-swap state where a move cannot be applied).
   * A moved address counts only if discovery through the factories finds it; a moved V4 PoolId only
   * if the V4 venue lists its key (its event came from that venue's PoolManager) and discovery finds
   * it initialized. Around each moved pool:
   * every pool among its tokens and the base tokens, then the pools joining its tokens to each third
   * token (thirdTokenPools).
   */
  private async poolsAfter(base: SimulationState, after: SimulationState, moves: Map<Address, PoolMove>): Promise<{ pools: PoolSnapshot[]; moved: Address[] }> {
    const { routing, simulator } = this.options
    const caller = new ViewCaller(simulator, base)
    const byAddress = new Map<Address, PoolSnapshot>()
    const moved: Address[] = []
    const movedPairs: Array<[Address, Address]> = []
    for (const [address, move] of moves) {
      let tokens = this.poolTokens.get(address)
      if (move.kind === 'v4-swap' || move.kind === 'v4-liquidity') {
        // the PoolId names the key, which names the tokens; the event's emitter must be its PoolManager
        const ref = this.v4Pools.get(address)
        if (ref === undefined || ref.poolManager !== move.poolManager) continue
        // a native-ETH key's ref holds WETH in ETH's place: the executor wraps and unwraps around it
        tokens = [ref.token0, ref.token1]
      } else if (tokens === undefined) {
        try {
          const [t0, t1] = await Promise.all([caller.read(address, POOL_TOKENS_ABI, 'token0', []), caller.read(address, POOL_TOKENS_ABI, 'token1', [])])
          tokens = [t0.toLowerCase() as Address, t1.toLowerCase() as Address]
        } catch (err) {
          if (err instanceof ViewCallError) continue // not a pool
          throw err
        }
        this.poolTokens.set(address, tokens)
      }
      const { pools } = await routing.loadPools(base.reader, tokens[0], tokens[1])
      for (const p of pools) byAddress.set(p.address, p)
      if (pools.some((p) => p.address === address)) {
        moved.push(address)
        movedPairs.push(tokens)
      }
    }
    for (const p of await this.thirdTokenPools(base, movedPairs)) byAddress.set(p.address, p)
    const pools: PoolSnapshot[] = []
    for (const pool of byAddress.values()) {
      if (!executorCanSwap(pool)) continue
      const move = moves.get(pool.address)
      pools.push(move === undefined || !moved.includes(pool.address) ? pool : (applyPoolMove(pool, move) ?? (await routing.poolStates.loadAt(after, pool))))
    }
    return { pools, moved }
  }

  /**
   * The pools joining a moved pool's tokens (a, b) to third tokens that are neither base tokens (those
   * pools are loaded with the pair already) nor a or b: WETH, the cycle tokens and the other moved
   * pools' tokens, at most maxThirdTokens per moved pool, in that order. A token counts only when both
   * (a, c) and (b, c) have a pool: a triangle needs both legs. Discovery (the factories' getPair /
   * getPool) and pool states are cached per block by the routing engine's loaders.
   */
  private async thirdTokenPools(base: SimulationState, movedPairs: ReadonlyArray<[Address, Address]>): Promise<PoolSnapshot[]> {
    const maxThird = this.options.maxThirdTokens ?? DEFAULT_MAX_THIRD_TOKENS
    if (maxThird === 0 || movedPairs.length === 0) return []
    const { routing } = this.options
    const known = new Set(this.options.baseTokens.map((t) => t.toLowerCase() as Address))
    const candidates = [...new Set([this.options.weth, ...(this.options.cycleTokens ?? []), ...movedPairs.flat()].map((t) => t.toLowerCase() as Address))].filter((t) => !known.has(t))
    const caller = new ViewCaller(this.options.simulator, base.reader)
    const refs = new Map<Address, PoolRef>()
    await Promise.all(
      movedPairs.map(async ([a, b]) => {
        const thirds = candidates.filter((c) => c !== a && c !== b).slice(0, maxThird)
        await Promise.all(
          thirds.map(async (c) => {
            const [withA, withB] = await Promise.all([routing.discovery.pairPools(caller, a, c), routing.discovery.pairPools(caller, b, c)])
            if (withA.length === 0 || withB.length === 0) return
            for (const ref of [...withA, ...withB]) refs.set(ref.address, ref)
          }),
        )
      }),
    )
    if (refs.size === 0) return []
    return (await routing.poolStates.loadAll(base.reader, [...refs.values()])).pools
  }

  private encode(candidate: BackrunCandidate, minProfit: bigint, how: BackrunSearchOptions): `0x${string}` {
    const { refundBps, refundRecipient } = how
    return encodeBackrunCall({ startToken: candidate.startToken, amountIn: candidate.amountIn, hops: candidate.hops, minProfit, refundBps, refundRecipient })
  }

  private async execute(after: SimulationState, origin: Address, calldata: `0x${string}`): Promise<Executed | undefined> {
    // from the transaction's origin, as in the composed transaction (or the searcher's backrun
    // transaction): the refund goes to it unless the calldata names a refundRecipient
    const r = await this.options.simulator.call(after, { from: origin, to: this.options.executor, data: calldata })
    if (r.status !== 'success' || r.returnData.length < 32) return undefined
    const [grossProfit] = decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(r.returnData))
    return { calldata, grossProfit, gasUsed: r.gasUsed }
  }

  /** wei in USD at the feed's latest answer, USD_DECIMALS decimals, truncated toward zero */
  private async toUsd(state: SimulationState, wei: bigint): Promise<bigint> {
    const key = blockKey(state.reader)
    let price = this.ethUsd.get(key)
    if (price === undefined) {
      price = this.readEthUsd(state)
      this.ethUsd.set(key, price)
      price.catch(() => this.ethUsd.delete(key))
    }
    const { answer, decimals } = await price
    return (wei * answer * 10n ** BigInt(USD_DECIMALS)) / (10n ** 18n * 10n ** BigInt(decimals))
  }

  private async readEthUsd(state: SimulationState): Promise<{ answer: bigint; decimals: number }> {
    const feed = this.options.ethUsdFeed
    const call = async (data: `0x${string}`) => {
      const r = await this.options.simulator.call(state, { from: SYNTHETIC_USER, to: feed, data, gasLimit: 200_000n })
      if (r.status !== 'success') throw new PriceFeedError(feed, `ETH/USD feed ${feed} reverted: ${r.revertReason ?? r.error ?? ''}`)
      return bytesToHexString(r.returnData)
    }
    const [decimals] = decodeAbiParameters([{ type: 'uint8' }], await call(encodeFunctionData({ abi: FEED_ABI, functionName: 'decimals' })))
    const [, answer] = decodeAbiParameters(
      [{ type: 'uint80' }, { type: 'int256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint80' }],
      await call(encodeFunctionData({ abi: FEED_ABI, functionName: 'latestRoundData' })),
    )
    if (answer <= 0n) throw new PriceFeedError(feed, `ETH/USD feed ${feed} answered ${answer}`)
    return { answer, decimals }
  }
}

/** a backrun executed in the EVM: its calldata, gross profit and the gas of the call (with the transaction's 21,000) */
interface Executed {
  calldata: `0x${string}`
  grossProfit: bigint
  gasUsed: bigint
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b
}

function atLeastOne(x: bigint): bigint {
  return x < 1n ? 1n : x
}

/**
 * the final calldata's minimum profit: the gas cost (wei) in the profit token, at the rate the
 * executed profit sells at (its value in wei); 1 when that profit has no value
 */
function finalMinProfit(gasCostWei: bigint, grossProfit: bigint, executedWei: bigint): bigint {
  return executedWei > 0n ? atLeastOne(ceilDiv(gasCostWei * grossProfit, executedWei)) : 1n
}

/** the backrun's share of a transaction's gas: what it costs beyond the transaction base */
function portion(gasUsed: bigint): bigint {
  return gasUsed > TX_BASE_GAS ? gasUsed - TX_BASE_GAS : 0n
}

/**
 * Whether BackrunExecutor can swap in `pool`: every pool whose tokens are ERC-20s. That is every
 * pool discovery finds: a V4 key of native ETH is listed as a WETH pool (src/pools/pools.ts), and the
 * executor unwraps and wraps WETH around it; a V4 key with hooks is swapped on with its hooks
 * (hookData empty). Hooks whose swap effects the search models exactly (afterSwap without its
 * return delta, initialize, liquidity and donate hooks) are searched like plain pools; those it
 * cannot model (beforeSwap, e.g. a fee override, and return deltas: hookAltersSwap) are searched
 * with the estimate and only the EVM's execution gives their profit (BackrunEngine.searchAfter).
 */
export function executorCanSwap(pool: PoolRef | V4PoolRef): boolean {
  return pool.token0 !== ZERO_ADDRESS && pool.token1 !== ZERO_ADDRESS
}
