/**
 * Scraped families for numbers the domain already keeps: the state source (head block, and in fork
 * mode upstream calls and cache hits) and the quote engine (math/EVM disagreements). Read at
 * scrape time, so the hot paths pay nothing for them.
 */
import type { Registry } from 'prom-client'
import { ForkStateSource } from '../../chain/fork/index.ts'
import type { ChainStateSource } from '../../chain/types.ts'
import type { QuoteService } from '../../quote/types.ts'
import { scrapedFamilies } from './registry.ts'

export function registerServiceMetrics(registry: Registry, services: { chain: ChainStateSource; quote?: QuoteService }): void {
  const { chain, quote } = services
  const family = scrapedFamilies(registry)
  family({ name: 'state_head_block', help: 'Number of the block the state source is pinned to.', type: 'gauge' }, () => chain.latest().block.number)
  family({ name: 'state_source_info', help: 'The state source in use (devnet or fork).', type: 'gauge', labelNames: ['mode'] }, () => [{ labels: { mode: chain.kind }, value: 1 }])

  if (chain instanceof ForkStateSource) {
    const stats = () => chain.stats()
    family({ name: 'upstream_rpc_calls_total', help: 'JSON-RPC calls sent to the upstream node (retries included), by method.', type: 'counter', labelNames: ['method'] }, () =>
      Object.entries(stats().callsByMethod).map(([method, value]) => ({ labels: { method }, value })),
    )
    family({ name: 'upstream_http_requests_total', help: 'HTTP requests (JSON-RPC batches) sent to the upstream node.', type: 'counter' }, () => stats().httpRequests)
    family({ name: 'upstream_retries_total', help: 'Upstream calls re-sent after a transient failure.', type: 'counter' }, () => stats().retries)
    family({ name: 'upstream_errors_total', help: 'Upstream calls that finally failed.', type: 'counter' }, () => stats().upstreamErrors)
    family({ name: 'state_cache_hits_total', help: 'State reads answered from the fork cache.', type: 'counter' }, () => stats().cacheHits)
    family({ name: 'state_cache_misses_total', help: 'State reads that needed the upstream node.', type: 'counter' }, () => stats().cacheMisses)
    family({ name: 'state_cache_hit_ratio', help: 'cache hits / (hits + misses) since start; 0 before the first read.', type: 'gauge' }, () => {
      const s = stats()
      const lookups = s.cacheHits + s.cacheMisses
      return lookups === 0 ? 0 : s.cacheHits / lookups
    })
    family({ name: 'state_cache_entries', help: 'Account and storage entries held by the fork cache.', type: 'gauge' }, () => stats().stateEntries)
    family({ name: 'state_cache_code_entries', help: 'Contract codes held by the fork cache.', type: 'gauge' }, () => stats().codeEntries)
  }

  if (quote?.stats !== undefined) {
    const stats = () => quote.stats?.()
    family({ name: 'quote_executions_total', help: 'Quotes whose calldata was executed in the EVM and answered.', type: 'counter' }, () => stats()?.quotesExecuted)
    family({ name: 'quote_cache_hits_total', help: 'Quotes answered from the per-block answer cache (same request, same block).', type: 'counter' }, () => stats()?.cacheHits)
    family(
      { name: 'quote_math_evm_disagreements_total', help: 'Quotes where the route math and the EVM execution disagreed (the EVM figure was answered).', type: 'counter' },
      () => stats()?.mathDisagreements,
    )
  }
}
