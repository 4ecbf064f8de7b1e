/**
 * The worker's state L1 map (src/workers/insertion-bounded-map.ts): never more than its bound, the
 * oldest inserted key dropped first, a key set again keeps its place, and a bound below one refused.
 */
import { describe, expect, it } from 'vitest'
import { InsertionBoundedMap } from '../../src/workers/insertion-bounded-map.ts'

describe('InsertionBoundedMap', () => {
  it('holds at most its bound, dropping the oldest inserted key first', () => {
    const map = new InsertionBoundedMap<string, number>(3)
    for (let i = 0; i < 10; i++) {
      map.set(`k${i}`, i)
      expect(map.size).toBe(Math.min(i + 1, 3))
    }
    expect([...map.keys()]).toEqual(['k7', 'k8', 'k9'])
    expect(map.get('k6')).toBeUndefined()
    expect(map.has('k6')).toBe(false)
    expect(map.get('k9')).toBe(9)
  })

  it('a key set again is updated in place: nothing is dropped, its place in the order is kept', () => {
    const map = new InsertionBoundedMap<string, number>(2)
    map.set('a', 1)
    map.set('b', 2)
    map.set('a', 3)
    expect(map.size).toBe(2)
    expect(map.get('a')).toBe(3)
    expect(map.get('b')).toBe(2)
    // 'a' is still the oldest: the next new key drops it
    map.set('c', 4)
    expect([...map.keys()]).toEqual(['b', 'c'])
  })

  it('reads do not change the order (a hit costs a Map lookup only)', () => {
    const map = new InsertionBoundedMap<string, number>(2)
    map.set('a', 1)
    map.set('b', 2)
    expect(map.get('a')).toBe(1)
    map.set('c', 3)
    expect(map.has('a')).toBe(false)
  })

  it('delete frees a place', () => {
    const map = new InsertionBoundedMap<string, number>(2)
    map.set('a', 1)
    map.set('b', 2)
    expect(map.delete('a')).toBe(true)
    expect(map.delete('a')).toBe(false)
    map.set('c', 3)
    expect([...map.keys()]).toEqual(['b', 'c'])
  })

  it('refuses a bound below one entry', () => {
    expect(() => new InsertionBoundedMap(0)).toThrow(RangeError)
    expect(() => new InsertionBoundedMap(1.5)).toThrow(/at least one entry, got 1.5/)
  })
})
