/**
 * The quote engine: native-math route search, then the chosen plan's calldata executed in the EVM
 * on the current state. `amountOut` and `gas` in the answer are what that execution produced; where
 * the math and the EVM disagree, the EVM wins and the disagreement is logged and counted. A plan
 * through a pool the math only estimates (a V4 hook that may change the swap) is executed beside
 * the best plan without such pools (unless it beats that plan's expected output outright), and the
 * better execution is answered (estimated-hops.ts).
 */
import { decodeAbiParameters, encodeFunctionData, parseAbi, type Hex } from 'viem'
import type { Address, ChainStateSource, StateReader } from '../chain/types.ts'
import { bytesToHexString } from '../chain/quantity.ts'
import type { Erc20StateWriter } from '../evm/erc20-slots.ts'
import { ExecutionBudgetError } from '../evm/execution-budget.ts'
import type { SimulationState, Simulator } from '../evm/simulator.ts'
import { wordOfBytes } from '../evm/word-memory.ts'
import { BlockScopedCache } from '../pools/block-scoped-cache.ts'
import { blockKey } from '../pools/view-calls.ts'
import type { PlanRequest, RouteOutcome } from '../routing/routing-engine.ts'
import type { SwapPlan } from '../routing/swap-plan.ts'
import type { RoutedPlan } from '../routing/route-search.ts'
import { EstimateRecord, estimatedExecutionBeatsExactPlan, exactExecutionIsBetter, planHasEstimatedHops } from './estimated-hops.ts'
import { encodeSwapPlanCallBytes } from './router-calldata.ts'
import { QuoteFailedError, type QuoteRequest, type QuoteResult, type QuoteService, type QuoteServiceStats } from './types.ts'

/** The route search, as the quote needs it (RoutingEngine implements it). */
export interface RoutePlanner {
  route(reader: StateReader, request: PlanRequest): Promise<RouteOutcome>
}

export interface QuoteServiceLogger {
  warn(obj: object, msg: string): void
}

export interface EvmQuoteServiceOptions {
  chain: ChainStateSource
  simulator: Simulator
  erc20: Erc20StateWriter
  planner: RoutePlanner
  router: Address
  defaultSlippageBps: number
  /** seconds a quote's calldata stays valid (its deadline) */
  deadlineSeconds?: number
  log: QuoteServiceLogger
  /**
   * answers kept per (block, request): the state is pinned to a block, so the same request on the
   * same block has the same answer; default 10,000 entries, 0 disables
   */
  maxCachedQuotes?: number
}

/** The taker a quote is simulated for when the request names no recipient: a fresh account. */
export const SYNTHETIC_TAKER: Address = '0x00000000000000000000000000000000007a4e12'
const MAX_UINT256 = (1n << 256n) - 1n
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)', 'function allowance(address,address) view returns (uint256)'])

/**
 * swap's return value, a uint256: its first word, read directly (viem's general decoder costs more
 * than the rest of the answer's handling); shorter data goes to viem, which refuses it as it did.
 */
function decodeAmountOut(returnData: Uint8Array): bigint {
  if (returnData.length >= 32) return wordOfBytes(returnData)
  const [amountOut] = decodeAbiParameters([{ type: 'uint256' }], bytesToHexString(returnData))
  return amountOut
}

export class EvmQuoteService implements QuoteService {
  private readonly counters: QuoteServiceStats = { quotesExecuted: 0, mathDisagreements: 0, cacheHits: 0 }
  /** (block, request) -> the answer or the quote failure; promises, so concurrent twins share one run */
  private readonly answers: BlockScopedCache<Promise<QuoteResult>> | undefined
  /** (block, token) -> whether it answers balanceOf like an ERC-20 */
  private readonly tokenChecks = new BlockScopedCache<Promise<boolean>>({ blocks: 4, maxPerBlock: 10_000 })
  /** which hooked hops' estimates held last time: the execution a hooked plan starts with (estimated-hops.ts) */
  private readonly estimates = new EstimateRecord()

  constructor(private readonly options: EvmQuoteServiceOptions) {
    const max = options.maxCachedQuotes ?? 10_000
    // answers of the last 2 blocks: only the head's are asked for
    this.answers = max > 0 ? new BlockScopedCache({ blocks: 2, maxPerBlock: max }) : undefined
  }

