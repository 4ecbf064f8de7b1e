/**
 * The QuoteService the server calls when WORKERS > 0: each quote is computed by a worker of the
 * pool, on the block that was the main thread's latest when the request arrived, and answered
 * exactly as the in-process EvmQuoteService would (the same engine runs in the worker; its error
 * comes back as the same class).
 *
 * The answer cache lives here, on the main thread, with EvmQuoteService's rules (per block and
 * request, the last 2 blocks, QUOTE_CACHE_MAX_ENTRIES each; answers and quote failures are kept,
 * budget stops are not): with one cache per worker a repeated request would be a miss whenever it
 * reached another worker.
 *
 * The worker answers with the 200 body already written (server/quote/quote-json.ts), and that string
 * is what is cached and what quoteJson() gives the route: the main thread neither clones the nested
 * answer nor serializes it (issue 13). quote() parses it back for callers that want the domain value.
 *
 * A request whose worker hung or died is a 422 SIMULATION_FAILED whose details name the failure
 * (`worker`: hung | crashed | busy | closed); it is not cached.
 */
import type { StateReader } from '../chain/types.ts'
import { BlockScopedCache } from '../pools/block-scoped-cache.ts'
import { blockKey } from '../pools/view-calls.ts'
import { QuoteFailedError, type QuoteRequest, type QuoteResult, type QuoteService, type QuoteServiceStats } from '../quote/types.ts'
import { parseQuoteJson, type QuoteJsonSource } from '../server/quote/quote-json.ts'
import type { WorkerPool } from './worker-pool.ts'
import { WorkerTaskError } from './worker-task-error.ts'

export interface PooledQuoteServiceOptions {
  /** answers kept per block (QUOTE_CACHE_MAX_ENTRIES); 0 disables the cache */
  maxCachedQuotes: number
}

export class PooledQuoteService implements QuoteService, QuoteJsonSource {
  private cacheHits = 0
  private readonly answers: BlockScopedCache<Promise<string>> | undefined

  constructor(
    private readonly pool: WorkerPool,
    options: PooledQuoteServiceOptions,
  ) {
    // answers of the last 2 blocks: only the head's are asked for
    this.answers = options.maxCachedQuotes > 0 ? new BlockScopedCache({ blocks: 2, maxPerBlock: options.maxCachedQuotes }) : undefined
  }

  /** the workers' counters, and the hits of the answer cache kept here */
  stats(): QuoteServiceStats {
    const workers = this.pool.quoteStats()
    return { quotesExecuted: workers.quotesExecuted, mathDisagreements: workers.mathDisagreements, cacheHits: this.cacheHits }
  }

  async quote(request: QuoteRequest): Promise<QuoteResult> {
    return parseQuoteJson(await this.quoteJson(request))
  }

  /** The 200 body of POST /v1/quote for `request`, as the worker wrote it. */
  quoteJson(request: QuoteRequest): Promise<string> {
    const reader = this.pool.pinLatest()
    if (this.answers === undefined) return this.compute(reader, request)
    const block = blockKey(reader)
    const key = `${request.tokenIn}:${request.tokenOut}:${request.amountIn}:${request.slippageBps ?? ''}:${request.recipient ?? ''}:${request.sender ?? ''}`
    const cached = this.answers.get(block, key)
    if (cached !== undefined) {
      this.cacheHits++
      return cached
    }
    const answer = this.compute(reader, request)
    this.answers.set(block, key, answer)
    // only answers and quote failures are facts about the block; an upstream error, a budget stop
    // or a worker's failure (which depend on how busy the process was) are not
    answer.catch((err: unknown) => {
      const fact = err instanceof QuoteFailedError && err.details.budget === undefined && err.details.worker === undefined
      if (!fact && this.answers?.get(block, key) === answer) this.answers.delete(block, key)
    })
    return answer
  }

  private async compute(reader: StateReader, request: QuoteRequest): Promise<string> {
    try {
      return await this.pool.run('quote', request, reader)
    } catch (err) {
      if (err instanceof WorkerTaskError) throw new QuoteFailedError('SIMULATION_FAILED', `the quote could not be computed: ${err.message}`, { worker: err.failure })
      throw err
    }
  }
}
