/** Fork of an upstream JSON-RPC node as a `ChainStateSource`. */
export { ForkStateSource, FORK_SOURCE_DEFAULTS, type ForkStateSourceOptions, type ForkStats } from './fork-state-source.ts'
export { ForkStateReader } from './fork-state-reader.ts'
export { UpstreamClient, UPSTREAM_CLIENT_DEFAULTS, type UpstreamClientOptions, type UpstreamClientStats, type CallOptions, type RpcParam } from './upstream-client.ts'
export { STATE_CACHE_DEFAULTS, type StateCacheOptions } from './state-cache.ts'
export { RECENT_READS_DEFAULTS, type RecentReadsOptions } from './recent-reads.ts'
