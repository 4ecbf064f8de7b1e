/**
 * A Map that holds at most `maxEntries` keys: setting a new key past the bound first drops the
 * oldest inserted one. What a worker's per-block state L1 needs (remote-state-reader.ts), at the
 * cost of a plain Map's get: the L1 is read ~150 times per quote, almost always a hit, and
 * lru-cache's get (recency bookkeeping on every hit, its status and staleness checks) was the
 * worker's third-largest cost outside the EVM in the profile of the fourteenth session (1.9% of
 * the worker's time). Dropping by insertion order instead of by recency only matters past the
 * bound (50,000 keys a block; a block's quotes read a few thousand), and a dropped key is read
 * again, never answered wrong.
 */
export class InsertionBoundedMap<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`an insertion-bounded map holds at least one entry, got ${maxEntries}`)
  }

  get size(): number {
    return this.entries.size
  }

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  /** Sets `key` (an existing key keeps its place in the order); a new key past the bound drops the oldest. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // a Map iterates in insertion order: its first key is the oldest
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
    this.entries.set(key, value)
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }

  keys(): IterableIterator<K> {
    return this.entries.keys()
  }
}
