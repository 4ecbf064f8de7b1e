/**
 * A storage slot's key as the journal and transient storage key it (the word's 64 hex digits,
 * with or without `0x`), remembered per thread. A router execution of the bench:quote mix reads
 * and writes ~120 slots (~48 SLOADs, ~25 SSTOREs, ~45 TLOADs and TSTOREs), nearly all of them
 * slots the quote before touched. A key made afresh costs the word's toString, a pad and a
 * concatenation, and then every Map or Set lookup hashes the new string (~530-630 ns a key and a
 * lookup in a loop over 40 keys, against ~60-70 for a remembered one: the same string object,
 * whose hash V8 keeps on it; sixteenth session). A key is a pure function of its word, so a
 * remembered one is never stale; the memo is bounded (the oldest out first).
 */
export class WordHexMemo {
  /** word -> key, in insertion order (oldest first) */
  private readonly keys = new Map<bigint, string>()

  /** `prefix` is put before the 64 digits ('0x' for transient storage, '' for the journal) */
  constructor(
    private readonly maxEntries: number,
    private readonly prefix: string,
  ) {}

  /** How many keys the memo holds (for tests). */
  get size(): number {
    return this.keys.size
  }

  /** The word's key: `prefix` and its 64 lower-case hex digits (the word < 2^256). */
  hex(word: bigint): string {
    let key = this.keys.get(word)
    if (key === undefined) {
      key = this.prefix + word.toString(16).padStart(64, '0')
      if (this.keys.size >= this.maxEntries) this.keys.delete(this.keys.keys().next().value!)
      this.keys.set(word, key)
    }
    return key
  }
}
