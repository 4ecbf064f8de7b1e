/**
 * Collectors for numbers the domain already keeps: the state source (head block, and in fork mode
 * upstream calls and cache hits) and the quote engine (math/EVM disagreements). Read at scrape
 * time, so the hot paths pay nothing for them.
 */
import { ForkStateSource } from '../../chain/fork/index.ts'
import type { ChainStateSource } from '../../chain/types.ts'
import type { QuoteService } from '../../quote/types.ts'
import type { CollectedFamily, MetricsRegistry } from './registry.ts'

export function registerServiceMetrics(registry: MetricsRegistry, services: { chain: ChainStateSource; quote?: QuoteService }): void {
  const { chain, quote } = services
  registry.registerCollector(() => {
    const families: CollectedFamily[] = [
      { name: 'state_head_block', help: 'Number of the block the state source is pinned to.', type: 'gauge', samples: [{ value: chain.latest().block.number }] },
      { name: 'state_source_info', help: 'The state source in use (devnet or fork).', type: 'gauge', samples: [{ labels: { mode: chain.kind }, value: 1 }] },
    ]
    if (chain instanceof ForkStateSource) {
      const s = chain.stats()
      const lookups = s.cacheHits + s.cacheMisses
      families.push(
        { name: 'upstream_rpc_calls_total', help: 'JSON-RPC calls sent to the upstream node (retries included), by method.', type: 'counter', samples: Object.entries(s.callsByMethod).map(([method, value]) => ({ labels: { method }, value })) },
        { name: 'upstream_http_requests_total', help: 'HTTP requests (JSON-RPC batches) sent to the upstream node.', type: 'counter', samples: [{ value: s.httpRequests }] },
        { name: 'upstream_retries_total', help: 'Upstream calls re-sent after a transient failure.', type: 'counter', samples: [{ value: s.retries }] },
        { name: 'upstream_errors_total', help: 'Upstream calls that finally failed.', type: 'counter', samples: [{ value: s.upstreamErrors }] },
        { name: 'state_cache_hits_total', help: 'State reads answered from the fork cache.', type: 'counter', samples: [{ value: s.cacheHits }] },
        { name: 'state_cache_misses_total', help: 'State reads that needed the upstream node.', type: 'counter', samples: [{ value: s.cacheMisses }] },
        { name: 'state_cache_hit_ratio', help: 'cache hits / (hits + misses) since start; 0 before the first read.', type: 'gauge', samples: [{ value: lookups === 0 ? 0 : s.cacheHits / lookups }] },
        { name: 'state_cache_entries', help: 'Account and storage entries held by the fork cache.', type: 'gauge', samples: [{ value: s.stateEntries }] },
        { name: 'state_cache_code_entries', help: 'Contract codes held by the fork cache.', type: 'gauge', samples: [{ value: s.codeEntries }] },
      )
    }
    const q = quote?.stats?.()
    if (q !== undefined) {
      families.push(
        { name: 'quote_executions_total', help: 'Quotes whose calldata was executed in the EVM and answered.', type: 'counter', samples: [{ value: q.quotesExecuted }] },
        { name: 'quote_cache_hits_total', help: 'Quotes answered from the per-block answer cache (same request, same block).', type: 'counter', samples: [{ value: q.cacheHits }] },
        { name: 'quote_math_evm_disagreements_total', help: 'Quotes where the route math and the EVM execution disagreed (the EVM figure was answered).', type: 'counter', samples: [{ value: q.mathDisagreements }] },
      )
    }
    return families
  })
}
