/**
 * The quote rate limit's shared store (src/server/rate-limit/shared-rate-limit-store.ts): counts
 * come from the shared counter; when it fails, the request is counted in this process's memory,
 * the failure is reported, and the shared counter is left alone for retryAfterMs.
 */
import { describe, expect, it } from 'vitest'

import { sharedRateLimitStore, type WindowCount, type WindowCounter } from '../../../src/server/rate-limit/shared-rate-limit-store.ts'

class ScriptedCounter implements WindowCounter {
  calls = 0
  failing = false
  async increment(_key: string, windowMs: number): Promise<WindowCount> {
    this.calls++
    if (this.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
    return { count: 100 + this.calls, ttlMs: windowMs - 1 }
  }
}

function incr(store: InstanceType<ReturnType<typeof sharedRateLimitStore>>, key: string, windowMs: number): Promise<{ current: number; ttl: number }> {
  return new Promise((resolve, reject) => store.incr(key, (err, result) => (err !== null || result === undefined ? reject(err) : resolve(result)), windowMs, 10))
}

describe('sharedRateLimitStore', () => {
  it('answers the shared count; on a failure counts in memory, reports it, and retries the shared counter only after retryAfterMs', async () => {
    let now = 1_000_000
    const counter = new ScriptedCounter()
    const fallbacks: unknown[] = []
    const Store = sharedRateLimitStore({ counter, onFallback: (err) => fallbacks.push(err), retryAfterMs: 500, now: () => now })
    const store = new Store({})
    expect(store.child({} as never)).toBe(store)

    expect(await incr(store, 'k1', 1_000)).toEqual({ current: 101, ttl: 999 })
    counter.failing = true
    // fail open: counted here (1, 2, 3 in this window), never an error for the request
    expect(await incr(store, 'k1', 1_000)).toEqual({ current: 1, ttl: 1_000 })
    expect(fallbacks).toHaveLength(1)
    now += 100
    expect(await incr(store, 'k1', 1_000)).toEqual({ current: 2, ttl: 900 })
    expect(await incr(store, 'k2', 1_000)).toEqual({ current: 1, ttl: 900 })
    // within retryAfterMs the shared counter is not asked (one timeout per interval, not per request)
    expect(counter.calls).toBe(2)

    now += 500
    counter.failing = false
    expect(await incr(store, 'k1', 1_000)).toEqual({ current: 103, ttl: 999 })
    expect(fallbacks).toHaveLength(1)
  })

  it('its memory counts fixed windows and holds a bounded number of keys', async () => {
    let now = 5_000
    const counter = new ScriptedCounter()
    counter.failing = true
    const Store = sharedRateLimitStore({ counter, onFallback: () => undefined, retryAfterMs: 1_000_000, maxLocalKeys: 2, now: () => now })
    const store = new Store({})
    expect((await incr(store, 'a', 1_000)).current).toBe(1)
    expect((await incr(store, 'a', 1_000)).current).toBe(2)
    now += 1_000
    expect((await incr(store, 'a', 1_000)).current).toBe(1)
    await incr(store, 'b', 1_000)
    await incr(store, 'c', 1_000)
    // 'a' was the oldest of three keys with room for two: forgotten
    expect((await incr(store, 'a', 1_000)).current).toBe(1)
  })
})
