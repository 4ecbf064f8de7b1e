/**
 * A store for @fastify/rate-limit whose fixed-window counts are shared by every replica (a
 * {@link WindowCounter}, PostgreSQL's in ./postgres-window-counter.ts), so a key's limit holds
 * across replicas rather than per process.
 *
 * When the shared counter fails (the database is down or slow past its timeout), quotes stay up:
 * the request is counted in this process's memory instead (fail open to per-replica limits, so
 * with N replicas a key gets at most N times its limit), `onFallback` is told (a logged warning and
 * the `quote_rate_limit_fallbacks_total` metric), and the shared counter is not asked again for
 * `retryAfterMs`, so an outage costs one timeout per interval rather than one per request.
 */
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'

import { positiveInt } from '../../primitives/numbers.ts'

export interface WindowCount {
  /** requests of the key in the current window, this one included */
  count: number
  /** ms until the window ends */
  ttlMs: number
}

/** A fixed-window request counter shared by every replica. */
export interface WindowCounter {
  /** Count one request of `key` in the `windowMs` window that holds now. */
  increment(key: string, windowMs: number): Promise<WindowCount>
}

export interface SharedRateLimitOptions {
  counter: WindowCounter
  /** the shared counter failed: the request was counted in memory */
  onFallback(error: unknown): void
  /** after a failure, requests are counted in memory for this long before the shared counter is tried again, ms. Default 1 000. */
  retryAfterMs?: number
  /** keys counted in memory at most (the oldest windows are forgotten beyond it). Default 10 000. */
  maxLocalKeys?: number
  now?: () => number
}

/** A fixed-window count per key in this process's memory, bounded: the fallback. */
export class LocalWindowCounter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  constructor(
    private readonly maxKeys: number,
    private readonly now: () => number,
  ) {}

  increment(key: string, windowMs: number): WindowCount {
    const now = this.now()
    const start = now - (now % windowMs)
    const id = `${windowMs}:${key}`
    let window = this.windows.get(id)
    if (window === undefined || window.start !== start) {
      window = { start, count: 0 }
      this.windows.delete(id)
      // a new entry goes last: the first one is the oldest
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string)
      this.windows.set(id, window)
    }
    window.count++
    return { count: window.count, ttlMs: start + windowMs - now }
  }
}

/** The store class @fastify/rate-limit's `store` option takes, over `options.counter`. */
export function sharedRateLimitStore(options: SharedRateLimitOptions): FastifyRateLimitStoreCtor {
  const retryAfterMs = positiveInt('retryAfterMs', options.retryAfterMs ?? 1_000, 'sharedRateLimitStore')
  const now = options.now ?? Date.now
  const local = new LocalWindowCounter(positiveInt('maxLocalKeys', options.maxLocalKeys ?? 10_000, 'sharedRateLimitStore'), now)
  let sharedAgainAt = 0

  class SharedRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      const counted = (c: WindowCount): void => callback(null, { current: c.count, ttl: Math.max(0, c.ttlMs) })
      if (now() < sharedAgainAt) {
        counted(local.increment(key, timeWindow))
        return
      }
      options.counter.increment(key, timeWindow).then(counted, (error: unknown) => {
        sharedAgainAt = now() + retryAfterMs
        options.onFallback(error)
        counted(local.increment(key, timeWindow))
      })
    }

    child(): FastifyRateLimitStore {
      return this
    }
  }
  return SharedRateLimitStore
}
