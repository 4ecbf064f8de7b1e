/**
 * The settings both submission stores share, checked and defaulted once, and the bounded retry
 * both wrap their reads and writes in.
 */
import { errorText } from '../../primitives/error-text.ts'
import { nonNegativeInt, positiveInt } from '../../primitives/numbers.ts'
import { fullJitterDelay, sleep, type BackoffPolicy } from '../../transport/backoff.ts'
import { PersistenceError } from '../errors.ts'
import { STORE_DEFAULTS, type SubmissionStoreOptions } from './submission-store.ts'

export interface StoreSettings {
  maxOpen: number
  maxFinished: number
  finishedTtlMs: number
  writeAttempts: number
  writeBackoff: BackoffPolicy
  now: () => number
  onRetry: SubmissionStoreOptions['onRetry']
  leaseMs: number
}

/** @throws RangeError naming `owner` and the setting when a number is out of range */
export function resolveStoreSettings(options: SubmissionStoreOptions, owner: string): StoreSettings {
  return {
    maxOpen: positiveInt('maxOpen', options.maxOpen ?? STORE_DEFAULTS.maxOpen, owner),
    maxFinished: nonNegativeInt('retention.maxFinished', options.retention?.maxFinished ?? STORE_DEFAULTS.maxFinished, owner),
    finishedTtlMs: nonNegativeInt('retention.finishedTtlMs', options.retention?.finishedTtlMs ?? STORE_DEFAULTS.finishedTtlMs, owner),
    writeAttempts: positiveInt('writeAttempts', options.writeAttempts ?? STORE_DEFAULTS.writeAttempts, owner),
    writeBackoff: options.writeBackoff ?? STORE_DEFAULTS.writeBackoff,
    now: options.now ?? Date.now,
    onRetry: options.onRetry,
    leaseMs: positiveInt('leaseMs', options.leaseMs ?? STORE_DEFAULTS.leaseMs, owner),
  }
}

/**
 * Run `run` up to `settings.writeAttempts` times, with backoff between attempts.
 * @throws PersistenceError `<label> <operation> failed after <n> attempts: <last error>`
 */
export async function withRetry<T>(settings: StoreSettings, label: string, operation: PersistenceError['operation'], run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (attempt >= settings.writeAttempts) {
        throw new PersistenceError(`${label} ${operation} failed after ${attempt} attempts: ${errorText(error)}`, operation, attempt, { cause: error })
      }
      settings.onRetry?.({ operation, attempt, error })
      await sleep(fullJitterDelay(attempt, settings.writeBackoff))
    }
  }
}