  stats(): QuoteServiceStats {
    return { ...this.counters }
  }

  async quote(request: QuoteRequest): Promise<QuoteResult> {
    if (request.tokenIn === request.tokenOut) {
      throw new QuoteFailedError('SAME_TOKEN', 'tokenIn and tokenOut are the same token', { token: request.tokenIn })
    }
    const reader = this.options.chain.latest()
    if (this.answers === undefined) return this.compute(reader, request)
    const block = blockKey(reader)
    const key = `${request.tokenIn}:${request.tokenOut}:${request.amountIn}:${request.slippageBps ?? ''}:${request.recipient ?? ''}:${request.sender ?? ''}`
    const cached = this.answers.get(block, key)
    if (cached !== undefined) {
      this.counters.cacheHits++
      return cached
    }
    const answer = this.compute(reader, request)
    this.answers.set(block, key, answer)
    // only answers and quote failures are facts about the block; an upstream error, a bug or an
    // execution stopped by its budget (which depends on how busy the process was) is not
    answer.catch((err: unknown) => {
      const fact = err instanceof QuoteFailedError && err.details.budget === undefined
      if (!fact && this.answers?.get(block, key) === answer) this.answers.delete(block, key)
    })
    return answer
  }

  /**
   * An execution stopped by its budget (the token's code loops, ...) is a quote that cannot be
   * produced: 422 SIMULATION_FAILED naming the budget (`details.budget`; not kept in the answer
   * cache, see quote()).
   */
  private async compute(reader: StateReader, request: QuoteRequest): Promise<QuoteResult> {
    try {
      return await this.computeQuote(reader, request)
    } catch (err) {
      if (err instanceof ExecutionBudgetError) throw new QuoteFailedError('SIMULATION_FAILED', `the simulation was stopped: ${err.message}`, err.toDetails(), { cause: err })
      throw err
    }
  }

