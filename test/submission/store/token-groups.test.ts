/**
 * TokenGroups: items queued while statements run share the next statement, within the group and
 * in-flight bounds; each caller learns whether its own token was stored; a failed statement fails
 * its whole group and nothing else.
 */
import { describe, expect, it } from 'vitest'

import { TokenGroups } from '../../../src/submission/store/token-groups.ts'

interface Item {
  token: string
}

/** a statement runner whose statements end when the test says */
function manualRunner() {
  const calls: Array<{ group: string[]; finish: (stored: string[]) => void; fail: (error: Error) => void }> = []
  const run = (group: readonly Item[]) =>
    new Promise<Iterable<string>>((resolve, reject) => {
      calls.push({ group: group.map((i) => i.token), finish: resolve, fail: reject })
    })
  return { calls, run }
}

const tick = () => new Promise((r) => setImmediate(r))

describe('TokenGroups', () => {
  it('the first item runs at once; those queued meanwhile share the next statement, at most maxGroup each', async () => {
    const { calls, run } = manualRunner()
    const groups = new TokenGroups<Item>(run, { maxGroup: 2, maxInFlight: 1 })
    const answers = ['a', 'b', 'c', 'd'].map((token) => groups.submit({ token }))
    expect(calls.map((c) => c.group)).toEqual([['a']])
    expect(groups.inProgress).toHaveLength(1)
    calls[0].finish(['a'])
    await tick()
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b', 'c']])
    calls[1].finish(['c'])
    await tick()
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b', 'c'], ['d']])
    calls[2].finish([])
    expect(await Promise.all(answers)).toEqual([true, false, true, false])
    await tick()
    expect(groups.inProgress).toHaveLength(0)
  })

  it('up to maxInFlight statements at once', async () => {
    const { calls, run } = manualRunner()
    const groups = new TokenGroups<Item>(run, { maxGroup: 10, maxInFlight: 2 })
    const answers = ['a', 'b', 'c'].map((token) => groups.submit({ token }))
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b']])
    calls[1].finish(['b'])
    await tick()
    expect(calls.map((c) => c.group)).toEqual([['a'], ['b'], ['c']])
    calls[0].finish(['a'])
    calls[2].finish(['c'])
    expect(await Promise.all(answers)).toEqual([true, true, true])
  })

  it('a failed statement rejects every item of its group, and the next group still runs', async () => {
    const { calls, run } = manualRunner()
    const groups = new TokenGroups<Item>(run, { maxGroup: 10, maxInFlight: 1 })
    const a = groups.submit({ token: 'a' })
    const b = groups.submit({ token: 'b' })
    const c = groups.submit({ token: 'c' })
    calls[0].finish(['a'])
    await tick()
    calls[1].fail(new Error('connection lost'))
    await expect(b).rejects.toThrow('connection lost')
    await expect(c).rejects.toThrow('connection lost')
    expect(await a).toBe(true)
    const d = groups.submit({ token: 'd' })
    expect(calls.map((x) => x.group)).toEqual([['a'], ['b', 'c'], ['d']])
    calls[2].finish(['d'])
    expect(await d).toBe(true)
  })

  it('refuses bounds that are not positive integers', () => {
    const { run } = manualRunner()
    expect(() => new TokenGroups<Item>(run, { maxGroup: 0, maxInFlight: 1 })).toThrow(RangeError)
    expect(() => new TokenGroups<Item>(run, { maxGroup: 1, maxInFlight: 1.5 })).toThrow(RangeError)
  })
})
