/**
 * Backruns sequenced per block: a pool of searcher accounts (SEARCHER_PRIVATE_KEYS), each of
 * which carries at most ONE backrun per target block.
 *
 * Why: a backrun transaction is valid only with its account's next nonce. When every backrun of a
 * block is signed by one account, they all carry the same nonce and at most one can land; worse,
 * one that is not included (outbid, its user tx late) invalidates every backrun signed after it
 * with a higher nonce. With one backrun per account per block, each backrun's nonce is simply the
 * account's nonce on the head it was planned on, so one backrun's absence never invalidates
 * another's. Nonces are re-read from the head state at every plan (the planner does), never
 * counted locally, so a backrun that did or did not land is picked up by the next head.
 *
 * Limits: at most `size` backruns per block. When every key is taken for a block, further
 * submissions go out for that block without a backrun (their backrun-free bundle still lands the
 * user's transaction) and are planned again at the next head. Leases are first come, first served
 * among the submissions planned for a block; a submission re-planned for the same block keeps its
 * key.
 */
import type { BackrunTransactionSigner } from './backrun-signer.ts'

export class SearcherKeyPool {
  readonly signers: readonly BackrunTransactionSigner[]
  /** target block -> key index -> owner (a submission id) */
  private readonly leases = new Map<bigint, Map<number, string>>()

  /** @throws TypeError when empty or when two signers share an address */
  constructor(signers: readonly BackrunTransactionSigner[]) {
    if (signers.length === 0) throw new TypeError('SearcherKeyPool: at least one searcher key is required')
    const addresses = new Set(signers.map((s) => s.address.toLowerCase()))
    if (addresses.size !== signers.length) throw new TypeError('SearcherKeyPool: searcher keys must be distinct accounts')
    this.signers = signers
  }

  get size(): number {
    return this.signers.length
  }

  /**
   * A key with no backrun for `block` yet, leased to `owner` (the same owner asking again for the
   * same block gets the same key); undefined when every key carries another owner's backrun.
   */
  lease(block: bigint, owner: string): BackrunTransactionSigner | undefined {
    let forBlock = this.leases.get(block)
    if (forBlock === undefined) {
      forBlock = new Map()
      this.leases.set(block, forBlock)
    }
    for (const [index, holder] of forBlock) if (holder === owner) return this.signers[index]
    for (let index = 0; index < this.signers.length; index++) {
      if (!forBlock.has(index)) {
        forBlock.set(index, owner)
        return this.signers[index]
      }
    }
    return undefined
  }

  /** The key `owner` holds for `block`, without leasing one. */
  holder(block: bigint, owner: string): BackrunTransactionSigner | undefined {
    const forBlock = this.leases.get(block)
    if (forBlock !== undefined) for (const [index, holder] of forBlock) if (holder === owner) return this.signers[index]
    return undefined
  }

  /** Gives `owner`'s key for `block` back (its plan failed or was dropped). */
  release(block: bigint, owner: string): void {
    const forBlock = this.leases.get(block)
    if (forBlock === undefined) return
    for (const [index, holder] of forBlock) if (holder === owner) forBlock.delete(index)
  }

  /** Leases held for `block`. */
  leased(block: bigint): number {
    return this.leases.get(block)?.size ?? 0
  }

  /** Forgets every block at or below `head` (they are built): memory stays bounded by the blocks ahead. */
  pruneThrough(head: bigint): void {
    for (const block of this.leases.keys()) if (block <= head) this.leases.delete(block)
  }
}
