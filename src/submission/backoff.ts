/** Moved to src/transport/backoff.ts; re-exported here for src/submission/index.ts's public exports. */
export { fullJitterDelay, sleep, type BackoffPolicy } from '../transport/backoff.ts'
