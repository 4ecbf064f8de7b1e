/**
 * The best few of many items by a value that is costly to compute (a path's exact quote), skipping
 * the items a cheap upper bound of their value rules out: items are valued in descending order of
 * their bounds, and once `k` values are known, an item whose bound is below the k-th best of them
 * cannot rank among the first k, nor can any item after it. With more venues a pair has more pools
 * and a route many more paths, most of them through pools too shallow or too dear to ever win: this
 * is what keeps the search from quoting them all (routing/route-search.ts, and the gas price's reference path: gas-price.ts).
 */

export interface Ranked {
  /** the item's index */
  i: number
  value: bigint
}

/**
 * What rankByBound asks of the items: an object with methods rather than two closures, so that a
 * caller ranking per search hands it one object of a class whose methods live as long as the
 * module. Closures made per search were compiled by TurboFan again and again in the service's
 * workers (each new closure ran unoptimized until hot again once a full collection had dropped the
 * code of the last ones: scripts/probe/recompile-trace.ts, session 21).
 */
export interface RankedItems {
  /** a double at least item i's value */
  bound(i: number): number
  /** item i's value; undefined for an item without one */
  value(i: number): bigint | undefined
}

/**
 * every item valued, best first (higher value, then lower index): the first `k` entries are exactly
 * the first k of ranking all `count` items that have a value; `items.value` gives undefined for an
 * item without one (a path that cannot take the amount). `items.bound(i)`, a double, is at least item i's
 * value (the caller pads it for its own rounding: boundWithSlack); an item is skipped only when its
 * bound is below the k-th value by more than that value's conversion to a double could err.
 */
export function rankByBound(count: number, k: number, items: RankedItems): Ranked[] {
  const ranked: Ranked[] = []
  if (k >= count) {
    for (let i = 0; i < count; i++) {
      const v = items.value(i)
      if (v !== undefined) ranked.push({ i, value: v })
    }
    return ranked.sort(byValue)
  }
  // bounds in a typed array and the order as indices: no object per item (a search ranks up to ~200 paths twice)
  const bounds = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const b = items.bound(i)
    // a bound that is no number rules nothing out
    bounds[i] = Number.isNaN(b) ? Number.POSITIVE_INFINITY : b
  }
  // items by bound, then by index (of two equal bounds the item that would rank first is valued
  // first), taken from a heap one at a time: the loop usually stops after a few of ~200 items, so
  // ordering them all (a comparator call per comparison) was most of this function's own time
  const order = new BoundOrder(bounds)
  // the k best values so far, best first
  const top: bigint[] = []
  let cutoff = Number.NEGATIVE_INFINITY
  for (let i = order.next(); i >= 0; i = order.next()) {
    // strictly below: an item whose value could tie the k-th may still rank before it by index
    if (bounds[i] < cutoff) break
    const v = items.value(i)
    if (v === undefined) continue
    ranked.push({ i, value: v })
    let at = top.length
    while (at > 0 && top[at - 1] < v) at--
    if (at < k) {
      top.splice(at, 0, v)
      if (top.length > k) top.pop()
      if (top.length === k) cutoff = belowAsDouble(top[k - 1])
    }
  }
  return ranked.sort(byValue)
}

/**
 * Indices 0..n-1 in descending order of their bounds, ties by ascending index, one at a time: a
 * binary heap (built in O(n), O(log n) a step) with the comparison inlined.
 */
class BoundOrder {
  private readonly heap: Int32Array
  private size: number

  constructor(private readonly bounds: Float64Array) {
    this.size = bounds.length
    this.heap = new Int32Array(this.size)
    for (let i = 0; i < this.size; i++) this.heap[i] = i
    for (let at = (this.size >> 1) - 1; at >= 0; at--) this.siftDown(at)
  }

  /** the next index, or -1 when all were given */
  next(): number {
    if (this.size === 0) return -1
    const first = this.heap[0]
    this.size--
    if (this.size > 0) {
      this.heap[0] = this.heap[this.size]
      this.siftDown(0)
    }
    return first
  }

  /** a before b: the higher bound, or of equal bounds the lower index */
  private before(a: number, b: number): boolean {
    const ba = this.bounds[a]
    const bb = this.bounds[b]
    return ba > bb || (ba === bb && a < b)
  }

  private siftDown(at: number): void {
    const heap = this.heap
    const item = heap[at]
    for (;;) {
      let child = 2 * at + 1
      if (child >= this.size) break
      if (child + 1 < this.size && this.before(heap[child + 1], heap[child])) child++
      if (!this.before(heap[child], item)) break
      heap[at] = heap[child]
      at = child
    }
    heap[at] = item
  }
}

/**
 * `bound` as a double padded so that it stays at least the value it bounds: `term1` and `term2` are
 * the magnitudes summed into it (each off by a double's rounding at most); 1e-9 of them and 1 more.
 * Two fixed terms, not a rest parameter: it is called per path and search, and a rest array per call
 * was garbage.
 */
export function boundWithSlack(bound: number, term1 = 0, term2 = 0): number {
  const magnitude = Math.abs(bound) + Math.abs(term1) + Math.abs(term2)
  return bound + magnitude * 1e-9 + 1
}

/** a double at most `v` (its conversion rounds to the nearest double, off by far less than 1e-9 of it) */
function belowAsDouble(v: bigint): number {
  const d = Number(v)
  return d - Math.abs(d) * 1e-9 - 1
}

function byValue(a: Ranked, b: Ranked): number {
  return a.value === b.value ? a.i - b.i : a.value > b.value ? -1 : 1
}
