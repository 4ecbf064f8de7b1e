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
 * the user's own bundle waits for, always finds one), and waits for one at most PLAN_START_WAIT_MS:
 * a plan that cannot start by then fails at once as busy ("planned again at the next head"). Under
 * a saturated pool plans then fail fast instead of each waiting out the dispatcher's 2 s bound while
 * the submission's next steps wait behind it.
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

/** How long a plan waits for a place in the pool before it gives up as busy, ms. */
export const PLAN_START_WAIT_MS = 250

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
    if (input.userTxs.length === 0) return null
    const request: PlanTaskRequest = {
      id: input.id,
      kind: input.kind,
      rawTxs: input.userTxs.map((tx) => tx.rawHex),
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
    const startBound = AbortSignal.timeout(PLAN_START_WAIT_MS)
    try {
      return await this.share.run(
        () => {
          throwIfAborted(input.signal)
          return this.pool.run('plan', request, this.pool.pinLatest(), { signal: input.signal, host })
        },
        AbortSignal.any([input.signal, startBound]),
      )
    } catch (err) {
      if (err === startBound.reason && !input.signal.aborted) {
        throw new WorkerTaskError('busy', `every worker backrun planning may use was busy for ${PLAN_START_WAIT_MS} ms; planned again at the next head`)
      }
      // no cause: the message already holds the pool's whole text, which the dispatcher's errorText would repeat
      if (err instanceof WorkerTaskError) {
        if (leased !== undefined) this.keys.release(leased, input.id)
        throw new WorkerTaskError(err.failure, `the backrun planning could not finish: ${err.message}`)
      }
      throw err
    }
  }
}
