/**
 * {@link SearcherKeyLeases} over the SearcherKeyPool of this thread: what planning leases and signs
 * with, on the main thread. The in-process planner uses it directly; the pooled planner answers a
 * worker's requests with it (src/workers/pooled-backrun-planner.ts), so the keys stay here.
 *
 * A signature is given only to the holder of a lease, with the key it holds for that block, and,
 * when a guard is set, only for a backrun call: the chain's id, the executor as `to`. A worker can
 * then have nothing else signed with a searcher key than what planning would sign anyway.
 */
import type { Address, Hex } from '../chain/types.ts'
import type { BackrunTransactionRequest } from './backrun-signer.ts'
import type { SearcherKeyLeases } from './backrun-planning.ts'
import type { SearcherKeyPool } from './searcher-key-pool.ts'

export interface SigningGuard {
  chainId: bigint
  /** the only `to` a backrun is signed for (the BackrunExecutor) */
  executor: Address
}

export function searcherKeyLeases(pool: SearcherKeyPool, guard?: SigningGuard): SearcherKeyLeases {
  return {
    size: pool.size,
    lease(head: bigint, target: bigint, owner: string): Promise<Address | undefined> {
      pool.pruneThrough(head)
      return Promise.resolve(pool.lease(target, owner)?.address)
    },
    sign(target: bigint, owner: string, request: BackrunTransactionRequest): Promise<Hex> {
      const signer = pool.holder(target, owner)
      if (signer === undefined) return Promise.reject(new Error(`${owner} holds no searcher key for block ${target}`))
      if (guard !== undefined && (request.chainId !== guard.chainId || request.to.toLowerCase() !== guard.executor.toLowerCase())) {
        return Promise.reject(new Error(`a searcher key signs backrun calls only: chain ${guard.chainId}, to ${guard.executor} (asked: chain ${request.chainId}, to ${request.to})`))
      }
      return signer.signTransaction(request)
    },
    release(target: bigint, owner: string): Promise<void> {
      pool.release(target, owner)
      return Promise.resolve()
    },
  }
}