  private async computeQuote(reader: StateReader, request: QuoteRequest): Promise<QuoteResult> {
    const { simulator, router } = this.options
    const base = simulator.openState(reader)
    await this.requireToken(base, request.tokenIn, 'tokenIn')
    await this.requireToken(base, request.tokenOut, 'tokenOut')

    // gas is valued at the next block's base fee: what the swap would pay without a tip
    const gasPriceWei = base.block.baseFeePerGas ?? 0n
    const outcome = await this.options.planner.route(reader, { tokenIn: request.tokenIn, tokenOut: request.tokenOut, amountIn: request.amountIn, gasPriceWei })
    if (outcome.kind === 'no-route') {
      throw new QuoteFailedError('NO_ROUTE', 'no route between these tokens within 3 hops through the configured base tokens', {
        tokenIn: request.tokenIn,
        tokenOut: request.tokenOut,
      })
    }
    if (outcome.kind === 'amount-too-small') {
      throw new QuoteFailedError('AMOUNT_TOO_SMALL', 'amountIn is too small: the output rounds down to zero on every route', { amountIn: request.amountIn.toString() })
    }
    if (outcome.kind === 'insufficient-liquidity') {
      throw new QuoteFailedError('INSUFFICIENT_LIQUIDITY', 'the pools on every route are too shallow for this amount', { amountIn: request.amountIn.toString() })
    }
    let plan = outcome.plan

    // The account the calldata is executed from: the named sender with its real balances (topped
    // up only where short), or a fresh synthetic account funded through overrides. The calldata
    // names the requested recipient, or none (the router then pays msg.sender).
    const taker = request.sender ?? SYNTHETIC_TAKER
    const slippageBps = BigInt(request.slippageBps ?? this.options.defaultSlippageBps)
    const deadline = base.block.timestamp + BigInt(this.options.deadlineSeconds ?? 300)
    const funded = request.sender === undefined ? await this.fundSynthetic(base, request.tokenIn, request.amountIn) : await this.fund(base, request.tokenIn, taker, request.amountIn)
    const run = (p: RoutedPlan) => this.executeAtEvmOutput(funded, taker, request, p, slippageBps, deadline)

    let executed: Awaited<ReturnType<typeof run>>
    if (!planHasEstimatedHops(plan)) executed = await run(plan)
    else {
      // the estimate ranked a hooked pool; the exact pools' best plan (from the same search when the
      // planner gives it) competes, and the better execution wins
      const exact = outcome.exactPools ?? (await this.options.planner.route(reader, { tokenIn: request.tokenIn, tokenOut: request.tokenOut, amountIn: request.amountIn, gasPriceWei, exactPoolsOnly: true }))
      // the hooked plan: at once with the minimum its estimate sets when its hooked hops' estimates
      // held last time (final when it holds again), otherwise (or when that reverts) without a
      // minimum, since the estimate may exceed the EVM's output by more than the slippage; a hooked
      // route that reverts is no answer when an exact one exists
      const noAnswerIfExact = (err: unknown) => {
        if (exact.kind === 'plan' && err instanceof QuoteFailedError) return undefined
        throw err
      }
      let hookedFinal: Awaited<ReturnType<typeof run>> | undefined
      let probe: Awaited<ReturnType<typeof this.execute>> | undefined
      if (this.estimates.likelyExact(plan)) {
        const minAmountOut = (plan.expectedAmountOut * (10_000n - slippageBps)) / 10_000n
        probe = await this.execute(funded, taker, request.recipient, plan, minAmountOut, deadline).catch((err: unknown) => {
          if (err instanceof QuoteFailedError) return undefined
          throw err
        })
        if (probe !== undefined && probe.amountOut === plan.expectedAmountOut) hookedFinal = { execution: probe, minAmountOut }
      }
      probe ??= await this.execute(funded, taker, request.recipient, plan, 0n, deadline).catch(noAnswerIfExact)
      this.estimates.record(plan, probe?.amountOut === plan.expectedAmountOut)
      // the exact plan is executed only when it might win: not when the hooked execution nets more
      // than the exact plan's whole expected output (estimated-hops.ts)
      const exactRun = exact.kind === 'plan' && (probe === undefined || !estimatedExecutionBeatsExactPlan(probe, exact.plan, plan, gasPriceWei)) ? await run(exact.plan) : undefined
      if (exact.kind === 'plan' && exactRun !== undefined && (probe === undefined || exactExecutionIsBetter(probe, exactRun.execution, plan, gasPriceWei))) {
        plan = exact.plan
        executed = exactRun
      } else if (hookedFinal !== undefined) executed = hookedFinal
      else {
        // the calldata's minimum follows the EVM's output; executed again so gas is that of the final bytes
        const minAmountOut = (probe!.amountOut * (10_000n - slippageBps)) / 10_000n
        executed = { execution: await this.execute(funded, taker, request.recipient, plan, minAmountOut, deadline), minAmountOut }
      }
    }
    const { execution, minAmountOut } = executed

    this.counters.quotesExecuted++
    const legs = plan.legs.map((leg) => ({
      amountIn: leg.amountIn,
      amountOut: leg.expectedAmountOut,
      hops: leg.hops.map((h) => ({ protocol: h.protocol, pool: h.pool, tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.fee })),
    }))
    return {
      amountOut: execution.amountOut,
      gas: execution.gasUsed,
      calldata: execution.calldata,
      router,
      spender: router,
      blockNumber: reader.block.number,
      minAmountOut,
      routes: legs,
    }
  }

  /**
   * the plan's calldata executed with the minimum output the slippage allows from the EVM's own
   * output: when the math's figure differs, the calldata is re-made from the EVM's and executed
   * again, so gas is that of the final bytes; the difference is counted and logged. Only for plans
   * whose math claims to be exact: a plan through an estimated pool is executed in computeQuote.
   */
  private async executeAtEvmOutput(funded: SimulationState, taker: Address, request: QuoteRequest, plan: SwapPlan, slippageBps: bigint, deadline: bigint) {
    let minAmountOut = (plan.expectedAmountOut * (10_000n - slippageBps)) / 10_000n
    let execution = await this.execute(funded, taker, request.recipient, plan, minAmountOut, deadline)
    if (execution.amountOut !== plan.expectedAmountOut) {
      this.counters.mathDisagreements++
      this.options.log.warn(
        { tokenIn: request.tokenIn, tokenOut: request.tokenOut, amountIn: request.amountIn.toString(), math: plan.expectedAmountOut.toString(), evm: execution.amountOut.toString() },
        'route math and EVM disagree; the EVM result is quoted',
      )
      // the calldata's minimum must follow the EVM's figure; re-run so gas is that of the final bytes
      minAmountOut = (execution.amountOut * (10_000n - slippageBps)) / 10_000n
      execution = await this.execute(funded, taker, request.recipient, plan, minAmountOut, deadline)
    }
    return { execution, minAmountOut }
  }

