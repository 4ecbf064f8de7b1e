/**
 * Whether objects share one V8 hidden class (map). Records a window holds for minutes should: Node
 * 20's V8 can give each object made by a spread followed by more properties (`{ ...a, b }`) a map
 * and descriptor array of its own, ~350-550 B allocated straight in old space (eighteenth session,
 * BENCHMARKS "h18-heap"), which no assertion on the objects' contents can see.
 *
 * %HaveSameMap is V8's own test intrinsic. Its syntax is allowed by setting V8's
 * --allow-natives-syntax in this process (tests only: it changes what the parser accepts in code
 * compiled afterwards, here this one function, and nothing of what runs).
 */
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--allow-natives-syntax')
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

/** How many distinct hidden classes `objects` have (1: one shared by all). */
export function hiddenClassCount(objects: readonly object[]): number {
  const classes: object[] = []
  for (const o of objects) if (!classes.some((c) => haveSameMap(c, o))) classes.push(o)
  return classes.length
}
