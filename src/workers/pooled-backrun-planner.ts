/**
 * The dispatcher's BackrunPlanner when WORKERS > 0: the plan (the user's transactions executed,
 * the backrun search over their state, the signed backrun verified on it) is computed by a worker
 * of the pool, on the block that was the main thread's latest when it was asked for, by the same
 * code as in-process (src/submission/backrun-planning.ts), so the plan is the same.
 *
 * The searcher keys never leave this thread. The worker asks for what needs them through its
 * channel, for this task only: lease a key for the target block, sign the backrun request with it,
 * give it back. This thread answers from its SearcherKeyPool (searcher-key-leases.ts) and signs only
 * backrun calls to the configured executor on this chain, for the holder of the lease. So leases
 * and nonces keep one owner (this thread), in the order the in-process planner takes them.
 *
 * Planning takes its own places in the pool (`share`, fewer than the workers, so a simulation, which
 * the user's own bundle waits for, always finds one). The dispatcher's clock (TaskClock) is told that
 * the plan queues (for its share, then in the pool) and when a worker takes it: the dispatcher bounds
 * the wait (queueWaitMs: past it the plan fails as busy, "planned again at the next head") apart
 * from the run (prepareTimeoutMs, from the worker's start), so under a saturated pool plans fail
 * fast instead of each spending its run bound in the queue.
 *
 * A worker that hung or died (or a pool that is closing or full) makes the plan throw with a
 * message that says so (the dispatcher records "backrun planning failed: ..." and forwards the
 * user's own bundle); a key the task had leased is given back. The dispatcher's abort reaches the
 * task as for the simulator (see WorkerPool.run).
 */
import type { Address } from '../chain/types.ts'
import { planningSettings, type BackrunPlanningSettings, type SearcherKeyLeases } from '../submission/backrun-planning.ts'
import type { BackrunPlan, BackrunPlanInput, BackrunPlanner } from '../submission/dispatcher-ports.ts'
import { throwIfAborted } from '../submission/engine-simulator.ts'
import type { Limiter } from '../submission/limiter.ts'
import { searcherKeyLeases } from '../submission/searcher-key-leases.ts'
import type { SearcherKeyPool } from '../submission/searcher-key-pool.ts'
import type { PlanTaskRequest, TaskCall } from './tasks.ts'
import type { WorkerPool } from './worker-pool.ts'
import { WorkerTaskError } from './worker-task-error.ts'

export interface PooledBackrunPlannerOptions {
  /** the searcher accounts backruns are signed with (one backrun per key per block) */
  keys: SearcherKeyPool
  /** share of the gross profit refunded to the user (the signer of the last user tx), basis points. Default 0. */
  refundBps?: number
  /** tip of the backrun transaction, wei per gas */
  maxPriorityFeePerGas: bigint
  /** added to the measured gas (the backrun's execution + 21 000), basis points. Default 3 000 (+30%). */
  gasLimitMarginBps?: number
  /** the places in the pool backrun planning may take at once */
  share: Limiter
}

export class PooledBackrunPlanner implements BackrunPlanner {
  readonly keys: SearcherKeyPool
  private readonly leases: SearcherKeyLeases
  private readonly settings: BackrunPlanningSettings
  private readonly share: Limiter

  /** @throws RangeError for a bad option */
  constructor(
    private readonly pool: WorkerPool,
    options: PooledBackrunPlannerOptions,
  ) {
    this.settings = planningSettings(options, 'PooledBackrunPlanner')
    this.keys = options.keys
    this.share = options.share
    const { chainId, contracts } = pool.chainSettings()
    this.leases = searcherKeyLeases(options.keys, { chainId, executor: contracts.backrunExecutor })
  }

  release(id: string, block: bigint): void {
    this.keys.release(block, id)
  }

  async plan(input: BackrunPlanInput): Promise<BackrunPlan | null> {
    throwIfAborted(input.signal)
    // what the in-process planner answers before any work: no task for it
    if (input.simulation !== undefined && !input.simulation.success) return null
    if ((input.rawTxs ?? input.userTxs).length === 0) return null
    // before the first await: the dispatcher's wait bound counts from here
    input.clock?.queued()
    const request: PlanTaskRequest = {
      id: input.id,
      kind: input.kind,
      rawTxs: input.rawTxs !== undefined ? [...input.rawTxs] : input.userTxs.map((tx) => tx.rawHex),
      simulation: input.simulation,
      tipFloor: input.tipFloor,
      settings: this.settings,
      searcherKeys: this.keys.size,
    }
    /** the block this task leased a key for, if it did: given back if the task dies holding it */
    let leased: bigint | undefined
    const host = async (call: TaskCall): Promise<unknown> => {
      if (call.owner !== input.id) throw new Error(`a planning task for ${input.id} asked for the keys of ${call.owner}`)
      switch (call.op) {
        case 'lease': {
          const address: Address | undefined = await this.leases.lease(call.head, call.target, call.owner)
          if (address !== undefined) leased = call.target
          return address
        }
        case 'sign':
          return this.leases.sign(call.target, call.owner, call.request)
        case 'release':
          await this.leases.release(call.target, call.owner)
          if (leased === call.target) leased = undefined
          return undefined
      }
    }
    try {
      return await this.share.run(() => {
        throwIfAborted(input.signal)
        return this.pool.run('plan', request, this.pool.pinLatest(), { signal: input.signal, host, onStart: () => input.clock?.started() })
      }, input.signal)
    } catch (err) {
      // no cause: the message already holds the pool's whole text, which the dispatcher's errorText would repeat
      if (err instanceof WorkerTaskError) {
        if (leased !== undefined) this.keys.release(leased, input.id)
        throw new WorkerTaskError(err.failure, `the backrun planning could not finish: ${err.message}`)
      }
      throw err
    }
  }
}