  private async execute(state: SimulationState, taker: Address, recipient: Address | undefined, plan: SwapPlan, minAmountOut: bigint, deadline: bigint) {
    // the EVM executes the bytes as written (not a hex string it would parse back); the answer has
    // their hex, taken before the execution has them
    const data = encodeSwapPlanCallBytes({ plan, minAmountOut, recipient, deadline })
    const calldata = bytesToHexString(data)
    const result = await this.options.simulator.call(state, { from: taker, to: this.options.router, data })
    if (result.status !== 'success') {
      throw new QuoteFailedError('SIMULATION_FAILED', `the route reverted when executed: ${result.revertReason ?? result.error ?? 'no reason'}`, {
        revertReason: result.revertReason ?? null,
      })
    }
    return { amountOut: decodeAmountOut(result.returnData), gasUsed: result.gasUsed, calldata }
  }

  /**
   * A child of `base` in which the taker holds at least amountIn of the token and the router may
   * spend it: balance and allowance are topped up only where they fall short.
   */
  private async fund(base: SimulationState, token: Address, taker: Address, amountIn: bigint): Promise<SimulationState> {
    const balance = await this.view(base, token, encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [taker] }))
    const allowance = await this.view(base, token, encodeFunctionData({ abi: ERC20, functionName: 'allowance', args: [taker, this.options.router] }))
    const funded = base.fork()
    if (balance < amountIn) await this.options.erc20.setBalance(funded, token, taker, amountIn)
    if (allowance < amountIn) await this.options.erc20.setAllowance(funded, token, taker, this.options.router, MAX_UINT256)
    return funded
  }

  /** The synthetic taker holds exactly amountIn and has approved the router without limit, whatever the chain says. */
  private async fundSynthetic(base: SimulationState, token: Address, amountIn: bigint): Promise<SimulationState> {
    const funded = base.fork()
    await this.options.erc20.setBalance(funded, token, SYNTHETIC_TAKER, amountIn)
    await this.options.erc20.setAllowance(funded, token, SYNTHETIC_TAKER, this.options.router, MAX_UINT256)
    return funded
  }

  private async requireToken(state: SimulationState, token: Address, field: 'tokenIn' | 'tokenOut') {
    const block = blockKey(state.reader)
    let check = this.tokenChecks.get(block, token)
    if (check === undefined) {
      // the parent block's answer stands when this block wrote nothing of the token's (a devnet head)
      check = this.tokenChecks.carried(state.reader, token, [token]) ?? this.isToken(state, token)
      this.tokenChecks.set(block, token, check)
      check.catch(() => this.tokenChecks.delete(block, token))
    }
    if (!(await check)) throw new QuoteFailedError('NOT_A_TOKEN', `${field} ${token} is not an ERC-20 token on this chain`, { field, token })
  }

  private async isToken(state: SimulationState, token: Address): Promise<boolean> {
    const code = await state.reader.getCode(token)
    const answer = code.length === 0 ? undefined : await this.options.simulator.call(state, {
      from: SYNTHETIC_TAKER,
      to: token,
      data: encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [SYNTHETIC_TAKER] }),
      gasLimit: 200_000n,
    })
    return answer !== undefined && answer.status === 'success' && answer.returnData.length === 32
  }

  private async view(state: SimulationState, to: Address, data: Hex): Promise<bigint> {
    const r = await this.options.simulator.call(state, { from: SYNTHETIC_TAKER, to, data, gasLimit: 500_000n })
    if (r.status !== 'success' || r.returnData.length < 32) return 0n
    return BigInt(bytesToHexString(r.returnData.subarray(0, 32)))
  }
}
