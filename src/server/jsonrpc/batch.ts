/**
 * Batches (JSON-RPC 2.0 section 6), following geth where the spec is silent:
 * - `[]` is answered with one error object (not an array): -32600 "empty batch", id null.
 * - More entries than the limit: an array holding one error, -32600 "batch too large", whose id
 *   is the id of the first entry that expects a response (null when there is none), so a client
 *   can still match it to a pending call (geth's respondWithBatchTooLarge).
 * - Otherwise every entry is handled on its own; invalid entries get their own -32600 with id
 *   null, notifications get no entry, and the answer lists the responses in request order.
 *   When no entry needs a response the HTTP body is empty.
 * Entries run concurrently, at most `concurrency` at a time.
 */
import { isCallWithId, readEchoId, type JsonRpcId } from './envelope.ts'

export const DEFAULT_MAX_BATCH_SIZE = 50
export const DEFAULT_BATCH_CONCURRENCY = 4

export type BatchPlan =
  | { kind: 'empty' }
  | { kind: 'too_large'; id: JsonRpcId | null }
  | { kind: 'run'; entries: readonly unknown[] }

export function planBatch(entries: readonly unknown[], maxBatchSize: number): BatchPlan {
  if (entries.length === 0) return { kind: 'empty' }
  if (entries.length > maxBatchSize) {
    const firstCall = entries.find(isCallWithId)
    return { kind: 'too_large', id: firstCall === undefined ? null : readEchoId(firstCall) }
  }
  return { kind: 'run', entries }
}

/**
 * Maps `items` through `fn` with at most `concurrency` calls in flight; results keep the order of
 * `items`. `fn` should not reject (a rejection rejects the whole map, the other calls still finish).
 */
export async function mapBounded<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index], index)
    }
  }
  const workers = Math.max(1, Math.min(concurrency, items.length))
  await Promise.all(Array.from({ length: workers }, worker))
  return results
}

/** Joins encoded response objects into the body of a batch answer; undefined when there are none. */
export function joinBatchResponses(encoded: readonly (string | null)[]): string | undefined {
  const present = encoded.filter((e): e is string => e !== null)
  return present.length === 0 ? undefined : `[${present.join(',')}]`
}
