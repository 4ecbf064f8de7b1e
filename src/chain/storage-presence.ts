/**
 * Whether an account has storage, seen through layers of writes above a base: the one question a
 * contract creation asks (EIP-7610), answered the same way by the devnet's block layers and by the
 * execution overlay.
 */
import type { Address } from './types.ts'

/** One layer of writes: slots written (zero included) and accounts whose storage below was cleared. */
export interface StorageWrites {
  readonly storage: ReadonlyMap<Address, ReadonlyMap<bigint, bigint>>
  readonly cleared: ReadonlySet<Address>
}

/**
 * What the layers (newest first) say about whether `address` has a non-zero slot: true when a
 * slot was written non-zero and not written again by a newer layer; false when a layer cleared the
 * account (nothing below counts, only the slots written after the clear, which are in that
 * layer's `storage`); undefined when the base decides. Costs the layers' slots of this one account.
 *
 * Slots zeroed in the layers do not subtract from the base's answer: an account's storage is
 * written only by its own code (or a state override), and a codeless nonce-0 account, the only kind
 * a creation asks about, lost its code by a deletion, which cleared it in that layer.
 */
export function storageInLayers(layers: Iterable<StorageWrites>, address: Address): boolean | undefined {
  const shadowed = new Set<bigint>()
  for (const layer of layers) {
    for (const [slot, value] of layer.storage.get(address) ?? []) {
      if (shadowed.has(slot)) continue
      if (value !== 0n) return true
      shadowed.add(slot)
    }
    if (layer.cleared.has(address)) return false
  }
  return undefined
}
