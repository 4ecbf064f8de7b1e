/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"),
 * the retry policy of the JSON-RPC transport and of the outbox's disk writes.
 */

export interface BackoffPolicy {
  /** delay cap of the first retry, ms */
  baseMs: number
  /** no delay exceeds this, ms */
  maxMs: number
  /**
   * 'full' (default): uniform in [0, cap), which spreads the retries of many callers that failed
   * together. 'none': exactly the cap, for a single caller whose waits must be predictable.
   */
  jitter?: 'full' | 'none'
}

/** The cap of retry number `retry` (1 = first retry): min(maxMs, baseMs * 2^(retry-1)). */
export function backoffCap(retry: number, policy: BackoffPolicy): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry - 1))
}

/**
 * Delay before retry number `retry` (1 = first retry): uniform in [0, min(maxMs, baseMs * 2^(retry-1))).
 * Full jitter spreads the retries of many callers that failed together.
 */
export function fullJitterDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  return Math.floor(random() * backoffCap(retry, policy))
}

/** Delay before retry number `retry` as `policy.jitter` says (full jitter unless 'none'). */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  return policy.jitter === 'none' ? backoffCap(retry, policy) : fullJitterDelay(retry, policy, random)
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
