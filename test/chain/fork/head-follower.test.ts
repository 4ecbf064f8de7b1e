import { describe, expect, it } from 'vitest'
import { HeadFollower } from '../../../src/chain/fork/head-follower.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('HeadFollower', () => {
  it('reports only the heads isNew accepts, one poll at a time, and stops', async () => {
    let upstream = 5n
    let current = 5n
    let active = 0
    let maxActive = 0
    const seen: bigint[] = []
    const errors: unknown[] = []
    const follower = new HeadFollower({
      intervalMs: 5,
      poll: async () => {
        active++
        maxActive = Math.max(maxActive, active)
        await sleep(15) // slower than the interval: polls must not overlap
        active--
        if (upstream === 7n) throw new Error('flaky')
        return upstream
      },
      isNew: (n) => n > current,
      onNewHead: async (n) => {
        seen.push(n)
        current = n
      },
      onError: (e) => errors.push(e),
    })
    follower.start()
    await sleep(60)
    upstream = 6n
    await sleep(60)
    upstream = 7n
    await sleep(60)
    upstream = 9n
    await sleep(60)
    follower.stop()
    const polls = follower.pollCount
    await sleep(60)
    expect(seen).toEqual([6n, 9n])
    expect(errors.length).toBeGreaterThan(0)
    expect(maxActive).toBe(1)
    expect(follower.pollCount).toBeLessThanOrEqual(polls + 1)
  })
})
