/** Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"). */

export interface BackoffPolicy {
  /** delay cap of the first retry, ms */
  baseMs: number
  /** no delay exceeds this, ms */
  maxMs: number
}

/**
 * Delay before retry number `retry` (1 = first retry): uniform in [0, min(maxMs, baseMs * 2^(retry-1))).
 * Full jitter spreads the retries of many callers that failed together.
 */
export function fullJitterDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry - 1))
  return Math.floor(random() * cap)
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
