/**
 * Backrun metrics: eth_backrun's answers by outcome, counted where the JSON-RPC method calls the
 * service (one counter increment per request, beside an EVM search), and the backrun engine's own
 * counters, read at scrape time.
 */
import { Counter, type Registry } from 'prom-client'
import type { BackrunEngineStats } from '../../backrun/backrun-engine.ts'
import type { BackrunService } from '../../backrun/types.ts'
import { scrapedFamilies } from './registry.ts'

export const BACKRUN_OUTCOMES = ['found', 'none', 'error'] as const

/**
 * `service`, with each answer counted in backrun_answers_total: found (a backrun was answered),
 * none (null: the user's call reverts or nothing clears the minimum profit), error (the service
 * threw: an upstream or internal failure). Requests refused for their parameters never reach it.
 */
export function countBackrunAnswers(service: BackrunService, registry: Registry): BackrunService {
  const answers = new Counter({
    name: 'backrun_answers_total',
    help: 'eth_backrun answers by outcome: found (a backrun), none (null: the call reverts or no backrun clears the minimum profit), error (the engine failed).',
    labelNames: ['outcome'],
    registers: [registry],
  })
  // every outcome is reported from the start, so rate() and ratios have a series to work on
  for (const outcome of BACKRUN_OUTCOMES) answers.inc({ outcome }, 0)
  return {
    backrun: async (request) => {
      let found
      try {
        found = await service.backrun(request)
      } catch (error) {
        answers.inc({ outcome: 'error' })
        throw error
      }
      answers.inc({ outcome: found === null ? 'none' : 'found' })
      return found
    },
  }
}

/** The backrun engine's counters, which cover eth_backrun and the backruns planned for private submissions alike. */
export function registerBackrunEngineMetrics(registry: Registry, engine: { stats(): BackrunEngineStats }): void {
  const family = scrapedFamilies(registry)
  family({ name: 'backrun_found_total', help: 'Backruns the engine found and verified in the EVM (eth_backrun and submission planning).', type: 'counter' }, () => engine.stats().found)
  family(
    { name: 'backrun_verification_misses_total', help: 'Backrun candidates the route math found profitable whose backrun reverted when executed in the EVM (a math/EVM mismatch).', type: 'counter' },
    () => engine.stats().verificationMisses,
  )
  family({ name: 'backrun_user_call_reverted_total', help: 'eth_backrun requests whose user call reverted (answered null).', type: 'counter' }, () => engine.stats().userCallReverted)
}
