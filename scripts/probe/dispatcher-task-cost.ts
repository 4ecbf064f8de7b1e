/**
 * npx tsx scripts/probe/dispatcher-task-cost.ts
 *
 * What the dispatcher's work on one submission costs a worker (issues 10 and 14: the dispatcher
 * simulates every submission and plans its backrun, so at `replicas_acks_per_s` answers/s the
 * replicas' workers need that many simulations and plans per second): bench:submit's load (distinct
 * fixture swaps that leave an arbitrage, scripts/lib/submit-load.ts) through the pooled simulator
 * and backrun planner the service uses with WORKERS > 0 (src/workers), on the embedded devnet's
 * head, in this process with a pool of DISPATCHER_WORKERS workers (default 1).
 * First DISPATCHER_COUNT submissions (default 200) are simulated, then each is planned with its
 * report; the CPU of the pool's worker threads, of this process's main thread (which holds the
 * chain, answers the workers' state reads and runs the pool) and of V8's platform threads over
 * each phase, from /proc (test/support/thread-cpu.ts), in ms per simulation and per plan.
 * A first round of the same size warms the workers (their decode memo holds the transactions, as
 * a re-simulation at a head would find them): the measured round signs new transactions.
 * Last line: one JSON object.
 */
import { availableParallelism } from 'node:os'
import type { BackrunPlanInput, SimulationReport } from '../../src/submission/dispatcher-ports.ts'
import { Limiter } from '../../src/submission/limiter.ts'
import { privateKeyBackrunSigner } from '../../src/submission/engine-backrun-planner.ts'
import { SearcherKeyPool } from '../../src/submission/searcher-key-pool.ts'
import { submissionId } from '../../src/submission/types.ts'
import { decodeSignedTransaction } from '../../src/tx/index.ts'
import { PooledBackrunPlanner } from '../../src/workers/pooled-backrun-planner.ts'
import { pooledSubmissionSimulator } from '../../src/workers/pooled-submission-simulator.ts'
import { openDomainWithPool } from '../../test/support/pooled-domain.ts'
import { threadCpuPer } from '../../test/support/thread-cpu.ts'
import { startThreadCpuWindow } from '../lib/process-cpu.ts'
import { registry, signSwaps } from '../lib/submit-load.ts'

const COUNT = Number(process.env.DISPATCHER_COUNT ?? 200)
const WORKERS = Number(process.env.DISPATCHER_WORKERS ?? 1)
const PRIORITY_FEE = 1_000_000_000n

async function main(): Promise<void> {
  const { domain, pool } = await openDomainWithPool({ threads: WORKERS })
  try {
    const share = new Limiter(WORKERS)
    const simulate = pooledSubmissionSimulator(pool, share)
    const searcherKeys = (registry.devAccounts.searcherIndexes ?? []).map((index) => registry.devAccounts.accounts.find((a) => a.index === index)!.privateKey)
    const inputs = async (offset: number): Promise<BackrunPlanInput[]> =>
      (await signSwaps(COUNT, offset)).map((raw) => {
        const tx = decodeSignedTransaction(raw, { chainId: BigInt(registry.chainId), common: domain.simulator.common })
        return { id: submissionId('private-tx', tx.hash), kind: 'private-tx', userTxs: [tx], rawTxs: [raw], simulation: undefined, signal: new AbortController().signal, tipFloor: 2_000_000_000n }
      })
    const round = async (batch: BackrunPlanInput[]) => {
      const simulations = startThreadCpuWindow(process.pid, WORKERS)
      const reports: SimulationReport[] = await Promise.all(batch.map((input) => simulate(input)))
      const simulated = simulations.stop()
      const plans = startThreadCpuWindow(process.pid, WORKERS)
      let found = 0
      // each plan with a key pool of its own (a plan leases one key per block), as many at once as the pool has workers
      for (let i = 0; i < batch.length; i += WORKERS) {
        const slice = batch.slice(i, i + WORKERS)
        const planned = await Promise.all(slice.map((input, k) => new PooledBackrunPlanner(pool, { keys: new SearcherKeyPool(searcherKeys.map((key) => privateKeyBackrunSigner(key))), share, maxPriorityFeePerGas: PRIORITY_FEE }).plan({ ...input, simulation: reports[i + k] })))
        found += planned.filter((p) => p !== null).length
      }
      const planCpu = plans.stop()
      return { succeeded: reports.filter((r) => r.success).length, found, simulation: threadCpuPer(simulated, batch.length), plan: threadCpuPer(planCpu, batch.length) }
    }
    await round(await inputs(0)) // warm-up
    const measured = await round(await inputs(COUNT))
    console.log(`${COUNT} submissions, ${measured.succeeded} simulated successfully, ${measured.found} backruns planned; CPU ms per simulation ${JSON.stringify(measured.simulation)}, per plan ${JSON.stringify(measured.plan)}`)
    console.log(JSON.stringify({ name: 'probe:dispatcher-task-cost', workers: WORKERS, count: COUNT, cores: availableParallelism(), ...measured }))
  } finally {
    await pool.close()
    await domain.close()
  }
}

await main()
