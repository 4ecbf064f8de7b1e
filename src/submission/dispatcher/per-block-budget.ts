/**
 * A count of work allowed per target block (plans, re-simulations, re-sends, bundle-stats
 * questions): when submissions pile up, the work of one block stays bounded and what is beyond
 * it waits for the next head.
 */
export class PerBlockBudget {
  private block = -1n
  private used = 0

  constructor(readonly max: number) {}

  /** Takes one unit of `block`'s budget; false when its `max` units are spent. */
  spend(block: bigint): boolean {
    if (this.block !== block) {
      this.block = block
      this.used = 0
    }
    if (this.used >= this.max) return false
    this.used++
    return true
  }
}
