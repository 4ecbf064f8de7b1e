import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import { describe, expect, it } from 'vitest'

import { RecentInclusions, reorgEvent, resetForReorg, touchedByReorg } from '../../../src/submission/dispatcher/reorg.ts'
import { newTask, type Task } from '../../../src/submission/dispatcher/task.ts'
import { isFinished, summarizeLifecycle } from '../../../src/submission/lifecycle.ts'
import { submissionId, type LifecycleEvent, type ReorgEvent } from '../../../src/submission/types.ts'

setFlagsFromString('--expose_gc')
const gc = runInNewContext('gc') as () => void


function task(n: number, events: LifecycleEvent[] = [{ type: 'received', at: 0 }]): Task {
  const hash = `0x${n.toString(16).padStart(64, '0')}` as const
  return newTask({ record: { id: `private-tx:${hash}`, kind: 'private-tx', hash, partnerId: 'p', receivedAt: 0, rawTxs: [], txHashes: [hash] }, events })
}

const reorg = (commonAncestor: bigint | undefined, dropped: bigint[], newHead: bigint): ReorgEvent =>
  reorgEvent({ commonAncestor: commonAncestor === undefined ? undefined : { number: commonAncestor }, dropped: dropped.map((number) => ({ number })), newHead: { number: newHead, timestamp: 0n } }, 5)

describe('reorgEvent', () => {
  it('names the common ancestor, the replaced blocks and the new head; a reorg deeper than known has no ancestor', () => {
    expect(reorg(100n, [101n, 102n], 101n)).toEqual({ type: 'reorg', at: 5, commonAncestor: 100n, dropped: [101n, 102n], newHead: 101n })
    expect(reorg(undefined, [], 7n)).toEqual({ type: 'reorg', at: 5, dropped: [], newHead: 7n })
  })
})

describe('a reorg in the lifecycle', () => {
  const sent = (block: bigint): LifecycleEvent => ({ type: 'relay-sending', at: 1, relay: 'r@1', block, attemptId: `x${block}`, part: 'user' })

  it('forgets the sends for replaced blocks (they go out again) and keeps those below the ancestor', () => {
    const t = task(1, [{ type: 'received', at: 0 }, sent(101n), sent(102n)])
    expect(touchedByReorg(t, reorg(101n, [102n], 102n))).toBe(true)
    expect(touchedByReorg(t, reorg(102n, [103n], 103n))).toBe(false)
    const summary = summarizeLifecycle([{ type: 'received', at: 0 }, sent(101n), sent(102n), reorg(101n, [102n], 102n)])
    expect([...summary.sent]).toEqual(['r@1@101@user'])
  })

  it('an inclusion in a replaced block is undone only by a reorg that names it (includedBlock); isFinished follows', () => {
    const included: LifecycleEvent = { type: 'included', at: 2, block: 102n }
    const base: LifecycleEvent[] = [{ type: 'received', at: 0 }, { type: 'targeting', at: 1, firstBlock: 101n, lastBlock: 125n, relays: ['r'] }, included]
    expect(isFinished(base)).toBe(true)
    // an open submission's reorg event (no includedBlock) does not re-open a finished one
    expect(isFinished([...base, reorg(100n, [101n, 102n], 101n)])).toBe(true)
    const reopened = [...base, { ...reorg(100n, [101n, 102n], 101n), includedBlock: 102n }]
    expect(isFinished(reopened)).toBe(false)
    expect(summarizeLifecycle(reopened)).toMatchObject({ outcome: undefined, stage: 'dispatching' })
    expect(isFinished([...reopened, { type: 'included', at: 9, block: 102n }])).toBe(true)
  })

  it('resetForReorg: planned and checked again; a simulated submission stays a re-simulation; sends for replaced blocks are aborted', () => {
    const t = task(2)
    const aborted: bigint[] = []
    const send = (block: bigint) => {
      const controller = new AbortController()
      controller.signal.addEventListener('abort', () => aborted.push(block))
      return { block, controller, done: Promise.resolve() }
    }
    t.simulatedFor = 103n
    t.plannedFor = 103n
    t.lastCheckedHead = 102n
    t.inflight = new Map([['a@user', send(101n)], ['b@user', send(103n)]])
    resetForReorg(t, reorg(101n, [102n], 102n))
    expect(t).toMatchObject({ simulatedFor: 101n, plannedFor: undefined, lastCheckedHead: undefined })
    expect(aborted).toEqual([103n])
  })
})

describe('RecentInclusions', () => {
  it('hands back the inclusions above the ancestor, once', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 10 })
    const [a, b, c] = [task(1), task(2), task(3)]
    recent.add(a.record.id, 100n)
    recent.add(b.record.id, 101n)
    recent.add(c.record.id, 102n)
    expect(recent.takeAbove(100n)).toEqual([
      { id: b.record.id, block: 101n },
      { id: c.record.id, block: 102n },
    ])
    expect(recent.takeAbove(100n)).toEqual([])
    expect(recent.size).toBe(1)
  })

  it('is bounded: windowBlocks behind the head, and maxEntries (the oldest go first)', () => {
    const recent = new RecentInclusions({ windowBlocks: 2, maxEntries: 3 })
    for (let i = 0; i < 5; i++) recent.add(task(i).record.id, 100n + BigInt(i))
    expect(recent.size).toBe(3)
    expect(recent.takeAbove(-1n).map((e) => e.block)).toEqual([102n, 103n, 104n])
    for (let i = 0; i < 3; i++) recent.add(task(i).record.id, 100n + BigInt(i))
    recent.forgetBefore(103n)
    expect(recent.takeAbove(-1n).map((e) => e.block)).toEqual([101n, 102n])
  })

  it('holds an entry in ~113 bytes of heap: 10,000 inclusions (its default bound) in under 1.3 MB', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 10_000 })
    gc()
    const before = process.memoryUsage().heapUsed
    // ids made as the dispatcher makes them (a fresh string each), 160 a block as under bench:soak
    for (let i = 0; i < 10_000; i++) recent.add(submissionId('private-tx', `0x${(0xabcdef0000n + BigInt(i) * 7919n).toString(16).padStart(64, '0')}`), 1_000n + BigInt(Math.floor(i / 160)))
    gc()
    const perEntry = (process.memoryUsage().heapUsed - before) / 10_000
    console.log(`RecentInclusions: ${perEntry.toFixed(0)} bytes of heap per entry`)
    expect(recent.size).toBe(10_000)
    // the id's text and a bigint per entry held ~213 bytes (measured with the previous code)
    expect(perEntry).toBeLessThan(130)
    // and every id comes back as it went in
    const back = recent.takeAbove(1_000n + 61n)
    expect(back[0]).toEqual({ id: submissionId('private-tx', `0x${(0xabcdef0000n + 9_920n * 7919n).toString(16).padStart(64, '0')}`), block: 1_062n })
  })

  it('refuses a block number beyond 2^53 - 1 (kept as a number)', () => {
    const recent = new RecentInclusions({ windowBlocks: 64, maxEntries: 10 })
    expect(() => recent.add(task(1).record.id, 2n ** 53n)).toThrow(RangeError)
    expect(recent.size).toBe(0)
  })

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new RecentInclusions({ windowBlocks: 0, maxEntries: 1 })).toThrow(RangeError)
    expect(() => new RecentInclusions({ windowBlocks: 1, maxEntries: 1.5 })).toThrow(RangeError)
  })
})

