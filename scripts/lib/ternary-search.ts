/**
 * The input in [lo, hi] where a concave function of an integer input is highest, by a ternary
 * search that stops once the bracket is 2 wide or narrower than hi / `precision` (the midpoint of
 * the last bracket is returned). Used by bench:backrun's anvil baseline and its reference, each
 * step an execution of the backrun.
 */
export async function ternaryMaximum(f: (x: bigint) => Promise<bigint>, lo: bigint, hi: bigint, precision: bigint): Promise<bigint> {
  while (hi - lo > 2n && hi - lo > hi / precision) {
    const m1 = lo + (hi - lo) / 3n
    const m2 = hi - (hi - lo) / 3n
    if ((await f(m1)) < (await f(m2))) lo = m1
    else hi = m2
  }
  return (lo + hi) / 2n
}
