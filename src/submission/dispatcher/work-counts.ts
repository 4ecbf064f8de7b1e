/**
 * How much the dispatcher's preparation has done since start: simulations of user txs and backrun
 * plans that completed (a plan that found nothing counts; one that failed or timed out does not).
 * An operator divides their rate by the acknowledgement rate to see whether the dispatcher keeps up
 * (bench:submit reports it beside the acknowledgement latency). Counted around the ports, so the
 * parts that call them need not know.
 */
import type { BackrunPlanner, SubmissionSimulator } from '../dispatcher-ports.ts'

export interface DispatcherWorkCounts {
  /** simulations of a submission's user txs that completed */
  simulations: number
  /** backrun plans that completed (a backrun or none found) */
  plans: number
}

/** `simulate` and `planner` as given, each completion counted in the returned `counts`. */
export function countedPorts(ports: { simulate: SubmissionSimulator; planner: BackrunPlanner }): {
  simulate: SubmissionSimulator
  planner: BackrunPlanner
  counts: DispatcherWorkCounts
} {
  const counts: DispatcherWorkCounts = { simulations: 0, plans: 0 }
  const { simulate, planner } = ports
  const counted: BackrunPlanner = {
    plan: async (input) => {
      const plan = await planner.plan(input)
      counts.plans++
      return plan
    },
  }
  if (planner.release !== undefined) counted.release = (id, block) => planner.release?.(id, block)
  return {
    simulate: async (input) => {
      const report = await simulate(input)
      counts.simulations++
      return report
    },
    planner: counted,
    counts,
  }
}
